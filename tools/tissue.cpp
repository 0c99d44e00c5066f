// tissue: command-line front end. Runs and validates scenario files.
//
//   tissue run SCENARIO [--backend cpu|cuda] [--steps N] [--out DIR] [--every N] [--overwrite]
//              [--checkpoint-every N]
//   tissue run [SCENARIO] --restart CHECKPOINT|RUN_DIR [--steps N] [--out DIR] ...
//   tissue check SCENARIO
//   tissue --version
//
// Exit codes: 0 success; 1 I/O or internal error; 2 invalid input (scenario, flags); 3 numerical
// failure (NaN/Inf); 4 compute-backend (CUDA) failure; 128 + N stopped by signal N (SIGINT, SIGTERM)
// after finishing a step and writing it. Errors are one line on stderr. Every run writes
// run.json into its output directory (engine/io/run_record.hpp): provenance, status and exit code.

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/run_record.hpp"
#include "engine/io/scenario.hpp"
#include "engine/util/interrupt.hpp"
#include "engine/util/progress.hpp"
#include "engine/version.hpp"
#include "modules/models.hpp"

namespace fs = std::filesystem;
using namespace tissue;

namespace {

enum ExitCode { kOk = 0, kFailure = 1, kBadInput = 2, kNumerical = 3, kBackend = 4 };

std::string version_string() {
  return std::string("tissue ") + kVersion + " (" + kGitRevision + ", backends: " + kBackends + ")";
}

struct RunOptions {
  std::vector<std::string> command;  ///< argv, for run.json
  std::string scenario;
  std::string backend;
  std::optional<std::int64_t> steps;
  std::optional<std::int64_t> every;
  std::string out;
  bool overwrite = false;
  std::string restart;                           ///< checkpoint file or run directory
  std::optional<std::int64_t> checkpoint_every;  ///< overrides checkpoint.every
};

/// --backend, or by default cuda where compiled in and a device is present, else cpu.
void select_backend(const std::string& name) {
  exec::Backend b = exec::cuda_available() ? exec::Backend::cuda : exec::Backend::cpu;
  if (!name.empty()) {
    try {
      b = exec::parse_backend(name);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("--backend: ") + e.what());
    }
  }
  try {
    exec::set_backend(b);
  } catch (const std::runtime_error& e) {
    throw BackendError(e.what());
  }
}

/// Process exit code for an exception (see the header comment).
int exit_code_for(const std::exception& e) {
  if (dynamic_cast<const InputError*>(&e)) return kBadInput;
  if (dynamic_cast<const NumericalError*>(&e)) return kNumerical;
  if (dynamic_cast<const BackendError*>(&e)) return kBackend;
  return kFailure;
}

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

/// Refuses an output directory that exists and is not empty (unless overwrite) or is not a directory.
void check_output_dir(const fs::path& dir, bool overwrite) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec))
      throw InputError("--out " + dir.string() + ": exists and is not a directory");
    if (!fs::is_empty(dir, ec) && !overwrite)
      throw InputError("--out " + dir.string() + ": directory exists and is not empty (use --overwrite)");
  }
}

void create_output_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create output directory " + dir.string() + ": " + ec.message());
}

/// A run stopped by SIGINT/SIGTERM after finishing a step and writing its output and a checkpoint.
class Interrupted : public std::runtime_error {
 public:
  Interrupted(int signo, std::int64_t step, const std::string& checkpoint)
      : std::runtime_error(std::string("interrupted by ") + InterruptGuard::signal_name(signo) +
                           " after step " + std::to_string(step) + "; the state of that step is written" +
                           (checkpoint.empty() ? "" : " to " + checkpoint)),
        signo_(signo) {}
  int exit_code() const { return 128 + signo_; }

 private:
  int signo_;
};

/// A simulation ready to step, with where its output and checkpoints go.
struct Run {
  std::unique_ptr<Simulation> sim;
  std::unique_ptr<SnapshotWriter> writer;
  io::CheckpointHeader header;  ///< template for this run's checkpoints (status, clock filled per write)
  fs::path out;
  std::int64_t end_step = 0;   ///< the step the run ends at
  std::int64_t every = 0;      ///< output cadence [steps]
  std::string restarted_from;  ///< checkpoint path, for a restart
};

