#pragma once
/// @file ensemble.hpp
/// Ensembles: the members of a parameter sweep (engine/run/sweep_spec.hpp), each an ordinary engine-owned
/// run (engine/run/runner.hpp) in a directory of its own, several at once in one process, and across
/// processes (MPI ranks, Slurm array tasks) sharing one sweep directory. docs/sweeps.md.
///
/// The sweep directory holds `sweep.json` (which sweep file it belongs to), one run directory per member
/// (named Member::name; each with its run.json, which records the member's metrics once it completed,
/// its snapshots and checkpoints) and `sweep.csv`, rebuilt from the member directories whenever a process
/// of the sweep ends. What a member's directory holds is its state, so that running the same sweep again
/// resumes it: completed members are skipped, interrupted or killed ones continue from their newest
/// checkpoint (or start again when they have none), failed ones are reported and skipped (unless
/// `retry_failed`).
///
/// Packing: each of `concurrent` threads runs one member at a time with an exec::ThreadStream, so that on
/// the CUDA backend the members' kernels, copies and allocations go to streams of their own and overlap
/// on the device; each member's results are those of the same scenario run alone (`tissue run`), byte for
/// byte. On the CPU backend each thread's members use cpu_threads() / concurrent OpenMP threads.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/run/sweep_spec.hpp"
#include "engine/schedule/module_registry.hpp"

namespace tissue {

/// Where a process's members come from. next() is called from several threads at once.
class MemberQueue {
 public:
  virtual ~MemberQueue() = default;
  /// The index (Member::index) of the next member to run, or std::nullopt when there is none left.
  virtual std::optional<std::size_t> next() = 0;
};

/// Hands out a fixed list of member indices, in order (one process running its share of a sweep).
class ListQueue : public MemberQueue {
 public:
  explicit ListQueue(std::vector<std::size_t> members) : members_(std::move(members)) {}
  std::optional<std::size_t> next() override;

 private:
  std::mutex mutex_;
  std::vector<std::size_t> members_;
  std::size_t next_ = 0;
};

/// How a member's directory says it stands.
enum class MemberStatus {
  pending,      ///< no run yet (or one killed before it wrote anything)
  running,      ///< run.json says running: a run in progress, or killed (then it resumes)
  interrupted,  ///< stopped by a signal after writing a checkpoint
  completed,    ///< ended at its end step, metrics recorded
  failed        ///< ended with an error (numerical failure, invalid input, backend)
};

/// "pending", "running", ...
const char* to_string(MemberStatus s);

/// What `tissue sweep` asks of a sweep.
struct SweepRequest {
  std::filesystem::path out;  ///< the sweep directory ("" : the sweep file's `out`, else sweeps/<stem>)
  int concurrent = 0;         ///< members at once in this process; 0: chosen (choose_concurrency)
  bool retry_failed = false;  ///< run failed members again
  std::vector<std::string> command;  ///< the command line, for the members' run.json
  std::FILE* log = stdout;           ///< one line per member and the closing summary; nullptr: none
  std::string log_prefix;            ///< put before every log line ("rank 2: ")
  /// Time zero of timeline(): the process's start where the caller knows it (tools/sweep_command).
  std::chrono::steady_clock::time_point origin = std::chrono::steady_clock::now();
};

/// One sweep and its directory. The backend must be selected before (select_backend()).
class Ensemble {
 public:
  /// Checks the sweep: builds every member's simulation once (so that a value a module refuses is
  /// reported, at the sweep file's entry, before anything runs) unless `validate` is false (a worker of a
  /// manager that validated), on up to 16 threads (each with its exec::ThreadStream); the error reported is
  /// the one of the first member in order that has one, as if built one after another. Checks the metric
  /// names. With `prepare`, creates the sweep directory and
  /// writes sweep.json, refusing a directory that holds another sweep's members.
  /// @throws InputError on invalid input (the sweep file's file:line:column and the member's values),
  /// std::runtime_error on I/O failure.
  Ensemble(const ModuleRegistry& modules, sweep::SweepSpec spec, SweepRequest request, bool validate = true,
           bool prepare = true);

