// The exchanges of a decomposed run over MPI ranks (run by CTest under mpirun -np 2, 3 and 4): the ghosts
// each rank receives equal a brute-force selection of every point's periodic images; the forces on owned
// points from owned points and ghosts equal the single-domain minimum-image forces to the bit; cells that
// cross subdomain and periodic boundaries migrate with their ids, elements and module columns, and a world
// spread over the ranks gathers back whole. Every case is collective: checks never skip a collective call.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/domain/grid_halo.hpp"
#include "engine/domain/mpi_communicator.hpp"
#include "engine/grid/grid.hpp"
#include "engine/io/scenario.hpp"
#include "engine/io/tissue_output.hpp"
#include "modules/builtin_modules.hpp"
#include "modules/decomposed/decomposed_simulation.hpp"
#include "tests/domain/domain_checks.hpp"
#include "tests/vtk_read.hpp"

using namespace tissue;
using test::make_box;
using namespace tissue::domain;

TEST_CASE(
    "every rank receives exactly the points of its ghost band, and forces with ghosts are the "
    "single-domain forces to the bit",
    "[domain][mpi]") {
  MpiCommunicator comm;
  const int rank = comm.rank();
  const float cutoff = 0.3f;
  long long ghosts_total = 0, through_ghosts = 0;
  for (const int periodic : {0, 1, 2, 3})
    for (const bool square : {false, true}) {
      // a long box is split along x only (px = ranks: with 2 ranks the periodic x neighbours on both sides
      // are one rank); a square one by the least surface
      const Box box = make_box(square ? 2.4f : 1.2f * static_cast<float>(comm.size()) + 0.4f,
                               square ? 2.4f : 1.1f, (periodic & 1) != 0, (periodic & 2) != 0);
      const double w = 1.05 * cutoff;
      const ProcessGrid grid = choose_process_grid(comm.size(), box, w);
      const Decomposition d(grid, box, w);
      INFO("rank " << rank << " of a " << grid.px << " x " << grid.py << " grid, periodic " << periodic);
      const test::GlobalPoints p =
          test::make_points(1500, box, grid.px, grid.py, 7u + static_cast<unsigned>(periodic));
      Table owned("elements"), ghosts("ghosts");
      test::add_point_columns(owned);
      test::add_point_columns(ghosts);
      test::fill_owned(p, d, rank, owned);
      CHECK(comm.sum(static_cast<std::int64_t>(owned.size())) == static_cast<std::int64_t>(p.x.size()));

      HaloExchange halo(d, comm, {"x", "y", "z", "id"});
      halo.build(owned, ghosts);
      CHECK(test::received_ghosts(halo, ghosts) == test::brute_force_ghosts(p, d, rank));
      ghosts_total += static_cast<long long>(ghosts.size());
      through_ghosts +=
          static_cast<long long>(test::check_forces_with_ghosts(p, d, halo, owned, ghosts, cutoff));

      if (grid.px == 2 && box.periodic_x && grid.py == 1) {
        // the 2-rank periodic axis: the left and the right neighbour are the same rank, two ranges with
        // their own shifts (+lx on rank 0's left, -lx on rank 1's right), never merged
        int from_other = 0;
        for (const GhostRange& r : halo.ranges())
          if (r.from == 1 - rank && r.dy == 0) ++from_other;
        CHECK(from_other == 2);
      }

      // distinct: each other rank's point once, unshifted, nothing from this rank; minimum-image forces
      Table distinct_ghosts("ghosts");
      test::add_point_columns(distinct_ghosts);
      HaloExchange distinct(d, comm, {"x", "y", "z", "id"}, HaloMode::distinct);
      distinct.build(owned, distinct_ghosts);
      std::vector<std::int64_t> got = test::ghost_ids(distinct_ghosts);
      std::sort(got.begin(), got.end());
      CHECK(got == test::brute_force_distinct(p, d, rank));
      CHECK(std::adjacent_find(got.begin(), got.end()) == got.end());
      test::check_forces_with_ghosts(p, d, distinct, owned, distinct_ghosts, cutoff, true);

      // refresh after a move within the skin: the ghosts carry the new positions
      for (std::size_t r = 0; r < owned.size(); ++r) owned.column<float>("z").host(r) += 0.5f;
      halo.refresh(owned, ghosts);
      std::size_t stale = 0;
      for (std::size_t g = 0; g < ghosts.size(); ++g) {
        const auto id = static_cast<std::size_t>(ghosts.column<std::int64_t>("id").host(g));
        if (ghosts.column<float>("z").host(g) != p.z[id] + 0.5f) ++stale;
      }
      CHECK(stale == 0);
    }
  CHECK(comm.sum(static_cast<std::int64_t>(ghosts_total)) > 1000);
  CHECK(comm.sum(static_cast<std::int64_t>(through_ghosts)) > 100);
}

