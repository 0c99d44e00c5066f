// What the sem folder registers: the entity sets "membrane" (a basement-membrane mesh) and "tissue" (cells of
// subcellular elements), and the modules "sem" (element mechanics) and "cell_centres".

#include <algorithm>
#include <sstream>

#include "engine/core/cell_centres.hpp"
#include "engine/exec/backend.hpp"
#include "engine/io/tissue_output.hpp"
#include "engine/mesh/device_mesh.hpp"
#include "engine/mesh/scenario_mesh.hpp"
#include "engine/schedule/module_registry.hpp"
#include "modules/sem/sem.hpp"
#include "modules/sem/sem_layout.hpp"

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
  auto membrane = std::make_shared<mesh::TriangleMesh>(
      mesh::read_scenario_mesh(table, comp.settings().scenario_path, kMembraneBytesPerVertex));
  std::shared_ptr<mesh::DeviceMesh> device_mesh;
  try {
    device_mesh = std::make_shared<mesh::DeviceMesh>(membrane, "membrane");
  } catch (const InputError& e) {
    table.fail("", e.what());
  }
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

/// [domain] and [initial]: the tissue's box and its initial cells (a monolayer, or cells on the membrane).
void create_tissue(Composition& comp) {
  const auto root = comp.root();
  if (comp.settings().precision != "float")
    throw InputError(comp.settings().where_precision +
                     ": simulation.precision: cells of subcellular elements run in float only");
  const auto initial_table = root.table("initial");
  const std::string layout = initial_table.string("layout", "monolayer", {"monolayer", "membrane"});
  const auto domain = root.table("domain");
  const auto membrane = comp.find<mesh::TriangleMesh>("membrane.mesh");
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
  // memory before anything is allocated: the tables, the SEM stage buffers and the cell list per element
  // (~64 bytes), the cell table with its species per cell (~64 bytes); dense indices are int32
  const double n_elements = n_cells * elements_per_cell;
  const double need = 64.0 * (n_elements + n_cells),
               available = static_cast<double>(exec::available_memory_bytes());
  if (n_elements > 1e9 || need > available) {
    std::ostringstream msg;
    if (layout == "monolayer")
      msg << monolayer.cells_x << " x " << monolayer.cells_y;
    else
      msg << "up to " << n_cells;
    msg << " cells of " << elements_per_cell << " elements need about " << need / 1e9 << " GB"
        << (n_elements > 1e9 ? ", and more than 10^9 elements are not supported" : ", more than the ")
        << (n_elements > 1e9 ? std::string()
                             : std::to_string(available / 1e9) + " GB available on the " +
                                   std::string(exec::to_string(exec::backend())) + " backend");
    initial_table.fail(layout == "monolayer" ? "cells_x" : "spacing", msg.str());
  }

  World& w = comp.world();
  w.box = box;
  if (layout == "monolayer") {
    seed_monolayer(w, monolayer);
  } else if (seed_on_membrane(w, *membrane, on_membrane) == 0) {
    initial_table.fail("spacing", "no cell could be placed on the membrane");
  }
  update_cell_centres(w);
  w.add_output({TissueOutput::Kind::element_column, "element_type", kTypeColumn});
  w.add_output({TissueOutput::Kind::element_count, "adhesive_elements", kTypeColumn, 0, kAdhesiveElement});

  const auto out = root.table("output");
  const bool elements = out.boolean("elements", true), cells = out.boolean("cells", true);
  comp.add_writer([elements, cells](const std::filesystem::path& dir) -> std::unique_ptr<SnapshotWriter> {
    return std::make_unique<io::TissueWriter>(dir, elements, cells);
  });
  comp.add_check([](World& world) { check_element_positions(world); });
  comp.add_description(
      std::to_string(w.cells.size()) + " cells, " + std::to_string(w.elements.size()) + " elements " +
      (layout == "monolayer" ? std::string(box.periodic_x ? "in a periodic " : "in an open ") +
                                   std::to_string(box.lx) + " x " + std::to_string(box.ly) + " box"
                             : std::string("on a membrane mesh")));
}

/// [sem]: element mechanics on the tissue; V_adh from the membrane mesh when one is shared for adhesion.
void install_sem(Composition& comp) {
  auto params = read_sem_params(comp.root().table("sem"));
  if (comp.find<const TriangleIndex>("membrane.adhesion"))
    params.substrate = comp.find<mesh::TriangleMesh>("membrane.mesh");
  const World& w = comp.world();
  const double reach = params.effective_bin_size();
  if (w.box.periodic_x && (w.box.lx < 2.0 * reach || w.box.ly < 2.0 * reach))
    comp.root().table("initial").fail(
        "spacing", "the periodic box (" + std::to_string(w.box.lx) + " x " + std::to_string(w.box.ly) +
                       ") must be at least twice the SEM's interaction distance " + std::to_string(reach));
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
  registry.add(
      EntitySetInfo{"tissue",
                    "cells of subcellular elements: a periodic monolayer on the plane z = 0, or cells "
                    "seeded on the membrane; adds the element type column (adhesive elements)",
                    {"domain", "initial"},
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
