#include "engine/exec/memory.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(TISSUE_BACKEND_CUDA)
#include "cuda/runtime.hpp"
#endif

namespace tissue::exec {

namespace {
constexpr std::size_t kHostAlignment = 64;

/// Allocation counters of one backend.
struct Counters {
  std::atomic<std::size_t> current{0};
  std::atomic<std::size_t> peak{0};
};
Counters g_counters[2];  // indexed by Backend (cpu = 0, cuda = 1)

Counters& counters(Backend b) {
  return g_counters[b == Backend::cuda ? 1 : 0];
}

void count_allocation(Backend b, std::size_t bytes) {
  Counters& c = counters(b);
  const std::size_t now = c.current.fetch_add(bytes) + bytes;
  std::size_t peak = c.peak.load();
  while (now > peak && !c.peak.compare_exchange_weak(peak, now)) {
  }
}
}  // namespace

AllocationStats allocation_stats(Backend b) {
  const Counters& c = counters(b);
  return AllocationStats{c.current.load(), c.peak.load()};
}

void reset_allocation_peak(Backend b) {
  Counters& c = counters(b);
  c.peak.store(c.current.load());
}

void* allocate(std::size_t bytes, Backend b) {
  if (bytes == 0) return nullptr;
#if defined(TISSUE_BACKEND_CUDA)
  if (b == Backend::cuda) {
    void* p = cuda::device_allocate(bytes);
    count_allocation(b, bytes);
    return p;
  }
#endif
  const std::size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  void* p = std::aligned_alloc(kHostAlignment, rounded);
  if (p == nullptr) throw std::bad_alloc();
  count_allocation(b, bytes);
  return p;
}

void deallocate(void* ptr, std::size_t bytes, Backend b) noexcept {
  if (ptr == nullptr) return;
  counters(b).current.fetch_sub(bytes);
#if defined(TISSUE_BACKEND_CUDA)
  if (b == Backend::cuda) {
    cuda::device_free(ptr);
    return;
  }
#endif
  (void)b;
  std::free(ptr);
}

void copy_bytes(void* dst, Backend dst_b, const void* src, Backend src_b, std::size_t bytes) {
  if (bytes == 0) return;
#if defined(TISSUE_BACKEND_CUDA)
  if (dst_b == Backend::cuda || src_b == Backend::cuda) {
    cuda::copy(dst, dst_b == Backend::cuda, src, src_b == Backend::cuda, bytes);
    return;
  }
#endif
  (void)dst_b;
  (void)src_b;
  std::memmove(dst, src, bytes);
}

void zero_bytes(void* ptr, Backend b, std::size_t bytes) {
  if (bytes == 0) return;
#if defined(TISSUE_BACKEND_CUDA)
  if (b == Backend::cuda) {
    cuda::zero(ptr, bytes);
    return;
  }
#endif
  (void)b;
  std::memset(ptr, 0, bytes);
}

}  // namespace tissue::exec