TEST_CASE("cells migrate across subdomain and periodic boundaries with their ids, elements and columns",
          "[domain][mpi]") {
  MpiCommunicator comm;
  const int rank = comm.rank();
  const std::size_t n = 400;
  for (const int periodic : {1, 3}) {
    World w(make_box(3.0f * static_cast<float>(comm.size()), 2.5f, true, periodic == 3));
    test::add_migration_columns(w);
    if (rank == 0) test::add_cells(w, n, 0);  // the whole tissue starts on rank 0
    const Decomposition d(choose_process_grid(comm.size(), w.box, 0.5), w.box, 0.5);
    INFO("rank " << rank << ", periodic " << periodic);

    MigrationCounts counts = migrate_to_owners(d, comm, w);  // spread
    std::vector<std::int64_t> ids = test::check_cells(w, 0, &d, rank);
    CHECK(comm.sum(static_cast<std::int64_t>(ids.size())) == static_cast<std::int64_t>(n));
    CHECK(w.next_cell_id == static_cast<std::int64_t>(n));
    if (comm.size() > 1) CHECK(comm.sum(static_cast<std::int64_t>(counts.cells_received)) > 0);

    // three moves by (0.37 lx, -0.21 ly): most cells change rank, many through the periodic faces
    std::int64_t moved = 0;
    for (int move = 0; move < 3; ++move) {
      test::move_cells(w, move);
      counts = migrate_to_owners(d, comm, w);
      CHECK(comm.sum(static_cast<std::int64_t>(counts.cells_sent)) ==
            comm.sum(static_cast<std::int64_t>(counts.cells_received)));
      CHECK(comm.sum(static_cast<std::int64_t>(counts.elements_sent)) ==
            comm.sum(static_cast<std::int64_t>(counts.elements_received)));
      moved += comm.sum(static_cast<std::int64_t>(counts.cells_sent));
      ids = test::check_cells(w, move + 1, &d, rank);
      CHECK(comm.sum(static_cast<std::int64_t>(ids.size())) == static_cast<std::int64_t>(n));
    }
    if (comm.size() > 1) CHECK(moved > static_cast<std::int64_t>(n));

    // gathered back on rank 0: the whole tissue, in id order
    migrate_cells(comm, w, std::vector<int>(w.cells.size(), 0));
    ids = test::check_cells(w, 3, nullptr, rank);
    CHECK(ids.size() == (rank == 0 ? n : 0u));
    if (rank == 0) {
      std::vector<std::int64_t> all(n);
      for (std::size_t k = 0; k < n; ++k) all[k] = static_cast<std::int64_t>(k);
      CHECK(ids == all);
    }
  }
}

TEST_CASE("a grid field decomposed with ghost layers steps to the bit as the whole grid does",
          "[domain][mpi]") {
  MpiCommunicator comm;
  CHECK(comm.sum(static_cast<std::int64_t>(test::check_grid_cases(comm, 12))) > 1000);
}

TEST_CASE(
    "the SEM's force kernel on owned and ghost elements in the undecomposed order gives the undecomposed "
    "forces to the bit",
    "[domain][mpi]") {
  MpiCommunicator comm;
  std::int64_t ghosts = 0;
  for (const ProcessGrid& pg : test::process_grids(comm.size()))
    for (const bool periodic_y : {true, false})
      ghosts += static_cast<std::int64_t>(test::check_sem_forces(comm, pg, periodic_y));
  CHECK(comm.sum(ghosts) > 100);
}

