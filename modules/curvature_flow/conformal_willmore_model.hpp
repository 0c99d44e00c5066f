#pragma once
/// @file conformal_willmore_model.hpp
/// The module "conformal_willmore" on the entity set "mesh" (an OBJ file or a generated sphere, as for
/// surface_rd): [initial] (noise), [conformal_willmore] (solvers, area) and [output] -> one system that
/// takes one flow step of tau = simulation.dt per time step. Output: the surface as <name>_<step>.vtu with
/// mean curvature and the Willmore energy density as point data, surface.pvd, and surface_final.obj rewritten
/// at every snapshot.

#include <memory>

#include "engine/io/scenario.hpp"
#include "engine/schedule/composition.hpp"

namespace tissue::curvature_flow {

/// Installs the flow of (a copy of) the shared mesh "mesh". @throws InputError (file:line:column) on
/// invalid input.
void install_conformal_willmore(Composition& comp);

}  // namespace tissue::curvature_flow
