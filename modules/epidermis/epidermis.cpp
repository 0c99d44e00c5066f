#include "modules/epidermis/epidermis.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <utility>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "engine/schedule/module_registry.hpp"

namespace tissue::epidermis {

namespace {

/// The columns the statistics read, by name: the SEM's element types, a gene network's species and flag.
constexpr const char* kTypeColumn = "type";
constexpr std::int32_t kAdhesiveType = 1;
constexpr const char* kSpeciesColumn = "species";
constexpr const char* kSuprabasalFlag = "suprabasal";

/// The module "stratification": the summary lines of summarize() (layers, adherent and suprabasal cells),
/// measured from the membrane mesh when one is shared ("membrane.index").
void install_stratification(Composition& comp) {
  const auto membrane = comp.find<const TriangleIndex>("membrane.index");
  comp.add_summary([membrane](World& world) {
    int ovol1 = -1, ovol2 = -1;
    if (const auto* species = world.cells.find(kSpeciesColumn)) {
      ovol1 = species->component_index("ovol1");
      ovol2 = species->component_index("ovol2");
    }
    return format(summarize(world, ovol1, ovol2, membrane.get()));
  });
  const auto summary_of = [membrane](World& world) {
    int ovol1 = -1, ovol2 = -1;
    if (const auto* species = world.cells.find(kSpeciesColumn)) {
      ovol1 = species->component_index("ovol1");
      ovol2 = species->component_index("ovol2");
    }
    return summarize(world, ovol1, ovol2, membrane.get());
  };
  comp.add_metric("layers", "cell layers holding at least 5 % of the cells (Summary::layers)",
                  [summary_of](World& world) { return static_cast<double>(summary_of(world).layers); });
  comp.add_metric("adherent_cells", "cells with an adhesive element on the membrane",
                  [summary_of](World& world) { return static_cast<double>(summary_of(world).adherent); });
  comp.add_metric("suprabasal_cells", "cells in the high-Ovol1 (suprabasal) state",
                  [summary_of](World& world) { return static_cast<double>(summary_of(world).suprabasal); });
}

}  // namespace

namespace {

/// Whether cell b rests on cell a: the definition of Summary, term by term in the same arithmetic as the
/// former all-pairs loop (so that every pair is decided identically). pos: each cell's place in the
/// height order.
struct RestsOn {
  const std::vector<float>& cx;
  const std::vector<float>& cy;
  const std::vector<float>& cz;
  const std::vector<CellFrame>& frames;
  const std::vector<std::size_t>& pos;
  const Box& box;
  double width, height;
  bool operator()(std::size_t a, std::size_t b) const {
    if (pos[a] >= pos[b]) return false;  // only lower cells in the height order
    if (frames[b].height - frames[a].height <= 0.5 * height) return false;
    const double d[3] = {box.min_image_x(cx[b] - cx[a]), box.min_image_y(cy[b] - cy[a]),
                         static_cast<double>(cz[b] - cz[a])};
    const auto& u = frames[a].normal;
    const double along = d[0] * u[0] + d[1] * u[1] + d[2] * u[2];
    const double across2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - along * along;
    return across2 < width * width;
  }
};

/// One axis of the bins: periodic (the box's period, whole bins of at least the bin size) or open (the
/// centres' range, padded by one bin each side, indices clamped).
struct BinAxis {
  bool periodic = false;
  double origin = 0.0, size = 1.0, period = 0.0;
  long count = 1;
  void setup(bool is_periodic, double box_period, double lo, double hi, double min_size) {
    periodic = is_periodic;
    if (periodic) {
      period = box_period;
      count = std::max(1L, static_cast<long>(std::floor(box_period / min_size)));
      origin = 0.0;
      size = box_period / static_cast<double>(count);
    } else {
      size = min_size;
      origin = lo - size;
      count = static_cast<long>(std::ceil((hi - lo) / size)) + 3;
    }
  }
  /// Bin index of coordinate v (any real: wrapped when periodic, clamped when open).
  long index(double v) const {
    const double t = std::floor((v - origin) / size);
    if (!std::isfinite(t)) return 0;
    if (periodic) {
      const long i = static_cast<long>(std::fmod(t, static_cast<double>(count)));
      return i < 0 ? i + count : i;
    }
    return static_cast<long>(std::clamp(t, 0.0, static_cast<double>(count - 1)));
  }
};

}  // namespace

std::vector<int> stacking_layers(const std::vector<float>& cx, const std::vector<float>& cy,
                                 const std::vector<float>& cz, const std::vector<CellFrame>& frames,
                                 const Box& box, double width, double height, std::size_t* pairs_tested) {
  const std::size_t n = cz.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return frames[a].height < frames[b].height; });
  std::vector<std::size_t> pos(n);
  for (std::size_t k = 0; k < n; ++k) pos[order[k]] = k;
  std::vector<int> layer(n, 0);
  // across2 < width^2 never holds for width <= 0 or NaN; non-finite centres leave no bin to search
  if (pairs_tested) *pairs_tested = 0;
  if (n < 2 || std::isnan(width)) return layer;  // across2 < NaN never holds
  const RestsOn rests_on{cx, cy, cz, frames, pos, box, width, height};
  bool finite = std::isfinite(2.2 * width);  // an infinite width: every pair is tested
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (std::size_t c = 0; c < n; ++c) {
    const double p[3] = {cx[c], cy[c], cz[c]};
    for (int k = 0; k < 3; ++k) {
      finite = finite && std::isfinite(p[k]);
      lo[k] = std::min(lo[k], p[k]);
      hi[k] = std::max(hi[k], p[k]);
    }
  }
  const bool periodic[3] = {box.periodic_x, box.periodic_y, false};
  const double period[3] = {box.lx, box.ly, 0.0};
  for (int k = 0; k < 2; ++k)
    finite = finite && (!periodic[k] || (std::isfinite(period[k]) && period[k] > 0));
  // Push form of the same recursion: in height order, each cell a raises the layer of every cell b that
  // rests on it; a's layer is final by then (only cells before a in the order raise it). The cells resting
  // on a lie within `width` of the line through a's centre along a's normal (exactly so for a unit
  // normal), so only the bins around sample points of that line, spaced half a bin, are searched: a bin
  // of side s >= 2.2 width holds every point within 2 width of a sample point in the 3 x 3 x 3 bins around
  // it (0.55 width along the line, at most 1.5 width across). A cell whose normal is far from unit length
  // or whose reach across is larger is checked against every cell (not expected from unit normals).
  std::vector<char> all_pairs(n, 0);
  if (!finite) std::fill(all_pairs.begin(), all_pairs.end(), 1);
  // the bins' side: 2.2 widths, but not below 1e-5 of the centres' extent (a zero width still holds pairs
  // whose across2 rounds below zero, on the line itself)
  double extent = 0.0;
  for (int k = 0; k < 3; ++k) extent = std::max(extent, periodic[k] ? period[k] : hi[k] - lo[k]);
  double s = 2.2 * std::max(std::fabs(width), 1e-5 * (extent > 0.0 ? extent : 1.0));
  BinAxis axis[3];
  std::size_t bins = 1;
  if (finite) {
    for (;;) {
      bins = 1;
      for (int k = 0; k < 3; ++k) {
        axis[k].setup(periodic[k], period[k], lo[k], hi[k], s);
        bins *= static_cast<std::size_t>(axis[k].count);
      }
      if (bins <= 8 * n + 1024) break;
      s *= 2.0;  // a larger bin is always safe: fewer, fuller bins
    }
  }
  std::vector<std::size_t> start(bins + 1, 0), members(finite ? n : 0);
  std::vector<std::size_t> bin_of(finite ? n : 0);
  const auto flat = [&](long i, long j, long k) {
    return (static_cast<std::size_t>(k) * static_cast<std::size_t>(axis[1].count) +
            static_cast<std::size_t>(j)) *
               static_cast<std::size_t>(axis[0].count) +
           static_cast<std::size_t>(i);
  };
  if (finite) {
    for (std::size_t c = 0; c < n; ++c) {
      bin_of[c] = flat(axis[0].index(cx[c]), axis[1].index(cy[c]), axis[2].index(cz[c]));
      ++start[bin_of[c] + 1];
    }
    for (std::size_t b = 0; b < bins; ++b) start[b + 1] += start[b];
    std::vector<std::size_t> fill(start.begin(), start.end() - 1);
    for (std::size_t c = 0; c < n; ++c) members[fill[bin_of[c]]++] = c;
  }
  // Two passes: the pairs (b rests on a) are found in parallel, each thread over a contiguous stretch of the
  // height order (the expensive geometric tests); then one pass in height order raises the layers. A pair
  // (a, b) has pos[a] < pos[b], so every pair that raises a comes before a's own pairs: a's layer is final
  // when it is used, as in the single serial pass this replaces.
  int threads = 1;
