#include "engine/spatial/cell_list.hpp"

#include "engine/exec/parallel_for.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace tissue {

namespace {

/// Grid for one axis: periodic axes get floor(L / min_bin) bins of width L / n; open axes get
/// `open_bins` bins of width min_bin (hashed modulo). Offsets avoid visiting a bin twice.
void setup_axis(CellGrid& g, int a, bool periodic, float length, float min_bin, int open_bins) {
  g.periodic[a] = periodic;
  if (periodic) {
    if (length < 2.0f * min_bin)
      throw std::invalid_argument("periodic length " + std::to_string(length) +
                                  " is below twice the interaction distance " + std::to_string(min_bin));
    const int n = std::max(1, static_cast<int>(std::floor(length / min_bin)));
    g.n[a] = n;
    g.inv_width[a] = static_cast<float>(n) / length;
    g.offset_lo[a] = n >= 3 ? -1 : 0;
    g.offset_hi[a] = n >= 2 ? 1 : 0;
  } else {
    g.n[a] = std::max(3, open_bins);
    g.inv_width[a] = 1.0f / min_bin;
    g.offset_lo[a] = -1;
    g.offset_hi[a] = 1;
  }
}

struct BinKeys {
  Span<const float> x, y, z;
  CellGrid grid;
  Span<std::uint32_t> keys;
  TISSUE_HD void operator()(std::size_t i) const {
    keys[i] = grid.bin(grid.coord(x[i], 0), grid.coord(y[i], 1), grid.coord(z[i], 2));
  }
};

/// For sorted point s: the sorted copy of position and tag.
struct GatherSorted {
  Span<const std::int32_t> order;
  Span<const float> x, y, z;
  Span<const std::int32_t> tag;
  Span<PointTag> points;
  TISSUE_HD void operator()(std::size_t s) const {
    const auto i = static_cast<std::size_t>(order[s]);
    points[s] = PointTag{x[i], y[i], z[i], tag.empty() ? order[s] : tag[i]};
  }
};

/// For sorted point s: the new position of the point it holds (tag kept).
struct RefreshSorted {
  Span<const std::int32_t> index;
  Span<const float> x, y, z;
  Span<PointTag> points;
  TISSUE_HD void operator()(std::size_t s) const {
    const auto i = static_cast<std::size_t>(index[s]);
    PointTag p = points[s];
    p.x = x[i];
    p.y = y[i];
    p.z = z[i];
    points[s] = p;
  }
};

}  // namespace

void CellList::refresh(Span<const float> x, Span<const float> y, Span<const float> z, std::size_t n) {
  if (n != n_)
    throw std::invalid_argument("cell list refresh with " + std::to_string(n) + " points, built with " +
                                std::to_string(n_));
  if (n == 0) return;
  exec::parallel_for(n, RefreshSorted{index_.span().subspan(0, n), x, y, z, points_.span().subspan(0, n)});
}

void CellList::build(Span<const float> x, Span<const float> y, Span<const float> z,
                     Span<const std::int32_t> tag, std::size_t n, const Box& box, float min_bin,
                     float z_extent, std::size_t cap_points, const BinWindow& window) {
  if (!(min_bin > 0.0f)) throw std::invalid_argument("cell list bin width must be > 0");
  CellGrid g;
  const int open_xy = 16;
  setup_axis(g, 0, box.periodic_x, box.lx, min_bin, open_xy);
  setup_axis(g, 1, box.periodic_y, box.ly, min_bin, open_xy);
  // z bins: z_extent's worth, but at most 4 per point over the x-y bins (a thin sheet over a wide box
  // would otherwise hold many more bins than points, and every build scans them all); z wraps above that
  // height (BinKeys), which adds candidates to test, never loses a pair
  double z_bins = std::ceil(std::max(z_extent, 0.0f) / min_bin);
  const double xy_bins = static_cast<double>(g.n[0]) * static_cast<double>(g.n[1]);
  const std::size_t capped = cap_points > 0 ? cap_points : n;
  z_bins = std::min(z_bins, std::ceil(4.0 * static_cast<double>(std::max<std::size_t>(capped, 1)) / xy_bins));
  setup_axis(g, 2, false, 0.0f, min_bin, static_cast<int>(std::min(z_bins, 1e9)));
  // windows of periodic axes: the whole axis's bins [first, last], a bin of padding either side
  const auto apply_window = [&](int a, bool on, double lo, double hi) {
    if (!on || !g.periodic[a] || !(hi > lo)) return;
    const int whole = g.n[a];
    const auto first = static_cast<long long>(std::floor(lo * g.inv_width[a])) - 1;
    const auto last = static_cast<long long>(std::floor(hi * g.inv_width[a])) + 1;
    const long long count = last - first + 1;
    if (count + 3 > whole) return;
    g.periodic[a] = false;
    g.whole_n[a] = whole;
    g.origin[a] = static_cast<int>(((first % whole) + whole) % whole);
    g.n[a] = static_cast<int>(std::max<long long>(3, count));
    g.offset_lo[a] = -1;
    g.offset_hi[a] = 1;
  };
  apply_window(0, window.x, window.x0, window.x1);
  apply_window(1, window.y, window.y0, window.y1);
  const std::size_t bins = g.bin_count();
  if (bins > (std::size_t{1} << 31)) throw std::invalid_argument("cell list would need more than 2^31 bins");
  grid_ = g;
  n_ = n;

  keys_.ensure(n);
  points_.ensure(n);
  index_.ensure(n);
  bin_start_.ensure(bins + 1);
  if (n == 0) {
    bin_start_.zero();
    return;
  }
  exec::parallel_for(n, BinKeys{x, y, z, g, keys_.span()});
  sorter_.sort(std::as_const(keys_).span().subspan(0, n), bins, index_.span().subspan(0, n),
               bin_start_.span().subspan(0, bins + 1));
  exec::parallel_for(n,
                     GatherSorted{std::as_const(index_).span().subspan(0, n), x, y, z, tag, points_.span()});
}

CellList::View CellList::view(float reach) const {
  return View{grid_,
              points_.span().subspan(0, n_),
              index_.span().subspan(0, n_),
              bin_start_.span().subspan(0, grid_.bin_count() + 1),
              Span<const float>(),
              reach};
}

CellList::View CellList::moved_view(Span<const float> moved, float reach) const {
  View v = view(reach);
  v.moved = moved;
  return v;
}

}  // namespace tissue
