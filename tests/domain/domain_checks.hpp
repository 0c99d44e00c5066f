#pragma once
// Checks of the domain decomposition's exchanges that run on any Communicator: the serial one in the
// engine's suite (one rank, its periodic images sent to itself) and MPI ranks under mpirun
// (tests/domain/test_domain_mpi.cpp). Every rank makes the same global points and cells from the same
// seed, so that each can compute what it must receive by brute force, without gathering anything.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "engine/core/cell_centres.hpp"
#include "engine/core/table.hpp"
#include "engine/core/world.hpp"
#include "engine/domain/communicator.hpp"
#include "engine/domain/decomposition.hpp"
#include "engine/domain/device_halo.hpp"
#include "engine/domain/grid_halo.hpp"
#include "engine/domain/halo_exchange.hpp"
#include "engine/domain/migration.hpp"
#include "engine/exec/device_buffer.hpp"
#include "engine/exec/memory.hpp"
#include "engine/grid/grid.hpp"
#include "engine/grid/stencils.hpp"
#include "engine/io/checkpoint.hpp"
#include "modules/gene_network/gene_network.hpp"
#include "modules/gene_network/gene_network_decomposed.hpp"
#include "modules/lifecycle/lifecycle.hpp"
#include "modules/sem/sem.hpp"
#include "modules/sem/sem_decomposed.hpp"
#include "modules/sem/sem_kernels.hpp"
#include "modules/sem/sem_layout.hpp"
#include "tests/support.hpp"
#include "tests/tissue_world.hpp"

namespace tissue::test {

/// Points of the whole tissue: positions [length] and global ids.
struct GlobalPoints {
  std::vector<float> x, y, z;
  std::vector<std::int64_t> id;
};

/// n points, uniform in the box (x, y in [0, l), beyond it by 10 % on open axes), z in [0, 1), ids 0..n-1,
/// a tenth of them within 0.02 of a cut of a px x py grid (or of the box's faces).
inline GlobalPoints make_points(std::size_t n, const Box& box, int px, int py, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  GlobalPoints p;
  for (std::size_t i = 0; i < n; ++i) {
    float x = box.periodic_x ? u(rng) * box.lx : (1.2f * u(rng) - 0.1f) * box.lx;
    float y = box.periodic_y ? u(rng) * box.ly : (1.2f * u(rng) - 0.1f) * box.ly;
    if (i % 10 == 0) {  // near a cut
      const int k = static_cast<int>(u(rng) * static_cast<float>(px + 1));
      x = static_cast<float>(k) * box.lx / static_cast<float>(px) + 0.04f * (u(rng) - 0.5f);
    }
    p.x.push_back(box.wrap_x(x));
    p.y.push_back(box.wrap_y(y));
    p.z.push_back(u(rng));
    p.id.push_back(static_cast<std::int64_t>(i));
  }
  (void)py;
  return p;
}

/// A table with the columns x, y, z (float) and id (int64).
inline void add_point_columns(Table& t) {
  t.add_column<float>("x");
  t.add_column<float>("y");
  t.add_column<float>("z");
  t.add_column<std::int64_t>("id");
}

/// The points `rank` owns, in global order, into `owned` (which has add_point_columns()).
inline void fill_owned(const GlobalPoints& p, const domain::Decomposition& d, int rank, Table& owned) {
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < p.x.size(); ++i)
    if (d.owner(p.x[i], p.y[i]) == rank) mine.push_back(i);
  owned.resize(mine.size());
  for (std::size_t r = 0; r < mine.size(); ++r) {
    owned.column<float>("x").host(r) = p.x[mine[r]];
    owned.column<float>("y").host(r) = p.y[mine[r]];
    owned.column<float>("z").host(r) = p.z[mine[r]];
    owned.column<std::int64_t>("id").host(r) = p.id[mine[r]];
  }
}

using GhostEntry = std::tuple<std::int64_t, float, float>;  // id, shift x, shift y

/// The shifts of a position's images along an axis: -l, 0, l when periodic, else 0 [length].
inline std::vector<float> image_shifts(bool periodic, float length) {
  return periodic ? std::vector<float>{-length, 0.0f, length} : std::vector<float>{0.0f};
}

/// What `rank` must receive: every point's periodic images in its ghost band, but its own points unshifted
/// (decomposition.hpp); the points are owned by their positions here.
inline std::vector<GhostEntry> brute_force_ghosts(const GlobalPoints& p, const domain::Decomposition& d,
                                                  int rank) {
  const Box& box = d.box();
  const domain::Subdomain b = d.bounds(rank);
  const double w = d.halo_width();
  const std::vector<float> sx = image_shifts(box.periodic_x, box.lx),
                           sy = image_shifts(box.periodic_y, box.ly);
  std::vector<GhostEntry> want;
  for (std::size_t i = 0; i < p.x.size(); ++i)
    for (const float tx : sx)
      for (const float ty : sy) {
        const double qx = static_cast<double>(p.x[i]) + tx, qy = static_cast<double>(p.y[i]) + ty;
        const bool own = tx == 0.0f && ty == 0.0f && d.owner(p.x[i], p.y[i]) == rank;
        if (b.x0 - qx < w && qx - b.x1 < w && b.y0 - qy < w && qy - b.y1 < w && !own)
          want.emplace_back(p.id[i], tx, ty);
      }
  std::sort(want.begin(), want.end());
  return want;
}

/// What `rank` must receive with HaloMode::distinct: the ids of the other ranks' points that have an image in
/// its ghost band, each once, ascending.
inline std::vector<std::int64_t> brute_force_distinct(const GlobalPoints& p, const domain::Decomposition& d,
                                                      int rank) {
  std::vector<std::int64_t> want;
  for (const GhostEntry& e : brute_force_ghosts(p, d, rank)) {
    const auto i = static_cast<std::size_t>(std::get<0>(e));
    if (d.owner(p.x[i], p.y[i]) != rank) want.push_back(std::get<0>(e));
  }
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  return want;
}

/// The ids of the ghost rows received, in row order.
inline std::vector<std::int64_t> ghost_ids(Table& ghosts) {
  std::vector<std::int64_t> ids;
  for (std::size_t g = 0; g < ghosts.size(); ++g) ids.push_back(ghosts.column<std::int64_t>("id").host(g));
  return ids;
}

/// The (id, shift) of every ghost row received, sorted.
inline std::vector<GhostEntry> received_ghosts(const domain::HaloExchange& halo, Table& ghosts) {
  std::vector<GhostEntry> got;
  for (const domain::GhostRange& r : halo.ranges())
    for (std::size_t g = r.first; g < r.first + r.count; ++g)
      got.emplace_back(ghosts.column<std::int64_t>("id").host(g), r.shift_x, r.shift_y);
  std::sort(got.begin(), got.end());
  return got;
}

/// One pair's Morse force on element i from a neighbour at displacement (dx, dy, dz) = x_j - x_i, if within
/// the cut-off: the intercellular force of the SEM (modules/sem/sem_kernels.hpp), repulsive part only.
struct PairTerm {
  std::int64_t id;
  float fx, fy, fz;
  bool operator<(const PairTerm& o) const { return id < o.id; }
};
inline bool pair_term(std::int64_t id, float dx, float dy, float dz, float cutoff, PairTerm& out) {
  const float r2 = dx * dx + dy * dy + dz * dz;
  if (!(r2 < cutoff * cutoff) || r2 == 0.0f) return false;
  const float r = std::sqrt(r2);
  static const sem::MorseForce morse = sem::MorseForce::of(sem::Morse<double>{2.0, 0.1, 1.0, 0.2});
  const float f = std::max(0.0f, sem::morse_force(r, morse)) / r;
  out = PairTerm{id, -f * dx, -f * dy, -f * dz};
  return true;
}

