#pragma once
/// @file launch.cuh
/// CUDA implementation of exec::parallel_for: one thread per index, 256 threads per block, launched as a
/// programmatic dependent launch (cuda/pdl.cuh).
/// Included by engine/exec/parallel_for.hpp only when compiling CUDA in a CUDA build.

#include <cstddef>

#include "cuda/pdl.cuh"
#include "cuda/runtime.hpp"

namespace tissue::cuda {

inline constexpr unsigned kBlockSize = 256;

template <class F>
__global__ void __launch_bounds__(kBlockSize) for_kernel(std::size_t n, F f) {
  pdl_prologue();
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) f(i);
}

/// Launches f(i) for i in [0, n) on the engine's stream (cuda::current_stream()); checks the launch (not the
/// execution).
template <class F>
void launch_for(std::size_t n, const F& f) {
  const std::size_t blocks = (n + kBlockSize - 1) / kBlockSize;
  launch_pdl(__PRETTY_FUNCTION__, for_kernel<F>, dim3(static_cast<unsigned>(blocks)), dim3(kBlockSize), 0,
             static_cast<cudaStream_t>(current_stream()), n, f);
}

}  // namespace tissue::cuda
