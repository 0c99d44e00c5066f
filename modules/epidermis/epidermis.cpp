#include "modules/epidermis/epidermis.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "engine/core/cell_centres.hpp"
#include "engine/exec/backend.hpp"
#include "engine/io/grid_output.hpp"
#include "engine/io/tissue_output.hpp"
#include "modules/coupling/signal_field.hpp"
#include "modules/gene_network/gene_network.hpp"
#include "modules/gene_network/user_network.hpp"
#include "modules/lifecycle/lifecycle.hpp"
#include "modules/sem/sem.hpp"
#include "modules/sem/sem_layout.hpp"

namespace tissue::epidermis {

static_assert(grn::kOvol1 == 4 && grn::kOvol2 == 3,
              "summarize()'s default species rows are the built-in network's");

std::unique_ptr<Simulation> build(const io::ScenarioTable& root, const ModelSettings& settings) {
  if (settings.precision != "float")
    throw InputError(settings.where_precision +
                     ": simulation.precision: the epidermis model runs in float only");
  const std::uint64_t seed = settings.seed;
  const auto initial = sem::read_monolayer_params(root.table("initial"));
  const auto domain = root.table("domain");
  Box box;
  box.periodic_x = box.periodic_y = domain.boolean("periodic", true);
  box.lx = static_cast<float>(initial.cells_x * initial.spacing);
  box.ly = static_cast<float>(initial.cells_y * initial.spacing);
  // memory before anything is allocated: the tables, the SEM stage buffers and the cell list per element
  // (~64 bytes), the cell table with its species per cell (~64 bytes); dense indices are int32
  const double n_cells = static_cast<double>(initial.cells_x) * static_cast<double>(initial.cells_y);
  const double n_elements = n_cells * static_cast<double>(initial.elements_per_cell);
  const double need = 64.0 * (n_elements + n_cells),
               available = static_cast<double>(exec::available_memory_bytes());
  if (n_elements > 1e9 || need > available) {
    std::ostringstream msg;
    msg << initial.cells_x << " x " << initial.cells_y << " cells of " << initial.elements_per_cell
        << " elements need about " << need / 1e9 << " GB"
        << (n_elements > 1e9 ? ", and more than 10^9 elements are not supported" : ", more than the ")
        << (n_elements > 1e9 ? std::string()
                             : std::to_string(available / 1e9) + " GB available on the " +
                                   std::string(exec::to_string(exec::backend())) + " backend");
    root.table("initial").fail("cells_x", msg.str());
  }
  const auto sem_params = sem::read_sem_params(root.table("sem"));
  auto life = lifecycle::read_lifecycle_params(root.table("lifecycle"));

  // diffusible signals over the tissue ([signal.<name>], modules/coupling): sampled by the cells before the
  // gene network reads them, advanced with the cells' sources after it
  const auto signal_table = root.table("signal");
  std::vector<std::string> signal_names;
  std::vector<coupling::SignalFieldParams> signal_params;
  for (const auto& name : signal_table.keys()) {
    signal_params.push_back(coupling::read_signal_field_params(signal_table.table(name), name, box));
    signal_names.push_back(name);
  }

  // the gene network: the seed's, or one written in the scenario
  const auto network_table = root.table("gene_network");
  std::unique_ptr<System> network;
  std::vector<std::string> species_names;
  std::vector<double> initial_species;
  double neighbour_distance = 0.0;
  int ovol1 = grn::kOvol1, ovol2 = grn::kOvol2;
  if (grn::has_user_network(network_table)) {
    auto spec = grn::read_user_network(network_table, signal_names);
    for (const auto& sp : spec.species) {
      species_names.push_back(sp.name);
      initial_species.push_back(sp.initial);
    }
    species_names.push_back("adhesion");
    life.delta_species = spec.species_index("delta");
    if (life.delta_species < 0)
      network_table.fail("species",
                         "the epidermis' lifecycle lets a cell grow while its Delta is below "
                         "lifecycle.delta_threshold: the network needs a species named delta");
    ovol1 = spec.species_index("ovol1");
    ovol2 = spec.species_index("ovol2");
    neighbour_distance = spec.neighbour_distance;
    network = std::make_unique<grn::UserNetworkSystem>(std::move(spec));
  } else {
    const auto grn_params = grn::read_gene_network_params(network_table);
    if (!grn_params.tgf_beta_field.empty() && std::find(signal_names.begin(), signal_names.end(),
                                                        grn_params.tgf_beta_field) == signal_names.end()) {
      std::string list;
      for (const auto& n : signal_names) list += (list.empty() ? "" : ", ") + n;
      network_table.fail("tgf_beta_field", "no signal field named '" + grn_params.tgf_beta_field +
                                               "' ([signal." + grn_params.tgf_beta_field +
                                               "] is missing; fields: " + (list.empty() ? "none" : list) +
                                               ")");
    }
    species_names.assign(std::begin(grn::kSpeciesNames), std::end(grn::kSpeciesNames));
    initial_species.assign(grn_params.initial.begin(), grn_params.initial.begin() + grn::kAdhesion);
    neighbour_distance = grn_params.neighbour_distance;
    network = std::make_unique<grn::GeneNetworkSystem>(grn_params);
  }

  const double reach = std::max(sem_params.effective_bin_size(), neighbour_distance);
  if (box.periodic_x && (box.lx < 2.0 * reach || box.ly < 2.0 * reach))
    root.table("initial").fail(
        "spacing", "the periodic box (" + std::to_string(box.lx) + " x " + std::to_string(box.ly) +
                       ") must be at least twice the largest interaction distance " + std::to_string(reach));

  auto sim = std::make_unique<Simulation>();
  sim->model = "epidermis";
  sim->world = std::make_unique<World>(box, static_cast<int>(species_names.size()));
  World& w = *sim->world;
  w.seed = seed;
  sem::seed_monolayer(w, initial);
  for (std::size_t c = 0; c < w.cells.size(); ++c)
    for (std::size_t s = 0; s < initial_species.size(); ++s)
      w.species.host(c, static_cast<int>(s)) = static_cast<float>(initial_species[s]);
  w.cells.upload();

  std::vector<GridField<float>*> signal_fields;
  for (const auto& p : signal_params) signal_fields.push_back(&coupling::add_signal_field<float>(w, p));

  sim->schedule.add(std::make_unique<sem::SemSystem>(sem_params));
  sim->schedule.add(std::make_unique<CellCentreSystem>());
  for (auto* f : signal_fields) sim->schedule.add(std::make_unique<coupling::FieldSamplingSystem<float>>(*f));
  sim->schedule.add(std::move(network));
  for (std::size_t i = 0; i < signal_fields.size(); ++i)
    sim->schedule.add(
        std::make_unique<coupling::SignalFieldSystem<float>>(signal_params[i], *signal_fields[i]));
  sim->schedule.add_hook(
      "lifecycle.grow_and_divide", life.growth_interval,
      [life](World& world, const StepContext&) { lifecycle::grow_and_divide(world, life); });
  update_cell_centres(w);
  const auto out = root.table("output");
  const bool elements = out.boolean("elements", true), cells = out.boolean("cells", true);
  const bool grids = out.boolean("signal_grids", true);
  const std::vector<std::string> names = species_names;
  std::vector<std::string> columns;
  for (const auto& n : signal_names) {
    columns.push_back(n);
    columns.push_back(n + "_gradient");
  }
  sim->make_writer = [names, elements, cells, columns, grids,
                      signal_fields](const std::filesystem::path& dir) -> std::unique_ptr<SnapshotWriter> {
    std::vector<std::unique_ptr<SnapshotWriter>> parts;
    parts.push_back(std::make_unique<io::TissueWriter>(dir, names, elements, cells, columns));
    if (grids)
      for (auto* f : signal_fields)
        parts.push_back(std::make_unique<io::GridWriter<float>>(dir, *f, io::GridOutputOptions{}));
    return std::make_unique<io::CompositeWriter>(std::move(parts));
  };
  sim->summary = [signal_fields, ovol1, ovol2](World& world) {
    std::string text = format(summarize(world, ovol1, ovol2));
    for (auto* f : signal_fields) text += "\n" + summarize_signal(world, *f);
    return text;
  };
  sim->check = [](World& world) { check_element_positions(world); };
  sim->description = std::to_string(w.cells.size()) + " cells, " + std::to_string(w.elements.size()) +
                     " elements in a periodic " + std::to_string(box.lx) + " x " + std::to_string(box.ly) +
                     " box";
  for (const auto& p : signal_params)
    sim->description += "; signal " + p.name + " on a " + std::to_string(p.shape.nx) + " x " +
                        std::to_string(p.shape.ny) + " x " + std::to_string(p.shape.nz) +
                        " grid (h = " + std::to_string(p.shape.h) + ")";
  return sim;
}

std::string summarize_signal(World& w, GridField<float>& field) {
  const double amount = coupling::field_amount(field);
  field.download();
  const auto& v = field.host();
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  auto& sample = w.cells.column<float>(field.name());
  double sum[2] = {0.0, 0.0};
  std::size_t count[2] = {0, 0};
  for (std::size_t c = 0; c < w.cells.size(); ++c) {
    const int state = (w.flags.host(c) & cell_flags::suprabasal) ? 1 : 0;
    sum[state] += static_cast<double>(sample.host(c));
    ++count[state];
  }
  std::ostringstream out;
  out << "signal " << field.name() << ": amount " << amount << ", grid min " << *lo << " max " << *hi
      << "; mean at cells: basal state " << (count[0] ? sum[0] / static_cast<double>(count[0]) : 0.0) << " ("
      << count[0] << " cells), suprabasal state " << (count[1] ? sum[1] / static_cast<double>(count[1]) : 0.0)
      << " (" << count[1] << " cells)";
  return out.str();
}

std::vector<int> stacking_layers(const std::vector<float>& cx, const std::vector<float>& cy,
                                 const std::vector<float>& cz, const Box& box, double width, double height) {
  const std::size_t n = cz.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cz[a] < cz[b]; });
  std::vector<int> layer(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t b = order[k];
    for (std::size_t j = 0; j < k; ++j) {  // every cell lower than b
      const std::size_t a = order[j];
      if (cz[b] - cz[a] <= 0.5 * height) continue;
      const double dx = box.min_image_x(cx[b] - cx[a]), dy = box.min_image_y(cy[b] - cy[a]);
      if (dx * dx + dy * dy < width * width) layer[b] = std::max(layer[b], layer[a] + 1);
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

Summary summarize(World& w, int ovol1, int ovol2) {
  Summary s;
  s.cells = w.cells.size();
  s.elements = w.elements.size();
  const bool network = ovol1 >= 0 && ovol2 >= 0 && w.species_count() > std::max(ovol1, ovol2);
  std::vector<double> widths, heights;
  std::vector<float> cx(s.cells), cy(s.cells), cz(s.cells);
  for (std::size_t c = 0; c < s.cells; ++c) {
    const auto first = static_cast<std::size_t>(w.first.host(c));
    const auto count = static_cast<std::size_t>(w.count.host(c));
    bool adherent = false;
    double lo = 1e30, hi = -1e30, radius = 0.0;
    for (std::size_t e = first; e < first + count; ++e) {
      adherent = adherent || w.type.host(e) == kAdhesiveElement;
      lo = std::min(lo, static_cast<double>(w.z.host(e)));
      hi = std::max(hi, static_cast<double>(w.z.host(e)));
      const double dx = w.box.min_image_x(w.x.host(e) - w.cx.host(c));
      const double dy = w.box.min_image_y(w.y.host(e) - w.cy.host(c));
      radius = std::max(radius, std::sqrt(dx * dx + dy * dy));
    }
    if (count > 0) {
      heights.push_back(hi - lo);
      widths.push_back(2.0 * radius);
      s.max_height = std::max(s.max_height, hi);
    }
    cx[c] = w.cx.host(c);
    cy[c] = w.cy.host(c);
    cz[c] = w.cz.host(c);
    if (adherent) {
      ++s.adherent;
    } else {
      ++s.non_adherent;
      if (network && w.species.host(c, ovol1) > w.species.host(c, ovol2)) ++s.suprabasal_high_ovol1;
    }
    if (w.flags.host(c) & cell_flags::suprabasal) ++s.suprabasal;
  }
  s.cell_width = median(widths);
  s.cell_height = median(heights);
  for (int l : stacking_layers(cx, cy, cz, w.box, s.cell_width, s.cell_height)) {
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
