#pragma once
/// @file runtime_kernel.hpp
/// Kernels compiled while the program runs: CUDA C++ source generated from a scenario (user-defined
/// gene networks of the gene-network module) is compiled once with NVRTC to a cubin for the
/// current device and loaded as a CUDA library. Plain C++ interface (implemented in runtime_kernel.cu, only
/// built with -DTISSUE_BACKEND=cuda).

#include <cstddef>
#include <string>

namespace tissue::cuda {

/// One `extern "C" __global__` function compiled from source at run time.
/// The kernel must take its thread count as it likes; launch() only chooses the grid (blocks of 256
/// threads covering n). Not copyable; unloads its library on destruction.
class RuntimeKernel {
 public:
  /// Compiles `source` (CUDA C++17, no includes) with NVRTC for the current device (sm_XY from its
  /// properties, IEEE arithmetic: no fast math), loads it and looks up `kernel_name`.
  /// @param program_name  name shown in compiler messages (e.g. "gene_network.cu")
  /// @throws BackendError with NVRTC's log when compilation fails, or the CUDA error when loading does.
  RuntimeKernel(const std::string& source, const std::string& kernel_name, const std::string& program_name);
  ~RuntimeKernel();
  RuntimeKernel(const RuntimeKernel&) = delete;
  RuntimeKernel& operator=(const RuntimeKernel&) = delete;

  /// Launches ceil(n / 256) blocks of 256 threads on the engine's stream (cuda::current_stream(), so the
  /// launch is captured into graphs like every other); `args` as for cudaLaunchKernel (pointers to each
  /// argument, copied during the call). Asynchronous. @throws BackendError when the launch fails.
  void launch(std::size_t n, void** args) const;

 private:
  void* library_ = nullptr;  ///< cudaLibrary_t
  void* kernel_ = nullptr;   ///< cudaKernel_t
};

}  // namespace tissue::cuda
