#pragma once
/// @file simulation.hpp
/// A runnable model: the World, its Schedule, the clock settings and what to write, as built from a
/// scenario by the entity sets and modules it composes (engine/schedule/module_registry.hpp,
/// composition.hpp).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/exec/backend.hpp"
#include "engine/io/output_piece.hpp"
#include "engine/schedule/schedule.hpp"

namespace tissue {

namespace io {
class PvdSeries;
}

/// Writes snapshots of a World to an output directory (a model's ParaView/PNG files).
class SnapshotWriter {
 public:
  virtual ~SnapshotWriter() = default;
  /// Writes one snapshot of the world's current state (downloading what it needs). A writer may copy the
  /// arrays and leave the encoding and writing to a host thread (TissueWriter): the files are then on disk
  /// after wait(); the series() entries are there at once. @throws the error of an earlier queued write.
  virtual void write(World& world) = 0;
  /// Blocks until every snapshot written so far is on disk. @throws the error of a queued write (the
  /// first since the last report).
  virtual void wait() {}
  /// The .pvd series the writer keeps, so that a checkpoint records them and a restarted run in the same
  /// directory continues them.
  virtual std::vector<io::PvdSeries*> series() = 0;
};

/// When `tissue run` writes checkpoints (engine/io/checkpoint.hpp): every `every_steps` steps and every
/// `every_minutes` of wall-clock time (0 turns either off), at the end of the run when `at_end`, and always
/// when stopped by SIGINT/SIGTERM or by a numerical failure (that one marked failed). The newest `keep` are
/// kept.
struct CheckpointSettings {
  std::int64_t every_steps = 0;
  double every_minutes = 30.0;
  bool at_end = true;
  int keep = 2;
};

/// The [simulation], [output] and [checkpoint] settings every model shares, read by
/// ModuleRegistry::build_simulation() and seen by every entity set and module (Composition::settings()).
struct ModelSettings {
  double dt = 0.01;                 ///< time step [time]
  std::int64_t steps = 1000;        ///< steps to run
  std::uint64_t seed = 1;           ///< random seed
  std::string precision = "float";  ///< "float" or "double"
  std::string where_precision;      ///< file:line:column of simulation.precision, for messages
  std::string where_dt;             ///< file:line:column of simulation.dt
  bool dt_given = false;            ///< simulation.dt is in the file (else the module's default)
  std::string scenario_path;        ///< the scenario file (relative paths in it are relative to its folder)
  std::int64_t output_every = 1000;
  std::int64_t check_every = 100;  ///< simulation.check_every
  CheckpointSettings checkpoint;   ///< [checkpoint]
};

/// A named number measured on the current state (cell count, layers, a field's mean, the Willmore
/// energy): one column of an ensemble's sweep.csv (engine/run/ensemble.hpp). `measure` is called after
/// World::download(), on the host mirrors.
struct Metric {
  std::string name;         ///< column name: letters, digits and '_' ("adherent_cells")
  std::string description;  ///< what it measures, with units ("cells on the membrane")
  std::function<double(World&)> measure;
};

class Simulation {
 public:
  std::string model;  ///< the preset's name ("epidermis"), or the scenario's modules joined by "+"
  std::unique_ptr<World> world;
  Schedule schedule;
  double dt = 0.01;                  ///< time step [time units]
  std::int64_t steps = 0;            ///< steps to run
  std::int64_t output_every = 1000;  ///< snapshot cadence [steps]; 0: first and last only
  std::int64_t check_every = 100;    ///< cadence of `check` [steps]; 0: only before each output
  CheckpointSettings checkpoint;
  /// Creates the model's writer for an output directory and this rank's piece of it (one piece unless the
  /// run is decomposed); the writer writes nothing before its first write(), so the directory need not
  /// exist yet.
  std::function<std::unique_ptr<SnapshotWriter>(const std::filesystem::path&, const io::OutputPiece&)>
      make_writer;
  /// Model-specific summary of the current state (call World::download() first), multi-line text.
  std::function<std::string(World&)> summary;
  /// Cheap device-side check of the state; throws NumericalError naming what went wrong.
  std::function<void(World&)> check;
  /// Optional early stop: true when the state has converged (e.g. max |dY/dt| below a tolerance);
  /// evaluated at the cadence of `check`. The run then ends at that step as if it were the last.
  std::function<bool(World&)> converged;
  /// The metrics the model measures, in the order the modules added them (Composition::add_metric), after
  /// the engine's own: step, time, and the rows of the cells and elements tables when the entity sets put
  /// rows in them.
  std::vector<Metric> metrics;
  /// One line describing the model's setup for the run header (grid, reaction, ...).
  std::string description;
  /// The estimated peak memory of the run (the sum of the modules' Composition::reserve_memory()), printed by
  /// `tissue check`.
  exec::MemoryEstimate memory;

  /// Takes n time steps.
  void advance(std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) schedule.step(*world, dt);
  }
};

}  // namespace tissue
