#include "engine/exec/backend.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <stdexcept>

#if defined(TISSUE_BACKEND_CUDA)
#include "cuda/runtime.hpp"
#endif

namespace tissue::exec {

namespace {
Backend g_backend = Backend::cpu;
}

Backend backend() {
  return g_backend;
}

void set_backend(Backend b, int device) {
  if (b == Backend::cuda) {
    if (!cuda_compiled())
      throw std::runtime_error(
          "backend 'cuda' is not compiled into this build (configure with -DTISSUE_BACKEND=cuda)");
#if defined(TISSUE_BACKEND_CUDA)
    cuda::initialize(device);  // throws with the CUDA error text when no device is usable
#else
    (void)device;
#endif
  }
  g_backend = b;
}

int cuda_device_count() {
#if defined(TISSUE_BACKEND_CUDA)
  return cuda::device_count();
#else
  return 0;
#endif
}

ThreadStream::ThreadStream() {
#if defined(TISSUE_BACKEND_CUDA)
  if (g_backend == Backend::cuda) {
    cuda::create_thread_stream();
    active_ = true;
  }
#endif
}

ThreadStream::~ThreadStream() {
#if defined(TISSUE_BACKEND_CUDA)
  if (active_) cuda::destroy_thread_stream();
#endif
}

bool cuda_compiled() {
#if defined(TISSUE_BACKEND_CUDA)
  return true;
#else
  return false;
#endif
}

bool cuda_available() {
#if defined(TISSUE_BACKEND_CUDA)
  return cuda::device_count() > 0;
#else
  return false;
#endif
}

std::string_view to_string(Backend b) {
  return b == Backend::cuda ? "cuda" : "cpu";
}

Backend parse_backend(std::string_view name) {
  if (name == "cpu") return Backend::cpu;
  if (name == "cuda") return Backend::cuda;
  throw std::invalid_argument("unknown backend '" + std::string(name) + "' (expected cpu or cuda)");
}

int cpu_threads() {
  return omp_get_max_threads();
}

std::string device_description() {
#if defined(TISSUE_BACKEND_CUDA)
  if (g_backend == Backend::cuda) return cuda::device_name();
#endif
  return "CPU, " + std::to_string(cpu_threads()) + " OpenMP thread(s)";
}

double peak_bandwidth_gbs() {
#if defined(TISSUE_BACKEND_CUDA)
  if (g_backend == Backend::cuda) return cuda::peak_bandwidth_gbs();
#endif
  return 0.0;
}

namespace {
std::size_t meminfo_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::size_t kb = 0;
  std::string unit;
  while (meminfo >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

std::size_t limited(std::size_t bytes) {
  if (const char* limit = std::getenv("TISSUE_MEMORY_LIMIT")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(limit, &end, 10);
    if (end != limit && *end == '\0') bytes = std::min<std::size_t>(bytes, static_cast<std::size_t>(v));
  }
  return bytes;
}
}  // namespace

std::size_t host_memory_bytes() {
  return limited(meminfo_available_bytes());
}

std::size_t available_memory_bytes() {
#if defined(TISSUE_BACKEND_CUDA)
  if (g_backend == Backend::cuda) return limited(cuda::free_memory_bytes());
#endif
  return host_memory_bytes();
}

void synchronize() {
#if defined(TISSUE_BACKEND_CUDA)
  if (g_backend == Backend::cuda) cuda::synchronize();
#endif
}

}  // namespace tissue::exec
