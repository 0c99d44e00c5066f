#pragma once
/// @file schedule.hpp
/// Systems, their per-step order, every-k-steps systems, and CPU hooks between steps.
///
/// A System advances some components of the World by one time step dt on the active backend. The
/// Schedule runs the due systems in the order they were added, advances the clock, then runs the due
/// hooks on host mirrors (download -> hooks -> World::commit(), which compacts and re-uploads). Systems
/// declare the columns they read and write (access.hpp); check_access() refuses an order that would read a
/// column stale.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/system_state.hpp"
#include "engine/core/world.hpp"
#include "engine/exec/error.hpp"
#include "engine/exec/recording.hpp"
#include "engine/schedule/access.hpp"

namespace tissue {

/// What a system or hook sees of the clock. `step` is the index of the step being taken (0-based);
/// `time` the time at its start; `dt` its length [time units]; `substep` which of a sub-cycled system's
/// runs within the step this is (0 .. substeps - 1; 0 for hooks and systems that are not sub-cycled), so that
/// random draws keyed by the step can tell sub-steps apart.
struct StepContext {
  std::int64_t step = 0;
  double time = 0.0;
  double dt = 0.0;
  std::int32_t substep = 0;
};

/// One physics system. Implementations hold their parameters and scratch buffers.
class System {
 public:
  virtual ~System() = default;
  /// Short unique name, e.g. "sem".
  virtual std::string name() const = 0;
  /// The columns each run reads (in the same step, or the previous step's values) and writes, truthfully:
  /// the schedule prints them and checks the step order against them (Schedule::check_access).
  virtual AccessList access() const = 0;
  /// Advances the system by ctx.dt * every (the schedule passes the system's own step length).
  virtual void run(World& world, const StepContext& ctx) = 0;
  /// Checks, before the first step, that the system can take steps of length h [time] (e.g. an explicit
  /// stability limit). @throws InputError naming the limit. The default accepts every h.
  virtual void check_step_length(double h) const { (void)h; }
  /// True when run() may be recorded once and replayed as a CUDA graph (Schedule::set_step_graphs): the
  /// launches of a run depend only on the World's layout (table sizes, capacities, column buffers) and on
  /// ctx.dt, never on ctx.step, ctx.time or ctx.substep, and a run repeated on the same layout neither
  /// allocates nor synchronises with the host. The default is false (always run).
  virtual bool replayable() const { return false; }
  /// Called once per step in which the system is due, before its runs, whether they run or a recording
  /// of them replays (Schedule::set_step_graphs): the system decides here, on the host, anything its launches
  /// vary in from step to step (e.g. a cell list rebuilt every few steps and only refreshed in between) and
  /// returns which of its launch sequences the step's runs take. The schedule records and replays one graph
  /// per combination of the due systems' variants. A run() not preceded by prepare() (a test, a benchmark)
  /// must still be correct. Default: nothing to decide, variant 0.
  virtual std::uint64_t prepare(World& world, const StepContext& ctx) {
    (void)world;
    (void)ctx;
    return 0;
  }
  /// What the system carries into the step world.step that the World does not hold and its results depend
  /// on (system_state.hpp), for a checkpoint of `world` as it is now (after the last step's hooks). May
  /// download from the device. Default: nothing (a system whose steps depend on the World alone).
  virtual SystemState save_state(World& world) const {
    (void)world;
    return {};
  }
  /// Takes back what save_state() returned, into a system built from the same scenario whose `world` was
  /// just loaded from the same checkpoint; the next run() continues as the saving system's would have.
  /// @throws InputError if `state` does not fit `world` (the default refuses any state: a system that saves
  /// none cannot take one, the checkpoint is of another model or version).
  virtual void restore_state(World& world, const SystemState& state) {
    (void)world;
    (void)state;
    throw InputError("system '" + name() + "' keeps no state between steps, but the checkpoint holds some");
  }
};

/// A CPU hook: runs on host mirrors between steps and may add/remove entities.
using Hook = std::function<void(World&, const StepContext&)>;

class Schedule {
 public:
  /// Adds a system that runs every `every` steps (>= 1), in the order of addition. Each time it is due it
  /// runs `substeps` times (>= 1) with step length every * dt / substeps (multi-rate: every > 1 makes a
  /// slow system, substeps > 1 sub-cycles a fast one inside the step). @throws std::invalid_argument for
  /// every < 1 or substeps < 1.
  void add(std::unique_ptr<System> system, int every = 1, int substeps = 1);
  /// Changes the cadence of the system named `name` (see add()).
  /// @throws std::invalid_argument for an unknown name, every < 1 or substeps < 1.
  void set_cadence(const std::string& name, int every, int substeps);
  /// Puts `system` in the place (and cadence) of the system named `name`: a decomposed run swaps a module's
  /// system for its decomposed form. Recorded step graphs are dropped.
  /// @throws std::invalid_argument for an unknown name.
  void replace(const std::string& name, std::unique_ptr<System> system);
  /// Calls every system's check_step_length() with its own step length for a schedule step of dt.
  void check_step_lengths(double dt) const;
  /// Checks the step order against the systems' declarations: for systems i before j in the step, i may not
  /// read (AccessMode::read) a column that j writes, and j may not read the previous step's value
  /// (AccessMode::read_previous) of a column that i writes. Cadences (every, substeps) are not considered:
  /// every system is due at step 0, so the order alone decides what a read sees; a system may read and
  /// write the same column (its own sub-steps included).
  /// @throws InputError naming both systems, the column and the two fixes (reorder; declare the other read).
  void check_access() const;
  /// Names of the systems, in order.
  std::vector<std::string> system_names() const;
  /// Every system's non-empty save_state(), by name, in order (for a checkpoint of `world`).
  SystemStates save_states(World& world) const;
  /// Hands each state to the system of its name (System::restore_state). @throws InputError for a name no
  /// system of the schedule has, or a name given twice.
  void restore_states(World& world, const SystemStates& states);
  /// Adds a hook that runs after every `every`-th step (>= 1). Hooks run in the order of addition. `access`
  /// lists what the hook reads and writes, for describe() (hooks run between steps on host mirrors, so the
  /// step-order check does not apply to them).
  void add_hook(std::string name, int every, Hook hook, AccessList access = {});

