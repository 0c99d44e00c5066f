#pragma once
/// @file sweep_command.hpp
/// `tissue sweep`: runs a parameter sweep (engine/run/ensemble.hpp) in this process, as one task of a Slurm
/// job array (--task/--tasks), or, when started by mpirun in a build with MPI, over MPI ranks: rank 0 hands
/// members to the other ranks as their threads free up (one rank per GPU). docs/sweeps.md.

#include <string>
#include <vector>

namespace tissue::tools {

/// `tissue sweep`'s flags.
struct SweepOptions {
  std::string sweep_file;
  std::string out;      ///< --out ("" : the sweep file's `out`, else sweeps/<stem>)
  std::string backend;  ///< --backend ("" : cuda when present)
  int concurrent = 0;   ///< --concurrent (0: chosen from free device memory)
  bool retry_failed = false;
  int task = -1, tasks = 0;  ///< --task/--tasks: this process runs block `task` of `tasks` (-1: all)
  bool slurm = false;        ///< --slurm: write the job-array script (tasks = --tasks, default 1 per member)
  std::vector<std::string> slurm_options;  ///< --slurm-option, more #SBATCH options
  std::vector<std::string> command;        ///< argv, for the members' run.json
};

/// Runs `tissue sweep`. @return the exit code (0 all completed, 1 a member failed, 2 invalid input,
/// 128 + N stopped by signal N). @throws like the engine (InputError ...), for main() to report.
int sweep_command(const SweepOptions& options);

/// Whether this build can run a sweep over MPI ranks.
bool sweep_has_mpi();

}  // namespace tissue::tools