/// Sum of the terms in ascending id order (the order a decomposed run can keep on every rank count).
inline std::array<float, 3> sum_by_id(std::vector<PairTerm>& terms) {
  std::sort(terms.begin(), terms.end());
  std::array<float, 3> f{0.0f, 0.0f, 0.0f};
  for (const PairTerm& t : terms) {
    f[0] += t.fx;
    f[1] += t.fy;
    f[2] += t.fz;
  }
  return f;
}

/// The forces on the owned points from owned points (plain displacements) and ghosts (displacement plus the
/// range's shift; with `distinct`, HaloMode::distinct's ghosts, every displacement by the minimum image),
/// against the single-domain forces from every point by the minimum image: equal to the
/// bit. Returns the number of owned points with at least one neighbour through a ghost.
inline std::size_t check_forces_with_ghosts(const GlobalPoints& p, const domain::Decomposition& d,
                                            const domain::HaloExchange& halo, Table& owned, Table& ghosts,
                                            float cutoff, bool distinct = false) {
  const Box& box = d.box();
  auto& ox = owned.column<float>("x");
  auto& oy = owned.column<float>("y");
  auto& oz = owned.column<float>("z");
  auto& oid = owned.column<std::int64_t>("id");
  auto& gx = ghosts.column<float>("x");
  auto& gy = ghosts.column<float>("y");
  auto& gz = ghosts.column<float>("z");
  auto& gid = ghosts.column<std::int64_t>("id");
  const auto image_x = [&](float dx) { return distinct ? box.min_image_x(dx) : dx; };
  const auto image_y = [&](float dy) { return distinct ? box.min_image_y(dy) : dy; };
  std::size_t through_ghosts = 0, mismatches = 0, pairs = 0;
  for (std::size_t i = 0; i < owned.size(); ++i) {
    std::vector<PairTerm> decomposed, single;
    PairTerm t{};
    for (std::size_t j = 0; j < owned.size(); ++j)
      if (j != i && pair_term(oid.host(j), image_x(ox.host(j) - ox.host(i)), image_y(oy.host(j) - oy.host(i)),
                              oz.host(j) - oz.host(i), cutoff, t))
        decomposed.push_back(t);
    const std::size_t own_pairs = decomposed.size();
    for (const domain::GhostRange& r : halo.ranges())
      for (std::size_t g = r.first; g < r.first + r.count; ++g)
        if (pair_term(gid.host(g), image_x((gx.host(g) - ox.host(i)) + r.shift_x),
                      image_y((gy.host(g) - oy.host(i)) + r.shift_y), gz.host(g) - oz.host(i), cutoff, t))
          decomposed.push_back(t);
    if (decomposed.size() > own_pairs) ++through_ghosts;
    const auto self = static_cast<std::size_t>(oid.host(i));
    for (std::size_t j = 0; j < p.x.size(); ++j)
      if (j != self && pair_term(p.id[j], box.min_image_x(p.x[j] - p.x[self]),
                                 box.min_image_y(p.y[j] - p.y[self]), p.z[j] - p.z[self], cutoff, t))
        single.push_back(t);
    pairs += single.size();
    if (decomposed.size() != single.size()) {
      ++mismatches;
      continue;
    }
    const auto a = sum_by_id(decomposed), b = sum_by_id(single);
    if (a != b) ++mismatches;
  }
  INFO(mismatches << " owned points whose force differs from the single-domain force");
  CHECK(mismatches == 0);
  CHECK(pairs > 0);
  return through_ghosts;
}

/// Deterministic per-id values of the migration tests: a cell's species and its elements' positions and
/// types follow from its id, so that any rank can check any cell.
inline float species_of(std::int64_t id, int k) {
  return static_cast<float>(id) * 0.5f + static_cast<float>(k);
}
inline int elements_of(std::int64_t id) {
  return 1 + static_cast<int>(id % 4);
}
inline std::int32_t type_of(std::int64_t id, int e) {
  return static_cast<std::int32_t>(id * 10 + e);
}
/// The centre of cell `id` after `moves` moves by (0.37 lx, -0.21 ly) (wrapped).
inline std::array<float, 2> centre_of(std::int64_t id, int moves, const Box& box) {
  std::mt19937 rng(static_cast<unsigned>(id) * 7919u + 17u);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const float x0 = u(rng) * box.lx, y0 = u(rng) * box.ly;
  return {box.wrap_x(x0 + static_cast<float>(moves) * 0.37f * box.lx),
          box.wrap_y(y0 - static_cast<float>(moves) * 0.21f * box.ly)};
}
/// Element e of cell `id` sits at the centre plus (0.01 e, -0.01 e, 0.1 e), wrapped.
inline std::array<float, 3> element_of(std::int64_t id, int e, int moves, const Box& box) {
  const auto c = centre_of(id, moves, box);
  return {box.wrap_x(c[0] + 0.01f * static_cast<float>(e)), box.wrap_y(c[1] - 0.01f * static_cast<float>(e)),
          0.1f * static_cast<float>(e)};
}

/// A world with the migration tests' columns: cells' "species" (float, 3) and elements' "type" (int32).
inline void add_migration_columns(World& w) {
  w.cells.add_column<float>("species", 3);
  w.elements.add_column<std::int32_t>("type");
}

/// Appends cells with ids 0..n-1 (in that order) at their centres after `moves` moves.
inline void add_cells(World& w, std::size_t n, int moves) {
  for (std::size_t k = 0; k < n; ++k) {
    const std::int32_t c = w.add_cell_host();
    const std::int64_t id = w.cell_id.host(static_cast<std::size_t>(c));
    const auto centre = centre_of(id, moves, w.box);
    w.cx.host(static_cast<std::size_t>(c)) = centre[0];
    w.cy.host(static_cast<std::size_t>(c)) = centre[1];
    for (int s = 0; s < 3; ++s)
      w.cells.column<float>("species").host(static_cast<std::size_t>(c), s) = species_of(id, s);
    for (int e = 0; e < elements_of(id); ++e) {
      const auto q = element_of(id, e, moves, w.box);
      const std::int32_t row = w.add_element_host(c, q[0], q[1], q[2]);
      w.elements.column<std::int32_t>("type").host(static_cast<std::size_t>(row)) = type_of(id, e);
    }
  }
  w.commit();
}

/// Moves every cell and its elements once more (centre_of with moves + 1), on the host mirror.
inline void move_cells(World& w, int moves) {
  for (std::size_t c = 0; c < w.cells.size(); ++c) {
    const std::int64_t id = w.cell_id.host(c);
    const auto centre = centre_of(id, moves + 1, w.box);
    w.cx.host(c) = centre[0];
    w.cy.host(c) = centre[1];
    for (int e = 0; e < w.count.host(c); ++e) {
      const auto q = element_of(id, e, moves + 1, w.box);
      const auto row = static_cast<std::size_t>(w.first.host(c) + e);
      w.x.host(row) = q[0];
      w.y.host(row) = q[1];
      w.z.host(row) = q[2];
    }
  }
}

