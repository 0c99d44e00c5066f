#pragma once
/// @file surface_rd_model.hpp
/// Surface reaction-diffusion as composable pieces (registered by register_surface_rd): the entity set
/// "mesh" ([mesh]), the module "surface_rd" on it ([surface_rd], [chemotaxis] or [reaction], [initial]:
/// one SurfaceField "surface" and the SurfaceRdSystem; the time step is simulation.dt when given, else
/// surface_rd.dt_factor times the squared mean edge length, checked against the explicit stability bound),
/// and the module "membrane_rd" on the membrane mesh ([membrane.rd]). Keys: docs/scenarios.md.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/io/scenario.hpp"
#include "engine/mesh/triangle_mesh.hpp"
#include "engine/schedule/simulation.hpp"
#include "modules/surface_rd/surface_rd.hpp"

namespace tissue::surface_rd {

/// Initial state: uniform (a, b), a patch (patch_a, patch_b) of vertices within patch_radius [length] of
/// vertex patch_vertex, or per-vertex `values` (from a file or expressions: surface_initial_field.hpp) when
/// given, plus uniform noise in [-noise, noise] from the counter-based RNG (per vertex).
struct InitialState {
  double a = 1.0, b = 0.0;
  /// Per-vertex values, one vector of vertex_count() values per species; empty: uniform and patch.
  std::vector<std::vector<double>> values;
  double noise = 0.0;
  double patch_radius = 0.0;
  std::int64_t patch_vertex = 0;
  double patch_a = 0.5, patch_b = 0.25;
};

/// Fills a field's host mirror with the initial state and uploads it.
template <class Real>
void apply_initial_state(SurfaceField<Real>& field, const InitialState& init, std::uint64_t seed);

/// Memory per vertex of a surface run, host and device together, for the checks before allocation [bytes]:
/// positions and connectivity on the host (~150), operators and the double-buffered fields on the device.
inline constexpr double kBytesPerVertex = 600.0;

/// The model part of a surface RD table `rd` (model, integrator, kernel, patch_vertices) with the model's
/// own table from `models` ([chemotaxis] or [reaction]); sets `init` to the model's default initial
/// state (chemotaxis: the seed's uniform state with noise 0.01; reaction: a = 1, b = 0).
/// steps_per_launch is left at 1. @throws InputError on invalid values.
SurfaceRdParams read_surface_rd_params(const io::ScenarioTable& rd, const io::ScenarioTable& models,
                                       InitialState& init);

/// Overrides `init` from an [initial]-like table for the field `field` of `species` on `mesh`: type
/// "uniform" (a, b, noise, patch_radius, patch_vertex, patch_a, patch_b), "file" or "expression"
/// (read_initial_field; noise then defaults to 0). `non_negative`: loaded values must be >= 0. Relative file
/// names are resolved against `scenario_path`'s folder. @throws InputError on invalid values.
void read_initial_state(const io::ScenarioTable& table, const mesh::TriangleMesh& mesh,
                        const std::vector<std::string>& species, const std::string& field,
                        const std::string& scenario_path, bool non_negative, InitialState& init);

/// Species names of the model's field: {"fn", "fc"} (chemotaxis) or {"a", "b"} (reaction).
std::vector<std::string> species_names(const SurfaceRdParams& params);

/// ParaView output of a surface field: <field>_<step>.vtu (the mesh with one point array per species) and
/// <field>.pvd in `dir`.
template <class Real>
std::unique_ptr<SnapshotWriter> make_surface_writer(const std::filesystem::path& dir,
                                                    SurfaceField<Real>& field);

}  // namespace tissue::surface_rd
