#pragma once
/// @file backend.hpp
/// Run-time selection of the compute backend.
///
/// A CPU build (TISSUE_BACKEND=cpu) knows only Backend::cpu. A CUDA build knows both: the same
/// functors run as CUDA kernels (Backend::cuda) or as OpenMP loops on the host (Backend::cpu), so one
/// executable can compare the two. The backend is process-wide and must be chosen before any
/// DeviceBuffer is allocated; buffers remember the backend they were allocated on.

#include <cstddef>
#include <string>
#include <string_view>

namespace tissue::exec {

enum class Backend { cpu, cuda };

/// The backend kernels and new buffers use now (Backend::cpu until set_backend is called).
Backend backend();

/// Selects the backend for the rest of the process; on CUDA, device `device` (an ordinal).
/// @throws std::runtime_error if Backend::cuda is asked for and the build has no CUDA backend or no
///         CUDA device is usable (or the ordinal is out of range).
void set_backend(Backend b, int device = 0);

/// Number of CUDA devices present (0 in a CPU build or without a driver).
int cuda_device_count();

/// While it lives, the device work of the calling thread goes to a CUDA stream of its own: launches,
/// copies, allocations (stream-ordered), graphs, and synchronize() waits for that stream only. Several
/// threads, each with one and each running its own simulation, then share one device concurrently
/// (engine/run/ensemble.hpp); results are those of the same simulation run alone. Nothing on the CPU
/// backend. Construct after set_backend(), destroy after every buffer the thread allocated is freed.
/// @throws BackendError when the stream cannot be created.
class ThreadStream {
 public:
  ThreadStream();
  ~ThreadStream();
  ThreadStream(const ThreadStream&) = delete;
  ThreadStream& operator=(const ThreadStream&) = delete;

 private:
  bool active_ = false;
};

/// True when the CUDA backend was compiled in (-DTISSUE_BACKEND=cuda).
bool cuda_compiled();

/// True when the CUDA backend is compiled in and a device is present and usable.
bool cuda_available();

/// "cpu" or "cuda".
std::string_view to_string(Backend b);

/// Parses "cpu" or "cuda". @throws std::invalid_argument otherwise.
Backend parse_backend(std::string_view name);

/// One line describing the hardware of the active backend, e.g. "NVIDIA H100 80GB HBM3 (sm_90,
/// 132 SMs)" or "CPU, 16 OpenMP threads".
std::string device_description();

/// Theoretical memory bandwidth of the active backend's device [GB/s]; 0 when unknown (CPU backend).
double peak_bandwidth_gbs();

/// Memory the active backend can still allocate [bytes]: free device memory on the CUDA backend,
/// MemAvailable from /proc/meminfo on the CPU backend (total physical memory if unreadable); at most the
/// environment variable TISSUE_MEMORY_LIMIT [bytes] when set (a share of a node, the fuzz tests).
std::size_t available_memory_bytes();

/// Host memory that can still be allocated [bytes]: MemAvailable from /proc/meminfo (total physical memory
/// if unreadable), at most TISSUE_MEMORY_LIMIT when set. The same as available_memory_bytes() on the CPU
/// backend.
std::size_t host_memory_bytes();

/// The memory an entity set or module will hold at its peak [bytes], estimated from the sizes a scenario
/// asks for before anything is allocated: `device` in DeviceBuffers (host memory on the CPU backend),
/// `host` in host arrays (mirrors of device data, output and checkpoint staging).
struct MemoryEstimate {
  double host = 0.0;
  double device = 0.0;
  MemoryEstimate& operator+=(const MemoryEstimate& o) {
    host += o.host;
    device += o.device;
    return *this;
  }
};

/// Waits until all work queued on the active backend has finished (no-op on the CPU backend).
void synchronize();

/// Number of OpenMP threads the CPU backend uses.
int cpu_threads();

}  // namespace tissue::exec
