#pragma once
/// @file cell_list.hpp
/// Uniform-grid cell list ("linked-cell" neighbour search without links): points are binned on a
/// grid of cubes at least `min_bin` wide, radix-sorted by bin, and each bin is a contiguous range of
/// the sorted arrays. A query visits the 27 (or fewer) bins around a point, so that finding every
/// pair closer than min_bin costs O(N) for a bounded density.
///
/// Periodic axes of the Box are tiled exactly by their bins; open axes (and z) are hashed modulo the
/// bin count (aliasing: far points may share a bin, the caller's distance test discards them), so
/// no extent needs to be known in advance and nothing is synchronised with the host per build.
/// Results are deterministic: the sort is stable and bins are visited in a fixed order.

#include <cstddef>
#include <cstdint>

#include "engine/core/box.hpp"
#include "engine/exec/bin_sort.hpp"
#include "engine/exec/device_buffer.hpp"
#include "engine/exec/math.hpp"

namespace tissue {

/// A point of the sorted copy: position and a caller-defined tag (e.g. owning cell), 16 bytes so that
/// a neighbour is one aligned vector load.
struct alignas(16) PointTag {
  float x, y, z;
  std::int32_t tag;
};

/// Point s of a sorted copy, in one 16-byte load (on the device through the read-only data cache: the sorted
/// copy does not change while a kernel searches it). A field-by-field read compiles to four loads, the tag's
/// first and the position's only after the caller's test of it: two memory latencies per candidate.
TISSUE_HD inline PointTag load_point(const PointTag* points, int s) {
#if TISSUE_ON_DEVICE
  const float4 v = __ldg(reinterpret_cast<const float4*>(points) + s);
  return PointTag{v.x, v.y, v.z, __float_as_int(v.w)};
#else
  return points[s];
#endif
}

/// The part of the x-y plane a rank of a decomposed run holds points in (CellList::build): along a periodic
/// axis with a window, only the whole box's bins from x0 to x1 are kept (a run of them, in the whole grid's
/// order, across the periodic face if the window crosses it), so that a rank's list scans its share of the
/// bins instead of the whole box's. A point keeps its bin of the whole box's grid; a point outside the window
/// is hashed into it (more candidates, never a lost pair). A query inside the window visits the whole grid's
/// bins in the whole grid's order, so the candidates within the cut-off come in the same order as without the
/// window. An axis whose window would keep all but three bins or fewer keeps them all.
struct BinWindow {
  bool x = false, y = false;  ///< windows along x, y (periodic axes only; ignored on open ones)
  double x0 = 0.0, x1 = 0.0;  ///< window along x [length]; may reach below 0 or beyond lx (periodic images)
  double y0 = 0.0, y1 = 0.0;  ///< window along y [length]
};

/// Grid geometry of a cell list.
struct CellGrid {
  int n[3] = {1, 1, 1};                  ///< bins per axis
  float inv_width[3] = {1.f, 1.f, 1.f};  ///< 1 / bin width per axis [1/length]
  bool periodic[3] = {false, false, false};
  int offset_lo[3] = {-1, -1, -1};  ///< neighbour bin offsets visited: [lo, hi] per axis
  int offset_hi[3] = {1, 1, 1};
  int whole_n[3] = {0, 0, 0};  ///< a windowed axis (BinWindow): the whole periodic axis's bins; else 0
  int origin[3] = {0, 0, 0};   ///< a windowed axis: the whole axis's bin that is bin 0 here

