#pragma once
/// @file nccl_transport.hpp
/// The device transport of a decomposed run over NCCL (device_halo.hpp): the halo buffers go from GPU to
/// GPU with ncclSend / ncclRecv in one group (NVLink or PCIe peer copies within a node, the network between
/// nodes), stream-ordered with the engine's kernels, without a copy through the host. Built into the
/// tissue_domain_mpi library in CUDA builds where NCCL is found (TISSUE_NCCL); MPI starts the ranks and
/// hands the NCCL id from rank 0 to the others.

#include <mpi.h>

#include "engine/domain/device_halo.hpp"

namespace tissue::domain {

/// NCCL between the ranks of an MPI communicator, each driving the CUDA device the engine selected for it
/// (exec::set_backend) before construction.
class NcclTransport final : public DeviceTransport {
 public:
  /// Creates the NCCL communicator (ncclCommInitRank; collective over `comm`).
  /// @throws std::runtime_error when NCCL fails (no CUDA device, two ranks on one device, ...).
  explicit NcclTransport(MPI_Comm comm);
  ~NcclTransport() override;
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  /// One NCCL group of every send and receive, issued in (peer, tag) order on both sides, which pairs each
  /// send with its receive; messages to the rank itself are device-to-device copies. Queued on the engine's
  /// stream: later device work sees the received bytes. @throws std::runtime_error when NCCL fails;
  /// std::logic_error for a message to itself without its receive.
  void exchange(const std::vector<DeviceMessage>& sends, const std::vector<DeviceMessage>& receives) override;
  const char* name() const override { return "nccl"; }

 private:
  void* comm_ = nullptr;  ///< ncclComm_t
  int rank_ = 0;
};

}  // namespace tissue::domain
