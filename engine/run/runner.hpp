#pragma once
/// @file runner.hpp
/// The engine-owned run: from a scenario file (or a checkpoint) to an output directory, with the time loop,
/// output and check cadences, checkpoints and restart, graceful stop on SIGINT/SIGTERM, the progress bar and
/// `run.json`. The command line (tools/tissue.cpp), tests and other drivers (the Python package, an
/// ensemble runner) all drive a Runner; none of them owns a loop of its own. A driver either calls run()
/// (the whole run, as `tissue run` does) or steps it in pieces with step() and ends it with close(): both
/// write the same files at the same steps.
///
/// Behaviour (docs/runs.md): output goes to RunRequest::out, or to the checkpoint's directory for a restart,
/// or to runs/<scenario stem>; an existing non-empty directory is refused unless `overwrite`, which clears
/// the files of the previous run there and refuses a directory tissue did not create
/// (engine/io/run_directory.hpp); the directory is locked while the Runner lives (a second run into it is
/// refused). Snapshots every `every` steps and at the end; the module's numerical check every `check_every`
/// steps and before each output; checkpoints every `checkpoint.every` steps and `checkpoint.minutes` minutes,
/// at the end, on a signal and on a numerical failure (that one marked failed). run.json is written when the
/// run starts
/// ("running") and when it ends, however it ends.

#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/domain/communicator.hpp"
#include "engine/domain/decomposition.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/run_directory.hpp"
#include "engine/io/run_record.hpp"
#include "engine/io/scenario.hpp"
#include "engine/schedule/module_registry.hpp"
#include "engine/schedule/simulation.hpp"
#include "engine/util/progress.hpp"

namespace tissue {

/// Process exit codes of a run (README, "Exit codes"); a run stopped by signal N exits with 128 + N.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,
  kExitBadInput = 2,
  kExitNumerical = 3,
  kExitBackend = 4
};

/// The exit code for an exception: InputError 2, NumericalError 3, BackendError 4, RankFailure its own,
/// anything else 1.
int exit_code_for(const std::exception& e);

/// @throws InputError naming the first of `names` that is not one of `sim`'s metrics (and listing those).
void check_metric_names(const Simulation& sim, const std::vector<std::string>& names);

/// "tissue <version> (<git revision>, backends: <compiled backends>)".
std::string version_string();

/// Selects the compute backend by name ("cpu" or "cuda"); "" takes cuda when compiled in and a device is
/// present, else cpu. @throws InputError for an unknown name, BackendError when the backend cannot start.
void select_backend(const std::string& name);

/// One tissue over several ranks (`mpirun -np N tissue run`, docs/multi_gpu.md). Every rank constructs a
/// Runner with the same request and this set; the Runner then:
/// - composes the whole tissue on every rank from the scenario (and reads the checkpoint on every rank, for a
///   restart), and calls `decompose`, which makes it this rank's part (decompose_simulation in
///   modules/decomposed: the cells spread, the systems replaced by their decomposed forms);
/// - leaves the output directory to rank 0 (its checks, lock, run.json, view.pvsm, the .pvtu and .pvd
///   indexes, checkpoints, the log and progress); every rank writes its piece of each snapshot
///   (io::OutputPiece);
/// - gathers the tissue on rank 0 (domain::gather_to_root) for a checkpoint (the one-rank format, which
///   restarts on any rank count) and for the end-of-run metrics and summary, and spreads it back
///   (domain::migrate_to_owners);
/// - agrees over the ranks on the numerical checks, convergence and signals, so that all ranks stop at the
///   same step; an error at construction or in a check on any rank stops every rank with a RankFailure.
/// Other errors (an I/O or backend failure while stepping) end only the rank that meets them, without a
/// failed-state checkpoint (it would be collective): the driver aborts the job then (MPI_Abort,
/// tools/decomposed_run.hpp).
struct DecomposedRun {
  domain::Communicator* comm = nullptr;  ///< the ranks (kept by pointer); null: an undecomposed run
  /// Makes the composed simulation this rank's part; collective. Returns the decomposition.
  std::function<std::shared_ptr<const domain::Decomposition>(Simulation&, domain::Communicator&)> decompose;
};

/// The error that stopped every rank of a decomposed run at the same point: the lowest failing rank's
/// message ("rank R: ..." when R > 0) and exit code, on every rank (rank 0 reports it).
class RankFailure : public std::runtime_error {
 public:
  RankFailure(int exit_code, const std::string& message) : std::runtime_error(message), code_(exit_code) {}
  int exit_code() const { return code_; }

 private:
  int code_;
};

