#pragma once
/// @file decomposition.hpp
/// Spatial domain decomposition of the x-y box over MPI ranks (one tissue over several GPUs): the box is
/// cut into px × py rectangular subdomains, rank r = ix + px iy owns the points of subdomain (ix, iy), and
/// sends copies of the points near its faces to the neighbours that need them as ghosts. Pure host
/// geometry: no MPI, no device memory; the exchange itself is done by other code.
///
/// Conventions, shared by every function here so that they agree to the last bit:
/// - Cuts. Along x the cuts are e_i = i lx / px (i = 0..px), always computed in double as
///   (double(i) * lx) / px; likewise along y. Subdomain (ix, iy) is the half-open [e_ix, e_ix+1) ×
///   [f_iy, f_iy+1), so that every position has exactly one owner, including one exactly on a cut.
/// - Periodic axes. Positions are wrapped into [0, l); the outermost faces touch through the period.
/// - Open axes. The box length only places the cuts (the points should be mostly in [0, l)); the
///   outermost subdomains extend to -inf and +inf, so that a point that left [0, l) still has an owner,
///   and their outer faces have no neighbour. An open axis may be split like a periodic one.
/// - Ghost band. With halo width w, the ghost band of a rank with subdomain [x0, x1) × [y0, y1) is the
///   open box (x0 - w, x1 + w) × (y0 - w, y1 + w): the positions (x, y) with x0 - x < w, x - x1 < w,
///   y0 - y < w and y - y1 < w, tested in double (a Chebyshev / box band: corners included). The ghosts of
///   a rank are the periodic images (shifts by 0, ±lx on a periodic x, 0, ±ly on a periodic y) of the
///   points of all ranks, its own included, that lie in its band, except its own points unshifted. A point
///   exactly w from a face is not a ghost there: the same strict test as an interaction cut-off.
/// - Points outside their subdomain. A rank's points may lie outside its subdomain (the elements of a cell
///   owned by its centre): along a split axis by at most the slack, the narrowest subdomain along that axis
///   less w, so that only the neighbours' bands can hold them; on a periodic axis at the image nearest the
///   subdomain. An axis not split holds every position. For interactions up to a cut-off rc, w = rc + the
///   farthest a point lies outside its subdomain.

#include <array>
#include <cstdint>
#include <vector>

#include "engine/core/box.hpp"
#include "engine/exec/span.hpp"

namespace tissue::domain {

/// A px × py grid of ranks over the x-y box.
struct ProcessGrid {
  int px = 1;  ///< ranks along x (>= 1)
  int py = 1;  ///< ranks along y (>= 1)
};

/// The process grid for `ranks` ranks with the least halo surface per unit height, (px > 1 ? px ly : 0) +
/// (py > 1 ? py lx : 0) [length], among the factorisations px py = ranks whose subdomains are at least
/// `min_width` wide along each split axis (every cut distance e_i+1 - e_i >= min_width, i.e. lx / px >=
/// min_width up to rounding, when px > 1; likewise y; an axis that is not split needs nothing). Ties go
/// to the larger px. Decomposition(choose_process_grid(r, box, w), box, w) never refuses the widths
/// of a split axis.
/// Note that the surface ties on a square periodic box: 4 × 1, 2 × 2 and 1 × 4 all cut 4 l, and 4 × 1 wins.
/// @param ranks      number of ranks (>= 1)
/// @param box        the domain; lx, ly place the cuts (on open axes too), so they must be positive
/// @param min_width  smallest subdomain width along a split axis [length] (> 0), e.g. the halo width
/// @throws InputError if ranks < 1, min_width is not positive and finite, a box length is not positive and
///         finite, or no factorisation fits; the message then names the largest rank count that fits
///         (and, when the count asked for is below it, the nearest counts below and above that fit).
ProcessGrid choose_process_grid(int ranks, const Box& box, double min_width);

/// The region a rank owns: [x0, x1) × [y0, y1) [length]; ±infinity for the outer faces of an open axis.
struct Subdomain {
  double x0, x1, y0, y1;

  /// Whether (x, y) lies in [x0, x1) × [y0, y1) (no wrapping).
  bool contains(double x, double y) const { return x0 <= x && x < x1 && y0 <= y && y < y1; }
};

/// One halo message: copies of a rank's points for one neighbour direction.
struct HaloSend {
  int to = -1;         ///< receiving rank (may be the sender itself: px == 1 on a periodic x, or py == 1)
  int dx = 0, dy = 0;  ///< direction of the receiver as seen from the sender, each in {-1, 0, 1}
  /// Shift to add to the sent positions to place them in the receiver's frame, next to its subdomain
  /// [length]: -lx when the message crosses the box's x = lx face (dx = 1 from the last column), +lx when it
  /// crosses x = 0 (dx = -1 from the first column), else 0; likewise y. Nonzero only on periodic axes.
  float shift_x = 0.0f, shift_y = 0.0f;
  std::vector<std::int32_t> index;  ///< local indices of the points sent, ascending
  /// Per entry of `index`, or empty when no point of the message needs it: bit 0 set when the point's x is
  /// stored one period away from the image nearest the sender's subdomain (a point sticking out across a
  /// periodic box face of a split axis, wrapped to the far side), so that the receiver places it with
  /// shift_x + image_x; bit 1 likewise for y.
  std::vector<std::uint8_t> image;
  float image_x = 0.0f;  ///< nearest image - stored x of the flagged points: 0 or ±lx [length]
  float image_y = 0.0f;  ///< likewise y
};

/// A px × py decomposition of the x-y box with a halo width (see the file comment for the conventions).
class Decomposition {
 public:
  /// @param grid        the process grid (px, py >= 1)
  /// @param box         the domain; lx, ly place the cuts (on open axes too)
  /// @param halo_width  width w of the ghost band [length] (> 0): the largest interaction distance
  /// @throws InputError if px or py < 1, the rank count overflows int, a box length or w is not positive
  ///         and finite, a subdomain along a split axis is narrower than w (some cut distance e_i+1 - e_i <
  ///         w), or a periodic axis that is not split is shorter than w (its points would need images
  ///         beyond the nearest period, which halo_sends() does not make).
  Decomposition(ProcessGrid grid, const Box& box, double halo_width);