TEST_CASE(
    "points sticking out of their subdomain reach every band that holds them, at their image nearest "
    "their owner's subdomain",
    "[domain][mpi]") {
  MpiCommunicator comm;
  std::int64_t moved = 0;
  for (const int periodic : {0, 1, 3})
    for (const ProcessGrid& pg : test::process_grids(comm.size())) {
      Box box;
      box.lx = 10.0f;
      box.ly = 8.0f;
      box.periodic_x = (periodic & 1) != 0;
      box.periodic_y = (periodic & 2) != 0;
      const Decomposition d(pg, box, 0.7);
      moved += static_cast<std::int64_t>(test::check_sticking_out_images(comm, d, 0.4f));
    }
  if (comm.size() > 1) CHECK(comm.sum(moved) > 0);  // some ghosts were sent at another image than stored
}

TEST_CASE("the reductions over ranks: entry by entry, NaN anywhere gives NaN", "[domain][mpi]") {
  MpiCommunicator comm;
  const int rank = comm.rank(), last = comm.size() - 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> got =
      comm.max(std::vector<double>{static_cast<double>(rank), -static_cast<double>(rank),
                                   rank == last ? nan : 1.0, -std::numeric_limits<double>::infinity()});
  REQUIRE(got.size() == 4);
  CHECK(got[0] == last);
  CHECK(got[1] == 0.0);
  CHECK(std::isnan(got[2]));
  CHECK(got[3] == -std::numeric_limits<double>::infinity());
  CHECK(comm.max(std::vector<double>{}).empty());
  CHECK(std::isnan(comm.max(rank == 0 ? nan : 0.0)));
  CHECK(comm.sum(std::int64_t{2}) == 2 * comm.size());
}

TEST_CASE("the device halo delivers what HaloExchange::refresh delivers", "[domain][mpi]") {
  MpiCommunicator comm;
  std::int64_t filled = 0;
  for (const ProcessGrid& pg : test::process_grids(comm.size()))
    for (const bool periodic_y : {true, false})
      for (const auto mode : {tissue::domain::HaloMode::distinct, tissue::domain::HaloMode::images})
        filled += static_cast<std::int64_t>(test::check_device_halo(comm, pg, periodic_y, mode));
  CHECK(comm.sum(filled) > 0);
}

TEST_CASE("a decomposed SEM run with migration equals the undecomposed run to the bit", "[domain][mpi]") {
  MpiCommunicator comm;
  std::int64_t crossed = 0;
  for (const ProcessGrid& pg : test::process_grids(comm.size())) {
    // subdomains wide enough for elements 0.4 outside them (1 x 4 on 7 rows of 0.45 is not)
    if (16 * 0.45 / pg.px < 1.2 || 7 * 0.45 / pg.py < 1.2) continue;
    for (const bool periodic_y : {true, false})
      crossed += static_cast<std::int64_t>(test::check_decomposed_sem_run(comm, pg, periodic_y, 40));
  }
  INFO("cells that changed rank during the runs: " << comm.sum(crossed));
  if (comm.size() == 2 || comm.size() == 4) CHECK(comm.sum(crossed) > 0);
}

TEST_CASE("divisions over ranks give the daughters the ids, clocks and elements of the one-rank run",
          "[domain][mpi]") {
  MpiCommunicator comm;
  std::int64_t divisions = 0;
  for (const ProcessGrid& pg : test::process_grids(comm.size())) {
    if (16 * 0.45 / pg.px < 1.2 || 7 * 0.45 / pg.py < 1.2) continue;  // as the SEM run above
    divisions += static_cast<std::int64_t>(test::check_decomposed_divisions(comm, pg, true, 40));
  }
  // daughters born on more than one rank in the same rounds
  if (comm.size() > 1) CHECK(comm.max(static_cast<std::int64_t>(divisions > 0 ? 1 : 0)) == 1);
}