/// Writes a checkpoint of the run's current state; returns its path.
std::string write_checkpoint(Run& run, const char* status, const std::string& message) {
  run.header.status = status;
  run.header.message = message;
  run.header.dt = run.sim->dt;
  io::CheckpointSeries series(run.out, run.sim->checkpoint.keep);
  return series.write(*run.sim->world, run.header, run.writer->series()).string();
}

/// The time loop of `tissue run`: steps from the world's step to run.end_step; output every run.every
/// steps; the model's check every check_every steps and before each output; checkpoints as configured.
/// Keeps `record` (steps done, last checkpoint) current.
void run_steps(Run& run, io::RunRecord& record) {
  Simulation& sim = *run.sim;
  World& w = *sim.world;
  const std::int64_t start = w.step, end = run.end_step;
  std::printf("%s\nmodel %s, backend %s: %s\n%s\n", version_string().c_str(), sim.model.c_str(),
              std::string(exec::to_string(exec::backend())).c_str(), exec::device_description().c_str(),
              sim.description.c_str());
  if (!run.restarted_from.empty())
    std::printf("restarting at step %lld (t = %g) from %s\n", static_cast<long long>(start), w.time,
                run.restarted_from.c_str());
  std::printf("steps %lld to %lld of dt = %g, output every %lld steps to %s\n", static_cast<long long>(start),
              static_cast<long long>(end), sim.dt, static_cast<long long>(run.every),
              run.out.string().c_str());
  std::fflush(stdout);

  run.writer->write(w);
  const CheckpointSettings& cp = sim.checkpoint;
  using clock = std::chrono::steady_clock;
  auto last_checkpoint = clock::now();
  const InterruptGuard interrupt;  // SIGINT/SIGTERM: finish the step, write it, checkpoint, stop
  Progress progress(end - start, ::isatty(STDERR_FILENO) != 0);
  std::int64_t converged_at = -1;
  for (std::int64_t step = start + 1; step <= end; ++step) {
    sim.schedule.step(w, sim.dt);
    record.steps_done = step;
    progress.update(step - start);
    const bool check_due = sim.check_every > 0 && step % sim.check_every == 0;
    if (step < end && check_due && sim.converged && sim.converged(w)) converged_at = step;
    const bool last = step == end || converged_at == step;
    const bool output = last || (run.every > 0 && step % run.every == 0);
    if (sim.check && (output || check_due)) sim.check(w);
    const int signo = InterruptGuard::signal_received();
    if (output || signo != 0) run.writer->write(w);
    const double minutes = std::chrono::duration<double>(clock::now() - last_checkpoint).count() / 60.0;
    if (signo != 0 || (cp.every_steps > 0 && step % cp.every_steps == 0) ||
        (cp.every_minutes > 0.0 && minutes >= cp.every_minutes) || (last && cp.at_end)) {
      record.last_checkpoint = write_checkpoint(run, "ok", "");
      last_checkpoint = clock::now();
    }
    if (signo != 0) {
      exec::synchronize();
      throw Interrupted(signo, step, record.last_checkpoint);
    }
    if (last) break;
  }
  exec::synchronize();
  const std::int64_t ran = (converged_at > 0 ? converged_at : end) - start;
  progress.finish(ran);
  if (converged_at > 0)
    std::printf("converged at step %lld: stopping early\n", static_cast<long long>(converged_at));
  w.download();
  std::printf("%s\n", sim.summary ? sim.summary(w).c_str() : "");
  const double steps_per_s = progress.elapsed() > 0 ? static_cast<double>(ran) / progress.elapsed() : 0.0;
  std::printf("wall time %.1f s, %.1f steps/s; output in %s (open its .pvd files in ParaView)\n",
              progress.elapsed(), steps_per_s, run.out.string().c_str());
  if (!record.last_checkpoint.empty())
    std::printf("checkpoint %s (continue with: tissue run --restart %s --steps N)\n",
                record.last_checkpoint.c_str(), record.last_checkpoint.c_str());
}

/// The SHA-256 of a file's bytes. @throws InputError if unreadable.
std::string file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": scenario file not found or unreadable");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return io::sha256_hex(bytes);
}