/// What a driver asks of a run: `tissue run`'s flags.
struct RunRequest {
  std::string scenario;  ///< scenario file (TOML); optional with `restart` or `parsed`
  /// A scenario parsed already (e.g. built from a Python dict), used instead of reading `scenario`; its
  /// source name stands for the file in run.json and checkpoints, and the output directory's default name
  /// is its stem.
  std::optional<io::Scenario> parsed;
  std::string restart;                           ///< checkpoint file, or a run directory (its newest)
  std::optional<std::int64_t> steps;             ///< end step (default simulation.steps, or the checkpoint's)
  std::optional<std::int64_t> every;             ///< output cadence [steps] (default output.every)
  std::optional<std::int64_t> checkpoint_every;  ///< checkpoint cadence [steps] (default checkpoint.every)
  std::filesystem::path out;                     ///< output directory (default: see the file comment)
  bool overwrite =
      false;  ///< replace the previous run in an existing non-empty directory (its files removed)
  std::vector<std::string> command;  ///< the command line, for run.json
  bool progress_bar = false;         ///< draw a progress bar (a terminal) instead of a log line every 10 %
  bool handle_signals = true;        ///< SIGINT/SIGTERM finish the step, write it and stop (InterruptGuard)
  /// Without handle_signals: stop the same way when InterruptGuard::signal_received() says so, the guard
  /// being held by the driver (an ensemble running several Runners on its threads).
  bool poll_signals = false;
  /// Replay the steps of replayable systems as CUDA graphs (Schedule::set_step_graphs): the same bytes,
  /// one launch per step; `tissue run` (unless --no-step-graphs) and an ensemble's members use it.
  bool step_graphs = false;
  /// Metrics (Simulation::metrics) measured at the end of the run into run.json's "metrics": their names,
  /// in the order wanted, or every metric of the model for an empty list; std::nullopt: none.
  /// @throws InputError (from the constructor) for a name the model does not measure.
  std::optional<std::vector<std::string>> metrics;
  std::FILE* log = stdout;  ///< the run's header, summary and closing lines; nullptr: none
  /// false: nothing is written at all (no directory, snapshots, checkpoints, run.json, lock): a driver that
  /// only wants the state in memory (the Python package's Simulation with out=None). Checkpoints can still
  /// be written on request (Runner::write_checkpoint_to).
  bool write_output = true;
  /// One tissue over several ranks (DecomposedRun); unset: one rank. The log and the progress bar are rank
  /// 0's only.
  DecomposedRun decomposed;
};

/// A run stopped by SIGINT/SIGTERM after finishing a step and writing its output and a checkpoint.
class Interrupted : public std::runtime_error {
 public:
  Interrupted(int signo, std::int64_t step, const std::string& checkpoint);
  /// 128 + the signal number.
  int exit_code() const { return 128 + signo_; }

 private:
  int signo_;
};

/// One run of one scenario. Construct (validates all input, creates the output directory, writes run.json
/// "running"), then run().
class Runner {
 public:
  /// Builds the simulation from the scenario (through `modules`) or from the checkpoint of
  /// `request.restart`, checks the output directory, loads the checkpoint's state; only then creates the
  /// output directory, locks it, clears a previous run's files (`overwrite`) and writes run.json. The backend
  /// must be selected before (select_backend()).
  /// @throws InputError on invalid input (nothing is written then): among it a directory another run holds
  /// (naming its pid and host), a non-empty one without `overwrite` or without a run.json, a checkpoint
  /// whose scenario hash differs from its directory's run.json; std::runtime_error on I/O failure; in a
  /// decomposed run (RunRequest::decomposed) a RankFailure on every rank for any of these on any rank.
  Runner(const ModuleRegistry& modules, RunRequest request);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  /// Steps from the current step to the end step, writing output and checkpoints, then prints the module's
  /// summary. Marks run.json completed, interrupted or failed (with the exit code).
  /// @return kExitOk, or 128 + N when stopped by signal N (after writing that step and a checkpoint).
  /// @throws the error that stopped the run (NumericalError after writing a failed checkpoint, ...), once
  /// run.json records it.
  int run();

