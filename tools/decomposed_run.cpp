#include "tools/decomposed_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"
#include "modules/builtin_modules.hpp"
#include "modules/decomposed/decomposed_simulation.hpp"

#if defined(TISSUE_HAVE_MPI)
#include <mpi.h>

#include "engine/domain/mpi_communicator.hpp"
#if defined(TISSUE_NCCL)
#include "engine/domain/nccl_transport.hpp"
#endif
#endif

namespace tissue::tools {

bool launched_by_mpirun() {
#if defined(TISSUE_HAVE_MPI)
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"})
    if (std::getenv(v)) return true;
#endif
  return false;
}

bool decomposed_run_available() {
#if defined(TISSUE_HAVE_MPI)
  return true;
#else
  return false;
#endif
}

#if defined(TISSUE_HAVE_MPI)

namespace {

/// This rank's place on its node (which GPU it drives) and the ranks on its node.
std::pair<int, int> node_local_rank() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int r = 0, n = 1;
  MPI_Comm_rank(node, &r);
  MPI_Comm_size(node, &n);
  MPI_Comm_free(&node);
  return {r, n};
}

/// "tissue: <kind>: <message>" on one line, as main() prints an error.
void print_error(int code, const std::string& what) {
  const char* kind = code == kExitNumerical ? "numerical failure"
                     : code == kExitBackend ? "backend failure"
                                            : "error";
  std::string message = what;
  std::replace(message.begin(), message.end(), '\n', ' ');
  std::fprintf(stderr, "tissue: %s: %s\n", kind, message.c_str());
}

int run_ranks(RunRequest request, const std::string& backend, int rank) {
  select_backend(backend);
  const auto [node_rank, node_ranks] = node_local_rank();
  const int gpus = exec::backend() == exec::Backend::cuda ? std::max(1, exec::cuda_device_count()) : 0;
  if (gpus > 0) exec::set_backend(exec::Backend::cuda, node_rank % gpus);  // one GPU per rank of a node
  domain::MpiCommunicator comm;
  // the one setting from the environment: refused on every rank when any rank has a value it does not know
  const char* forced = std::getenv("TISSUE_HALO_TRANSPORT");
  const std::string forced_name = forced != nullptr ? forced : "";
  const bool unknown = !forced_name.empty() && forced_name != "staged";
  if (comm.max(static_cast<std::int64_t>(unknown ? 1 : 0)) > 0)
    throw RankFailure(kExitBadInput,
                      "TISSUE_HALO_TRANSPORT must be unset or \"staged\" on every rank (rank " +
                          std::to_string(rank) + " has \"" + forced_name + "\")");
  const bool staged = forced_name == "staged";
  std::unique_ptr<domain::DeviceTransport> transport;
#if defined(TISSUE_NCCL)
  // NCCL refuses two ranks on one GPU: more ranks than GPUs on a node go through the host
  const bool shared = comm.max(static_cast<std::int64_t>(node_ranks > gpus ? 1 : 0)) > 0;
  if (gpus > 0 && !staged && !shared) transport = std::make_unique<domain::NcclTransport>(comm.handle());
#else
  (void)node_ranks;
  (void)staged;
#endif
  request.decomposed.comm = &comm;
  request.decomposed.decompose = [&transport](Simulation& sim, domain::Communicator& c) {
    return decompose_simulation(sim, c, 0.2, transport.get());
  };
  request.progress_bar = rank == 0 && ::isatty(STDERR_FILENO) != 0;
  Runner runner(builtin_modules(), std::move(request));
  return runner.run();
}

}  // namespace

int run_decomposed(RunRequest request, const std::string& backend) {
  MPI_Init(nullptr, nullptr);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int code = kExitOk;
  try {
    code = run_ranks(std::move(request), backend, rank);
  } catch (const RankFailure& e) {  // every rank stopped at the same point: rank 0 reports it
    code = e.exit_code();
    if (rank == 0) print_error(code, e.what());
  } catch (const std::exception& e) {  // this rank alone: the others may wait for it in a collective
    code = exit_code_for(e);
    print_error(code, "rank " + std::to_string(rank) + ": " + e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
  }
  MPI_Finalize();
  return code;
}

#else

int run_decomposed(RunRequest, const std::string&) {
  throw InputError("this build of tissue has no MPI: one tissue over several ranks needs libopenmpi-dev");
}

#endif

}  // namespace tissue::tools