  /// Number of ranks, px py.
  int ranks() const { return grid_.px * grid_.py; }
  const ProcessGrid& grid() const { return grid_; }
  const Box& box() const { return box_; }
  double halo_width() const { return halo_width_; }

  /// Grid coordinates {ix, iy} of a rank (rank = ix + px iy).
  /// @throws std::invalid_argument if rank is not in [0, ranks()).
  std::array<int, 2> coords(int rank) const;

  /// The rank at grid coordinates (ix, iy): any ix, iy are wrapped modulo px, py on periodic axes; -1 when
  /// either is outside [0, px) (or [0, py)) on an open axis.
  int rank_at(int ix, int iy) const;

  /// The subdomain of a rank: x0 = e_ix, x1 = e_ix+1 (see the file comment), -inf / +inf for the
  /// outer faces of an open axis.
  /// @throws std::invalid_argument if rank is not in [0, ranks()).
  Subdomain bounds(int rank) const;

  /// The rank whose subdomain (bounds()) holds (x, y) [length], after wrapping into [0, l) on periodic
  /// axes. The column is floor(x px / lx) clamped to [0, px - 1], then corrected against the cuts e_i (a
  /// rounding step at most) so that owner() and bounds() agree on positions exactly on a cut; likewise the
  /// row.
  /// @throws NumericalError if x or y is not finite.
  int owner(double x, double y) const;

  /// The halo messages of `rank`: one per direction (dx, dy) in {-1, 0, 1}² other than (0, 0) whose
  /// neighbour rank_at(ix + dx, iy + dy) exists, in the order dy = -1..1, then dx = -1..1, each sent even
  /// when empty (so that sender and receiver agree on the message count). A message holds the points within
  /// w of the faces facing its direction, or beyond them: x1 - x < w for dx = 1, x - x0 < w for dx = -1,
  /// x0 - x < w and x - x1 < w for dx = 0 (x at the image nearest the subdomain); likewise y; a diagonal
  /// needs both. A point stored at another image than that is flagged (HaloSend::image). Over all ranks, the
  /// messages deliver to each rank exactly its ghosts (file comment), each (source point, shift) once.
  ///
  /// Directions are never merged: when two directions reach the same rank (px == 2 on a periodic x: the left
  /// and the right neighbour are one rank, with shifts +lx and 0 or 0 and -lx; px == 1 on a periodic x: the
  /// x neighbour is the rank itself, with shifts -lx and +lx), they are separate messages with their own
  /// shifts, and a point within w of both faces is sent in both. Codes that key halos by neighbour rank
  /// swap or merge these silently; the pair (dx, dy) is unique among a rank's messages and can be the tag.
  /// @param rank  the sending rank, in [0, ranks())
  /// @param x,y   positions of the points the rank owns, host memory (n long each), in bounds(rank) or
  ///              outside it by at most the slack (file comment) [length]
  /// @throws std::invalid_argument if the rank is out of range, x and y differ in length, or a point lies
  ///         farther outside bounds(rank) than the slack; NumericalError if a position is not finite.
  std::vector<HaloSend> halo_sends(int rank, Span<const float> x, Span<const float> y) const;

  /// How far (x, y) lies outside bounds(rank) [length]: the larger of the distances along x and y (a
  /// Chebyshev distance), each taken at the image nearest the subdomain on a periodic split axis and 0 along
  /// an axis that is not split (it holds every position); 0 inside. With every point of the ranks at most
  /// `s` outside, interactions up to rc between points that moved at most d since are all within a halo of
  /// width rc + s + 2 d (sem::DecomposedSem's rebuild test).
  /// @throws std::invalid_argument if the rank is out of range; NumericalError if x or y is not finite.
  double outside(int rank, float x, float y) const;
  /// The largest outside() of the points (x[i], y[i]) (n long each, host memory); 0 for none.
  /// @throws std::invalid_argument if the rank is out of range or x and y differ in length; NumericalError if
  ///         a position is not finite.
  double outside(int rank, Span<const float> x, Span<const float> y) const;

 private:
  ProcessGrid grid_;
  Box box_;
  double halo_width_;
};

}  // namespace tissue::domain