/// Checks that `w` holds cells whose every value follows from its id after `moves` moves: ascending ids,
/// consistent ranges, species, element positions and types; and, when `d` is given, that `rank` owns every
/// centre. Returns the ids held.
inline std::vector<std::int64_t> check_cells(World& w, int moves, const domain::Decomposition* d, int rank) {
  std::vector<std::int64_t> ids;
  CHECK(w.check_consistency().empty());
  std::size_t bad = 0;
  for (std::size_t c = 0; c < w.cells.size(); ++c) {
    const std::int64_t id = w.cell_id.host(c);
    ids.push_back(id);
    const auto centre = centre_of(id, moves, w.box);
    if (w.cx.host(c) != centre[0] || w.cy.host(c) != centre[1]) ++bad;
    if (d != nullptr && d->owner(w.cx.host(c), w.cy.host(c)) != rank) ++bad;
    for (int s = 0; s < 3; ++s)
      if (w.cells.column<float>("species").host(c, s) != species_of(id, s)) ++bad;
    if (w.count.host(c) != elements_of(id)) {
      ++bad;
      continue;
    }
    for (int e = 0; e < w.count.host(c); ++e) {
      const auto row = static_cast<std::size_t>(w.first.host(c) + e);
      const auto q = element_of(id, e, moves, w.box);
      if (w.x.host(row) != q[0] || w.y.host(row) != q[1] || w.z.host(row) != q[2]) ++bad;
      if (w.elements.column<std::int32_t>("type").host(row) != type_of(id, e)) ++bad;
    }
  }
  INFO(bad << " wrong values among " << w.cells.size() << " cells");
  CHECK(bad == 0);
  CHECK(std::is_sorted(ids.begin(), ids.end()));
  return ids;
}

/// Every factorisation px py = ranks.
inline std::vector<domain::ProcessGrid> process_grids(int ranks) {
  std::vector<domain::ProcessGrid> grids;
  for (int px = 1; px <= ranks; ++px)
    if (ranks % px == 0) grids.push_back({px, ranks / px});
  return grids;
}

/// Explicit diffusion of a 2-species field for `steps` steps on the whole grid (GridGeometry::sample at the
/// boundaries) and, decomposed over `grid`, on each rank's block with its ghost frame filled by GridHalo
/// before every step: the owned nodes must equal the whole grid's to the bit after every step. Returns the
/// number of owned nodes whose value changed over the run (so that the run did something).
template <class Real>
inline std::size_t check_grid_diffusion(domain::Communicator& comm, const domain::ProcessGrid& grid,
                                        const Box& box, const std::array<GridBoundary, 6>& faces,
                                        grid::Stencil stencil, const GridShape& shape, int steps) {
  const int species = 2;
  const GridGeometry<Real> g =
      make_grid_geometry<Real>(shape, faces, species, [](int f, int s) { return 0.25 * (f + 1) + 0.5 * s; });
  const domain::Decomposition d(grid, box, 2.0 * shape.h);
  domain::GridHalo<Real> halo(d, comm, shape, g, species, 1);
  std::mt19937 rng(2024);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  std::vector<Real> whole(static_cast<std::size_t>(species) * shape.cells());
  for (Real& v : whole) v = static_cast<Real>(u01(rng));
  std::vector<Real> local, next_whole(whole.size()), next_local;
  halo.scatter(whole, local);
  const std::vector<Real> start = local;
  const GridGeometry<Real> lg = halo.local_geometry();
  const Real inv_h2 = static_cast<Real>(1.0 / (shape.h * shape.h));
  const Real dt = static_cast<Real>(0.2 / grid::laplacian_spectral_radius(stencil, shape.h));
  const Real diffusion[2] = {Real(1), Real(0.5)};
  const domain::GridBlock& b = halo.block();
  std::size_t mismatches = 0;
  for (int step = 0; step < steps; ++step) {
    for (int s = 0; s < species; ++s) {
      const Real* u = whole.data() + static_cast<std::size_t>(s) * shape.cells();
      for (int k = 0; k < shape.nz; ++k)
        for (int j = 0; j < shape.ny; ++j)
          for (int i = 0; i < shape.nx; ++i)
            next_whole[static_cast<std::size_t>(s) * shape.cells() + g.index(i, j, k)] =
                u[g.index(i, j, k)] + dt * diffusion[s] * grid::laplacian(stencil, g, u, s, i, j, k, inv_h2);
    }
    whole.swap(next_whole);
    halo.exchange(local);
    next_local = local;
    for (int s = 0; s < species; ++s) {
      const Real* u = local.data() + static_cast<std::size_t>(s) * halo.local_cells();
      for (int k = 0; k < shape.nz; ++k)
        for (int lj = 0; lj < b.ny(); ++lj)
          for (int li = 0; li < b.nx(); ++li) {
            const std::size_t at = halo.local_index(li, lj, k);
            next_local[static_cast<std::size_t>(s) * halo.local_cells() + at] =
                u[at] + dt * diffusion[s] * grid::laplacian(stencil, lg, u, s, li + 1, lj + 1, k, inv_h2);
          }
    }
    local.swap(next_local);
    for (int s = 0; s < species; ++s)
      for (int k = 0; k < shape.nz; ++k)
        for (int lj = 0; lj < b.ny(); ++lj)
          for (int li = 0; li < b.nx(); ++li)
            if (local[static_cast<std::size_t>(s) * halo.local_cells() + halo.local_index(li, lj, k)] !=
                whole[static_cast<std::size_t>(s) * shape.cells() + g.index(b.i0 + li, b.j0 + lj, k)])
              ++mismatches;
  }
  INFO(mismatches << " owned node values differ from the whole grid's over " << steps << " steps");
  CHECK(mismatches == 0);
  std::size_t changed = 0;
  for (std::size_t v = 0; v < local.size(); ++v)
    if (local[v] != start[v]) ++changed;
  return changed;
}

/// The boundary cases of the grid tests: every combination of periodic, zero-flux and Dirichlet x and y
/// faces a tissue box allows (periodic exactly where the box is), each stencil, 2D and 3D grids.
struct GridCase {
  bool periodic_x, periodic_y;
  GridBoundary x_rule, y_rule;  // the rule of an open axis
  grid::Stencil stencil;
  int nz;
};
inline std::vector<GridCase> grid_cases() {
  using B = GridBoundary;
  using S = grid::Stencil;
  return {{true, true, B::periodic, B::periodic, S::seed9, 1},
          {true, true, B::periodic, B::periodic, S::seven, 4},
          {false, true, B::neumann, B::periodic, S::five, 1},
          {false, false, B::dirichlet, B::dirichlet, S::seed9, 1},
          {false, false, B::dirichlet, B::neumann, S::seed9, 1},
          {false, false, B::neumann, B::dirichlet, S::seed9, 1},
          {true, false, B::periodic, B::dirichlet, S::seed9, 1},
          {false, true, B::dirichlet, B::periodic, S::seven, 3}};
}

