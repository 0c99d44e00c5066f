// tissue: command-line front end. Parses the command line and drives the engine's Runner
// (engine/run/runner.hpp), which owns the run: loop, output, checkpoints, signals, run.json.
//
//   tissue run SCENARIO [--backend cpu|cuda] [--steps N] [--out DIR] [--every N] [--overwrite]
//              [--checkpoint-every N]
//   tissue run [SCENARIO] --restart CHECKPOINT|RUN_DIR [--steps N] [--out DIR] ...
//   mpirun -np N tissue run ...   (a build with MPI: one tissue over N ranks, docs/multi_gpu.md)
//   tissue check SCENARIO
//   tissue sweep SWEEP [--out DIR] [--backend cpu|cuda] [--concurrent K] [--retry-failed]
//                [--task I --tasks T] [--slurm [--tasks T] [--slurm-option OPT]...]
//   mpirun -np N tissue sweep SWEEP ...   (a build with MPI: rank 0 hands members to the others)
//   tissue render RUN_DIR OUT.png [--size WxH]
//   tissue modules
//   tissue export-sbml SCENARIO [--out FILE]   (the scenario's gene network as SBML)
//   tissue --version
//
// Exit codes: 0 success; 1 I/O or internal error (for render: ParaView not installed, or failed); 2 invalid
// input (scenario, flags; for render: a missing RUN_DIR or one without view.pvsm); 3 numerical
// failure (NaN/Inf); 4 compute-backend (CUDA) failure; 128 + N stopped by signal N (SIGINT, SIGTERM, SIGHUP)
// after finishing a step and writing it. Errors are one line on stderr.

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>

#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"
#include "engine/io/atomic_file.hpp"
#include "engine/io/scenario.hpp"
#include "engine/run/runner.hpp"
#include "modules/builtin_modules.hpp"
#include "modules/gene_network/network_export.hpp"
#include "tools/decomposed_run.hpp"
#include "tools/paraview_render.hpp"
#include "tools/sweep_command.hpp"

using namespace tissue;