#ifdef _OPENMP
  threads = std::max(1, omp_get_max_threads());
#endif
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> found(static_cast<std::size_t>(threads));
  std::vector<std::size_t> tested_by(static_cast<std::size_t>(threads), 0);
#pragma omp parallel num_threads(threads) if (n >= 4096)
  {
    std::size_t thread = 0;
#ifdef _OPENMP
    thread = static_cast<std::size_t>(omp_get_thread_num());
#endif
    auto& pairs = found[thread];
    std::size_t tested = 0;
    std::vector<std::size_t> visited;  // the bins of one a's search, each searched once
    const auto raise = [&](std::size_t k, std::size_t a, std::size_t b) {  // b rests on a?
      ++tested;
      if (rests_on(a, b)) pairs.emplace_back(k, b);
    };
#pragma omp for schedule(static)
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t a = order[k];
      const auto& u = frames[a].normal;
      const double norm2 = static_cast<double>(u[0]) * u[0] + static_cast<double>(u[1]) * u[1] +
                           static_cast<double>(u[2]) * u[2];
      // the line's reach: |d| of any candidate is at most the extent of the centres (half a period across a
      // periodic axis), and across2 exceeds the true squared distance to the line by at most
      // (|u|^2 - 1) along^2 <= (|u|^2 - 1) |u|^2 |d|^2
      double reach2 = 0.0;
      for (int i = 0; i < 3; ++i) {
        const double e = periodic[i] ? 0.5 * period[i] + s : hi[i] - lo[i] + s;
        reach2 += e * e;
      }
      const double slack = std::max(0.0, norm2 - 1.0) * norm2 * reach2;
      // plus the rounding of across2 (a few ulps of |d|^2)
      const double across = std::sqrt(width * width + slack + 1e-14 * reach2) * (1.0 + 1e-6);
      if (all_pairs[a] || !(norm2 > 0.25 && norm2 < 4.0) || !(across <= 1.5 * s / 2.2)) {
        for (std::size_t j = k + 1; j < n; ++j) raise(k, a, order[j]);
        continue;
      }
      const double len = std::sqrt(norm2);
      const double dir[3] = {u[0] / len, u[1] / len, u[2] / len};
      const double p0[3] = {cx[a], cy[a], cz[a]};
      // the stretch of the line whose points lie within `across` of the region candidates occupy
      double t_lo = -INFINITY, t_hi = INFINITY;
      for (int i = 0; i < 3; ++i) {
        const double r_lo = periodic[i] ? -0.5 * period[i] - s : lo[i] - p0[i];
        const double r_hi = periodic[i] ? 0.5 * period[i] + s : hi[i] - p0[i];
        if (std::fabs(dir[i]) < 1e-12) continue;
        double t0 = (r_lo - across) / dir[i], t1 = (r_hi + across) / dir[i];
        if (t0 > t1) std::swap(t0, t1);
        t_lo = std::max(t_lo, t0);
        t_hi = std::min(t_hi, t1);
      }
      if (!(t_lo <= t_hi)) continue;  // the line misses every centre's region: nothing rests on a
      visited.clear();
      const double step = 0.5 * s;
      const auto samples = static_cast<long>(std::ceil((t_hi - t_lo) / step)) + 1;
      for (long m = 0; m < samples; ++m) {
        const double t = std::min(t_lo + static_cast<double>(m) * step, t_hi);
        const long ci[3] = {axis[0].index(p0[0] + t * dir[0]), axis[1].index(p0[1] + t * dir[1]),
                            axis[2].index(p0[2] + t * dir[2])};
        for (long dk = -1; dk <= 1; ++dk)
          for (long dj = -1; dj <= 1; ++dj)
            for (long di = -1; di <= 1; ++di) {
              long idx[3] = {ci[0] + di, ci[1] + dj, ci[2] + dk};
              bool inside = true;
              for (int i = 0; i < 3; ++i) {
                if (axis[i].periodic) {
                  idx[i] = ((idx[i] % axis[i].count) + axis[i].count) % axis[i].count;
                } else if (idx[i] < 0 || idx[i] >= axis[i].count) {
                  inside = false;
                }
              }
              if (!inside) continue;
              visited.push_back(flat(idx[0], idx[1], idx[2]));
            }
      }
      std::sort(visited.begin(), visited.end());
      visited.erase(std::unique(visited.begin(), visited.end()), visited.end());
      for (const std::size_t bin : visited)
        for (std::size_t q = start[bin]; q < start[bin + 1]; ++q) raise(k, a, members[q]);
    }
    tested_by[thread] = tested;
  }
  std::size_t tested = 0;
  for (std::size_t t = 0; t < found.size(); ++t) {  // threads in order: k ascending
    tested += tested_by[t];
    for (const auto& [k, b] : found[t]) layer[b] = std::max(layer[b], layer[order[k]] + 1);
  }
  if (pairs_tested) *pairs_tested = tested;
  return layer;
}

