// What the sem folder registers: the entity sets "membrane" (a basement-membrane mesh) and "tissue" (cells of
// subcellular elements), and the modules "sem" (element mechanics) and "cell_centres".

#include <algorithm>
#include <cmath>
#include <sstream>

#include "engine/core/cell_centres.hpp"
#include "engine/exec/backend.hpp"
#include "engine/io/tissue_output.hpp"
#include "engine/mesh/device_mesh.hpp"
#include "engine/mesh/scenario_mesh.hpp"
#include "engine/schedule/module_registry.hpp"
#include "engine/util/random.hpp"
#include "modules/sem/sem.hpp"
#include "modules/sem/sem_layout.hpp"
#include "modules/sem/sorting_index.hpp"

namespace tissue::sem {

namespace {

/// Bytes per membrane vertex budgeted before a generated membrane mesh is built (the mesh, its topology
/// and index, and a reaction-diffusion field on it).
constexpr double kMembraneBytesPerVertex = 600.0;

/// [membrane]: the basement membrane as a triangle mesh; shares "membrane" (its DeviceMesh, whose derived
/// quantities every module on it requires from one cache), "membrane.mesh" (the host mesh), "membrane.index"
/// (closest points within `reach`) and, when adhesion = "mesh", "membrane.adhesion" (the same index: the
/// adhesion input measures from the mesh instead of z = 0, and the SEM's V_adh uses the mesh).
void create_membrane(Composition& comp) {
  const auto table = comp.root().table("membrane");
  const std::shared_ptr<mesh::DeviceMesh> device_mesh = mesh::read_scenario_device_mesh(
      table, comp.settings().scenario_path, kMembraneBytesPerVertex, "membrane");
  const std::shared_ptr<const mesh::TriangleMesh> membrane = device_mesh->shared_mesh();
  const double reach = table.number("reach", 2.0, io::Range::positive());
  // "plane": the membrane mesh is the plane z = 0 and only carries fields; adhesion and the adhesion input
  // use the exact plane (no closest-point searches per element)
  const bool adhesion = table.string("adhesion", "mesh", {"mesh", "plane"}) == "mesh";
  if (!adhesion)
    for (std::size_t v = 0; v < membrane->vertex_count(); ++v)
      if (membrane->z[v] != 0.0)
        table.fail("adhesion", "adhesion = \"plane\" needs a membrane mesh in the plane z = 0 (vertex " +
                                   std::to_string(v) + " has z = " + std::to_string(membrane->z[v]) + ")");
  std::shared_ptr<const TriangleIndex> index =
      device_mesh->require_closest_point_index(static_cast<float>(reach));
  comp.add_description("membrane mesh of " + std::to_string(membrane->vertex_count()) + " vertices, " +
                       std::to_string(membrane->face_count()) + " faces");
  comp.share("membrane", device_mesh);
  comp.share("membrane.mesh", membrane);
  comp.share("membrane.index", index);
  if (adhesion) comp.share("membrane.adhesion", index);
}

/// [[cell_types]]: the declared type names, in order, and their fractions of the initial cells (which sum
/// to 1). Empty when the scenario declares none.
std::vector<std::pair<std::string, double>> read_cell_types(const io::ScenarioTable& root) {
  std::vector<std::pair<std::string, double>> types;
  const auto entries = root.tables("cell_types");
  if (entries.size() > static_cast<std::size_t>(kMaxCellTypes))
    entries[kMaxCellTypes].fail("", "at most " + std::to_string(kMaxCellTypes) + " cell types");
  double sum = 0.0;
  for (const auto& e : entries) {
    const std::string name = e.string("name", "");
    if (name.empty()) e.fail("name", "every cell type needs a name");
    for (const auto& [other, fraction] : types)
      if (other == name) e.fail("name", "the cell type \"" + name + "\" is declared twice");
    const double fraction =
        e.number("fraction", entries.size() == 1 ? 1.0 : 0.0, io::Range::closed(0.0, 1.0));
    if (entries.size() > 1 && !e.has("fraction"))
      e.fail("fraction", "needs the fraction of the initial cells of this type (the fractions sum to 1)");
    types.emplace_back(name, fraction);
    sum += fraction;
  }
  if (!entries.empty() && std::abs(sum - 1.0) > 1e-9)
    entries.back().fail("fraction", "the cell types' fractions sum to " + std::to_string(sum) + ", not 1");
  return types;
}

/// Adds the cells' kCellTypeColumn and gives every cell a type drawn from `types`' fractions: a uniform
/// number of the counter-based RNG (stream kCellType, entity = the cell's stable id) picks the type whose
/// cumulative fraction first exceeds it (reproducible, independent of threads and of the seeding order).
void assign_cell_types(World& w, const std::vector<std::pair<std::string, double>>& types) {
  auto& column = w.cells.add_column<std::int32_t>(kCellTypeColumn);
  for (std::size_t c = 0; c < w.cells.size(); ++c) {
    const auto id = static_cast<std::uint64_t>(w.cell_id.host(c));
    const double u = random::uniform4(w.seed, random::kCellType, id, 0).v[0];  // (0, 1]
    std::int32_t type = static_cast<std::int32_t>(types.size()) - 1;
    double cumulative = 0.0;
    for (std::size_t k = 0; k + 1 < types.size(); ++k) {
      cumulative += types[k].second;
      if (u <= cumulative) {
        type = static_cast<std::int32_t>(k);
        break;
      }
    }
    column.host(c) = type;
  }
  w.commit();
}

/// [domain], [initial] and [[cell_types]]: the tissue's box, its initial cells (a monolayer, or cells on the
/// membrane) and their types.
void create_tissue(Composition& comp) {
  const auto root = comp.root();
  if (comp.settings().precision != "float")
    throw InputError(comp.settings().where_precision +
                     ": simulation.precision: cells of subcellular elements run in float only");
  const auto initial_table = root.table("initial");
  const std::string layout = initial_table.string("layout", "monolayer", {"monolayer", "membrane"});
  const auto domain = root.table("domain");
  const auto membrane = comp.find<const mesh::TriangleMesh>("membrane.mesh");
  if (layout == "membrane" && !membrane)
    initial_table.fail("layout",
                       "cells on the membrane need a [membrane] mesh (the entity set \"membrane\", listed "
                       "before \"tissue\" in [simulation] entities)");

  Box box;
  MonolayerParams monolayer;
  MembraneLayoutParams on_membrane;
  double n_cells = 0.0, elements_per_cell = 0.0;
  if (layout == "monolayer") {
    monolayer = read_monolayer_params(initial_table);
    box.periodic_x = box.periodic_y = domain.boolean("periodic", true);
    box.lx = static_cast<float>(monolayer.cells_x * monolayer.spacing);
    box.ly = static_cast<float>(monolayer.cells_y * monolayer.spacing);
    n_cells = static_cast<double>(monolayer.cells_x) * static_cast<double>(monolayer.cells_y);
    elements_per_cell = monolayer.elements_per_cell;
  } else {
    on_membrane = read_membrane_layout_params(initial_table);
    if (domain.boolean("periodic", false))
      domain.fail("periodic",
                  "a tissue seeded on a membrane mesh lives in an open domain (periodic = false)");
    box.periodic_x = box.periodic_y = false;
    box.floor = false;
    const auto [xlo, xhi] = std::minmax_element(membrane->x.begin(), membrane->x.end());
    const auto [ylo, yhi] = std::minmax_element(membrane->y.begin(), membrane->y.end());
    box.lx = static_cast<float>(*xhi - *xlo);
    box.ly = static_cast<float>(*yhi - *ylo);
    n_cells = static_cast<double>(membrane->vertex_count());  // an upper bound
    elements_per_cell = on_membrane.elements_per_cell;
  }
  // memory before anything is allocated, per element and per cell of the initial tissue, from the engine's
  // allocation counters at two sizes and two elements per cell (tests/scenarios/memory_estimate.py):
  // device: the element table with its capacity, the SEM stage buffers, the cell list with its sort and its
  // bins (at most 4 per element, CellList::build) (80 bytes per element), the Verlet lists (33 bytes per
  // element, VerletList; not allocated where they do not apply, e.g. several lanes per element on the GPU),
  // and the cell table (about 90 bytes per cell). Host: the mirrors of the tables and the snapshot writer's
  // copies (about 85 bytes per element in a run's resident memory) and its thread (10 MB: its malloc arena
  // keeps the encoding buffers). Rounded up by 10 %; a gene network reserves its species itself. A tissue
  // that grows needs more as it grows.
  const double n_elements = n_cells * elements_per_cell;
  exec::MemoryEstimate need;
  need.device = 120.0 * n_elements + 100.0 * n_cells;
  need.host = 95.0 * n_elements + 60.0 * n_cells + 10e6;
  {
    std::ostringstream what;
    if (layout == "monolayer")
      what << monolayer.cells_x << " x " << monolayer.cells_y;
    else
      what << "up to " << n_cells;
    what << " cells of " << elements_per_cell << " elements";
    const char* key = layout == "monolayer" ? "cells_x" : "spacing";
    if (n_elements > 1e9) {
      std::ostringstream msg;
      msg << what.str() << " need about " << (need.host + need.device) / 1e9
          << " GB, and more than 10^9 elements are not supported";
      initial_table.fail(key, msg.str());
    }
    comp.reserve_memory(initial_table, key, what.str(), need);
  }

  World& w = comp.world();
  w.box = box;
  if (layout == "monolayer") {
    seed_monolayer(w, monolayer);
  } else if (seed_on_membrane(w, *membrane, on_membrane) == 0) {
    initial_table.fail("spacing", "no cell could be placed on the membrane");
  }
  const auto types = read_cell_types(root);
  if (!types.empty()) {
    assign_cell_types(w, types);
    auto names = std::make_shared<std::vector<std::string>>();
    for (const auto& [name, fraction] : types) names->push_back(name);
    comp.share("cell_types", std::shared_ptr<const std::vector<std::string>>(names));
    w.add_output({TissueOutput::Kind::cell_int_column, kCellTypeColumn, kCellTypeColumn});
  }
  update_cell_centres(w);
  w.add_output({TissueOutput::Kind::element_column, "element_type", kTypeColumn});
  w.add_output({TissueOutput::Kind::element_count, "adhesive_elements", kTypeColumn, 0, kAdhesiveElement});

  const auto out = root.table("output");
  const bool elements = out.boolean("elements", true), cells = out.boolean("cells", true);
  comp.add_writer([elements, cells](const std::filesystem::path& dir,
                                    const io::OutputPiece& piece) -> std::unique_ptr<SnapshotWriter> {
    return std::make_unique<io::TissueWriter>(dir, elements, cells, piece);
  });
  comp.add_check([](World& world) { check_element_positions(world); });
  comp.add_description(
      std::to_string(w.cells.size()) + " cells, " + std::to_string(w.elements.size()) + " elements " +
      (layout == "monolayer" ? std::string(box.periodic_x ? "in a periodic " : "in an open ") +
                                   std::to_string(box.lx) + " x " + std::to_string(box.ly) + " box"
                             : std::string("on a membrane mesh")));
  if (!types.empty()) {
    std::vector<std::size_t> count(types.size(), 0);
    const auto& column = w.cells.column<std::int32_t>(kCellTypeColumn);
    for (std::size_t c = 0; c < w.cells.size(); ++c) ++count[static_cast<std::size_t>(column.host(c))];
    std::string text = "cell types";
    for (std::size_t k = 0; k < types.size(); ++k)
      text += (k ? ", " : " ") + types[k].first + " (" + std::to_string(count[k]) + ")";
    comp.add_description(text);
    comp.add_metric("sorting_index", "fraction of like neighbours among cell contacts",
                    [](World& world) { return sorting_index(world); });
    comp.add_summary([](World& world) {
      return "sorting index " + std::to_string(sorting_index(world)) +
             " (fraction of like neighbours; contacts within " + std::to_string(kContactDistance) + ")";
    });
  }
}

/// [sem]: element mechanics on the tissue; V_adh from the membrane mesh when one is shared for adhesion.
void install_sem(Composition& comp) {
  const auto types = comp.find<const std::vector<std::string>>("cell_types");
  auto params = read_sem_params(comp.root().table("sem"), types ? *types : std::vector<std::string>{});
  if (comp.find<const TriangleIndex>("membrane.adhesion"))
    params.substrate = comp.find<const mesh::TriangleMesh>("membrane.mesh");
  const World& w = comp.world();
  const double reach = params.effective_bin_size();
  if (w.box.periodic_x && (w.box.lx < 2.0 * reach || w.box.ly < 2.0 * reach))
    comp.root().table("initial").fail(
        "spacing", "the periodic box (" + std::to_string(w.box.lx) + " x " + std::to_string(w.box.ly) +
                       ") must be at least twice the SEM's interaction distance " + std::to_string(reach));
  if (params.rebuild_every > 1) {  // the positions at each cell-list build (SemSystem's xb_, yb_, zb_)
    exec::MemoryEstimate need;
    need.device = 12.0 * static_cast<double>(w.elements.capacity());
    comp.reserve_memory(
        comp.root().table("sem"), "rebuild_every",
        "the cell list's build positions of " + std::to_string(w.elements.size()) + " elements", need);
  }
  comp.add_system(std::make_unique<SemSystem>(params));
}

}  // namespace

}  // namespace tissue::sem

