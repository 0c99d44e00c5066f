#include "tools/sweep_command.hpp"

#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"
#include "engine/io/atomic_file.hpp"
#include "engine/run/ensemble.hpp"
#include "engine/run/runner.hpp"
#include "modules/builtin_modules.hpp"
#include "tools/decomposed_run.hpp"

#if defined(TISSUE_HAVE_MPI)
#include <mpi.h>

#include <mutex>
#endif

namespace fs = std::filesystem;

namespace tissue::tools {

namespace {

using Clock = std::chrono::steady_clock;

/// The process's start on the steady clock: /proc/self/stat's start time (clock ticks since boot) against
/// CLOCK_BOOTTIME, so that the timings in the log count the loading of the libraries and, under mpirun, the
/// time since this rank was started; now() where that cannot be read.
Clock::time_point process_start() {
  const auto now = Clock::now();
  std::ifstream in("/proc/self/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');  // the command name (field 2) may hold spaces
  if (close == std::string::npos || close + 2 >= stat.size()) return now;
  std::istringstream fields(stat.substr(close + 2));
  std::string skip;
  for (int field = 3; field < 22; ++field) fields >> skip;
  unsigned long long ticks = 0;
  timespec boot{};
  if (!(fields >> ticks) || clock_gettime(CLOCK_BOOTTIME, &boot) != 0) return now;
  const double age = static_cast<double>(boot.tv_sec) + 1e-9 * static_cast<double>(boot.tv_nsec) -
                     static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
  if (!(age >= 0.0 && age < 3600.0)) return now;
  return now - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(age));
}

const Clock::time_point g_start = process_start();
std::string g_entered;  ///< since_start() when sweep_command() began

/// Seconds since the process started, rounded to 10 ms, for the log.
std::string since_start() {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", std::chrono::duration<double>(Clock::now() - g_start).count());
  return text;
}

SweepRequest request_of(const SweepOptions& o) {
  SweepRequest r;
  r.origin = g_start;
  r.out = o.out;
  r.concurrent = o.concurrent;
  r.retry_failed = o.retry_failed;
  r.command = o.command;
  return r;
}

std::string self_executable(const std::string& argv0) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::absolute(argv0).string() : self.string();
}

/// Before the CUDA context exists, unless the environment says otherwise: threads waiting for the device
/// yield their core (TISSUE_CUDA_SCHEDULE, cuda/runtime.cu), as a sweep runs more threads than there are
/// cores; and the device takes work from 32 hardware queues instead of CUDA's default 8
/// (CUDA_DEVICE_MAX_CONNECTIONS): with 8, the members' streams share 8 queues and their kernels wait for
/// each other's (measured on an H100, 64 epidermis members: 33 000 aggregate steps/s at 8 to 64 members at
/// once with 8 queues, 83 000 with 32; BENCHMARKS.md).
void prefer_yield() {
  setenv("TISSUE_CUDA_SCHEDULE", "yield", 0);
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
}

/// One process: every member (or one task's block), `concurrent` at once.
int run_local(const SweepOptions& o) {
  select_backend(o.backend);
  Ensemble ensemble(builtin_modules(), sweep::read_sweep(o.sweep_file), request_of(o));
  const auto& spec = ensemble.spec();
  const auto among =
      o.task >= 0 ? task_block(spec.members.size(), o.task, o.tasks) : std::vector<std::size_t>{};
  const auto todo = ensemble.to_run(among);
  const int threads = ensemble.choose_concurrency(todo.size());
  std::printf(
      "%s\nsweep %s: %zu members (%zu to run%s), %d at once on %s; in %s\n", version_string().c_str(),
      o.sweep_file.c_str(), spec.members.size(), todo.size(),
      o.task >= 0 ? (", task " + std::to_string(o.task) + " of " + std::to_string(o.tasks)).c_str() : "",
      threads, exec::device_description().c_str(), ensemble.directory().string().c_str());
  std::fflush(stdout);
  ListQueue queue(todo);
  int code = kExitOk;
  try {
    code = ensemble.run(queue, threads);
  } catch (...) {
    ensemble.write_csv();
    throw;
  }
  ensemble.write_csv();
  std::printf("%s; results in %s\ntimes since the start [s]: %s; done at %s\n", ensemble.tally().c_str(),
              (ensemble.directory() / "sweep.csv").string().c_str(), ensemble.timeline().c_str(),
              since_start().c_str());
  return code;
}

int write_slurm(const SweepOptions& o) {
  // validated as a run would (on the CPU backend: this runs on a login node)
  select_backend("cpu");
  Ensemble ensemble(builtin_modules(), sweep::read_sweep(o.sweep_file), request_of(o));
  const std::size_t members = ensemble.spec().members.size();
  const int tasks = o.tasks > 0
                        ? static_cast<int>(std::min<std::size_t>(members, static_cast<std::size_t>(o.tasks)))
                        : static_cast<int>(members);
  const fs::path script = ensemble.directory() / "sweep.slurm";
  io::write_file_atomic(script, slurm_script(ensemble.spec(), o.sweep_file, ensemble.directory(),
                                             self_executable(o.command.empty() ? "tissue" : o.command[0]),
                                             tasks, o.slurm_options));
  fs::permissions(script, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
  std::printf("%s: a job array of %d tasks for %zu members; submit it with: sbatch %s\n", script.c_str(),
              tasks, members, script.c_str());
  return kExitOk;
}

#if defined(TISSUE_HAVE_MPI)

constexpr int kTagRequest = 1, kTagAssign = 2, kTagDone = 3;

/// A worker thread's request to the manager (rank 0) for its next member; calls are serialised.
class ManagerQueue : public MemberQueue {
 public:
  std::optional<std::size_t> next() override {
    std::lock_guard<std::mutex> lock(mutex_);
    int request = 0;
    MPI_Send(&request, 1, MPI_INT, 0, kTagRequest, MPI_COMM_WORLD);
    long long index = -1;
    MPI_Recv(&index, 1, MPI_LONG_LONG, 0, kTagAssign, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (index < 0) return std::nullopt;
    return static_cast<std::size_t>(index);
  }

 private:
  std::mutex mutex_;
};

/// The manager: validates, prepares the directory, hands out members, writes sweep.csv.
int mpi_manager(const SweepOptions& o, int size) {
  int ok = 0;
  std::optional<Ensemble> ensemble;
  std::string error;
  int error_code = kExitOk;
  try {
    select_backend("cpu");  // the manager runs no member: its checks need no device
    ensemble.emplace(builtin_modules(), sweep::read_sweep(o.sweep_file), request_of(o));
    ok = 1;
  } catch (const std::exception& e) {
    error = e.what();
    error_code = exit_code_for(e);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!ok) {
    std::fprintf(stderr, "tissue: error: %s\n", error.c_str());
    return error_code;
  }
  const auto among =
      o.task >= 0 ? task_block(ensemble->spec().members.size(), o.task, o.tasks) : std::vector<std::size_t>{};
  const auto todo = ensemble->to_run(among);
  double memory = ensemble->member_memory_bytes();
  MPI_Bcast(&memory, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::printf("%s\nsweep %s: %zu members (%zu to run) over %d worker ranks; in %s (validated at %s s)\n",
              version_string().c_str(), o.sweep_file.c_str(), ensemble->spec().members.size(), todo.size(),
              size - 1, ensemble->directory().string().c_str(), since_start().c_str());
  std::fflush(stdout);
  std::size_t next = 0;
  int running = size - 1, worst = kExitOk;
  while (running > 0) {
    int payload = 0;
    MPI_Status status;
    MPI_Recv(&payload, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
    if (status.MPI_TAG == kTagRequest) {
      const long long index = next < todo.size() ? static_cast<long long>(todo[next++]) : -1;
      MPI_Send(&index, 1, MPI_LONG_LONG, status.MPI_SOURCE, kTagAssign, MPI_COMM_WORLD);
    } else if (status.MPI_TAG == kTagDone) {
      --running;
      if (payload > 128 || (worst <= 128 && payload > worst)) worst = payload;
    }
  }
  ensemble->write_csv();
  std::printf("%s; results in %s\ntimes since the start [s]: %s; done at %s\n", ensemble->tally().c_str(),
              (ensemble->directory() / "sweep.csv").string().c_str(), ensemble->timeline().c_str(),
              since_start().c_str());
  return worst;
}

bool wants_cuda(const SweepOptions& o) {
  return o.backend.empty() || o.backend == "cuda";
}

/// The device of a worker: the workers of a node share its devices round-robin, counted from 0 on the
/// manager's node too. `count` devices on the node (0: none, then 0).
int worker_device(int node_rank, int manager_here, int count) {
  return count > 0 ? (node_rank - manager_here) % count : 0;
}

/// A worker: runs what the manager hands out, on worker_device().
int mpi_worker(const SweepOptions& o, int rank, int node_rank, int manager_here) {
  // the device first, while the manager validates the sweep (CUDA's start-up overlaps with it)
  std::string backend_error;
  int backend_code = kExitOk;
  const std::string mpi_ready = since_start();
  try {
    if (wants_cuda(o) && exec::cuda_available())
      exec::set_backend(exec::Backend::cuda,
                        worker_device(node_rank, manager_here, exec::cuda_device_count()));
    else
      select_backend(o.backend);
  } catch (const std::exception& e) {
    backend_error = e.what();
    backend_code = exit_code_for(e);
  }
  const std::string device_ready = since_start();
  int ok = 0;
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!ok) return kExitBadInput;
  double memory = 0.0;
  MPI_Bcast(&memory, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int code = kExitOk;
  try {
    if (backend_code != kExitOk) throw BackendError(backend_error);
    SweepRequest request = request_of(o);
    request.log_prefix = "rank " + std::to_string(rank) + ": ";
    Ensemble ensemble(builtin_modules(), sweep::read_sweep(o.sweep_file), request, false, false);
    ensemble.set_member_memory(memory);
    const int threads = ensemble.choose_concurrency(ensemble.spec().members.size());
    std::printf(
        "rank %d: %d members at once on %s (times since the start [s]: sweep command at %s, MPI ready "
        "at %s, device at %s, members at %s)\n",
        rank, threads, exec::device_description().c_str(), g_entered.c_str(), mpi_ready.c_str(),
        device_ready.c_str(), since_start().c_str());
    std::fflush(stdout);
    ManagerQueue queue;
    code = ensemble.run(queue, threads);
    std::printf("rank %d: times since the start [s]: %s; done at %s\n", rank, ensemble.timeline().c_str(),
                since_start().c_str());
    std::fflush(stdout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tissue: rank %d: error: %s\n", rank, e.what());
    code = exit_code_for(e);  // the members it took stay in their directories, resumable
  }
  MPI_Send(&code, 1, MPI_INT, 0, kTagDone, MPI_COMM_WORLD);
  return code;
}

/// Manager on rank 0, workers on the others; the manager's node also counts in the device choice.
int run_mpi(const SweepOptions& o) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int code = kExitOk;
  if (provided < MPI_THREAD_SERIALIZED) {
    if (rank == 0) std::fprintf(stderr, "tissue: error: the MPI library offers no MPI_THREAD_SERIALIZED\n");
    code = kExitFailure;
  } else if (size == 1) {
    MPI_Finalize();
    return run_local(o);
  } else {
    // where each rank is on its node, and whether the manager shares that node
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int node_rank = 0, holds_manager = rank == 0 ? 1 : 0, manager_here = 0;
    MPI_Comm_rank(node, &node_rank);
    MPI_Allreduce(&holds_manager, &manager_here, 1, MPI_INT, MPI_MAX, node);
    MPI_Comm_free(&node);
    code = rank == 0 ? mpi_manager(o, size) : mpi_worker(o, rank, node_rank, manager_here);
  }
  MPI_Finalize();
  return code;
}

#endif

}  // namespace

bool sweep_has_mpi() {
#if defined(TISSUE_HAVE_MPI)
  return true;
#else
  return false;
#endif
}

int sweep_command(const SweepOptions& o) {
  g_entered = since_start();
  prefer_yield();  // before anything asks CUDA a question: the driver reads them when it starts
  if ((o.task >= 0) != (o.tasks > 0) && !o.slurm) throw InputError("--task and --tasks go together");
  if (o.slurm) return write_slurm(o);
#if defined(TISSUE_HAVE_MPI)
  if (launched_by_mpirun()) return run_mpi(o);
#endif
  return run_local(o);
}

}  // namespace tissue::tools