namespace {
double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}
}  // namespace

Summary summarize(World& w, int ovol1, int ovol2, const TriangleIndex* membrane) {
  Summary s;
  s.cells = w.cells.size();
  s.elements = w.elements.size();
  Column<float>* species = dynamic_cast<Column<float>*>(w.cells.find(kSpeciesColumn));
  const bool network = species && ovol1 >= 0 && ovol2 >= 0 && species->components() > std::max(ovol1, ovol2);
  auto* type = dynamic_cast<Column<std::int32_t>*>(w.elements.find(kTypeColumn));
  const auto& flag_names = w.flag_names();
  const std::uint32_t suprabasal =
      std::find(flag_names.begin(), flag_names.end(), kSuprabasalFlag) != flag_names.end()
          ? w.flag_bit(kSuprabasalFlag)
          : 0u;
  const TriangleIndex::View index = membrane ? membrane->host_view() : TriangleIndex::View{};
  std::vector<float> cx(s.cells), cy(s.cells), cz(s.cells);
  std::vector<CellFrame> frames(s.cells);
  // per cell (in parallel: a tissue of 10^6 cells), then gathered in cell order
  std::vector<double> width_of(s.cells, -1.0), height_of(s.cells, -1.0);
  std::size_t adherent = 0, non_adherent = 0, high_ovol1 = 0, suprabasal_cells = 0;
  double max_height = s.max_height;
  const auto cells = static_cast<std::int64_t>(s.cells);
#pragma omp parallel for schedule(static) reduction(+ : adherent, non_adherent, high_ovol1, suprabasal_cells) \
    reduction(max : max_height) if (cells >= 4096)
  for (std::int64_t ci = 0; ci < cells; ++ci) {
    const auto c = static_cast<std::size_t>(ci);
    cx[c] = w.cx.host(c);
    cy[c] = w.cy.host(c);
    cz[c] = w.cz.host(c);
    CellFrame& f = frames[c];
    f.height = cz[c];
    if (membrane) {
      const SurfaceHit hit = index.closest_anywhere(cx[c], cy[c], cz[c]);
      f.height = signed_distance(hit, cx[c], cy[c], cz[c]);
      f.normal = {hit.normal[0], hit.normal[1], hit.normal[2]};
    }
    const auto first = static_cast<std::size_t>(w.first.host(c));
    const auto count = static_cast<std::size_t>(w.count.host(c));
    bool is_adherent = false;
    double lo = 1e30, hi = -1e30, radius = 0.0;
    for (std::size_t e = first; e < first + count; ++e) {
      is_adherent = is_adherent || (type && type->host(e) == kAdhesiveType);
      const double d[3] = {w.box.min_image_x(w.x.host(e) - cx[c]), w.box.min_image_y(w.y.host(e) - cy[c]),
                           static_cast<double>(w.z.host(e) - cz[c])};
      const double along = d[0] * f.normal[0] + d[1] * f.normal[1] + d[2] * f.normal[2];
      lo = std::min(lo, along);
      hi = std::max(hi, along);
      radius =
          std::max(radius, std::sqrt(std::max(0.0, d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - along * along)));
    }
    if (count > 0) {
      height_of[c] = hi - lo;
      width_of[c] = 2.0 * radius;
      max_height = std::max(max_height, static_cast<double>(f.height) + hi);
    }
    if (is_adherent) {
      ++adherent;
    } else {
      ++non_adherent;
      if (network && species->host(c, ovol1) > species->host(c, ovol2)) ++high_ovol1;
    }
    if (w.flags.host(c) & suprabasal) ++suprabasal_cells;
  }
  s.adherent = adherent;
  s.non_adherent = non_adherent;
  s.suprabasal_high_ovol1 = high_ovol1;
  s.suprabasal = suprabasal_cells;
  s.max_height = max_height;
  std::vector<double> widths, heights;
  for (std::size_t c = 0; c < s.cells; ++c)
    if (w.count.host(c) > 0) {
      heights.push_back(height_of[c]);
      widths.push_back(width_of[c]);
    }
  s.cell_width = median(widths);
  s.cell_height = median(heights);
  for (int l : stacking_layers(cx, cy, cz, frames, w.box, s.cell_width, s.cell_height)) {
    const auto layer = static_cast<std::size_t>(l);
    if (layer >= s.cells_per_layer.size()) s.cells_per_layer.resize(layer + 1, 0);
    ++s.cells_per_layer[layer];
  }
  for (std::size_t l = 0; l < s.cells_per_layer.size(); ++l) {
    if (static_cast<double>(s.cells_per_layer[l]) < 0.05 * static_cast<double>(s.cells)) break;
    s.layers = static_cast<int>(l) + 1;
  }
  return s;
}

