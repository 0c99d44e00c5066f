#pragma once
/// @file models.hpp
/// The models a scenario can name in [simulation].model, and the builder that turns a scenario file
/// into a runnable Simulation.

#include <memory>
#include <string>
#include <vector>

#include "engine/io/scenario.hpp"
#include "engine/schedule/simulation.hpp"

namespace tissue {

/// Names accepted by [simulation].model.
std::vector<std::string> model_names();

/// Builds the simulation a scenario describes: [simulation] (model, dt, steps, seed), [output], and the
/// model's own tables. Validates every key (unknown keys included) before anything runs.
/// @throws InputError with file:line:column on any invalid input.
std::unique_ptr<Simulation> build_simulation(const io::Scenario& scenario);

}  // namespace tissue
