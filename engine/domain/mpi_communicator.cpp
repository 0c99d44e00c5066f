#include "engine/domain/mpi_communicator.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace tissue::domain {
namespace {

/// Tag of the all-to-all's point-to-point messages (above every exchange() tag, on the duplicated
/// communicator).
constexpr int kAllToAllTag = Communicator::max_tag + 1;

/// Receives the message (from, tag) whatever its size: probe, size, receive.
Bytes receive(MPI_Comm comm, int from, int tag) {
  MPI_Status status;
  MPI_Probe(from, tag, comm, &status);
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  Bytes bytes(static_cast<std::size_t>(count));
  MPI_Recv(bytes.data(), count, MPI_BYTE, from, tag, comm, MPI_STATUS_IGNORE);
  return bytes;
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm) {
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::vector<Bytes> MpiCommunicator::exchange(const std::vector<Outgoing>& sends,
                                             const std::vector<Incoming>& receives) {
  for (const Outgoing& s : sends) check_message(s.to, s.tag, s.bytes.size(), size_);
  for (const Incoming& r : receives) check_message(r.from, r.tag, 0, size_);
  // every send is posted before any receive blocks, so no order of the ranks' calls can deadlock
  std::vector<MPI_Request> requests(sends.size());
  for (std::size_t i = 0; i < sends.size(); ++i)
    MPI_Isend(sends[i].bytes.data(), static_cast<int>(sends[i].bytes.size()), MPI_BYTE, sends[i].to,
              sends[i].tag, comm_, &requests[i]);
  std::vector<Bytes> received;
  received.reserve(receives.size());
  for (const Incoming& r : receives) received.push_back(receive(comm_, r.from, r.tag));
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  return received;
}

std::vector<Bytes> MpiCommunicator::all_to_all(const std::vector<Bytes>& send) {
  if (send.size() != static_cast<std::size_t>(size_))
    throw std::invalid_argument("all_to_all: " + std::to_string(send.size()) + " messages for " +
                                std::to_string(size_) + " ranks");
  std::vector<std::int64_t> sizes(send.size()), incoming(send.size());
  for (std::size_t r = 0; r < send.size(); ++r) {
    check_message(static_cast<int>(r), 0, send[r].size(), size_);
    sizes[r] = static_cast<std::int64_t>(send[r].size());
  }
  MPI_Alltoall(sizes.data(), 1, MPI_INT64_T, incoming.data(), 1, MPI_INT64_T, comm_);
  std::vector<MPI_Request> requests;
  for (std::size_t r = 0; r < send.size(); ++r) {
    if (send[r].empty()) continue;
    requests.emplace_back();
    MPI_Isend(send[r].data(), static_cast<int>(send[r].size()), MPI_BYTE, static_cast<int>(r), kAllToAllTag,
              comm_, &requests.back());
  }
  std::vector<Bytes> received(send.size());
  for (std::size_t r = 0; r < send.size(); ++r) {
    if (incoming[r] == 0) continue;
    received[r].resize(static_cast<std::size_t>(incoming[r]));
    MPI_Recv(received[r].data(), static_cast<int>(incoming[r]), MPI_BYTE, static_cast<int>(r), kAllToAllTag,
             comm_, MPI_STATUS_IGNORE);
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  return received;
}

double MpiCommunicator::max(double value) {
  // MPI_MAX of NaN is unspecified: a NaN anywhere is reduced as a flag, so that every rank sees it
  int nan = std::isnan(value) ? 1 : 0, any_nan = 0;
  MPI_Allreduce(&nan, &any_nan, 1, MPI_INT, MPI_MAX, comm_);
  double result = value;
  MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, comm_);
  return any_nan ? std::numeric_limits<double>::quiet_NaN() : result;
}

std::vector<double> MpiCommunicator::max(const std::vector<double>& values) {
  // one reduction: the values with NaN as -infinity, then one NaN flag per value
  const std::size_t n = values.size();
  std::vector<double> local(2 * n), result(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const bool nan = std::isnan(values[i]);
    local[i] = nan ? -std::numeric_limits<double>::infinity() : values[i];
    local[n + i] = nan ? 1.0 : 0.0;
  }
  MPI_Allreduce(local.data(), result.data(), static_cast<int>(2 * n), MPI_DOUBLE, MPI_MAX, comm_);
  for (std::size_t i = 0; i < n; ++i)
    if (result[n + i] > 0.0) result[i] = std::numeric_limits<double>::quiet_NaN();
  result.resize(n);
  return result;
}

std::int64_t MpiCommunicator::max(std::int64_t value) {
  std::int64_t result = 0;
  MPI_Allreduce(&value, &result, 1, MPI_INT64_T, MPI_MAX, comm_);
  return result;
}

std::int64_t MpiCommunicator::sum(std::int64_t value) {
  std::int64_t result = 0;
  MPI_Allreduce(&value, &result, 1, MPI_INT64_T, MPI_SUM, comm_);
  return result;
}

}  // namespace tissue::domain
