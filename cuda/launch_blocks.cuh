#pragma once
/// @file launch_blocks.cuh
/// CUDA implementation of exec::block_for: one thread block per block index, with dynamic shared memory.
/// Included by engine/exec/block_for.hpp (after exec::Block) only when compiling CUDA in a CUDA build.

#include <cstddef>

#include "cuda/pdl.cuh"
#include "cuda/runtime.hpp"

namespace tissue::cuda {

template <class F>
__global__ void block_kernel(F f) {
  extern __shared__ unsigned char shared_scratch[];
  pdl_prologue();
  f(exec::Block(blockIdx.x, shared_scratch));
}

/// Launches f(exec::Block) for every block in [0, blocks) with `threads` threads and `shared_bytes` of
/// dynamic shared memory each (above the default 48 KB the kernel's limit is raised first), as a
/// programmatic dependent launch (cuda/pdl.cuh); checks the launch (not the execution).
template <class F>
void launch_blocks(std::size_t blocks, unsigned threads, std::size_t shared_bytes, const F& f) {
  static std::size_t raised = 48 * 1024;  // per functor type
  if (shared_bytes > raised) {
    cudaFuncSetAttribute(block_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(shared_bytes));
    raised = shared_bytes;
  }
  launch_pdl(__PRETTY_FUNCTION__, block_kernel<F>, dim3(static_cast<unsigned>(blocks)), dim3(threads),
             shared_bytes, static_cast<cudaStream_t>(current_stream()), f);
}

}  // namespace tissue::cuda
