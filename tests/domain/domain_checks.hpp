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
#include "engine/domain/halo_exchange.hpp"
#include "engine/domain/migration.hpp"
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

}  // namespace tissue::test