/// Builds the run `tissue run` asked for: from the scenario, or from a checkpoint (--restart).
Run prepare(const RunOptions& opt, io::RunRecord& record) {
  Run run;
  std::optional<io::Scenario> scenario;
  fs::path checkpoint;
  if (!opt.restart.empty()) {
    checkpoint =
        fs::is_directory(opt.restart) ? io::CheckpointSeries::latest(opt.restart) : fs::path(opt.restart);
    const io::CheckpointHeader h = io::read_checkpoint_header(checkpoint);
    if (h.status != "ok")
      throw InputError("checkpoint " + checkpoint.string() + " holds the last state of a failed run (" +
                       h.message + "); restart from an earlier checkpoint");
    if (!opt.scenario.empty() && file_sha256(opt.scenario) != h.scenario_sha256)
      throw InputError("checkpoint " + checkpoint.string() + " was written by a run of another scenario (" +
                       h.scenario_path + ", SHA-256 " + h.scenario_sha256.substr(0, 12) + "...) than " +
                       opt.scenario + "; leave the scenario out to use the checkpoint's own");
    scenario = io::Scenario::from_string(h.scenario_text, h.scenario_path);
    run.header = h;
    run.restarted_from = checkpoint.string();
  } else {
    if (opt.scenario.empty()) throw InputError("tissue run needs a scenario file or --restart CHECKPOINT");
    scenario = io::Scenario::from_file(opt.scenario);
    run.header.scenario_path = fs::absolute(opt.scenario).lexically_normal().string();
    run.header.scenario_text = scenario->text();
    run.header.scenario_sha256 = io::sha256_hex(scenario->text());
  }
  run.sim = build_simulation(*scenario);
  Simulation& sim = *run.sim;
  if (opt.checkpoint_every) sim.checkpoint.every_steps = *opt.checkpoint_every;
  run.header.engine_version = kVersion;
  run.header.engine_revision = kGitRevision;
  run.header.model = sim.model;
  run.header.backend = std::string(exec::to_string(exec::backend()));
  run.end_step = opt.steps.value_or(checkpoint.empty() ? sim.steps : run.header.steps_requested);
  run.header.steps_requested = run.end_step;
  run.every = opt.every.value_or(sim.output_every);

  const fs::path run_dir = checkpoint.empty() ? fs::path() : fs::absolute(checkpoint).parent_path();
  run.out = !opt.out.empty()   ? fs::path(opt.out)
            : !run_dir.empty() ? run_dir
                               : fs::path("runs") / fs::path(opt.scenario).stem();
  std::error_code ec;
  const bool same_dir = !run_dir.empty() && fs::equivalent(run.out, run_dir, ec);
  if (!same_dir) check_output_dir(run.out, opt.overwrite);  // a restart continues its own directory
  run.writer = sim.make_writer(run.out);                    // writes nothing yet
  if (!checkpoint.empty()) {
    io::read_checkpoint_state(checkpoint, *sim.world,
                              same_dir ? run.writer->series() : std::vector<io::PvdSeries*>{});
    sim.dt = run.header.dt;
    if (run.end_step <= sim.world->step)
      throw InputError("checkpoint " + checkpoint.string() + " is at step " +
                       std::to_string(sim.world->step) + ", the run ends at step " +
                       std::to_string(run.end_step) + ": nothing to do (--steps N sets a later end)");
  }

  create_output_dir(run.out);  // only now that all input is checked

  record.set_scenario(run.header.scenario_path, run.header.scenario_text);
  record.engine_version = kVersion;
  record.engine_revision = kGitRevision;
  record.engine_backends = kBackends;
  record.model = sim.model;
  record.backend = run.header.backend;
  record.device = exec::device_description();
  record.host = host_name();
  record.started = io::utc_now_iso8601();
  record.steps_requested = run.end_step;
  record.start_step = record.steps_done = sim.world->step;
  record.restarted_from = run.restarted_from;
  return run;
}