  /// Bin coordinate of v along axis a (periodic axes clamp the rounding case v == L; a windowed axis takes
  /// the whole axis's bin, counted from the window's first and hashed into the window).
  TISSUE_HD int coord(float v, int a) const {
    int i = static_cast<int>(math::floor(v * inv_width[a]));
    if (periodic[a]) return i < 0 ? 0 : (i >= n[a] ? n[a] - 1 : i);
    if (whole_n[a] > 0) {
      i = (i < 0 ? 0 : (i >= whole_n[a] ? whole_n[a] - 1 : i)) - origin[a];
      return (i < 0 ? i + whole_n[a] : i) % n[a];
    }
    i %= n[a];
    return i < 0 ? i + n[a] : i;
  }
  /// The whole axis's bin of v along axis a, before hashing: what coord() hashes (periodic and windowed
  /// axes clamp it into their bins, as coord() does).
  TISSUE_HD int whole_bin(float v, int a) const {
    const int i = static_cast<int>(math::floor(v * inv_width[a]));
    if (periodic[a]) return i < 0 ? 0 : (i >= n[a] ? n[a] - 1 : i);
    if (whole_n[a] > 0) return i < 0 ? 0 : (i >= whole_n[a] ? whole_n[a] - 1 : i);
    return i;
  }
  /// The bins along axis a that can hold a point within `span` of v, as offsets [lo, hi] from v's bin
  /// (whole_bin()), within [-k, 0] and [0, k]: the bins of v - span and v + span, with span widened by a
  /// rounding allowance of 2^-12 span (the caller's distance test) and 2^-18 of |v| or of the periodic axis's
  /// length, whichever is larger (the bins' edges and v -/+ span; float rounding is 2^-24 of those). A point
  /// at distance < span is never outside; NaN gives any offsets within the bounds. Offsets count in the whole
  /// axis's bins, which is what coord() hashes, so that wrapping them from coord(v) visits the right bins on
  /// every axis.
  TISSUE_HD void span_offsets(float v, float span, int a, int k, int& lo, int& hi) const {
    const float length = whole_n[a] > 0 ? static_cast<float>(whole_n[a]) / inv_width[a]
                                        : (periodic[a] ? static_cast<float>(n[a]) / inv_width[a] : 0.0f);
    const float size = math::abs(v) > length ? math::abs(v) : length;
    const float s = span + span * 2.44140625e-4f + size * 3.814697265625e-6f;
    const int i = whole_bin(v, a);
    lo = static_cast<int>(math::floor((v - s) * inv_width[a])) - i;
    hi = static_cast<int>(math::floor((v + s) * inv_width[a])) - i;
    lo = lo < -k ? -k : (lo > 0 ? 0 : lo);
    hi = hi > k ? k : (hi < 0 ? 0 : hi);
  }
  /// Wraps a bin coordinate that is at most one bin outside [0, n) (neighbour offsets are -1..1).
  TISSUE_HD int wrap(int i, int a) const { return i < 0 ? i + n[a] : (i >= n[a] ? i - n[a] : i); }
  TISSUE_HD std::uint32_t bin(int ix, int iy, int iz) const {
    return static_cast<std::uint32_t>((static_cast<std::int64_t>(iz) * n[1] + iy) * n[0] + ix);
  }
  std::size_t bin_count() const { return static_cast<std::size_t>(n[0]) * n[1] * n[2]; }
};

class CellList {
 public:
  /// What kernels hold (by value) to iterate over candidate neighbours.
  struct View {
    CellGrid grid;
    Span<const PointTag> points;         ///< sorted points, bin by bin
    Span<const std::int32_t> index;      ///< original index of sorted point s
    Span<const std::int32_t> bin_start;  ///< bin b is [bin_start[b], bin_start[b + 1]); bins + 1 entries
    /// Points moved since the bins were made (refresh()): one entry on the backend, the largest distance
    /// any point has moved since the build [length]; empty when the points are where they were binned.
    Span<const float> moved;
    /// The largest distance the caller tests [length] (<= the build's min_bin), or 0: unknown. With it, and
    /// one lane, the searches skip the bins (of the 3 x 3 x 3, or of the wider moved search) that lie
    /// entirely beyond reach (+ moved) of the query along an axis, and visit the rest in the same order: the
    /// candidates within reach, and their order, are those of the whole search. With lanes > 1 they do not,
    /// so that each lane's share of a bin run (every lanes-th candidate from the run's start) stays the
    /// whole search's, and so do the lanes' partial sums. view(reach), moved_view().
    float reach = 0.0f;