TEST_CASE("a decomposed run's snapshot is one piece per rank and a .pvtu that names them all",
          "[domain][mpi]") {
  MpiCommunicator comm;
  const int rank = comm.rank(), ranks = comm.size();
  // kept where CTest says (the 2-rank run's, for ParaView: cpu.domain_mpi.paraview_pieces)
  const char* keep = std::getenv("TISSUE_DOMAIN_PIECES_DIR");
  const std::filesystem::path dir =
      (keep != nullptr ? std::filesystem::path(keep)
                       : std::filesystem::temp_directory_path() / "tissue_domain_pieces") /
      ("np" + std::to_string(ranks));
  if (rank == 0) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  comm.max(0.0);  // the directory exists for every rank
  const Box box = test::monolayer_box();
  World w(box);
  if (rank == 0)
    test::seed_sem_monolayer(w, 16, 7);
  else
    sem::add_sem_columns(w);
  const domain::Decomposition d(domain::choose_process_grid(ranks, box, 1.0), box, 1.0);
  domain::migrate_to_owners(d, comm, w);
  w.step = 7;
  {
    io::OutputPiece piece;
    piece.rank = rank;
    piece.ranks = ranks;
    io::TissueWriter writer(dir, true, true, piece);
    writer.write(w);
    writer.wait();
  }
  comm.max(0.0);  // every piece is on disk
  // this rank's pieces hold its cells and elements, in its rows' order
  const std::string piece = ranks > 1 ? "_" + std::to_string(rank) : std::string();
  const std::string cells = test::slurp(dir / ("cells_000000007" + piece + ".vtu"));
  const std::string elements = test::slurp(dir / ("elements_000000007" + piece + ".vtu"));
  std::vector<std::int64_t> cell_ids(w.cells.size()), element_cells(w.elements.size());
  for (std::size_t c = 0; c < w.cells.size(); ++c) cell_ids[c] = w.cell_id.host(c);
  for (std::size_t e = 0; e < w.elements.size(); ++e)
    element_cells[e] = w.cell_id.host(static_cast<std::size_t>(w.cell.host(e)));
  CHECK(test::vtu_array<std::int64_t>(cells, "cell_id") == cell_ids);
  CHECK(test::vtu_array<std::int64_t>(elements, "cell_id") == element_cells);
  CHECK(cells.find("NumberOfPoints=\"" + std::to_string(w.cells.size()) + "\"") != std::string::npos);
  CHECK(comm.sum(static_cast<std::int64_t>(w.cells.size())) == 16 * 7);
  if (rank == 0 && ranks > 1) {
    // the .pvtu names every rank's piece and declares the pieces' arrays; the series names the .pvtu
    for (const std::string kind : {"cells", "elements"}) {
      const std::string pvtu = test::slurp(dir / (kind + "_000000007.pvtu"));
      std::vector<std::string> pieces;
      for (int r = 0; r < ranks; ++r) pieces.push_back(kind + "_000000007_" + std::to_string(r) + ".vtu");
      CHECK(test::all_matches(pvtu, "Source=\"([^\"]*)\"") == pieces);
      const std::string& own = kind == "cells" ? cells : elements;
      const std::size_t from = own.find("<PointData>"), to = own.find("</PointData>");
      REQUIRE(to != std::string::npos);
      const std::vector<std::string> names =
          test::all_matches(own.substr(from, to - from), "<DataArray type=\"\\w+\" Name=\"([^\"]*)\"");
      REQUIRE_FALSE(names.empty());
      CHECK(names.front() == "cell_id");
      CHECK(test::all_matches(pvtu, "<PDataArray type=\"\\w+\" Name=\"([^\"]*)\"") == names);
      CHECK(test::slurp(dir / (kind + ".pvd")).find(kind + "_000000007.pvtu") != std::string::npos);
    }
  }
  comm.max(0.0);
  if (rank == 0 && keep == nullptr) std::filesystem::remove_all(dir);
}

namespace {

/// The one-rank run in the setting a decomposed run takes (decompose_simulation): one lane each.
void one_lane(Simulation& sim) {
  for (std::size_t i = 0; i < sim.schedule.system_count(); ++i) {
    System& s = sim.schedule.system(i);
    if (auto* sem_system = dynamic_cast<sem::SemSystem*>(&s)) {
      sem::SemParams p = sem_system->params();
      p.lanes = 1;
      sim.schedule.replace("sem", std::make_unique<sem::SemSystem>(p));
    } else if (auto* network = dynamic_cast<grn::GeneNetworkSystem*>(&s)) {
      grn::GeneNetworkParams p = network->params();
      p.lanes = 1;
      sim.schedule.replace("gene_network", std::make_unique<grn::GeneNetworkSystem>(p));
    }
  }
}

/// A scenario twice: the one-rank run in the decomposed run's setting (one_lane) and the run decomposed over
/// the ranks of `comm`.
struct ReferenceAndDecomposed {
  std::unique_ptr<Simulation> reference, decomposed;
  std::shared_ptr<const domain::Decomposition> decomposition;
};
ReferenceAndDecomposed reference_and_decomposed(const std::string& text, const char* name,
                                                MpiCommunicator& comm) {
  ReferenceAndDecomposed r;
  r.reference = build_simulation(io::Scenario::from_string(text, name));
  r.decomposed = build_simulation(io::Scenario::from_string(text, name));
  one_lane(*r.reference);
  r.decomposition = decompose_simulation(*r.decomposed, comm);
  return r;
}

GridField<float>& grid_field(World& w, const std::string& name) {
  for (auto& f : w.fields)
    if (f->name() == name) return dynamic_cast<GridField<float>&>(*f);
  throw std::logic_error("no field " + name);
}

}  // namespace