std::string format(const Summary& s) {
  std::ostringstream out;
  out << "cells " << s.cells << " (elements " << s.elements << "), adherent " << s.adherent
      << ", non-adherent " << s.non_adherent << " of which high-Ovol1 " << s.suprabasal_high_ovol1
      << "; suprabasal state " << s.suprabasal << "\n";
  out << "layers " << s.layers << " (cells stacked on cells; per layer from the bottom:";
  for (auto n : s.cells_per_layer) out << " " << n;
  out << "; cell width " << s.cell_width << ", height " << s.cell_height << "), tissue height "
      << s.max_height;
  return out.str();
}

}  // namespace tissue::epidermis

namespace tissue::modules {

/// Registers the stratification statistics and the epidermis preset (the default composition).
void register_epidermis(ModuleRegistry& registry) {
  registry.add(
      ModuleInfo{"stratification",
                 "summary of a stratifying epidermis: cells, adherent and suprabasal cells, layers by "
                 "stacking, cell width and height",
                 {},
                 {"tissue"},
                 0.0,
                 epidermis::install_stratification});
  registry.add(
      PresetInfo{"epidermis",
                 "3D epidermal development (Christley et al. 2010): SEM cells, gene network, growth and "
                 "division, on the plane z = 0 (scenarios/epidermis.toml spells it out)",
                 {"tissue"},
                 {"sem", "cell_centres", "gene_network", "lifecycle", "stratification"},
                 true});
}

}  // namespace tissue::modules
