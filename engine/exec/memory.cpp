#include "engine/exec/memory.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#if defined(TISSUE_BACKEND_CUDA)
#include "cuda/runtime.hpp"
#endif

namespace tissue::exec {

namespace {
constexpr std::size_t kHostAlignment = 64;
}

void* allocate(std::size_t bytes, Backend b) {
  if (bytes == 0) return nullptr;
#if defined(TISSUE_BACKEND_CUDA)
  if (b == Backend::cuda) return cuda::device_allocate(bytes);
#endif
  (void)b;
  const std::size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  void* p = std::aligned_alloc(kHostAlignment, rounded);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void deallocate(void* ptr, Backend b) noexcept {
  if (ptr == nullptr) return;
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