    /// Calls f(s, point) (point: a PointTag by value) for every sorted point s in the bins around (px, py,
    /// pz), in a fixed order. Candidates include far points (aliasing) and the query point itself; f must
    /// test distances. After refresh() (`moved` set) the bins are those of the build positions, so the search
    /// widens to every bin within reach + moved of the query (1 bin per side while reach + moved <= the bin
    /// width). Hot kernels that know which case they are in call for_each_built_candidate() or
    /// for_each_moved_candidate() directly (one search compiled instead of two: fewer registers).
    /// With `lanes` > 1, lane `lane` in [0, lanes) visits every lanes-th candidate of each bin run (the
    /// candidates of all lanes together are those of lanes = 1): exec::group_for splits a search this way.
    template <class F>
    TISSUE_HD void for_each_candidate(float px, float py, float pz, F&& f, int lane = 0,
                                      int lanes = 1) const {
      if (moved.empty())
        for_each_built_candidate(px, py, pz, f, lane, lanes);
      else
        for_each_moved_candidate(px, py, pz, f, lane, lanes);
    }

    /// for_each_candidate() on a list whose points are where they were binned (view(), not moved_view()).
    /// The three x-neighbouring bins of a row are one contiguous range unless the row wraps.
    template <class F>
    TISSUE_HD void for_each_built_candidate(float px, float py, float pz, F&& f, int lane = 0,
                                            int lanes = 1) const {
      const int cx = grid.coord(px, 0), cy = grid.coord(py, 1), cz = grid.coord(pz, 2);
      int lo[3], hi[3];
      const float p[3] = {px, py, pz};
      for (int a = 0; a < 3; ++a) {
        lo[a] = grid.offset_lo[a];
        hi[a] = grid.offset_hi[a];
        // trimmed only where the stencil is the full -1..1 (an axis of 1 or 2 bins visits each bin once)
        if (reach > 0.0f && lanes == 1 && lo[a] == -1 && hi[a] == 1)
          grid.span_offsets(p[a], reach, a, 1, lo[a], hi[a]);
      }
      const bool run = grid.offset_lo[0] == -1 && cx + lo[0] >= 0 && cx + hi[0] < grid.n[0];
      for (int dz = lo[2]; dz <= hi[2]; ++dz) {
        const int iz = grid.wrap(cz + dz, 2);
        for (int dy = lo[1]; dy <= hi[1]; ++dy) {
          const std::uint32_t row = grid.bin(0, grid.wrap(cy + dy, 1), iz);
          if (run) {
            const int end = bin_start[row + static_cast<std::uint32_t>(cx + hi[0] + 1)];
            for (int s = bin_start[row + static_cast<std::uint32_t>(cx + lo[0])] + lane; s < end; s += lanes)
              f(s, load_point(points.data(), s));
            continue;
          }
          for (int dx = lo[0]; dx <= hi[0]; ++dx) {
            const std::uint32_t b = row + static_cast<std::uint32_t>(grid.wrap(cx + dx, 0));
            const int end = bin_start[b + 1];
            for (int s = bin_start[b] + lane; s < end; s += lanes) f(s, load_point(points.data(), s));
          }
        }
      }
    }

