#pragma once
/// @file decomposed_run.hpp
/// `mpirun -np N tissue run SCENARIO`: one tissue over N ranks, one GPU (or one CPU process) each
/// (docs/multi_gpu.md). The engine's Runner runs on every rank with a DecomposedRun (engine/run/runner.hpp);
/// this file starts MPI, picks each rank's GPU and the halo transport, and ends the job.

#include <string>

#include "engine/run/runner.hpp"

namespace tissue::tools {

/// Whether this process was started by an MPI launcher (mpirun, srun with PMI/PMIx): the environment
/// variables OpenMPI, PMIx and PMI set. Always false in a build without MPI.
bool launched_by_mpirun();

/// Whether this build can run one tissue over MPI ranks (built with MPI).
bool decomposed_run_available();

/// Runs `request` as one tissue over the ranks of MPI_COMM_WORLD (MPI_Init and MPI_Finalize here): rank r
/// drives the GPU of its node-local rank modulo the node's GPUs on the CUDA backend; the halo moves through
/// NCCL where the build has it (TISSUE_NCCL), the backend is CUDA and no node has more ranks than GPUs
/// (NCCL refuses two ranks on one GPU), else staged through the host (`TISSUE_HALO_TRANSPORT=staged`
/// forces the latter). Rank 0 prints the log and the errors that stopped
/// every rank (RankFailure); an error met by one rank alone is printed by it ("tissue: rank R: ...") and
/// aborts the job (MPI_Abort with its exit code).
/// @return the exit code (as `tissue run`'s) on every rank. @throws InputError in a build without MPI.
int run_decomposed(RunRequest request, const std::string& backend);

}  // namespace tissue::tools
