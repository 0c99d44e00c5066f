#pragma once
/// @file graph_flow_model.hpp
/// The graph curvature-flow model ([simulation] model = "graph_flow"): scenario tables [graph],
/// [graph_flow], [forcing], [initial], [output] -> a Simulation whose one system integrates the flow
/// adaptively over each output interval (simulation.dt) with Runge-Kutta-Merson.

#include <memory>
#include <string>
#include <vector>

#include "engine/io/scenario.hpp"
#include "engine/schedule/composition.hpp"
#include "modules/curvature_flow/graph_flow.hpp"

namespace tissue::curvature_flow {

/// Initial graph: "radial_sine" (35) amplitude sin(frequency pi sqrt(x^2 + y^2)), "manufactured" (zeta of
/// (30) at t = 0), "flat" (value everywhere), or "ridge" amplitude cos(frequency pi x / (x1 - x0)) (constant
/// in y).
struct InitialGraph {
  std::string type = "radial_sine";
  double amplitude = 1.0, frequency = 3.0, value = 0.0;
};

/// Host values of the initial graph on the grid of `params` (nodes(), x fastest).
std::vector<double> initial_graph(const GraphFlowParams& params, const InitialGraph& init);

/// Entity set "graph": reads [graph] and shares it as "graph". @throws InputError (file:line:column).
void create_graph(Composition& comp);
/// Module "graph_flow": reads [graph_flow], [forcing], [initial], [output] and installs the flow of the
/// shared graph. @throws InputError (file:line:column) on invalid input.
void install_graph_flow(Composition& comp);

}  // namespace tissue::curvature_flow