TEST_CASE("an epidermis composed from a scenario and stepped over ranks equals its one-rank run",
          "[domain][mpi]") {
  // the epidermis preset (sem, cell_centres, gene_network, lifecycle, stratification) with growth every 10
  // steps and divisions at 22 elements: 72 cells divide within the 100 steps
  const std::string text = R"(
[simulation]
model = "epidermis"
dt = 0.01
steps = 100
seed = 7
[initial]
cells_x = 12
cells_y = 6
elements_per_cell = 20
adhesive_elements = 10
spacing = 0.6
cell_radius = 0.3
[sem]
rebuild_every = 1
[lifecycle]
growth_interval = 10
division_elements = 22
delta_threshold = 140.0
)";
  MpiCommunicator comm;
  auto [reference, decomposed, decomposition] = reference_and_decomposed(text, "epidermis_ranks.toml", comm);
  World& whole = *reference->world;
  World& part = *decomposed->world;
  std::size_t mismatches = 0, species_differ = 0;
  for (std::int64_t k = 0; k < reference->steps; ++k) {
    reference->schedule.step(whole, reference->dt);
    decomposed->schedule.step(part, decomposed->dt);
    whole.download();
    part.download();
    mismatches += test::position_differences(part, whole);
    const auto& a = part.cells.column<float>("species");
    const auto& b = whole.cells.column<float>("species");
    for (std::size_t c = 0; c < part.cells.size(); ++c)
      for (int sp = 0; sp < a.components(); ++sp)
        if (a.host(c, sp) != b.host(static_cast<std::size_t>(part.cell_id.host(c)), sp)) ++species_differ;
  }
  INFO("rank " << comm.rank() << " of " << comm.size() << " (" << decomposition->grid().px << " x "
               << decomposition->grid().py << "): " << mismatches << " positions and " << species_differ
               << " species values differ over " << reference->steps << " steps");
  CHECK(mismatches == 0);
  CHECK(species_differ == 0);
  CHECK(comm.sum(static_cast<std::int64_t>(part.cells.size())) ==
        static_cast<std::int64_t>(whole.cells.size()));
  CHECK(whole.cells.size() > 72 + 20);  // it divided
  CHECK(part.step == whole.step);
}

