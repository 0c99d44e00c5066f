#include "modules/epidermis/epidermis.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

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

std::vector<int> stacking_layers(const std::vector<float>& cx, const std::vector<float>& cy,
                                 const std::vector<float>& cz, const std::vector<CellFrame>& frames,
                                 const Box& box, double width, double height) {
  const std::size_t n = cz.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return frames[a].height < frames[b].height; });
  std::vector<int> layer(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t b = order[k];
    for (std::size_t j = 0; j < k; ++j) {  // every cell lower than b
      const std::size_t a = order[j];
      if (frames[b].height - frames[a].height <= 0.5 * height) continue;
      const double d[3] = {box.min_image_x(cx[b] - cx[a]), box.min_image_y(cy[b] - cy[a]),
                           static_cast<double>(cz[b] - cz[a])};
      const auto& u = frames[a].normal;
      const double along = d[0] * u[0] + d[1] * u[1] + d[2] * u[2];
      const double across2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - along * along;
      if (across2 < width * width) layer[b] = std::max(layer[b], layer[a] + 1);
    }
  }
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
  std::vector<double> widths, heights;
  std::vector<float> cx(s.cells), cy(s.cells), cz(s.cells);
  std::vector<CellFrame> frames(s.cells);
  for (std::size_t c = 0; c < s.cells; ++c) {
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
    bool adherent = false;
    double lo = 1e30, hi = -1e30, radius = 0.0;
    for (std::size_t e = first; e < first + count; ++e) {
      adherent = adherent || (type && type->host(e) == kAdhesiveType);
      const double d[3] = {w.box.min_image_x(w.x.host(e) - cx[c]), w.box.min_image_y(w.y.host(e) - cy[c]),
                           static_cast<double>(w.z.host(e) - cz[c])};
      const double along = d[0] * f.normal[0] + d[1] * f.normal[1] + d[2] * f.normal[2];
      lo = std::min(lo, along);
      hi = std::max(hi, along);
      radius =
          std::max(radius, std::sqrt(std::max(0.0, d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - along * along)));
    }
    if (count > 0) {
      heights.push_back(hi - lo);
      widths.push_back(2.0 * radius);
      s.max_height = std::max(s.max_height, static_cast<double>(f.height) + hi);
    }
    if (adherent) {
      ++s.adherent;
    } else {
      ++s.non_adherent;
      if (network && species->host(c, ovol1) > species->host(c, ovol2)) ++s.suprabasal_high_ovol1;
    }
    if (w.flags.host(c) & suprabasal) ++s.suprabasal;
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
