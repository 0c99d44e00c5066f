#pragma once
/// @file grid_rd_model.hpp
/// Grid reaction-diffusion as a composable module: the entity set "grid" ([grid]: nodes, spacing,
/// boundaries) and the module "grid_rd" ([reaction], [grid_rd], [initial], [output]: one GridField "rd"
/// and the GridRdSystem), registered by register_grid_rd (grid_rd_model.cpp).

#include <memory>

#include "engine/io/scenario.hpp"
#include "engine/schedule/simulation.hpp"
#include "modules/grid_rd/grid_rd.hpp"

namespace tissue::grid_rd {

/// Initial state: uniform (a, b), optionally a square or spherical patch of (patch_a, patch_b) at the
/// grid centre, plus uniform noise in [-noise, noise] from the counter-based RNG; or a raw file.
struct InitialState {
  std::string type = "seed";  ///< "seed" (uniform + patch), "uniform", or "file"
  double a = 1.0, b = 0.0;
  std::string patch = "square";  ///< "square" or "sphere"
  double patch_size = 20.0;      ///< edge or diameter [nodes]
  double patch_a = 0.5, patch_b = 0.25;
  double noise = 0.0;
  std::string file;  ///< raw little-endian values of the run's precision, species-major (A then B)
};

/// Fills a field's host mirror with the initial state and uploads it.
/// @throws InputError when a file is missing or has the wrong size.
template <class Real>
void apply_initial_state(GridField<Real>& field, const InitialState& init, std::uint64_t seed);

}  // namespace tissue::grid_rd
