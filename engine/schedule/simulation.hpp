#pragma once
/// @file simulation.hpp
/// A runnable model: the World, its Schedule, the clock settings and what to write, as built from a
/// scenario by a model builder (modules/models.hpp).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/schedule/schedule.hpp"

namespace tissue {

struct OutputSettings {
  std::int64_t every = 1000;  ///< write every N steps (0: only the first and last state)
  bool elements = true;       ///< elements_*.vtu + elements.pvd
  bool cells = true;          ///< cells_*.vtu + cells.pvd
};

class Simulation {
 public:
  std::string model;  ///< model name, e.g. "epidermis"
  std::unique_ptr<World> world;
  Schedule schedule;
  double dt = 0.01;        ///< time step [time units]
  std::int64_t steps = 0;  ///< steps to run
  OutputSettings output;
  std::vector<std::string> species_names;  ///< names of the species components, for output
  /// Model-specific summary of the current state (host mirrors must be current), multi-line text.
  std::function<std::string(World&)> summary;

  /// Takes n time steps.
  void advance(std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) schedule.step(*world, dt);
  }
};

}  // namespace tissue