  /// Takes up to `n` steps with the same output, check and checkpoint cadences as run() (the first call
  /// writes the initial snapshot first). Stepping may go on past the end step (its output and end-of-run
  /// checkpoint are written when the end step is passed, as in run()); it stops early when the model
  /// converged (finished() then). Errors are handled as in run(): run.json records a failure, a numerical
  /// failure writes a failed checkpoint.
  /// @return kExitOk, or 128 + N when stopped by signal N after finishing a step (its output and a
  /// checkpoint written, run.json "interrupted"); stepping may continue afterwards.
  /// @throws as run().
  int step(std::int64_t n);
  /// Ends a run driven by step(): prints the summary and marks run.json completed (unless it already
  /// records how the run ended). Called by run(); a no-op after it. @throws std::runtime_error on I/O
  /// failure.
  void close();
  /// True once the end step was reached or the model converged (Simulation::converged).
  bool finished() const { return finished_; }
  /// Writes a checkpoint of the current state to `path` (and its .xdmf beside it), wherever that is; the
  /// run's own checkpoint series is not touched. @throws std::runtime_error on I/O failure.
  void write_checkpoint_to(const std::filesystem::path& path);

  Simulation& simulation() { return *sim_; }
  /// The output directory.
  const std::filesystem::path& output_dir() const { return out_; }
  /// The step the run ends at.
  std::int64_t end_step() const { return end_step_; }
  /// The snapshot cadence [steps] (RunRequest::every or output.every; 0: first and last only).
  std::int64_t output_every() const { return every_; }
  /// run.json's content so far.
  const io::RunRecord& record() const { return record_; }
  /// The header checkpoints of this run carry (scenario text and hash, engine, model, backend).
  const io::CheckpointHeader& checkpoint_header() const { return header_; }

 private:
  template <class Body>
  int guarded(Body&& body);
  /// Builds the simulation and checks all input (the constructor's first part; every rank of a decomposed
  /// run). Returns the checkpoint restarted from ("" for none) and whether output continues in its directory.
  std::pair<std::filesystem::path, bool> prepare(const ModuleRegistry& modules);
  /// Creates and locks the output directory and writes run.json (rank 0).
  void open_output(bool same_dir);
  /// In a decomposed run: the ranks agree on whether `body` threw on any of them; if so every rank throws
  /// the lowest failing rank's error as a RankFailure. Without ranks: runs `body`.
  template <class Body>
  void agreed(Body&& body);
  /// True on the rank that owns the output directory and the log (rank 0, or the only one).
  bool root() const { return comm_ == nullptr || comm_->rank() == 0; }
  /// In a decomposed run the whole tissue on rank 0 while `body` runs there (gathered, then spread back);
  /// otherwise `body` on this world. Collective.
  template <class Body>
  void on_whole_tissue(Body&& body);
  void begin();
  void advance(std::int64_t target);
  void conclude();
  std::string write_checkpoint(const char* status, const std::string& message);
  void finish(const char* status, int exit_code, const std::string& message);
  /// Writes a snapshot (the device's queued work waited for first, so that it stays the step's time).
  void write_snapshot();
  /// Waits for the snapshots' queued writes. @throws the error of one.
  void wait_for_output();
  /// RunRecord::time_split of a run that took `wall_seconds` so far.
  std::vector<std::pair<std::string, double>> time_split(double wall_seconds) const;

  RunRequest request_;
  domain::Communicator* comm_ = nullptr;  ///< the ranks of a decomposed run; null: one rank
  std::shared_ptr<const domain::Decomposition> decomposition_;  ///< a decomposed run's (else null)
  std::unique_ptr<Simulation> sim_;
  io::DirectoryLock lock_;  ///< on the output directory while the Runner lives
  std::unique_ptr<SnapshotWriter> writer_;
  io::CheckpointHeader header_;  ///< template for this run's checkpoints (status, clock filled per write)
  io::RunRecord record_;
  std::filesystem::path out_;
  std::int64_t end_step_ = 0;
  std::int64_t every_ = 0;
  std::string restarted_from_;
  double started_ = 0.0;                ///< steady-clock seconds at construction, for the wall time
  bool begun_ = false;                  ///< the header and initial snapshot are written
  bool finished_ = false;               ///< the end step was reached or the model converged
  bool closed_ = false;                 ///< run.json records the end (completed, failed)
  std::int64_t start_step_ = 0;         ///< the step the run started from
  std::int64_t converged_at_ = -1;      ///< the step at which the model converged, -1 if it did not
  double last_checkpoint_clock_ = 0.0;  ///< steady-clock seconds of the last checkpoint (minutes cadence)
  /// Wall time [s] of the snapshots (copies, and the wait for queued writes), checkpoints, numerical
  /// checks and the end-of-run summary (RunRecord::time_split)
  double output_seconds_ = 0.0, checkpoint_seconds_ = 0.0, check_seconds_ = 0.0, summary_seconds_ = 0.0;
  std::unique_ptr<Progress> progress_;
};

}  // namespace tissue
