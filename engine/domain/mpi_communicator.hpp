#pragma once
/// @file mpi_communicator.hpp
/// The host-staged transport over MPI (OpenMPI from Debian's libopenmpi-dev): point-to-point messages by
/// MPI_Isend / MPI_Probe / MPI_Recv, the all-to-all by an MPI_Alltoall of the sizes then point-to-point
/// messages for the non-empty ones (no int displacements to overflow), reductions by MPI_Allreduce.
/// Built into the tissue_domain_mpi library only where MPI is found (CMake's TISSUE_MPI).

#include <mpi.h>

#include "engine/domain/communicator.hpp"

namespace tissue::domain {

/// A Communicator over the ranks of an MPI communicator. The caller initialises and finalises MPI; the
/// communicator is duplicated (MPI_Comm_dup), so that the decomposition's messages never match other
/// messages of the program, and freed by the destructor (before MPI_Finalize).
class MpiCommunicator final : public Communicator {
 public:
  /// @param comm  the ranks to span (MPI_COMM_WORLD by default)
  explicit MpiCommunicator(MPI_Comm comm = MPI_COMM_WORLD);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::vector<Bytes> exchange(const std::vector<Outgoing>& sends,
                              const std::vector<Incoming>& receives) override;
  std::vector<Bytes> all_to_all(const std::vector<Bytes>& send) override;
  double max(double value) override;
  std::vector<double> max(const std::vector<double>& values) override;
  std::int64_t max(std::int64_t value) override;
  std::int64_t sum(std::int64_t value) override;
  /// The duplicated communicator (for transports that start from it, NcclTransport).
  MPI_Comm handle() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace tissue::domain