/// Runs every grid case on every process grid of comm.size() ranks; returns the nodes changed in all.
inline std::size_t check_grid_cases(domain::Communicator& comm, int steps) {
  std::size_t changed = 0;
  const GridShape shape2{24, 20, 1, 0.5};
  for (const GridCase& c : grid_cases())
    for (const domain::ProcessGrid& pg : process_grids(comm.size())) {
      GridShape shape = shape2;
      shape.nz = c.nz;
      Box box;
      box.lx = static_cast<float>(shape.nx * shape.h);
      box.ly = static_cast<float>(shape.ny * shape.h);
      box.periodic_x = c.periodic_x;
      box.periodic_y = c.periodic_y;
      const std::array<GridBoundary, 6> faces = {
          c.x_rule, c.x_rule, c.y_rule, c.y_rule, GridBoundary::neumann, GridBoundary::dirichlet};
      INFO("grid " << pg.px << " x " << pg.py << ", periodic " << c.periodic_x << c.periodic_y << ", rules "
                   << int(c.x_rule) << int(c.y_rule) << ", stencil " << int(c.stencil) << ", nz " << c.nz);
      changed += check_grid_diffusion<double>(comm, pg, box, faces, c.stencil, shape, steps);
      changed += check_grid_diffusion<float>(comm, pg, box, faces, c.stencil, shape, steps);
    }
  return changed;
}

/// Points owned by a "centre" they lie up to `reach` from (the elements of a cell owned by its centre), so
/// that some stick out of their rank's subdomain, across cuts and periodic faces: HaloExchange in images mode
/// must deliver every image of every point's image nearest its owner's subdomain that lies in the receiver's
/// band, but the receiver's own points unshifted, at that position (the ghost's x plus its range's shift).
/// Returns the ghosts received that were stored one period away from that image.
inline std::size_t check_sticking_out_images(domain::Communicator& comm, const domain::Decomposition& d,
                                             float reach) {
  const Box& box = d.box();
  const int rank = comm.rank();
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const std::size_t n = 3000;
  std::vector<float> x(n), y(n), cx(n), cy(n);
  std::vector<int> owner(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float px = u(rng) * box.lx, py = u(rng) * box.ly;
    owner[i] = d.owner(px, py);
    x[i] = box.wrap_x(px + reach * (2.0f * u(rng) - 1.0f));
    y[i] = box.wrap_y(py + reach * (2.0f * u(rng) - 1.0f));
    // the image nearest the owner's subdomain, as the sender computes it (in float: stored + a period)
    const domain::Subdomain b = d.bounds(owner[i]);
    const auto nearest = [](float v, double lo, double hi, float l, bool split) {
      if (!split || (lo <= v && v < hi)) return v;
      const auto out = [&](double p) { return p < lo ? lo - p : (p >= hi ? p - hi : 0.0); };
      return out(double(v) - l) < out(v) ? v - l : (out(double(v) + l) < out(v) ? v + l : v);
    };
    cx[i] = nearest(x[i], b.x0, b.x1, box.lx, box.periodic_x && d.grid().px > 1);
    cy[i] = nearest(y[i], b.y0, b.y1, box.ly, box.periodic_y && d.grid().py > 1);
  }
  Table owned("elements"), ghosts("ghosts");
  add_point_columns(owned);
  add_point_columns(ghosts);
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < n; ++i)
    if (owner[i] == rank) mine.push_back(i);
  owned.resize(mine.size());
  for (std::size_t r = 0; r < mine.size(); ++r) {
    owned.column<float>("x").host(r) = x[mine[r]];
    owned.column<float>("y").host(r) = y[mine[r]];
    owned.column<std::int64_t>("id").host(r) = static_cast<std::int64_t>(mine[r]);
  }
  domain::HaloExchange halo(d, comm, {"x", "y", "z", "id"});
  halo.build(owned, ghosts);
  using Ghost = std::tuple<std::int64_t, double, double>;
  std::vector<Ghost> got, want;
  std::size_t moved = 0;
  for (const domain::GhostRange& r : halo.ranges())
    for (std::size_t g = r.first; g < r.first + r.count; ++g) {
      const auto id = ghosts.column<std::int64_t>("id").host(g);
      const float gx = ghosts.column<float>("x").host(g), gy = ghosts.column<float>("y").host(g);
      got.emplace_back(id, double(gx) + r.shift_x, double(gy) + r.shift_y);
      if (gx != x[static_cast<std::size_t>(id)] || gy != y[static_cast<std::size_t>(id)]) ++moved;
    }
  const domain::Subdomain b = d.bounds(rank);
  const double w = d.halo_width();
  const std::vector<float> sx = image_shifts(box.periodic_x, box.lx),
                           sy = image_shifts(box.periodic_y, box.ly);
  for (std::size_t i = 0; i < n; ++i)
    for (const float tx : sx)
      for (const float ty : sy) {
        if (owner[i] == rank && tx == 0.0f && ty == 0.0f) continue;
        const double qx = double(cx[i]) + tx, qy = double(cy[i]) + ty;
        if (b.x0 - qx < w && qx - b.x1 < w && b.y0 - qy < w && qy - b.y1 < w)
          want.emplace_back(static_cast<std::int64_t>(i), qx, qy);
      }
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  INFO("rank " << rank << " of " << d.grid().px << " x " << d.grid().py << ": " << got.size() << " ghosts, "
               << want.size() << " expected");
  CHECK(got == want);
  return moved;
}

/// The SEM's forces (SemSystem::compute_forces) on the elements of `w`, host vectors of #elements each.
inline std::array<std::vector<float>, 3> sem_forces(const sem::SemParams& params, World& w) {
  const std::size_t n = w.elements.size();
  DeviceBuffer<float> fx(n), fy(n), fz(n);
  sem::SemSystem system(params);
  system.compute_forces(w, fx.span(), fy.span(), fz.span());
  std::array<std::vector<float>, 3> f{std::vector<float>(n), std::vector<float>(n), std::vector<float>(n)};
  fx.download(f[0].data(), n);
  fy.download(f[1].data(), n);
  fz.download(f[2].data(), n);
  return f;
}

/// A compressed SEM monolayer of cells_x x cells_y cells of 20 elements (ids in lattice order), centres
/// computed.
inline void seed_sem_monolayer(World& w, int cells_x = 12, int cells_y = 8) {
  sem::add_sem_columns(w);
  sem::MonolayerParams m;
  m.cells_x = cells_x;
  m.cells_y = cells_y;
  m.spacing = 0.45;
  sem::seed_monolayer(w, m);
  update_cell_centres(w);
  w.download();
}