    /// for_each_candidate() over bins made before the points moved by up to moved[0] (moved_view()): a point
    /// now within `reach` of the query was binned within reach + moved of it, i.e. at most k = floor((reach +
    /// moved) / width) + 1 bins away per axis; an axis where 2 k + 1 bins would cover it is visited whole
    /// (each bin once). A non-finite `moved` (NaN positions, which the run's checks report after the step)
    /// searches one bin per side.
    template <class F>
    TISSUE_HD void for_each_moved_candidate(float px, float py, float pz, F&& f, int lane = 0,
                                            int lanes = 1) const {
      const float d = moved[0];
      const float span = reach + (d >= 0.0f && d <= 3.0e38f ? d : 0.0f);
      const int c[3] = {grid.coord(px, 0), grid.coord(py, 1), grid.coord(pz, 2)};
      int lo[3], hi[3];
      bool whole[3];
      for (int a = 0; a < 3; ++a) {
        const float bins = span * grid.inv_width[a];
        const int k =
            bins < static_cast<float>(grid.n[a]) ? static_cast<int>(math::floor(bins)) + 1 : grid.n[a];
        whole[a] = 2 * k + 1 >= grid.n[a];
        int dlo = -k, dhi = k;
        if (!whole[a] && reach > 0.0f && lanes == 1)
          grid.span_offsets(a == 0 ? px : (a == 1 ? py : pz), span, a, k, dlo, dhi);
        lo[a] = whole[a] ? 0 : c[a] + dlo;
        hi[a] = whole[a] ? grid.n[a] - 1 : c[a] + dhi;
      }
      const bool run = whole[0] || (lo[0] >= 0 && hi[0] < grid.n[0]);
      for (int jz = lo[2]; jz <= hi[2]; ++jz) {
        const int iz = whole[2] ? jz : grid.wrap(jz, 2);
        for (int jy = lo[1]; jy <= hi[1]; ++jy) {
          const std::uint32_t row = grid.bin(0, whole[1] ? jy : grid.wrap(jy, 1), iz);
          if (run) {
            const int end = bin_start[row + static_cast<std::uint32_t>(hi[0] + 1)];
            for (int s = bin_start[row + static_cast<std::uint32_t>(lo[0])] + lane; s < end; s += lanes)
              f(s, load_point(points.data(), s));
            continue;
          }
          for (int jx = lo[0]; jx <= hi[0]; ++jx) {
            const std::uint32_t b = row + static_cast<std::uint32_t>(grid.wrap(jx, 0));
            const int end = bin_start[b + 1];
            for (int s = bin_start[b] + lane; s < end; s += lanes) f(s, load_point(points.data(), s));
          }
        }
      }
    }
  };

  /// Rebuilds the list for n points.
  /// @param x,y,z    positions (n long, at least), wrapped into [0, L) on periodic axes [length]
  /// @param tag      per-point tag copied into the sorted points (n long), or empty: tag = index
  /// @param box      domain (periodic x/y tile the grid exactly)
  /// @param min_bin  smallest bin width = the largest interaction distance queried [length] (> 0)
  /// @param z_extent expected height of the point cloud [length]; sets the z bin count (>= 3), capped at 4 n
  ///                 over the x-y bin count (points above the bins' height wrap into them: more candidates,
  ///                 the same pairs).
  /// @param cap_points  the point count of that cap instead of n (0: n); a rank of a decomposed run passes
  ///                 the whole tissue's, so that its bins, and the order it visits candidates in, are the
  ///                 undecomposed list's
  /// @param window   the windows of a decomposed rank's periodic axes (BinWindow; none by default); the z
  /// bins
  ///                 are still capped by the whole x-y grid's bin count
  /// @throws std::invalid_argument if min_bin <= 0 or a periodic length is below 2 min_bin.
  void build(Span<const float> x, Span<const float> y, Span<const float> z, Span<const std::int32_t> tag,
             std::size_t n, const Box& box, float min_bin, float z_extent, std::size_t cap_points = 0,
             const BinWindow& window = BinWindow{});

  /// Moves the sorted copy to new positions of the same n points without re-binning: bins, order and
  /// tags stay those of the last build (cheap: one gather). Queries on moved_view() stay exact while
  /// the points have moved at most `moved` since the build, at the cost of a wider search once
  /// reach + moved exceeds the bin width.
  /// @param x,y,z positions of the points of the last build (n long), wrapped like build()'s [length]
  /// @throws std::invalid_argument if n differs from the last build's.
  void refresh(Span<const float> x, Span<const float> y, Span<const float> z, std::size_t n);

  /// The list as kernels query it. @param reach  the largest distance the caller tests [length], (0, the
  /// build's min_bin], so that the search skips the bins beyond it (View::reach); 0 (default): all 27.
  View view(float reach = 0.0f) const;
  /// view() for queries after refresh(): `moved` (one entry on the backend) holds the largest distance any
  /// point moved since the build [length], `reach` the largest distance the caller will test (<= min_bin).
  View moved_view(Span<const float> moved, float reach) const;
  const CellGrid& grid() const { return grid_; }
  std::size_t size() const { return n_; }

 private:
  CellGrid grid_;
  std::size_t n_ = 0;
  exec::BinSorter sorter_;
  DeviceBuffer<std::uint32_t> keys_;
  DeviceBuffer<PointTag> points_;
  DeviceBuffer<std::int32_t> index_;
  DeviceBuffer<std::int32_t> bin_start_;
};

}  // namespace tissue