int run(const RunOptions& opt) {
  select_backend(opt.backend);
  io::RunRecord record;
  record.command = opt.command;
  Run r = prepare(opt, record);
  // run.json: written now ("running") and again when the run ends, however it ends
  record.write(r.out);
  const auto t0 = std::chrono::steady_clock::now();
  const auto finish = [&](const char* status, int exit_code, const std::string& message) {
    record.status = status;
    record.exit_code = exit_code;
    record.message = message;
    record.ended = io::utc_now_iso8601();
    record.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    record.write(r.out);
  };
  try {
    run_steps(r, record);
  } catch (const Interrupted& e) {
    finish("interrupted", e.exit_code(), e.what());
    std::fprintf(stderr, "\ntissue: %s (%s)\n", e.what(), r.out.string().c_str());
    return e.exit_code();
  } catch (const std::exception& e) {
    try {
      if (dynamic_cast<const NumericalError*>(&e)) {  // keep the broken state for inspection
        record.last_checkpoint = write_checkpoint(r, "failed", e.what());
        std::fprintf(stderr, "\ntissue: the failed state is in %s\n", record.last_checkpoint.c_str());
      }
      finish("failed", exit_code_for(e), e.what());
    } catch (const std::exception&) {  // the original error matters more than a failed record
    }
    throw;
  }
  finish("completed", kOk, "");
  return kOk;
}

int check(const std::string& path) {
  const auto scenario = io::Scenario::from_file(path);
  auto sim = build_simulation(scenario);
  std::printf("%s: valid %s scenario: %s; %lld steps of dt = %g\n%s", path.c_str(), sim->model.c_str(),
              sim->description.c_str(), static_cast<long long>(sim->steps), sim->dt,
              sim->schedule.describe().c_str());
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tissue: multiscale tissue simulation on GPUs and CPUs"};
  app.set_version_flag("--version", version_string());
  app.require_subcommand(1);

  RunOptions opt;
  opt.command.assign(argv, argv + argc);
  auto* run_cmd = app.add_subcommand("run", "run a scenario and write ParaView output");
  run_cmd->add_option("scenario", opt.scenario,
                      "scenario file (TOML); with --restart optional, and then must be the checkpoint's");
  run_cmd->add_option("--backend", opt.backend,
                      "cpu or cuda (default: cuda when compiled in and a GPU is present)");
  const auto non_negative = CLI::Validator(
      [](std::string& v) {
        return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos
                   ? std::string()
                   : "must be a non-negative integer, got '" + v + "'";
      },
      "INT>=0");
  run_cmd->add_option("--steps", opt.steps, "number of steps (overrides simulation.steps)")
      ->check(non_negative);
  run_cmd
      ->add_option("--every", opt.every, "output every N steps (overrides output.every; 0: first and last)")
      ->check(non_negative);
  run_cmd->add_option("--out", opt.out, "output directory (default: runs/<scenario name>)");
  run_cmd->add_flag("--overwrite", opt.overwrite, "write into an existing non-empty output directory");
  run_cmd->add_option(
      "--restart", opt.restart,
      "continue from a checkpoint (.h5 file, or a run directory: its newest checkpoint); output "
      "goes on in the checkpoint's directory unless --out is given; --steps sets the end step");
  run_cmd
      ->add_option("--checkpoint-every", opt.checkpoint_every,
                   "checkpoint every N steps (overrides checkpoint.every)")
      ->check(non_negative);

  std::string check_path;
  auto* check_cmd = app.add_subcommand("check", "validate a scenario and print its schedule; runs nothing");
  check_cmd->add_option("scenario", check_path, "scenario file (TOML)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "tissue: error: %s (see tissue --help)\n", e.what());
    return kBadInput;
  }
  try {
    if (*run_cmd) return run(opt);
    if (*check_cmd) return check(check_path);
  } catch (const InputError& e) {
    std::fprintf(stderr, "tissue: error: %s\n", e.what());
    return kBadInput;
  } catch (const NumericalError& e) {
    std::fprintf(stderr, "tissue: numerical failure: %s\n", e.what());
    return kNumerical;
  } catch (const BackendError& e) {
    std::fprintf(stderr, "tissue: backend failure: %s\n", e.what());
    return kBackend;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tissue: error: %s\n", e.what());
    return kFailure;
  }
  return kFailure;
}
