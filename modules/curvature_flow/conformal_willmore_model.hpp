#pragma once
/// @file conformal_willmore_model.hpp
/// The conformal Willmore flow model ([simulation] model = "conformal_willmore"): scenario tables [mesh]
/// (an OBJ file or a generated sphere, as for surface_rd), [initial] (noise), [conformal_willmore]
/// (solvers, area) and [output] -> a Simulation whose one system takes one flow step of tau =
/// simulation.dt per time step. Output: the surface as <name>_<step>.vtu with mean curvature and the
/// Willmore energy density as point data, surface.pvd, and surface_final.obj rewritten at every snapshot.

#include <memory>

#include "engine/io/scenario.hpp"
#include "engine/schedule/simulation.hpp"

namespace tissue::curvature_flow {

/// Reads the model's tables. @throws InputError (file:line:column) on invalid input.
std::unique_ptr<Simulation> build_conformal_willmore(const io::ScenarioTable& root,
                                                     const ModelSettings& settings);

}  // namespace tissue::curvature_flow
