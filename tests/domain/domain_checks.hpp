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
#include <random>
#include <tuple>
#include <vector>

#include "engine/core/table.hpp"
#include "engine/core/world.hpp"
#include "engine/domain/communicator.hpp"
#include "engine/domain/decomposition.hpp"
#include "engine/domain/grid_halo.hpp"
#include "engine/domain/halo_exchange.hpp"
#include "engine/domain/migration.hpp"
#include "engine/grid/grid.hpp"
#include "engine/grid/stencils.hpp"
#include "modules/sem/sem_kernels.hpp"

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

/// What `rank` must receive: every point's periodic images in its ghost band (decomposition.hpp).
inline std::vector<GhostEntry> brute_force_ghosts(const GlobalPoints& p, const domain::Decomposition& d,
                                                  int rank) {
  const Box& box = d.box();
  const domain::Subdomain b = d.bounds(rank);
  const double w = d.halo_width();
  const std::vector<float> sx =
      box.periodic_x ? std::vector<float>{-box.lx, 0.0f, box.lx} : std::vector<float>{0.0f};
  const std::vector<float> sy =
      box.periodic_y ? std::vector<float>{-box.ly, 0.0f, box.ly} : std::vector<float>{0.0f};
  std::vector<GhostEntry> want;
  for (std::size_t i = 0; i < p.x.size(); ++i)
    for (const float tx : sx)
      for (const float ty : sy) {
        const double qx = static_cast<double>(p.x[i]) + tx, qy = static_cast<double>(p.y[i]) + ty;
        if (b.x0 - qx < w && qx - b.x1 < w && b.y0 - qy < w && qy - b.y1 < w && !b.contains(qx, qy))
          want.emplace_back(p.id[i], tx, ty);
      }
  std::sort(want.begin(), want.end());
  return want;
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
/// range's shift), against the single-domain forces from every point by the minimum image: equal to the
/// bit. Returns the number of owned points with at least one neighbour through a ghost.
inline std::size_t check_forces_with_ghosts(const GlobalPoints& p, const domain::Decomposition& d,
                                            const domain::HaloExchange& halo, Table& owned, Table& ghosts,
                                            float cutoff) {
  const Box& box = d.box();
  auto& ox = owned.column<float>("x");
  auto& oy = owned.column<float>("y");
  auto& oz = owned.column<float>("z");
  auto& oid = owned.column<std::int64_t>("id");
  auto& gx = ghosts.column<float>("x");
  auto& gy = ghosts.column<float>("y");
  auto& gz = ghosts.column<float>("z");
  auto& gid = ghosts.column<std::int64_t>("id");
  std::size_t through_ghosts = 0, mismatches = 0, pairs = 0;
  for (std::size_t i = 0; i < owned.size(); ++i) {
    std::vector<PairTerm> decomposed, single;
    PairTerm t{};
    for (std::size_t j = 0; j < owned.size(); ++j)
      if (j != i && pair_term(oid.host(j), ox.host(j) - ox.host(i), oy.host(j) - oy.host(i),
                              oz.host(j) - oz.host(i), cutoff, t))
        decomposed.push_back(t);
    const std::size_t own_pairs = decomposed.size();
    for (const domain::GhostRange& r : halo.ranges())
      for (std::size_t g = r.first; g < r.first + r.count; ++g)
        if (pair_term(gid.host(g), (gx.host(g) - ox.host(i)) + r.shift_x,
                      (gy.host(g) - oy.host(i)) + r.shift_y, gz.host(g) - oz.host(i), cutoff, t))
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

}  // namespace tissue::test
