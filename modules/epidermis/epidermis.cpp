#include "modules/epidermis/epidermis.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "engine/core/cell_centres.hpp"
#include "engine/exec/backend.hpp"
#include "engine/io/grid_output.hpp"
#include "engine/io/tissue_output.hpp"
#include "engine/mesh/scenario_mesh.hpp"
#include "engine/mesh/surface_field.hpp"
#include "engine/schedule/module_registry.hpp"
#include "modules/coupling/signal_field.hpp"
#include "modules/coupling/surface_sampling.hpp"
#include "modules/gene_network/gene_network.hpp"
#include "modules/gene_network/user_network.hpp"
#include "modules/lifecycle/lifecycle.hpp"
#include "modules/sem/sem.hpp"
#include "modules/sem/sem_layout.hpp"
#include "modules/surface_rd/surface_rd.hpp"
#include "modules/surface_rd/surface_rd_model.hpp"

namespace tissue::epidermis {

static_assert(grn::kDelta == lifecycle::kDefaultDeltaSpecies,
              "LifecycleParams::delta_species defaults to the built-in network's Delta row");
static_assert(grn::kOvol1 == 4 && grn::kOvol2 == 3,
              "summarize()'s default species rows are the built-in network's");

std::unique_ptr<Simulation> build(const io::ScenarioTable& root, const ModelSettings& settings) {
  if (settings.precision != "float")
    throw InputError(settings.where_precision +
                     ": simulation.precision: the epidermis model runs in float only");
  const std::uint64_t seed = settings.seed;
  const auto initial_table = root.table("initial");
  const std::string layout = initial_table.string("layout", "monolayer", {"monolayer", "membrane"});
  const auto domain = root.table("domain");

  // the basement membrane as a mesh ([membrane]; default: the plane z = 0), with an optional
  // reaction-diffusion field on it that the cells sample ([membrane.rd])
  const bool has_membrane = root.has("membrane");
  const auto membrane_table = root.table("membrane");
  if (layout == "membrane" && !has_membrane)
    initial_table.fail("layout", "cells on the membrane need a [membrane] mesh");
  std::shared_ptr<mesh::TriangleMesh> membrane_mesh;
  mesh::MeshTopology membrane_topology;
  double membrane_reach = 0.0;
  bool membrane_adhesion = false;  ///< V_adh and the adhesion input from the mesh (else the plane z = 0)
  if (has_membrane) {
    membrane_mesh = std::make_shared<mesh::TriangleMesh>(
        mesh::read_scenario_mesh(membrane_table, settings.scenario_path, surface_rd::kBytesPerVertex));
    try {
      membrane_topology = mesh::build_topology(*membrane_mesh, "membrane");
    } catch (const InputError& e) {
      membrane_table.fail("", e.what());
    }
    membrane_reach = membrane_table.number("reach", 2.0, io::Range::positive());
    // "plane": the membrane mesh is the plane z = 0 and only carries fields; adhesion and the adhesion input
    // use the exact plane (no closest-point searches per element)
    membrane_adhesion = membrane_table.string("adhesion", "mesh", {"mesh", "plane"}) == "mesh";
    if (!membrane_adhesion)
      for (std::size_t v = 0; v < membrane_mesh->vertex_count(); ++v)
        if (membrane_mesh->z[v] != 0.0)
          membrane_table.fail(
              "adhesion", "adhesion = \"plane\" needs a membrane mesh in the plane z = 0 (vertex " +
                              std::to_string(v) + " has z = " + std::to_string(membrane_mesh->z[v]) + ")");
  }
  const bool membrane_rd = has_membrane && membrane_table.has("rd");
  surface_rd::SurfaceRdParams rd_params;
  surface_rd::InitialState rd_initial;
  std::vector<std::string> membrane_columns;
  if (membrane_rd) {
    const auto rd = membrane_table.table("rd");
    rd_params = surface_rd::read_surface_rd_params(rd, rd, rd_initial);
    surface_rd::read_initial_state(rd.table("initial"), membrane_mesh->vertex_count(), rd_initial);
    for (const auto& species : surface_rd::species_names(rd_params))
      membrane_columns.push_back(coupling::surface_sample_column(kMembraneField, species));
  }

  Box box;
  sem::MonolayerParams initial;
  sem::MembraneLayoutParams on_membrane;
  double n_cells = 0.0, elements_per_cell = 0.0;
  if (layout == "monolayer") {
    initial = sem::read_monolayer_params(initial_table);
    box.periodic_x = box.periodic_y = domain.boolean("periodic", true);
    box.lx = static_cast<float>(initial.cells_x * initial.spacing);
    box.ly = static_cast<float>(initial.cells_y * initial.spacing);
    n_cells = static_cast<double>(initial.cells_x) * static_cast<double>(initial.cells_y);
    elements_per_cell = initial.elements_per_cell;
  } else {
    on_membrane = sem::read_membrane_layout_params(initial_table);
    if (domain.boolean("periodic", false))
      domain.fail("periodic",
                  "a tissue seeded on a membrane mesh lives in an open domain (periodic = false)");
    box.periodic_x = box.periodic_y = false;
    box.floor = false;
    const auto [xlo, xhi] = std::minmax_element(membrane_mesh->x.begin(), membrane_mesh->x.end());
    const auto [ylo, yhi] = std::minmax_element(membrane_mesh->y.begin(), membrane_mesh->y.end());
    box.lx = static_cast<float>(*xhi - *xlo);
    box.ly = static_cast<float>(*yhi - *ylo);
    n_cells = static_cast<double>(membrane_mesh->vertex_count());  // an upper bound
    elements_per_cell = on_membrane.elements_per_cell;
  }
  // memory before anything is allocated: the tables, the SEM stage buffers and the cell list per element
  // (~64 bytes), the cell table with its species per cell (~64 bytes); dense indices are int32
  const double n_elements = n_cells * elements_per_cell;
  const double need = 64.0 * (n_elements + n_cells),
               available = static_cast<double>(exec::available_memory_bytes());
  if (n_elements > 1e9 || need > available) {
    std::ostringstream msg;
    if (layout == "monolayer")
      msg << initial.cells_x << " x " << initial.cells_y;
    else
      msg << "up to " << n_cells;
    msg << " cells of " << elements_per_cell << " elements need about " << need / 1e9 << " GB"
        << (n_elements > 1e9 ? ", and more than 10^9 elements are not supported" : ", more than the ")
        << (n_elements > 1e9 ? std::string()
                             : std::to_string(available / 1e9) + " GB available on the " +
                                   std::string(exec::to_string(exec::backend())) + " backend");
    initial_table.fail(layout == "monolayer" ? "cells_x" : "spacing", msg.str());
  }
  auto sem_params = sem::read_sem_params(root.table("sem"));
  if (membrane_adhesion) sem_params.substrate = membrane_mesh;
  auto life = lifecycle::read_lifecycle_params(root.table("lifecycle"));

  // diffusible signals over the tissue ([signal.<name>], modules/coupling): sampled by the cells before the
  // gene network reads them, advanced with the cells' sources after it
  const auto signal_table = root.table("signal");
  std::vector<std::string> signal_names;
  std::vector<coupling::SignalFieldParams> signal_params;
  for (const auto& name : signal_table.keys()) {
    if (layout == "membrane")
      signal_table.fail(name,
                        "signal fields over a tissue seeded on a membrane mesh are not supported (the "
                        "grid spans the periodic box of the monolayer layout)");
    signal_params.push_back(coupling::read_signal_field_params(signal_table.table(name), name, box));
    signal_names.push_back(name);
  }
  // what gene networks and the lifecycle's gate may read: the signals' and the membrane field's samples
  std::vector<std::string> field_columns = signal_names;
  field_columns.insert(field_columns.end(), membrane_columns.begin(), membrane_columns.end());
  if (!life.gate.empty() &&
      std::find(field_columns.begin(), field_columns.end(), life.gate) == field_columns.end()) {
    std::string list;
    for (const auto& n : field_columns) list += (list.empty() ? "" : ", ") + n;
    root.table("lifecycle")
        .fail("gate", "no sampled field named '" + life.gate + "' (sampled fields: " +
                          (list.empty() ? "none; add [signal.<name>] or [membrane.rd]" : list) + ")");
  }

  // the gene network: the seed's, or one written in the scenario
  const auto network_table = root.table("gene_network");
  std::unique_ptr<System> network;
  std::shared_ptr<TriangleIndex> membrane_index;
  if (has_membrane) {
    membrane_index = std::make_shared<TriangleIndex>();
    membrane_index->build(*membrane_mesh, static_cast<float>(membrane_reach));
  }
  std::vector<std::string> species_names;
  std::vector<double> initial_species;
  double neighbour_distance = 0.0;
  int ovol1 = grn::kOvol1, ovol2 = grn::kOvol2;
  if (grn::has_user_network(network_table)) {
    auto spec = grn::read_user_network(network_table, field_columns);
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
    auto user = std::make_unique<grn::UserNetworkSystem>(std::move(spec));
    if (membrane_adhesion) user->set_membrane(membrane_index);
    network = std::move(user);
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
    auto builtin = std::make_unique<grn::GeneNetworkSystem>(grn_params);
    if (membrane_adhesion) builtin->set_membrane(membrane_index);
    network = std::move(builtin);
  }

  const double reach = std::max(sem_params.effective_bin_size(), neighbour_distance);
  life.membrane = membrane_index;
  if (box.periodic_x && (box.lx < 2.0 * reach || box.ly < 2.0 * reach))
    initial_table.fail(
        "spacing", "the periodic box (" + std::to_string(box.lx) + " x " + std::to_string(box.ly) +
                       ") must be at least twice the largest interaction distance " + std::to_string(reach));

  auto sim = std::make_unique<Simulation>();
  sim->model = "epidermis";
  sim->world = std::make_unique<World>(box, static_cast<int>(species_names.size()));
  World& w = *sim->world;
  w.seed = seed;
  if (layout == "monolayer") {
    sem::seed_monolayer(w, initial);
  } else if (sem::seed_on_membrane(w, *membrane_mesh, on_membrane) == 0) {
    initial_table.fail("spacing", "no cell could be placed on the membrane");
  }
  for (std::size_t c = 0; c < w.cells.size(); ++c)
    for (std::size_t s = 0; s < initial_species.size(); ++s)
      w.species.host(c, static_cast<int>(s)) = static_cast<float>(initial_species[s]);
  w.cells.upload();

  std::vector<GridField<float>*> signal_fields;
  for (const auto& p : signal_params) signal_fields.push_back(&coupling::add_signal_field<float>(w, p));
  SurfaceField<float>* membrane_field = nullptr;
  std::unique_ptr<System> membrane_system;
  if (membrane_rd) {
    membrane_field = &w.add_field(std::make_unique<SurfaceField<float>>(
        kMembraneField, membrane_mesh, surface_rd::species_names(rd_params)));
    surface_rd::apply_initial_state(*membrane_field, rd_initial, seed);
    coupling::add_surface_sample_columns(w, *membrane_field);
    auto ops = std::make_shared<const surface_rd::MeshOperators<float>>(*membrane_mesh, membrane_topology);
    membrane_system = std::make_unique<surface_rd::SurfaceRdSystem<float>>(rd_params, *membrane_field, ops);
  }

  sim->schedule.add(std::make_unique<sem::SemSystem>(sem_params));
  sim->schedule.add(std::make_unique<CellCentreSystem>());
  for (auto* f : signal_fields) sim->schedule.add(std::make_unique<coupling::FieldSamplingSystem<float>>(*f));
  if (membrane_field) {
    sim->schedule.add(std::move(membrane_system));
    sim->schedule.add(
        std::make_unique<coupling::SurfaceSamplingSystem<float>>(*membrane_field, membrane_index));
  }
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
  columns.insert(columns.end(), membrane_columns.begin(), membrane_columns.end());
  const bool membrane_output = out.boolean("membrane", true);
  sim->make_writer = [names, elements, cells, columns, grids, signal_fields, membrane_field,
                      membrane_output](const std::filesystem::path& dir) -> std::unique_ptr<SnapshotWriter> {
    std::vector<std::unique_ptr<SnapshotWriter>> parts;
    parts.push_back(std::make_unique<io::TissueWriter>(dir, names, elements, cells, columns));
    if (grids)
      for (auto* f : signal_fields)
        parts.push_back(std::make_unique<io::GridWriter<float>>(dir, *f, io::GridOutputOptions{}));
    if (membrane_field && membrane_output)
      parts.push_back(surface_rd::make_surface_writer(dir, *membrane_field));
    return std::make_unique<io::CompositeWriter>(std::move(parts));
  };
  const std::string gate = life.gate;
  const double gate_threshold = life.gate_threshold;
  sim->summary = [signal_fields, ovol1, ovol2, membrane_index, membrane_field, gate,
                  gate_threshold](World& world) {
    std::string text = format(summarize(world, ovol1, ovol2, membrane_index.get()));
    for (auto* f : signal_fields) text += "\n" + summarize_signal(world, *f);
    if (membrane_field) text += "\n" + summarize_membrane(world, *membrane_field, gate, gate_threshold);
    return text;
  };
  sim->check = [](World& world) { check_element_positions(world); };
  if (layout == "monolayer")
    sim->description = std::to_string(w.cells.size()) + " cells, " + std::to_string(w.elements.size()) +
                       " elements in a " + (box.periodic_x ? "periodic " : "open ") + std::to_string(box.lx) +
                       " x " + std::to_string(box.ly) + " box";
  else
    sim->description = std::to_string(w.cells.size()) + " cells, " + std::to_string(w.elements.size()) +
                       " elements on a membrane mesh";
  if (has_membrane)
    sim->description += "; membrane mesh of " + std::to_string(membrane_mesh->vertex_count()) +
                        " vertices, " + std::to_string(membrane_mesh->face_count()) + " faces" +
                        (membrane_rd ? " carrying " + (rd_params.kinetics == surface_rd::Kinetics::chemotaxis
                                                           ? std::string("the chemotaxis model")
                                                           : rd_params.reaction.describe())
                                     : std::string());
  for (const auto& p : signal_params)
    sim->description += "; signal " + p.name + " on a " + std::to_string(p.shape.nx) + " x " +
                        std::to_string(p.shape.ny) + " x " + std::to_string(p.shape.nz) +
                        " grid (h = " + std::to_string(p.shape.h) + ")";
  return sim;
}

std::string summarize_signal(World& w, GridField<float>& field) {
  const double amount = coupling::field_amount(field);
  field.download();
  const auto& v = field.host();  // species 0: the signal (species 1, when present, its free fraction)
  const auto [lo, hi] =
      std::minmax_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(field.cells()));
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

std::string summarize_membrane(World& w, SurfaceField<float>& field, const std::string& gate,
                               double threshold) {
  field.download();
  std::ostringstream out;
  out << "membrane field:";
  const std::size_t n = field.vertices();
  for (int s = 0; s < field.species_count(); ++s) {
    const auto first = field.host().begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s) * n);
    const auto [lo, hi] = std::minmax_element(first, first + static_cast<std::ptrdiff_t>(n));
    out << (s ? "; " : " ") << field.species_names()[static_cast<std::size_t>(s)] << " min " << *lo << " max "
        << *hi;
  }
  if (!gate.empty()) {
    const auto& v = w.cells.column<float>(gate).host_data();
    std::size_t open = 0;
    for (std::size_t c = 0; c < w.cells.size(); ++c) open += v[c] > static_cast<float>(threshold) ? 1 : 0;
    out << "; cells with " << gate << " > " << threshold << ": " << open << " of " << w.cells.size();
  }
  return out.str();
}

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
  const bool network = ovol1 >= 0 && ovol2 >= 0 && w.species_count() > std::max(ovol1, ovol2);
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
      adherent = adherent || w.type.host(e) == kAdhesiveElement;
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
      if (network && w.species.host(c, ovol1) > w.species.host(c, ovol2)) ++s.suprabasal_high_ovol1;
    }
    if (w.flags.host(c) & cell_flags::suprabasal) ++s.suprabasal;
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

/// Registers the epidermis model (the default model of a scenario that names none).
void register_epidermis(ModuleRegistry& registry) {
  ModuleInfo info;
  info.name = "epidermis";
  info.summary =
      "3D epidermal development (Christley et al. 2010): SEM cells, gene network, growth and division";
  info.tables = {"domain", "initial", "sem", "gene_network", "lifecycle", "signal", "membrane"};
  info.default_dt = 0.01;
  info.default_model = true;
  info.build = epidermis::build;
  registry.add(std::move(info));
}

}  // namespace tissue::modules