  const sweep::SweepSpec& spec() const { return spec_; }
  const std::filesystem::path& directory() const { return out_; }
  /// The metric columns of sweep.csv: the sweep file's `metrics`, or every metric of the model.
  const std::vector<std::string>& metric_names() const { return metric_names_; }
  /// The largest device memory estimate of a member (Simulation::memory.device) [bytes]; 0 unvalidated.
  double member_memory_bytes() const { return member_memory_; }
  /// Sets member_memory_bytes() (a worker told by the manager that validated).
  void set_member_memory(double bytes) { member_memory_ = bytes; }

  /// How member `index`'s directory says it stands.
  MemberStatus status(std::size_t index) const;
  /// Indices of the members still to run, in order: every member that is not completed (nor failed,
  /// unless retry_failed), of those in `among` (every member when empty).
  std::vector<std::size_t> to_run(const std::vector<std::size_t>& among = {}) const;
  /// Members at once: `concurrent` when set; else on the CUDA backend as many as 80 % of the free device
  /// memory holds (member_memory_bytes()), at most 64 and at most the members to run; 1 on the CPU backend.
  int choose_concurrency(std::size_t members) const;

  /// Runs the members `queue` hands out on `threads` threads until it has none left or a SIGINT/SIGTERM
  /// comes (this installs the InterruptGuard; running members then write a checkpoint and stop).
  /// @return kExitOk when every member this process ran completed, kExitFailure when one failed, 128 + N
  /// when stopped by signal N.
  int run(MemberQueue& queue, int threads);
  /// Rewrites sweep.csv from the member directories (atomically, under a lock on the sweep directory, so
  /// that processes of one sweep can each rewrite it). @throws std::runtime_error on I/O failure.
  void write_csv() const;
  /// Counts of the members by status, "64 members: 60 completed, 2 failed, 2 pending".
  std::string tally() const;
  /// Where this process's time went, for the closing log line: "validated in 0.21 s; members ran from
  /// 0.95 s to 8.31 s" (seconds after SweepRequest::origin; parts not done by this process are left out).
  std::string timeline() const;

 private:
  void run_member(std::size_t index);
  std::filesystem::path member_dir(std::size_t index) const { return out_ / spec_.members[index].name; }
  void log(const std::string& line) const;

  const ModuleRegistry& modules_;
  sweep::SweepSpec spec_;
  SweepRequest request_;
  std::filesystem::path out_;
  std::vector<std::string> metric_names_;
  double member_memory_ = 0.0;
  int omp_threads_ = 0;  ///< OpenMP threads of each member on the CPU backend (0: all)
  mutable std::mutex log_mutex_;
  std::mutex state_mutex_;
  int failed_ = 0, interrupted_signal_ = 0, done_ = 0;
  double validation_seconds_ = -1.0;  ///< < 0: not validated here
  std::optional<std::chrono::steady_clock::time_point> first_start_,
      last_end_;  ///< of this process's members
};

/// The Slurm job-array script of a sweep: `tasks` array tasks (at most the members), each running
/// `tissue sweep SWEEP --out DIR --task $SLURM_ARRAY_TASK_ID --tasks T` on one GPU (--gres=gpu:1), so that
/// a task runs one contiguous block of the members; resubmitting resumes as a re-run does.
/// `executable` is the tissue binary, `extra` more #SBATCH lines' options ("--time=02:00:00").
std::string slurm_script(const sweep::SweepSpec& spec, const std::filesystem::path& sweep_file,
                         const std::filesystem::path& out, const std::string& executable, int tasks,
                         const std::vector<std::string>& extra);

/// Member indices of block `task` (0-based) of `tasks` contiguous blocks of `members` (sizes differ by 1
/// at most). @throws InputError when task is not in [0, tasks) or tasks < 1.
std::vector<std::size_t> task_block(std::size_t members, int task, int tasks);

}  // namespace tissue
