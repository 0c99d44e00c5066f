#pragma once
/// @file sem_layout.hpp
/// Initial configurations of SEM cells: single cells, the seed's periodic monolayer, cells on a membrane
/// mesh.

#include <array>
#include <cstdint>

#include "engine/core/world.hpp"
#include "engine/io/scenario.hpp"
#include "engine/mesh/triangle_mesh.hpp"

namespace tissue::sem {

/// A monolayer of cells_x x cells_y cells on a square lattice of pitch `spacing`, sitting on the
/// membrane (the seed's Fig. 3). The box must be cells_x * spacing by cells_y * spacing.
struct MonolayerParams {
  int cells_x = 10;            ///< cells along x
  int cells_y = 10;            ///< cells along y
  int elements_per_cell = 20;  ///< elements of each initial cell (seed: 20)
  int adhesive_elements = 10;  ///< lowest elements of each cell given the adhesive type
  double spacing = 0.6;        ///< lattice pitch [length]; a relaxed 20-element cell is ~0.5 wide
  double cell_radius = 0.3;    ///< radius of the ball the elements are drawn in [length]
};

/// Reads [initial] (see docs/scenarios.md). @throws InputError on invalid values.
MonolayerParams read_monolayer_params(const io::ScenarioTable& table);

/// Adds one cell on the host mirror: `n` elements uniformly random in the ball of `radius` about
/// (cx, cy, cz) (counter-based RNG: stream kInitialLayout, entity = the cell's stable id), the
/// `adhesive` lowest of them along the unit vector `up` (away from the membrane) of type
/// kAdhesiveElement. Call World::commit() afterwards.
/// @return the cell's dense index.
std::int32_t add_ball_cell(World& world, float cx, float cy, float cz, int n, float radius, int adhesive,
                           const std::array<float, 3>& up = {0.0f, 0.0f, 1.0f});

/// Cells covering a membrane mesh (a curved substrate): the centres are a deterministic subset of the
/// mesh's vertices, taken in index order and kept when no kept vertex lies within `spacing` (so the mesh
/// must be finer than the spacing), each moved out by `cell_radius` along its vertex normal; the cells are
/// balls as in add_ball_cell with `up` = that normal.
struct MembraneLayoutParams {
  int elements_per_cell = 20;  ///< elements of each initial cell
  int adhesive_elements = 10;  ///< elements nearest to the membrane given the adhesive type
  double spacing = 0.6;        ///< smallest distance between cell centres [length]
  double cell_radius = 0.3;    ///< radius of the ball the elements are drawn in [length]
  std::size_t max_cells = 0;   ///< at most this many cells (the first vertices); 0 = no limit
};

/// Reads [initial] with layout = "membrane" (see docs/scenarios.md). @throws InputError on invalid values.
MembraneLayoutParams read_membrane_layout_params(const io::ScenarioTable& table);

/// Seeds cells on the membrane (host mirrors + commit). The world must be empty.
/// @return the number of cells seeded.
std::size_t seed_on_membrane(World& world, const mesh::TriangleMesh& membrane,
                             const MembraneLayoutParams& params);

/// Seeds the monolayer (host mirrors + commit). The world must be empty.
void seed_monolayer(World& world, const MonolayerParams& params);

}  // namespace tissue::sem