TEST_CASE("a decomposed signal field holds only its window on the device and steps as the whole field",
          "[domain][mpi]") {
  // tests/domain/decomposed_epidermis_tgfb.toml on a 12 x 12 box: a 30 x 30 x 10 grid, the cells secreting
  // and taking up near the cuts
  const std::string text = R"(
[simulation]
entities = ["tissue", "signals"]
modules = ["sem", "cell_centres", "signal_sampling", "gene_network", "signal_transport"]
dt = 0.01
steps = 20
seed = 3
[domain]
periodic = true
[initial]
layout = "monolayer"
cells_x = 20
cells_y = 20
elements_per_cell = 20
adhesive_elements = 10
spacing = 0.6
cell_radius = 0.3
[sem]
rebuild_every = 1
[gene_network]
tgf_beta_field = "tgfb"
neighbour_distance = 0.8
[signal.tgfb]
spacing = 0.4
height = 4.0
diffusivity = 0.2
decay = 0.05
initial = 0.2
bottom = { boundary = "neumann" }
top = { boundary = "dirichlet", value = 1.5 }
secretion = { basal = 0.02, suprabasal = 0.05 }
uptake = { basal = 0.002, suprabasal = 0.001 }
)";
  MpiCommunicator comm;
  auto [reference, decomposed, decomposition] = reference_and_decomposed(text, "signal_ranks.toml", comm);
  World& whole = *reference->world;
  World& part = *decomposed->world;
  GridField<float>& whole_field = grid_field(whole, "tgfb");
  GridField<float>& field = grid_field(part, "tgfb");

  // the device holds the block and the frame along the split axes: less than the whole grid
  CHECK_FALSE(field.resident());
  CHECK_THROWS_AS(field.current(), std::logic_error);
  const GridShape shape = field.shape();
  const GridBlock block = grid_block(*decomposition, shape, comm.rank());
  const std::size_t block_nodes = static_cast<std::size_t>(block.nx()) *
                                  static_cast<std::size_t>(block.ny()) * static_cast<std::size_t>(shape.nz);
  INFO("rank " << comm.rank() << " of " << comm.size() << ": block " << block.nx() << " x " << block.ny()
               << " of " << shape.nx << " x " << shape.ny << ", device bytes " << field.bytes() << " of "
               << whole_field.bytes());
  CHECK(field.bytes() >= 2 * sizeof(float) * block_nodes);
  // every rank composed the whole tissue; its tables keep the capacity of its share only
  CHECK(part.elements.capacity() == std::max<std::size_t>(part.elements.size(), 64));
  CHECK(part.cells.capacity() == std::max<std::size_t>(part.cells.size(), 64));
  if (comm.size() > 1)
    CHECK(field.bytes() < whole_field.bytes());
  else
    CHECK(field.bytes() == whole_field.bytes());

  for (std::int64_t k = 0; k < reference->steps; ++k) {
    reference->schedule.step(whole, reference->dt);
    decomposed->schedule.step(part, decomposed->dt);
  }
  whole.download();
  part.download();
  // the samples at the rank's cells, and the block after a download
  std::size_t samples_differ = 0, block_differ = 0;
  const auto& a = part.cells.column<float>("tgfb");
  const auto& b = whole.cells.column<float>("tgfb");
  const auto& ga = part.cells.column<float>("tgfb_gradient");
  const auto& gb = whole.cells.column<float>("tgfb_gradient");
  for (std::size_t c = 0; c < part.cells.size(); ++c) {
    const auto row = static_cast<std::size_t>(part.cell_id.host(c));
    samples_differ += a.host(c) != b.host(row);
    for (int d = 0; d < 3; ++d) samples_differ += ga.host(c, d) != gb.host(row, d);
  }
  const GridGeometry<float>& g = field.geometry();
  for (int z = 0; z < shape.nz; ++z)
    for (int j = block.j0; j < block.j1; ++j)
      for (int i = block.i0; i < block.i1; ++i)
        block_differ += field.host()[g.index(i, j, z)] != whole_field.host()[g.index(i, j, z)];
  CHECK(samples_differ == 0);
  CHECK(block_differ == 0);
  CHECK(part.cells.size() > 0);
  // the whole field gathered on rank 0
  gather_grid_fields_to_root(*decomposition, comm, part);
  if (comm.rank() == 0) CHECK(field.host() == whole_field.host());
}

TEST_CASE("a decomposed gene network equals the undecomposed network to the bit", "[domain][mpi]") {
  MpiCommunicator comm;
  std::int64_t ghosts = 0;
  for (const ProcessGrid& pg : test::process_grids(comm.size())) {
    if (16 * 0.45 / pg.px < 0.85 || 7 * 0.45 / pg.py < 0.85) continue;  // narrower than the halo
    for (const bool periodic_y : {true, false})
      for (const bool moving : {false, true})
        ghosts +=
            static_cast<std::int64_t>(test::check_decomposed_gene_network(comm, pg, periodic_y, 30, moving));
  }
  if (comm.size() > 1) CHECK(comm.sum(ghosts) > 0);
}

TEST_CASE("a checkpoint of a decomposed run, gathered on rank 0, restarts on any rank count to the bit",
          "[domain][mpi]") {
  MpiCommunicator comm;
  // CTest's fixture runs the 2-rank test first, so that the 3- and 4-rank ones restart its checkpoint too
  const char* dir = std::getenv("TISSUE_DOMAIN_CHECKPOINT_DIR");
  const std::filesystem::path where =
      dir != nullptr ? std::filesystem::path(dir)
                     : std::filesystem::temp_directory_path() / "tissue_domain_checkpoints";
  const int restarted = test::check_decomposed_checkpoint(comm, where, 12);
  CHECK(restarted >= 1);
  if (comm.size() > 2) CHECK(restarted >= 2);  // its own and the 2-rank run's
}
