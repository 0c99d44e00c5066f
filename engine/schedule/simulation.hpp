#pragma once
/// @file simulation.hpp
/// A runnable model: the World, its Schedule, the clock settings and what to write, as built from a
/// scenario by a model builder (modules/models.hpp).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/schedule/schedule.hpp"

namespace tissue {

/// Writes snapshots of a World to an output directory (a model's ParaView/PNG files).
class SnapshotWriter {
 public:
  virtual ~SnapshotWriter() = default;
  /// Writes one snapshot of the world's current state (downloading what it needs).
  virtual void write(World& world) = 0;
};

class Simulation {
 public:
  std::string model;                  ///< model name, e.g. "epidermis"
  std::unique_ptr<World> world;
  Schedule schedule;
  double dt = 0.01;                   ///< time step [time units]
  std::int64_t steps = 0;             ///< steps to run
  std::int64_t output_every = 1000;   ///< snapshot cadence [steps]; 0: first and last only
  /// Creates the model's writer for an output directory (which exists).
  std::function<std::unique_ptr<SnapshotWriter>(const std::filesystem::path&)> make_writer;
  /// Model-specific summary of the current state (call World::download() first), multi-line text.
  std::function<std::string(World&)> summary;
  /// Cheap device-side check of the state; throws NumericalError naming what went wrong.
  std::function<void(World&)> check;
  /// One line describing the model's setup for the run header (grid, reaction, ...).
  std::string description;

  /// Takes n time steps.
  void advance(std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) schedule.step(*world, dt);
  }
};

}  // namespace tissue
