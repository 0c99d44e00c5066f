#pragma once
/// @file pdl.cuh
/// Programmatic dependent launch (Hopper, sm_90): a kernel launched with launch_pdl may have its blocks
/// scheduled while the previous kernel in the stream is still draining, so a chain of small dependent
/// kernels (a Runge-Kutta stage after another, recorded into a CUDA graph) does not pay the full launch
/// latency at every boundary. Every kernel launched this way calls pdl_prologue() before it touches global
/// memory: it waits until the previous kernel has completed and its writes are visible, then allows the
/// next kernel to be scheduled. Without the launch attribute (older devices, other launches) both
/// instructions do nothing; kernels launched without it (CUB, Thrust) wait for their predecessors as usual.

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "cuda/runtime.hpp"
#include "engine/exec/error.hpp"

namespace tissue::cuda {

/// Waits until the previous kernel in the stream has completed and its writes are visible.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Allows the next kernel in the stream to be scheduled once every block of this one has called it (or
/// exited).
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// First statement of a kernel launched with launch_pdl: pdl_wait(), then pdl_launch_dependents().
__device__ __forceinline__ void pdl_prologue() {
  pdl_wait();
  pdl_launch_dependents();
}

/// kernel<<<grid, block, smem, stream>>>(args...) as a programmatic dependent launch (counted by
/// note_enqueue). @throws BackendError naming `what` if the launch is refused.
template <class... Params, class... Args>
void launch_pdl(const char* what, void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem,
                cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  note_enqueue();
  const cudaError_t err = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  if (err != cudaSuccess) throw BackendError(std::string(what) + ": " + cudaGetErrorString(err));
}

}  // namespace tissue::cuda
