#pragma once
/// @file surface_rd_model.hpp
/// The surface reaction-diffusion model ([simulation] model = "surface_rd"): scenario tables [mesh],
/// [surface_rd], [chemotaxis] or [reaction], [initial], [output] -> a Simulation with one SurfaceField and
/// the SurfaceRdSystem (keys: docs/scenarios.md).

#include <cstdint>
#include <memory>

#include "engine/io/scenario.hpp"
#include "engine/schedule/simulation.hpp"
#include "modules/models.hpp"
#include "modules/surface_rd/surface_rd.hpp"

namespace tissue::surface_rd {

/// Initial state: uniform (a, b), a patch (patch_a, patch_b) of vertices within patch_radius [length] of
/// vertex patch_vertex, plus uniform noise in [-noise, noise] from the counter-based RNG (per vertex).
struct InitialState {
  double a = 1.0, b = 0.0;
  double noise = 0.0;
  double patch_radius = 0.0;
  std::int64_t patch_vertex = 0;
  double patch_a = 0.5, patch_b = 0.25;
};

/// Reads the model's tables. The time step is simulation.dt when given, else surface_rd.dt_factor times
/// the squared mean edge length (the seed's dt = O(dx^2)).
/// @throws InputError (file:line:column) on invalid input, a bad mesh, or a dt above the explicit stability
/// bound of the diffusion on the mesh.
std::unique_ptr<Simulation> build(const io::ScenarioTable& root, const ModelSettings& settings);

/// Fills a field's host mirror with the initial state and uploads it.
template <class Real>
void apply_initial_state(SurfaceField<Real>& field, const InitialState& init, std::uint64_t seed);

}  // namespace tissue::surface_rd
