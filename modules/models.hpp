#pragma once
/// @file models.hpp
/// The models a scenario can name in [simulation].model, and the builder that turns a scenario file
/// into a runnable Simulation.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/io/scenario.hpp"
#include "engine/schedule/simulation.hpp"

namespace tissue {

/// The [simulation] and [output] settings every model shares.
struct ModelSettings {
  double dt = 0.01;                 ///< time step [time]
  std::int64_t steps = 1000;        ///< steps to run
  std::uint64_t seed = 1;           ///< random seed
  std::string precision = "float";  ///< "float" or "double"
  std::string where_precision;      ///< file:line:column of simulation.precision, for messages
  std::string where_dt;             ///< file:line:column of simulation.dt
  bool dt_given = false;            ///< simulation.dt is in the file (else the model's default)
  std::string scenario_path;        ///< the scenario file (relative paths in it are relative to its folder)
  std::int64_t output_every = 1000;
  std::int64_t check_every = 100;  ///< simulation.check_every
  CheckpointSettings checkpoint;   ///< [checkpoint]
};

/// Names accepted by [simulation].model.
std::vector<std::string> model_names();

/// Applies a scenario's [schedule] table: one sub-table per system name, `{ every = k, substeps = m }`
/// (multi-rate: the system runs every k steps, m sub-steps of k dt / m each; Schedule::add()).
/// @throws InputError at the key for an unknown system name or a value below 1.
void apply_schedule_table(const io::ScenarioTable& table, Schedule& schedule);

/// Builds the simulation a scenario describes: [simulation] (model, dt, steps, seed), [output], and the
/// model's own tables. Validates every key (unknown keys included) before anything runs.
/// @throws InputError with file:line:column on any invalid input.
std::unique_ptr<Simulation> build_simulation(const io::Scenario& scenario);

}  // namespace tissue
