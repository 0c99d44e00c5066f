#pragma once
/// @file verlet_list.hpp
/// Verlet neighbour list over a CellList: for each point, the sorted slots of the points of other tags
/// within a radius R of it at the build, R = the cell list's bin width (its 27 bins hold every such point).
/// While the points move, a point's list still holds every point now within a cutoff rc < R of it as long
/// as its own move plus the largest move of any point since the build stays below the skin R - rc (Verlet,
/// Phys. Rev. 159:98, 1967; Allen & Tildesley, "Computer Simulation of Liquids", section 5.3.1). A query
/// then visits a handful of slots instead of the ~17 candidates of 27 bins, most of them of its own tag or
/// beyond the cutoff.
///
/// The slots of a point's list are in the order the cell-list search visits them (CellList::View), so that
/// a caller that sums over the list's points within rc sums the same terms in the same order as a search
/// of the same bins would, bit for bit (VerletList::View::holds states when).

#include <cstddef>
#include <cstdint>

#include "engine/core/box.hpp"
#include "engine/exec/device_buffer.hpp"
#include "engine/exec/math.hpp"
#include "engine/spatial/cell_list.hpp"

namespace tissue {

class VerletList {
 public:
  /// Slots a point's list holds at most; a point with more neighbours is marked overflowed and its queries
  /// search the cell list instead (View::holds is false for it).
  static constexpr int kCapacity = 8;

  /// What kernels hold (by value).
  struct View {
    Span<const std::int32_t> slots;  ///< slot k of point i at k * stride + i: a sorted point of the cell list
    Span<const std::uint8_t> count;  ///< #points: slots in use, kCapacity + 1 when overflowed
    std::size_t stride = 0;          ///< the slots' row length (>= #points)
    float skin = 0.0f;               ///< R - rc [length]
    float radius = 0.0f;             ///< R [length]

    TISSUE_HD bool empty() const { return count.empty(); }

    /// Whether point i's list holds every point within rc of it now: its list did not overflow, and
    /// moved_i + moved_max + rounding <= skin, where moved_i bounds how far point i is from where it was at
    /// the build and moved_max how far any point is [length]. The rounding allowance covers the float
    /// distances of the build and of the caller (2^-12 R, and 2^-18 of the coordinates' magnitude and of the
    /// periodic lengths, as CellGrid::span_offsets). Non-finite moves give false.
    /// When it holds, moved_max < skin, so a CellList::View::for_each_moved_candidate() search with reach rc
    /// visits one bin per side (as the list's build did), and the points within rc come in the same order.
    TISSUE_HD bool holds(std::size_t i, float px, float py, float pz, float moved_i, float moved_max,
                         const Box& box) const {
      if (count[i] > kCapacity) return false;
      const float size = math::abs(px) + math::abs(py) + math::abs(pz) + (box.periodic_x ? box.lx : 0.0f) +
                         (box.periodic_y ? box.ly : 0.0f) + radius;
      const float allowance = radius * 2.44140625e-4f + size * 3.814697265625e-6f;
      return moved_i + moved_max + allowance <= skin;
    }

    /// Calls f(s, point) for the slots s of point i's list, in the order of the cell-list search, with the
    /// sorted points as they are now (`bins.points`, refreshed by CellList::refresh). An overflowed list
    /// visits the first kCapacity neighbours of the build.
    template <class F>
    TISSUE_HD void for_each(std::size_t i, const CellList::View& bins, F&& f) const {
      const int n = count[i] <= kCapacity ? count[i] : kCapacity;
      for (int k = 0; k < n; ++k) {
        const int s = slots[static_cast<std::size_t>(k) * stride + i];
        f(s, load_point(bins.points.data(), s));
      }
    }
  };

  /// Builds the lists of the first n points on the cell list `bins` (just built on x, y, z: the same
  /// positions), keeping for point i the candidates of another tag than tag[i] within `cutoff` + skin =
  /// the bins' smallest width of it (minimum image on the box's periodic axes).
  /// @param bins    CellList::view() of a list built on x, y, z with tags `tag` (any reach: the build
  ///                searches the whole 27 bins)
  /// @param x,y,z   positions of the build [length], #points
  /// @param tag     the points' tags (the cell list's), #points
  /// @param box     the domain (periodic axes)
  /// @param radius  R: at most the bins' smallest width [length]
  /// @param cutoff  rc < R: the largest distance queries test [length]
  /// @throws std::invalid_argument unless 0 < cutoff < radius.
  void build(const CellList::View& bins, Span<const float> x, Span<const float> y, Span<const float> z,
             Span<const std::int32_t> tag, std::size_t n, const Box& box, float radius, float cutoff);

  /// Forgets the lists (empty view()).
  void clear() { n_ = 0; }
  /// The lists, or an empty view before build() or after clear().
  View view() const;
  /// Points of the last build (0 after clear()).
  std::size_t size() const { return n_; }
  /// Points of the last build whose list overflowed (more than kCapacity neighbours; they search the cell
  /// list). Copies the counts to the host: diagnostics and tests.
  std::size_t overflowed() const;

 private:
  std::size_t n_ = 0;
  float skin_ = 0.0f, radius_ = 0.0f;
  DeviceBuffer<std::int32_t> slots_;
  DeviceBuffer<std::uint8_t> count_;
};

}  // namespace tissue