namespace {

int run(RunRequest request, const std::string& backend) {
  // started by mpirun (or srun): one tissue over the ranks
  if (tools::launched_by_mpirun()) return tools::run_decomposed(std::move(request), backend);
  select_backend(backend);
  request.progress_bar = ::isatty(STDERR_FILENO) != 0;
  Runner runner(builtin_modules(), std::move(request));
  return runner.run();
}

int check(const std::string& path, const std::string& backend) {
  if (!backend.empty()) select_backend(backend);
  const auto scenario = io::Scenario::from_file(path);
  auto sim = builtin_modules().build_simulation(scenario);
  std::printf("%s: valid scenario (%s): %s; %lld steps of dt = %g\ncomposed schedule:\n%s", path.c_str(),
              sim->model.c_str(), sim->description.c_str(), static_cast<long long>(sim->steps), sim->dt,
              sim->schedule.describe().c_str());
  // the estimate the scenario was admitted with (Composition::reserve_memory), for the cpu backend unless
  // --backend says otherwise
  std::printf("memory estimate: %.4g GB host, %.4g GB device (%s backend)\n", sim->memory.host / 1e9,
              sim->memory.device / 1e9, std::string(exec::to_string(exec::backend())).c_str());
  return kExitOk;
}

/// tissue export-sbml: the network the scenario runs, as SBML, to `out` (stdout when empty); the
/// [gene_network] keys that read it back go to stderr.
int export_sbml(const std::string& path, const std::string& out) {
  select_backend("cpu");
  const auto scenario = io::Scenario::from_file(path);
  auto sim = builtin_modules().build_simulation(scenario);
  std::string id = std::filesystem::path(path).stem().string();  // an SBML SId: letters, digits, _
  for (char& ch : id)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "network_" + id;
  const auto result = grn::export_network_sbml(sim->schedule, id);
  if (out.empty()) {
    std::fputs(result.sbml.c_str(), stdout);
  } else {
    io::write_file_atomic(out, result.sbml);
    std::printf("%s: the gene network of %s as SBML\n", out.c_str(), path.c_str());
  }
  std::fprintf(stderr, "# to read it back: [gene_network] with sbml = \"<file>\" and\n%s",
               result.inputs.c_str());
  return kExitOk;
}

/// Lists the registered entity sets, modules and presets with their tables and summaries.
int list_modules() {
  std::printf("%s", builtin_modules().describe().c_str());
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tissue: multiscale tissue simulation on GPUs and CPUs"};
  app.set_version_flag("--version", version_string());
  app.require_subcommand(1);

  RunRequest request;
  request.command.assign(argv, argv + argc);
  std::string backend, out;
  // integers that fit std::int64_t (a longer one would saturate), and strings that are not empty (an empty
  // one would silently mean the default)
  const auto non_negative = CLI::Validator(
      [](std::string& v) {
        const bool digits = !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
        if (!digits) return "must be a non-negative integer, got '" + v + "'";
        const std::string max = std::to_string(std::numeric_limits<std::int64_t>::max());
        const std::string trimmed = v.substr(std::min(v.find_first_not_of('0'), v.size() - 1));
        if (trimmed.size() > max.size() || (trimmed.size() == max.size() && trimmed > max))
          return "must be at most " + max + ", got '" + v + "'";
        return std::string();
      },
      "INT>=0");
  const auto not_empty = CLI::Validator(
      [](std::string& v) { return v.empty() ? std::string("must not be empty") : std::string(); }, "TEXT");
  auto* run_cmd = app.add_subcommand(
      "run",
      std::string("run a scenario and write ParaView output") +
          (tools::decomposed_run_available() ? " (one tissue over MPI ranks when started by mpirun)" : ""));
  run_cmd->add_option("scenario", request.scenario,
                      "scenario file (TOML); with --restart optional, and then must be the checkpoint's");
  run_cmd
      ->add_option("--backend", backend, "cpu or cuda (default: cuda when compiled in and a GPU is present)")
      ->check(not_empty);
  run_cmd->add_option("--steps", request.steps, "number of steps (overrides simulation.steps)")
      ->check(non_negative);
  run_cmd
      ->add_option("--every", request.every,
                   "output every N steps (overrides output.every; 0: first and last)")
      ->check(non_negative);
  run_cmd->add_option("--out", out, "output directory (default: runs/<scenario name>)")->check(not_empty);
  run_cmd->add_flag("--overwrite", request.overwrite,
                    "replace the previous run in the output directory (its files are removed; a directory "
                    "tissue did not create is refused)");
  run_cmd
      ->add_option("--restart", request.restart,
                   "continue from a checkpoint (.h5 file, or a run directory: its newest checkpoint); output "
                   "goes on in the checkpoint's directory unless --out is given; --steps sets the end step")
      ->check(not_empty);
  run_cmd
      ->add_option("--checkpoint-every", request.checkpoint_every,
                   "checkpoint every N steps (overrides checkpoint.every)")
      ->check(non_negative);
  // one launch per step instead of ~30 on the CUDA backend: a small tissue's run is launch-bound
  request.step_graphs = true;
  run_cmd->add_flag_callback(
      "--no-step-graphs", [&request] { request.step_graphs = false; },
      "on the CUDA backend, launch each kernel of a step on its own instead of replaying the step as a CUDA "
      "graph (the same results; for comparison)");

  std::string check_path;
  auto* check_cmd = app.add_subcommand("check", "validate a scenario and print its schedule; runs nothing");
  check_cmd->add_option("scenario", check_path, "scenario file (TOML)")->required();
  std::string check_backend;
  check_cmd
      ->add_option("--backend", check_backend, "cpu or cuda: the backend whose memory is estimated (cpu)")
      ->check(not_empty);

  std::string export_path, export_out;
  auto* export_cmd = app.add_subcommand(
      "export-sbml",
      "write the scenario's gene network (built-in, written in the scenario or read from SBML) "
      "as SBML Level 3 (docs/sbml.md)");
  export_cmd->add_option("scenario", export_path, "scenario file (TOML)")->required();
  export_cmd->add_option("--out", export_out, "SBML file to write (default: standard output)")
      ->check(not_empty);

  tools::SweepOptions sweep;
  sweep.command = request.command;
  auto* sweep_cmd = app.add_subcommand(
      "sweep", std::string("run a parameter sweep or ensemble: one run directory per member and sweep.csv; "
                           "running it again resumes it") +
                   (tools::sweep_has_mpi() ? " (over MPI ranks when started by mpirun)" : ""));
  sweep_cmd->add_option("sweep", sweep.sweep_file, "sweep file (TOML, docs/sweeps.md)")->required();
  sweep_cmd
      ->add_option("--out", sweep.out, "sweep directory (default: the sweep file's out, else sweeps/<name>)")
      ->check(not_empty);
  sweep_cmd->add_option("--backend", sweep.backend, "cpu or cuda (default: cuda when present)")
      ->check(not_empty);
  sweep_cmd
      ->add_option(
          "--concurrent", sweep.concurrent,
          "members at once in one process (default: as many as free device memory holds, at most 64; "
          "1 on the CPU backend)")
      ->check(CLI::Range(1, 4096));
  sweep_cmd->add_flag("--retry-failed", sweep.retry_failed, "run members that failed before again");
  sweep_cmd->add_option("--task", sweep.task, "run only block TASK (0-based) of --tasks blocks of members")
      ->check(CLI::Range(0, 1 << 30));
  sweep_cmd->add_option("--tasks", sweep.tasks, "number of blocks (Slurm array tasks)")
      ->check(CLI::Range(1, 1 << 30));
  sweep_cmd->add_flag(
      "--slurm", sweep.slurm,
      "write a Slurm job-array script (sweep.slurm in the sweep directory) instead of running");
  sweep_cmd->add_option("--slurm-option", sweep.slurm_options, "an #SBATCH option for --slurm (repeatable)");

  auto* modules_cmd = app.add_subcommand("modules", "list the modules a scenario can name");

  tools::RenderRequest render_request;
  std::string render_size;
  auto* render_cmd = app.add_subcommand(
      "render",
      "render a run's last snapshot as its view.pvsm shows it, with ParaView (pvbatch or pvpython)");
  render_cmd->add_option("run_dir", render_request.run_dir, "run directory (holds view.pvsm)")->required();
  render_cmd->add_option("image", render_request.png, "image to write (.png)")->required();
  render_cmd->add_option("--size", render_size, "image size in pixels, WIDTHxHEIGHT (default 1280x960)")
      ->check(not_empty);

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
    return kExitBadInput;
  }
  request.out = out;
  try {
    if (*run_cmd) return run(std::move(request), backend);
    if (*check_cmd) return check(check_path, check_backend);
    if (*export_cmd) return export_sbml(export_path, export_out);
    if (*sweep_cmd) return tools::sweep_command(sweep);
    if (*modules_cmd) return list_modules();
    if (*render_cmd) {
      if (!render_size.empty())
        tools::parse_image_size(render_size, render_request.width, render_request.height);
      std::printf("%s\n", tools::render(render_request).c_str());
      return kExitOk;
    }
  } catch (const tools::RenderInterrupted& e) {  // end as ParaView did: by the signal (exit 128 + N)
    std::signal(e.signo(), SIG_DFL);
    std::raise(e.signo());
    return 128 + e.signo();
  } catch (const std::exception& e) {
    const int code = exit_code_for(e);
    const char* kind = code == kExitNumerical ? "numerical failure"
                       : code == kExitBackend ? "backend failure"
                                              : "error";
    std::string message = e.what();  // one line, whatever a library put into it
    std::replace(message.begin(), message.end(), '\n', ' ');
    std::fprintf(stderr, "tissue: %s: %s\n", kind, message.c_str());
    return code;
  }
  return kExitFailure;
}