namespace tissue::modules {

/// Registers the tissue and membrane entity sets and the SEM and cell-centre modules.
void register_sem(ModuleRegistry& registry) {
  registry.add(
      EntitySetInfo{"membrane",
                    "the basement membrane as a triangle mesh (file or generated), with a closest-point "
                    "index; cells may be seeded on it and adhere to it",
                    {"membrane"},
                    sem::create_membrane});
  registry.add(EntitySetInfo{
      "tissue",
      "cells of subcellular elements: a periodic monolayer on the plane z = 0, or cells "
      "seeded on the membrane; adds the element type column (adhesive elements) and, with [[cell_types]], "
      "the cells' cell_type column",
      {"domain", "initial", "cell_types"},
      sem::create_tissue});
  registry.add(ModuleInfo{"sem",
                          "subcellular element mechanics (Christley et al. 2010, Table 1): intracellular, "
                          "intercellular and membrane-adhesion Morse potentials, RK2",
                          {"sem"},
                          {"tissue"},
                          0.01,
                          sem::install_sem});
  registry.add(
      ModuleInfo{"cell_centres",
                 "cell centres as the periodic-aware mean of their elements (read by signals, networks)",
                 {},
                 {"tissue"},
                 0.0,
                 [](Composition& comp) { comp.add_system(std::make_unique<CellCentreSystem>()); }});
}

}  // namespace tissue::modules