/// The SEM's own force kernel, decomposed: each rank keeps the cells whose centres it owns, receives the
/// other ranks' elements near its faces (HaloMode::distinct, with each element's cell id and slot in its
/// cell), merges owned and ghost elements in the undecomposed order (cell id, then slot) into a world of its
/// own, and lets SemSystem::compute_forces (a cell list on the whole box's grid, minimum-image displacements)
/// find the forces. On every owned element they must equal the undecomposed forces to the bit: the candidates
/// of each bin come in the undecomposed order, the far ones the rank lacks add nothing. The z bins are the
/// list's minimum of 3 on both sides (z_extent 0.5), since CellList caps them by the point count. Returns
/// the ghosts received.
inline std::size_t check_sem_forces(domain::Communicator& comm, const domain::ProcessGrid& pg,
                                    bool periodic_y) {
  sem::SemParams params;
  params.z_extent = 0.5;
  params.lanes = 1;
  Box box;
  box.lx = 12 * 0.45f;
  box.ly = 8 * 0.45f;
  box.periodic_y = periodic_y;
  World whole(box);
  seed_sem_monolayer(whole);
  const auto reference = sem_forces(params, whole);

  // the halo: the cut-off plus how far a cell's elements reach out of its owner's subdomain (a compressed
  // cell is about 0.3 in radius)
  const domain::Decomposition d(pg, box, 1.05 * params.effective_inter_cutoff() + 0.35);
  const int rank = comm.rank();
  World w(box);
  w.elements.add_column<std::int64_t>("cell_id");
  w.elements.add_column<std::int32_t>("slot");
  seed_sem_monolayer(w);  // the same tissue on every rank; each keeps what it owns
  for (std::size_t c = 0; c < w.cells.size(); ++c)
    if (d.owner(w.cx.host(c), w.cy.host(c)) != rank) w.flags.host(c) |= cell_flags::dead;
  w.commit();
  for (std::size_t c = 0; c < w.cells.size(); ++c)
    for (std::int32_t e = 0; e < w.count.host(c); ++e) {
      const auto row = static_cast<std::size_t>(w.first.host(c) + e);
      w.elements.column<std::int64_t>("cell_id").host(row) = w.cell_id.host(c);
      w.elements.column<std::int32_t>("slot").host(row) = e;
    }
  const std::vector<std::string> columns = {"x", "y", "z", "type", "cell_id", "slot"};
  Table ghosts("ghosts");
  ghosts.add_column<float>("x");
  ghosts.add_column<float>("y");
  ghosts.add_column<float>("z");
  ghosts.add_column<std::int32_t>("type");
  ghosts.add_column<std::int64_t>("cell_id");
  ghosts.add_column<std::int32_t>("slot");
  domain::HaloExchange halo(d, comm, columns, domain::HaloMode::distinct);
  halo.build(w.elements, ghosts);

  // owned and ghost elements in the undecomposed order: (cell id, slot)
  struct Entry {
    std::int64_t cell;
    std::int32_t slot;
    bool ghost;
    std::size_t row;
  };
  std::vector<Entry> entries;
  for (std::size_t e = 0; e < w.elements.size(); ++e)
    entries.push_back({w.elements.column<std::int64_t>("cell_id").host(e),
                       w.elements.column<std::int32_t>("slot").host(e), false, e});
  for (std::size_t g = 0; g < ghosts.size(); ++g)
    entries.push_back({ghosts.column<std::int64_t>("cell_id").host(g),
                       ghosts.column<std::int32_t>("slot").host(g), true, g});
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.cell != b.cell ? a.cell < b.cell : a.slot < b.slot;
  });
  World merged(box);
  sem::add_sem_columns(merged);
  std::int64_t last_cell = -1;
  std::int32_t c = -1;
  for (const Entry& e : entries) {
    if (e.cell != last_cell) {
      c = merged.add_cell_host();
      merged.cell_id.host(static_cast<std::size_t>(c)) = e.cell;
      last_cell = e.cell;
    }
    Table& t = e.ghost ? ghosts : w.elements;
    sem::add_element_host(merged, c, t.column<float>("x").host(e.row), t.column<float>("y").host(e.row),
                          t.column<float>("z").host(e.row), t.column<std::int32_t>("type").host(e.row));
  }
  merged.commit();
  const auto forces = sem_forces(params, merged);

  std::size_t mismatches = 0, owned = 0;
  for (std::size_t k = 0; k < entries.size(); ++k) {
    if (entries[k].ghost) continue;
    ++owned;
    // the whole tissue's cells are ids 0..95 in row order
    const auto global = static_cast<std::size_t>(whole.first.host(static_cast<std::size_t>(entries[k].cell)) +
                                                 entries[k].slot);
    for (int a = 0; a < 3; ++a)
      if (forces[static_cast<std::size_t>(a)][k] != reference[static_cast<std::size_t>(a)][global])
        ++mismatches;
  }
  INFO("rank " << rank << " of a " << pg.px << " x " << pg.py << " grid: " << mismatches
               << " force components differ from the undecomposed SEM's");
  CHECK(mismatches == 0);
  CHECK(comm.sum(static_cast<std::int64_t>(owned)) == static_cast<std::int64_t>(whole.elements.size()));
  return ghosts.size();
}

/// DeviceHalo with the staged transport against HaloExchange::refresh: the rows a build chose, sent between
/// device arrays laid out as [owned rows | ghost rows], arrive in the ghost rows with the values refresh()
/// delivers, to the bit, and nothing else changes. Returns the ghost rows filled on this rank.
inline std::size_t check_device_halo(domain::Communicator& comm, const domain::ProcessGrid& pg,
                                     bool periodic_y, domain::HaloMode mode) {
  const Box box = make_box(12, 9, true, periodic_y);
  const domain::Decomposition d(pg, box, 0.8);
  const int rank = comm.rank();
  const domain::Subdomain b = d.bounds(rank);
  std::mt19937 rng(static_cast<unsigned>(100 + rank));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const auto inside = [&](double lo, double hi, double l) {
    lo = std::max(lo, 0.0);
    hi = std::min(hi, static_cast<double>(l));
    return static_cast<float>(std::min(lo + u(rng) * (hi - lo), std::nextafter(hi, lo)));
  };
  Table owned("owned"), ghosts("ghosts");
  for (Table* t : {&owned, &ghosts}) {
    t->add_column<float>("x");
    t->add_column<float>("y");
    t->add_column<float>("z");
  }
  const std::size_t n = 400;
  owned.resize(n);
  const auto place = [&] {
    for (std::size_t i = 0; i < n; ++i) {
      owned.column<float>("x").host(i) = inside(b.x0, b.x1, box.lx);
      owned.column<float>("y").host(i) = inside(b.y0, b.y1, box.ly);
      owned.column<float>("z").host(i) = static_cast<float>(u(rng));
    }
  };
  place();
  domain::HaloExchange halo(d, comm, {"x", "y", "z"}, mode);
  halo.build(owned, ghosts);
  const std::size_t g = ghosts.size();
  std::vector<domain::HaloRows> sends, receives;
  for (domain::HaloExchange::SentRows& s : halo.sent_rows())
    sends.push_back({s.to, s.tag, std::move(s.rows)});
  for (std::size_t m = 0; m < halo.receives().size(); ++m) {
    domain::HaloRows r{halo.receives()[m].from, halo.receives()[m].tag, {}};
    for (std::size_t k = 0; k < halo.ranges()[m].count; ++k)
      r.rows.push_back(static_cast<std::int32_t>(n + halo.ranges()[m].first + k));
    receives.push_back(std::move(r));
  }
  domain::StagedTransport transport(comm);
  domain::DeviceHalo device(transport);
  device.set_plan(sends, receives);

  // new values in the same rows; the reference: refresh() on the host tables
  place();
  halo.refresh(owned, ghosts);
  std::array<std::vector<float>, 3> host;
  std::array<DeviceBuffer<float>, 3> arrays;
  const char* names[3] = {"x", "y", "z"};
  for (std::size_t a = 0; a < 3; ++a) {
    host[a].assign(owned.column<float>(names[a]).host_data().begin(),
                   owned.column<float>(names[a]).host_data().begin() + static_cast<std::ptrdiff_t>(n));
    host[a].resize(n + g, -7.0f);
    arrays[a].resize(n + g);
    exec::copy_bytes(arrays[a].data(), exec::backend(), host[a].data(), exec::Backend::cpu,
                     (n + g) * sizeof(float));
  }
  device.exchange({arrays[0].span(), arrays[1].span(), arrays[2].span()});
  std::size_t mismatches = 0;
  for (std::size_t a = 0; a < 3; ++a) {
    std::vector<float> got(n + g);
    exec::copy_bytes(got.data(), exec::Backend::cpu, arrays[a].data(), exec::backend(),
                     (n + g) * sizeof(float));
    for (std::size_t i = 0; i < n; ++i) mismatches += got[i] != host[a][i] ? 1 : 0;
    for (std::size_t k = 0; k < g; ++k)
      mismatches += got[n + k] != ghosts.column<float>(names[a]).host(k) ? 1 : 0;
  }
  INFO("rank " << rank << " of " << pg.px << " x " << pg.py << ", periodic y " << periodic_y << ", mode "
               << (mode == domain::HaloMode::distinct ? "distinct" : "images") << ": " << mismatches
               << " values differ from refresh()'s");
  CHECK(mismatches == 0);
  CHECK(device.rows_received() == g);
  CHECK(device.rows_sent() == halo.rows_sent());
  return g;
}

