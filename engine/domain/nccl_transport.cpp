#include "engine/domain/nccl_transport.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "cuda/runtime.hpp"
#include "engine/exec/backend.hpp"
#include "engine/exec/memory.hpp"

namespace tissue::domain {
namespace {

void check(ncclResult_t result, const char* what) {
  if (result != ncclSuccess)
    throw std::runtime_error(std::string("NCCL ") + what + ": " + ncclGetErrorString(result));
}

/// Messages in (peer, tag) order.
std::vector<const DeviceMessage*> ordered(const std::vector<DeviceMessage>& messages) {
  std::vector<const DeviceMessage*> out;
  for (const DeviceMessage& m : messages) out.push_back(&m);
  std::sort(out.begin(), out.end(), [](const DeviceMessage* a, const DeviceMessage* b) {
    return a->peer != b->peer ? a->peer < b->peer : a->tag < b->tag;
  });
  return out;
}

}  // namespace

NcclTransport::NcclTransport(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size);
  ncclUniqueId id;
  if (rank_ == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, comm);
  ncclComm_t nccl = nullptr;
  check(ncclCommInitRank(&nccl, size, id, rank_), "ncclCommInitRank");
  comm_ = nccl;
}

NcclTransport::~NcclTransport() {
  if (comm_ != nullptr) ncclCommDestroy(static_cast<ncclComm_t>(comm_));
}

void NcclTransport::exchange(const std::vector<DeviceMessage>& sends,
                             const std::vector<DeviceMessage>& receives) {
  auto* stream = static_cast<cudaStream_t>(cuda::current_stream());
  auto nccl = static_cast<ncclComm_t>(comm_);
  // messages to this rank itself: copies, matched by tag
  for (const DeviceMessage* s : ordered(sends)) {
    if (s->peer != rank_) continue;
    const auto r = std::find_if(receives.begin(), receives.end(),
                                [&](const DeviceMessage& m) { return m.peer == rank_ && m.tag == s->tag; });
    if (r == receives.end() || r->bytes.size() != s->bytes.size())
      throw std::logic_error("NcclTransport: a message to this rank without its receive of the same size");
    if (!s->bytes.empty())
      exec::copy_bytes(r->bytes.data(), exec::backend(), s->bytes.data(), exec::backend(), s->bytes.size());
  }
  check(ncclGroupStart(), "ncclGroupStart");
  for (const DeviceMessage* s : ordered(sends))
    if (s->peer != rank_)
      check(ncclSend(s->bytes.data(), s->bytes.size(), ncclUint8, s->peer, nccl, stream), "ncclSend");
  for (const DeviceMessage* r : ordered(receives))
    if (r->peer != rank_)
      check(ncclRecv(r->bytes.data(), r->bytes.size(), ncclUint8, r->peer, nccl, stream), "ncclRecv");
  check(ncclGroupEnd(), "ncclGroupEnd");
  cuda::note_enqueue();
}

}  // namespace tissue::domain
