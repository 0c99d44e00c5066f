// tissue: command-line front end. Runs and validates scenario files.
//
//   tissue run SCENARIO [--backend cpu|cuda] [--steps N] [--out DIR] [--every N] [--overwrite]
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
#include <optional>
#include <string>
#include <vector>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"
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

void prepare_output_dir(const fs::path& dir, bool overwrite) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec))
      throw InputError("--out " + dir.string() + ": exists and is not a directory");
    if (!fs::is_empty(dir, ec) && !overwrite)
      throw InputError("--out " + dir.string() + ": directory exists and is not empty (use --overwrite)");
  }
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create output directory " + dir.string() + ": " + ec.message());
}

/// A run stopped by SIGINT/SIGTERM after finishing a step and writing its output.
class Interrupted : public std::runtime_error {
 public:
  Interrupted(int signo, std::int64_t step)
      : std::runtime_error(std::string("interrupted by ") + InterruptGuard::signal_name(signo) +
                           " after step " + std::to_string(step) + "; the state of that step is written"),
        signo_(signo) {}
  int exit_code() const { return 128 + signo_; }

 private:
  int signo_;
};

/// The time loop of `tissue run`: writes output every `every` steps, checks the state before each output;
/// counts the steps done in `done`.
void run_steps(Simulation& sim, std::int64_t steps, std::int64_t every, const fs::path& out,
               std::int64_t& done) {
  World& w = *sim.world;
  std::printf("%s\nmodel %s, backend %s: %s\n%s\n%lld steps of dt = %g, output every %lld steps to %s\n",
              version_string().c_str(), sim.model.c_str(),
              std::string(exec::to_string(exec::backend())).c_str(), exec::device_description().c_str(),
              sim.description.c_str(), static_cast<long long>(steps), sim.dt, static_cast<long long>(every),
              out.string().c_str());
  std::fflush(stdout);

  const auto writer = sim.make_writer(out);
  writer->write(w);
  const InterruptGuard interrupt;  // SIGINT/SIGTERM: finish the step, write it, stop
  Progress progress(steps, ::isatty(STDERR_FILENO) != 0);
  for (std::int64_t i = 1; i <= steps; ++i) {
    sim.schedule.step(w, sim.dt);
    done = i;
    progress.update(i);
    const bool output = i == steps || (every > 0 && i % every == 0);
    if (output) {
      if (sim.check) sim.check(w);
      writer->write(w);
    }
    if (const int signo = InterruptGuard::signal_received()) {
      if (!output) writer->write(w);
      exec::synchronize();
      throw Interrupted(signo, i);
    }
  }
  exec::synchronize();
  progress.finish(steps);
  w.download();
  std::printf("%s\n", sim.summary ? sim.summary(w).c_str() : "");
  std::printf(
      "wall time %.1f s, %.1f steps/s; output in %s (open its .pvd files in ParaView)\n", progress.elapsed(),
      progress.elapsed() > 0 ? static_cast<double>(steps) / progress.elapsed() : 0.0, out.string().c_str());
}

int run(const RunOptions& opt) {
  select_backend(opt.backend);
  const auto scenario = io::Scenario::from_file(opt.scenario);
  auto sim = build_simulation(scenario);
  const std::int64_t steps = opt.steps.value_or(sim->steps);
  const std::int64_t every = opt.every.value_or(sim->output_every);
  const fs::path out = opt.out.empty() ? fs::path("runs") / fs::path(opt.scenario).stem() : fs::path(opt.out);
  prepare_output_dir(out, opt.overwrite);

  // run.json: written now ("running") and again when the run ends, however it ends
  io::RunRecord record;
  record.set_scenario(opt.scenario);
  record.command = opt.command;
  record.engine_version = kVersion;
  record.engine_revision = kGitRevision;
  record.engine_backends = kBackends;
  record.model = sim->model;
  record.backend = std::string(exec::to_string(exec::backend()));
  record.device = exec::device_description();
  record.host = host_name();
  record.started = io::utc_now_iso8601();
  record.steps_requested = steps;
  record.write(out);
  const auto t0 = std::chrono::steady_clock::now();
  const auto finish = [&](const char* status, int exit_code, const std::string& message) {
    record.status = status;
    record.exit_code = exit_code;
    record.message = message;
    record.ended = io::utc_now_iso8601();
    record.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    record.write(out);
  };
  try {
    run_steps(*sim, steps, every, out, record.steps_done);
  } catch (const Interrupted& e) {
    finish("interrupted", e.exit_code(), e.what());
    std::fprintf(stderr, "\ntissue: %s (%s)\n", e.what(), out.string().c_str());
    return e.exit_code();
  } catch (const std::exception& e) {
    try {
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
  run_cmd->add_option("scenario", opt.scenario, "scenario file (TOML)")->required();
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