/// The box of the 16 x 7 cell monolayers of the decomposed runs (seed_sem_monolayer(w, 16, 7): pitch 0.45),
/// periodic in x, and in y when `periodic_y`.
inline Box monolayer_box(bool periodic_y = true) {
  Box box;
  box.lx = 16 * 0.45f;
  box.ly = 7 * 0.45f;
  box.periodic_y = periodic_y;
  return box;
}

/// A rank's world of a decomposed SEM run before the tissue is spread: the columns of sem::DecomposedSem and
/// the SEM on every rank, the 16 x 7 monolayer seeded on rank 0 only.
inline void seed_rank_monolayer(World& w, int rank) {
  sem::DecomposedSem::add_columns(w);
  if (rank == 0)
    seed_sem_monolayer(w, 16, 7);
  else
    sem::add_sem_columns(w);
}

/// Step k of a run with time step dt.
inline StepContext step_context(std::int64_t k, double dt) {
  StepContext ctx;
  ctx.step = k;
  ctx.time = static_cast<double>(k) * dt;
  ctx.dt = dt;
  return ctx;
}

/// The elements of `part`'s cells whose positions differ from those of the same cell and slot in `whole`
/// (host mirrors; whole's cells are ids 0, 1, ... in row order, as a seeded tissue's).
inline std::size_t position_differences(const World& part, const World& whole) {
  std::size_t differ = 0;
  for (std::size_t c = 0; c < part.cells.size(); ++c) {
    const auto id = static_cast<std::size_t>(part.cell_id.host(c));
    for (std::int32_t e = 0; e < part.count.host(c); ++e) {
      const auto a = static_cast<std::size_t>(part.first.host(c) + e);
      const auto b = static_cast<std::size_t>(whole.first.host(id) + e);
      if (part.x.host(a) != whole.x.host(b) || part.y.host(a) != whole.y.host(b) ||
          part.z.host(a) != whole.z.host(b))
        ++differ;
    }
  }
  return differ;
}

/// A decomposed SEM run (sem::DecomposedSem: ghosts, merged world, midpoint exchange, migration every
/// step) of `steps` steps against the undecomposed SemSystem's: every element of every cell at the same
/// position to the bit after every step. The tissue starts on rank 0 and is spread by migration; 16 x 7 cells
/// put a row of cell centres on the cut of 1 x 2 and 2 x 2 grids, so that cells cross it, and make the x axis
/// long enough for the cell list to keep only a window of its bins on 2 x 1 and 4 x 1 grids
/// (SemParams::bin_window). Returns the cells that changed rank after the spreading, on this rank.
inline std::size_t check_decomposed_sem_run(domain::Communicator& comm, const domain::ProcessGrid& pg,
                                            bool periodic_y, int steps) {
  sem::SemParams params;  // the default z_extent: z bins capped by the element count
  params.lanes = 1;
  params.rebuild_every = 1;
  const Box box = monolayer_box(periodic_y);
  const double dt = 0.01;
  World whole(box);
  seed_sem_monolayer(whole, 16, 7);
  sem::SemSystem reference(params);

  // a cell's elements lie within ~0.35 of its centre: the halo is the cut-off plus that
  const domain::Decomposition d(pg, box, params.effective_inter_cutoff() + 0.4);
  const int rank = comm.rank();
  World w(box);
  seed_rank_monolayer(w, rank);
  domain::migrate_to_owners(d, comm, w);
  sem::DecomposedSem decomposed(params, d, comm);

  std::size_t crossed = 0, mismatches = 0;
  std::vector<std::int64_t> before;
  for (int step = 0; step < steps; ++step) {
    const StepContext ctx = step_context(step, dt);
    reference.run(whole, ctx);
    before.assign(w.cell_id.host_data().begin(),
                  w.cell_id.host_data().begin() + static_cast<std::ptrdiff_t>(w.cells.size()));
    decomposed.step(w, ctx);
    w.download();
    for (std::size_t c = 0; c < w.cells.size(); ++c)
      if (!std::binary_search(before.begin(), before.end(), w.cell_id.host(c))) ++crossed;
    whole.download();
    mismatches += position_differences(w, whole);
  }
  INFO("rank " << rank << " of a " << pg.px << " x " << pg.py << " grid, periodic y " << periodic_y << ": "
               << mismatches << " element positions differ from the undecomposed run's over " << steps
               << " steps");
  CHECK(mismatches == 0);
  CHECK(comm.sum(static_cast<std::int64_t>(w.cells.size())) == 16 * 7);
  CHECK(comm.sum(static_cast<std::int64_t>(decomposed.ghosts())) >= (comm.size() > 1 ? 1 : 0));
  // the ghosts were refreshed in place on most steps, and the halo rebuilt (with migrations) on some
  INFO("rebuilds: " << decomposed.rebuilds() << " in " << steps << " steps, margin " << decomposed.margin());
  CHECK(decomposed.rebuilds() >= 1);
  CHECK(decomposed.rebuilds() < static_cast<std::size_t>(steps) / 2);
  return crossed;
}

/// The lifecycle's columns and flag on a world (what install_lifecycle adds with a stochastic cycle), and the
/// cells' clocks started when `start` (the rank that holds the seeded tissue).
inline void add_lifecycle_columns(World& w, const lifecycle::LifecycleParams& life, bool start) {
  w.flag_bit(lifecycle::kGrowingFlag);
  w.cells.add_column<float>(lifecycle::kGrowthIntervalColumn);
  w.cells.add_column<std::int64_t>(lifecycle::kNextGrowthColumn);
  if (start)
    for (std::size_t c = 0; c < w.cells.size(); ++c) lifecycle::start_cycle(w, c, life);
  w.commit();
}

/// Cells of `part` that differ from the cell of the same id in `whole` (host mirrors; whole's cells are ids
/// 0, 1, ... in row order): element count, flags or growth clock, or an id `whole` lacks.
inline std::size_t cell_differences(World& part, World& whole) {
  const auto& next_part = part.cells.column<std::int64_t>(lifecycle::kNextGrowthColumn);
  const auto& next_whole = whole.cells.column<std::int64_t>(lifecycle::kNextGrowthColumn);
  std::size_t differ = 0;
  for (std::size_t c = 0; c < part.cells.size(); ++c) {
    const std::int64_t id = part.cell_id.host(c);
    if (id < 0 || static_cast<std::size_t>(id) >= whole.cells.size() ||
        whole.cell_id.host(static_cast<std::size_t>(id)) != id) {
      ++differ;
      continue;
    }
    const auto b = static_cast<std::size_t>(id);
    if (part.count.host(c) != whole.count.host(b) || part.flags.host(c) != whole.flags.host(b) ||
        next_part.host(c) != next_whole.host(b))
      ++differ;
  }
  return differ;
}