  /// Takes one time step of length dt: due systems (each sub-cycle sees its own start time), clock, due
  /// hooks (+ World::commit()).
  void step(World& world, double dt);
  /// Step graphs (CUDA backend): when every system due in a step is replayable(), the step's launches are
  /// run once normally, recorded as a CUDA graph at the next step with the same layout key (the due
  /// systems and their prepare() variants, dt, and every table's size, capacity and column buffers), and
  /// replayed as one launch whenever that key comes again (the last few keys are kept); a hook or a resize
  /// changes the key and the sequence starts again. Results are those of the systems run one by one, byte for
  /// byte; launch overhead drops from one call per kernel to one per step, which is what bounds many small
  /// simulations sharing a GPU (engine/run/ensemble.hpp). No effect on the CPU backend. Off by default.
  void set_step_graphs(bool on);

  /// Human-readable schedule: per system its cadence and its declared reads, reads of the previous step
  /// (when any) and writes; one line per hook.
  std::string describe() const;

  std::size_t system_count() const { return systems_.size(); }
  /// Wall time spent in hooks so far [s]: their download, the hooks and the commit, timed after the device
  /// finished the step's queued work (which the download waits for anyway), so that time stays the step's.
  double hook_seconds() const { return hook_seconds_; }
  /// hook_seconds() by part, in order: "download" (device to host mirrors), each hook by name, "commit"
  /// (compaction and upload) [s]. Empty until a hook ran.
  const std::vector<std::pair<std::string, double>>& hook_split() const { return hook_split_; }
  System& system(std::size_t i) { return *systems_[i].system; }

 private:
  struct SystemEntry {
    std::unique_ptr<System> system;
    int every;
    int substeps;
  };
  struct HookEntry {
    std::string name;
    int every;
    Hook hook;
    AccessList access;
  };
  void run_due(World& world, double dt);
  std::vector<SystemEntry> systems_;
  std::vector<HookEntry> hooks_;
  bool step_graphs_ = false;
  /// A step sequence seen before: run once normally (warm), then recorded at its next occurrence.
  struct StepGraph {
    std::uint64_t key = 0;                       ///< layout key (due systems, their variants, dt, tables)
    std::unique_ptr<exec::Recording> recording;  ///< null while only warm
    std::uint64_t last_used = 0;
  };
  /// The step sequences seen last, at most kStepGraphs (a system's variants alternate; older layouts go).
  static constexpr std::size_t kStepGraphs = 16;
  std::vector<StepGraph> graphs_;
  std::uint64_t layout_ = 0;  ///< layout key of graphs_ (0: none)
  std::uint64_t graph_clock_ = 0;
  double hook_seconds_ = 0.0;
  std::vector<std::pair<std::string, double>> hook_split_;
  /// Adds `seconds` to the part `name` of hook_split_.
  void add_hook_time(const std::string& name, double seconds);
};

}  // namespace tissue