/// A decomposed SEM run with growth and divisions (lifecycle::grow_and_divide on each rank's cells every
/// other step, a stochastic cycle whose clocks are drawn by cell id) against the one-rank run: the daughters
/// get the ids one rank gives them (domain::number_daughters_globally), and every cell its elements, flags
/// and clock, and every element its position, to the bit after every step. Returns the divisions, on this
/// rank.
inline std::size_t check_decomposed_divisions(domain::Communicator& comm, const domain::ProcessGrid& pg,
                                              bool periodic_y, int steps) {
  sem::SemParams params;
  params.lanes = 1;
  params.rebuild_every = 1;
  lifecycle::LifecycleParams life;
  life.growth_interval = 4;  // with cycle_cv: each cell's own interval, about 2 to 8 steps
  life.cycle_cv = 0.5;
  const Box box = monolayer_box(periodic_y);
  const double dt = 0.01;
  World whole(box);
  seed_sem_monolayer(whole, 16, 7);
  const std::int32_t initial = whole.count.host(0);
  life.division_elements = initial + 2;
  add_lifecycle_columns(whole, life, true);
  sem::SemSystem reference(params);

  const domain::Decomposition d(pg, box, params.effective_inter_cutoff() + 0.4);
  const int rank = comm.rank();
  World w(box);
  seed_rank_monolayer(w, rank);
  add_lifecycle_columns(w, life, rank == 0);
  domain::migrate_to_owners(d, comm, w);
  domain::number_daughters_globally(comm, w);
  sem::DecomposedSem decomposed(params, d, comm);

  std::size_t divisions = 0, mismatches = 0, cells_differ = 0;
  for (int step = 0; step < steps; ++step) {
    const StepContext ctx = step_context(step, dt);
    reference.run(whole, ctx);
    decomposed.step(w, ctx);
    whole.download();
    w.download();
    if (step % 2 == 1) {
      whole.step = w.step = step + 1;
      const std::size_t before = w.cells.size();
      lifecycle::grow_and_divide(whole, life);
      lifecycle::grow_and_divide(w, life);
      divisions += w.cells.size() - before;
      whole.commit();
      w.commit();
    }
    mismatches += position_differences(w, whole);
    cells_differ += cell_differences(w, whole);
  }
  INFO("rank " << rank << " of a " << pg.px << " x " << pg.py << " grid, periodic y " << periodic_y << ": "
               << mismatches << " element positions and " << cells_differ
               << " cells differ from the one-rank "
               << "run's over " << steps << " steps, " << divisions << " divisions here");
  CHECK(mismatches == 0);
  CHECK(cells_differ == 0);
  CHECK(comm.sum(static_cast<std::int64_t>(w.cells.size())) == static_cast<std::int64_t>(whole.cells.size()));
  CHECK(w.next_cell_id == whole.next_cell_id);
  CHECK(comm.sum(static_cast<std::int64_t>(divisions)) ==
        static_cast<std::int64_t>(whole.cells.size()) - 16 * 7);
  CHECK(whole.cells.size() > 16 * 7 + 20);  // the run divided
  return divisions;
}

/// The SEM setting of check_decomposed_checkpoint(): one lane, a build every step (bit-identical runs).
inline sem::SemParams checkpoint_sem_params() {
  sem::SemParams params;
  params.lanes = 1;
  params.rebuild_every = 1;
  return params;
}

/// Positions of every element, by cell id and slot, equal between a world on rank 0 (its whole tissue) and
/// the one-rank reference: the number of elements that differ (or -1 when the cells differ).
inline long long differences_from(const World& got, World& reference) {
  reference.download();
  if (got.cells.size() != reference.cells.size()) return -1;
  for (std::size_t c = 0; c < got.cells.size(); ++c)
    if (got.cell_id.host(c) != reference.cell_id.host(c) || got.count.host(c) != reference.count.host(c))
      return -1;
  return static_cast<long long>(position_differences(got, reference));
}

/// A checkpoint of a decomposed SEM run, gathered on rank 0 (domain::gather_to_root) and written with the
/// one-rank writer, restarts on any rank count to the bit (the "written by N ranks, restarts on M").
/// This rank count runs `steps` steps from the seed, gathers, checks the gathered tissue against the one-rank
/// run and writes checkpoint_np<ranks>.h5 into `dir`. Then every checkpoint_np<K>.h5 in `dir` (its own
/// included; the CTest fixture makes the 2-rank one exist before the 3- and 4-rank runs) is read on rank 0,
/// spread over this rank count (migrate_to_owners), stepped `steps` more steps and gathered: equal to the
/// one-rank run of 2 steps to the bit; and read on rank 0 alone and stepped by the undecomposed SemSystem:
/// the same. Returns the checkpoints restarted.
inline int check_decomposed_checkpoint(domain::Communicator& comm, const std::filesystem::path& dir,
                                       int steps) {
  const sem::SemParams params = checkpoint_sem_params();
  const Box box = monolayer_box();
  const double dt = 0.01;
  const int rank = comm.rank();
  const auto context = [&](std::int64_t k) { return step_context(k, dt); };
  // the one-rank reference at `steps` and 2 `steps`
  World reference(box), reference_half(box);
  seed_sem_monolayer(reference, 16, 7);
  seed_sem_monolayer(reference_half, 16, 7);
  {
    sem::SemSystem one(params);
    for (int k = 0; k < steps; ++k) one.run(reference_half, context(k));
    sem::SemSystem two(params);
    for (int k = 0; k < 2 * steps; ++k) two.run(reference, context(k));
  }
  const auto new_world = [&] {
    auto w = std::make_unique<World>(box);
    sem::DecomposedSem::add_columns(*w);
    sem::add_sem_columns(*w);
    return w;
  };
  const domain::Decomposition d(
      domain::choose_process_grid(comm.size(), box, params.effective_inter_cutoff() + 0.4), box,
      params.effective_inter_cutoff() + 0.4);

  // this rank count's run to `steps`, gathered and written
  auto w = new_world();
  if (rank == 0) seed_sem_monolayer(*w, 16, 7);
  w->commit();
  {
    sem::DecomposedSem decomposed(params, d, comm);
    for (int k = 0; k < steps; ++k) decomposed.step(*w, context(k));
  }
  w->step = steps;
  w->time = steps * dt;
  w->download();
  domain::gather_to_root(comm, *w);
  const std::filesystem::path own = dir / ("checkpoint_np" + std::to_string(comm.size()) + ".h5");
  if (rank == 0) {
    INFO("the gathered tissue of " << comm.size() << " ranks against the one-rank run at step " << steps);
    CHECK(differences_from(*w, reference_half) == 0);
    std::filesystem::create_directories(dir);
    io::CheckpointHeader header;
    header.model = "sem";
    header.backend = std::string(exec::to_string(exec::backend()));
    header.dt = dt;
    header.steps_requested = 2 * steps;
    io::write_checkpoint(own, *w, header, {});
  }
  CHECK(comm.sum(static_cast<std::int64_t>(w->cells.size())) == 16 * 7);

  // every checkpoint there, restarted on this rank count and on rank 0 alone
  std::vector<std::filesystem::path> files;
  if (std::filesystem::exists(dir))
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().extension() == ".h5" &&
          entry.path().filename().string().rfind("checkpoint_np", 0) == 0)
        files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  // the ranks agree on the list: rank 0's count
  const auto listed = comm.max(static_cast<std::int64_t>(files.size()));
  REQUIRE(static_cast<std::int64_t>(files.size()) == listed);
  int restarted = 0;
  for (const std::filesystem::path& file : files) {
    auto r = new_world();
    if (rank == 0) io::read_checkpoint_state(file, *r, {});
    r->step = comm.max(static_cast<std::int64_t>(r->step));
    update_cell_centres(*r);
    r->download();
    domain::migrate_to_owners(d, comm, *r);
    {
      sem::DecomposedSem decomposed(params, d, comm);
      for (std::int64_t k = r->step; k < r->step + steps; ++k) decomposed.step(*r, context(k));
    }
    r->download();
    domain::gather_to_root(comm, *r);
    if (rank == 0) {
      INFO(file.filename().string() << " restarted on " << comm.size() << " ranks");
      CHECK(differences_from(*r, reference) == 0);
      // and on one rank, undecomposed
      World alone(box);
      sem::DecomposedSem::add_columns(alone);
      sem::add_sem_columns(alone);
      io::read_checkpoint_state(file, alone, {});
      sem::SemSystem one(params);
      for (std::int64_t k = alone.step; k < alone.step + steps; ++k) one.run(alone, context(k));
      alone.download();
      INFO(file.filename().string() << " restarted on one rank");
      CHECK(differences_from(alone, reference) == 0);
    }
    ++restarted;
  }
  return restarted;
}

/// The 16 x 7 cell monolayer with the built-in network's species, set from each cell's id (the same on every
/// rank), centres current on both sides.
inline void seed_network_tissue(World& w) {
  seed_sem_monolayer(w, 16, 7);
  Column<float>& species = grn::add_species_column(w, species_names(grn::kSpeciesCount));
  for (std::size_t c = 0; c < w.cells.size(); ++c)
    for (int k = 0; k < grn::kSpeciesCount; ++k)
      species.host_data()[static_cast<std::size_t>(k) * species.capacity() + c] =
          0.05f + 0.4f * static_cast<float>((w.cell_id.host(c) * 7 + k * 3) % 11);
  w.commit();
  update_cell_centres(w);
  w.download();
}

/// A decomposed gene network (grn::DecomposedGeneNetwork: ghost cells, merged cells, midpoint species from
/// the owners) of `steps` steps against the undecomposed GeneNetworkSystem's: every species of every cell and
/// its suprabasal flag equal to the bit after every step. A tissue that does not move is merged once and then
/// refreshed on the device; with `moving`, after every odd step the centres move up to 0.4 along x toward the
/// nearer x face of their subdomain (staying inside it), or back, so that cells beyond the ghost band at the
/// last rebuild (on the 0.45 lattice, the third column from a cut, 1.125 from it) come within the neighbour
/// distance of cells across the cut: the run must rebuild at every even step (pairs approached by up to 0.8,
/// more than the margin of at most 0.05, the halo width less the neighbour distance) and refreshes on the
/// device at every odd one. Without the rebuilds for moves the species differ. Returns the ghost cells of the
/// last rebuild on this rank.
inline std::size_t check_decomposed_gene_network(domain::Communicator& comm, const domain::ProcessGrid& pg,
                                                 bool periodic_y, int steps, bool moving = false) {
  const Box box = monolayer_box(periodic_y);
  grn::GeneNetworkParams params;  // neighbours within 0.8: up to the third ring of cells
  // one lane: with more, the candidates are split among the lanes by their place in the sorted list, which
  // differs between a rank's merged cells and the whole tissue (float rounding)
  params.lanes = 1;
  const double dt = 0.1;
  World whole(box);
  seed_network_tissue(whole);
  grn::GeneNetworkSystem reference(params);

  const domain::Decomposition d(pg, box, params.neighbour_distance + 0.05);
  const int rank = comm.rank();
  World w(box);
  if (rank == 0) {
    seed_network_tissue(w);
  } else {
    sem::add_sem_columns(w);
    grn::add_species_column(w, species_names(grn::kSpeciesCount));
  }
  domain::migrate_to_owners(d, comm, w);
  grn::DecomposedGeneNetwork decomposed(params, d, comm);
  const std::uint32_t bit = w.flag_bit(grn::kSuprabasalFlag),
                      whole_bit = whole.flag_bit(grn::kSuprabasalFlag);

  std::size_t mismatches = 0, compared = 0;
  std::map<std::int64_t, double> moved_x;  // moving: each cell's move toward its nearer x face, by id
  for (int step = 0; step < steps; ++step) {
    const StepContext ctx = step_context(step, dt);
    reference.run(whole, ctx);
    decomposed.step(w, ctx);
    w.cells.download();
    whole.cells.download();
    Column<float>& mine = grn::species_column(w);
    Column<float>& theirs = grn::species_column(whole);
    for (std::size_t c = 0; c < w.cells.size(); ++c) {
      const auto id = static_cast<std::size_t>(w.cell_id.host(c));  // ids 0..111 in the whole tissue's rows
      for (int k = 0; k < grn::kSpeciesCount; ++k) {
        const auto kk = static_cast<std::size_t>(k);
        if (mine.host_data()[kk * mine.capacity() + c] != theirs.host_data()[kk * theirs.capacity() + id])
          ++mismatches;
      }
      if (((w.flags.host(c) & bit) != 0) != ((whole.flags.host(id) & whole_bit) != 0)) ++mismatches;
      ++compared;
    }
    if (moving && step % 2 == 1) {  // the same moves on both sides, by id: toward the faces, then back
      if (step % 4 == 1) {
        for (std::size_t c = 0; c < whole.cells.size(); ++c) {
          const float x = whole.cx.host(c);
          const domain::Subdomain sub = d.bounds(d.owner(x, whole.cy.host(c)));
          const double left = x - sub.x0, right = sub.x1 - x;  // to the faces, inside
          const double by = std::min(0.4, std::max(0.0, std::min(left, right) - 0.01));
          moved_x[whole.cell_id.host(c)] = left < right ? -by : by;
        }
      }
      const float sign = step % 4 == 1 ? 1.0f : -1.0f;
      for (std::size_t c = 0; c < w.cells.size(); ++c)
        w.cx.host(c) += sign * static_cast<float>(moved_x.at(w.cell_id.host(c)));
      for (std::size_t c = 0; c < whole.cells.size(); ++c)
        whole.cx.host(c) += sign * static_cast<float>(moved_x.at(whole.cell_id.host(c)));
      w.cells.upload();
      whole.cells.upload();
    }
  }
  // merged once and refreshed on the device (still), or rebuilt at every even step (moving)
  CHECK(decomposed.rebuilds() == static_cast<std::size_t>(moving ? 1 + (steps - 1) / 2 : 1));
  INFO("rank " << rank << " of a " << pg.px << " x " << pg.py << " grid, periodic y " << periodic_y << ": "
               << mismatches << " species or flags differ from the undecomposed network's over " << steps
               << " steps");
  CHECK(mismatches == 0);
  CHECK(comm.sum(static_cast<std::int64_t>(compared)) == 16 * 7 * steps);
  return decomposed.ghosts();
}

}  // namespace tissue::test
