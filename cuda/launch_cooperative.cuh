#pragma once
/// @file launch_cooperative.cuh
/// CUDA implementation of exec::cooperative_for: one cooperative launch of as many blocks as the
/// occupancy calculator says can be resident together, with dynamic shared memory. Included by
/// engine/exec/cooperative_for.hpp (after exec::Grid) only when compiling CUDA in a CUDA build.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "cuda/runtime.hpp"
#include "engine/exec/error.hpp"

namespace tissue::cuda {

template <class F>
__global__ void cooperative_kernel(F f, unsigned* barrier, unsigned* signals) {
  extern __shared__ unsigned char shared_scratch[];
  f(exec::Block(blockIdx.x, shared_scratch), exec::Grid(gridDim.x, barrier, signals));
}

/// cooperative_kernel with launch bounds: ptxas keeps the registers low enough for MinBlocks blocks of
/// MaxThreads threads per multiprocessor.
template <class F, unsigned MaxThreads, unsigned MinBlocks>
__global__ void __launch_bounds__(MaxThreads, MinBlocks)
    cooperative_kernel_bounded(F f, unsigned* barrier, unsigned* signals) {
  extern __shared__ unsigned char shared_scratch[];
  f(exec::Block(blockIdx.x, shared_scratch), exec::Grid(gridDim.x, barrier, signals));
}

/// The kernel that runs F: bounded unless MaxThreads is 0.
template <unsigned MaxThreads, unsigned MinBlocks, class F>
constexpr void (*cooperative_entry())(F, unsigned*, unsigned*) {
  if constexpr (MaxThreads == 0)
    return cooperative_kernel<F>;
  else
    return cooperative_kernel_bounded<F, MaxThreads, MinBlocks>;
}

/// Blocks of the cooperative kernel for F that the device keeps resident together with `threads` threads
/// and `shared_bytes` of dynamic shared memory each (0 if not one fits).
/// @throws BackendError if the device has no cooperative launch or a query fails.
template <unsigned MaxThreads, unsigned MinBlocks, class F>
std::size_t cooperative_capacity(unsigned threads, std::size_t shared_bytes) {
  const auto check = [](cudaError_t err) {
    if (err != cudaSuccess)
      throw BackendError(std::string("cooperative launch of ") + __PRETTY_FUNCTION__ + ": " +
                         cudaGetErrorString(err));
  };
  const auto kernel = cooperative_entry<MaxThreads, MinBlocks, F>();
  int device = 0, cooperative = 0, sms = 0, per_sm = 0;
  check(cudaGetDevice(&device));
  check(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  if (!cooperative)
    throw BackendError("cooperative launch: the device does not support cooperative launches");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (shared_bytes > 48 * 1024)
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(shared_bytes)));
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, static_cast<int>(threads),
                                                      shared_bytes));
  return static_cast<std::size_t>(std::max(per_sm, 0)) * static_cast<std::size_t>(sms);
}

/// Launches f(exec::Block, exec::Grid) on min(max_blocks, resident blocks) blocks of `threads` threads
/// with `shared_bytes` of dynamic shared memory each, cooperatively (asynchronous), after zeroing the
/// blocks' signal words (exec::Grid::signal) on the same stream.
/// @returns the number of blocks launched.
/// @throws BackendError if the device has no cooperative launch, if not one block fits on an SM, or if
/// the launch is refused.
template <unsigned MaxThreads, unsigned MinBlocks, class F>
std::size_t launch_cooperative(std::size_t max_blocks, unsigned threads, std::size_t shared_bytes,
                               const F& f) {
  const std::size_t resident = cooperative_capacity<MaxThreads, MinBlocks, F>(threads, shared_bytes);
  if (resident == 0)
    throw BackendError(std::string("cooperative launch of ") + __PRETTY_FUNCTION__ + ": not one block of " +
                       std::to_string(threads) + " threads and " + std::to_string(shared_bytes) +
                       " bytes of shared memory fits on a multiprocessor");
  const std::size_t blocks = std::min(max_blocks, resident);
  F arg = f;
  unsigned* barrier = grid_barrier_word();
  // zeroed on the launch's stream: every block's word, kSignalStride apart (a word left at a larger
  // epoch by an earlier launch would let a wait_for pass before the neighbour has written)
  unsigned* signals = grid_signal_words(blocks * exec::Grid::kSignalStride);
  void* args[] = {&arg, &barrier, &signals};
  note_enqueue();
  const cudaError_t err = cudaLaunchCooperativeKernel(
      reinterpret_cast<const void*>(cooperative_entry<MaxThreads, MinBlocks, F>()),
      dim3(static_cast<unsigned>(blocks)), dim3(threads), args, shared_bytes,
      static_cast<cudaStream_t>(current_stream()));
  if (err != cudaSuccess)
    throw BackendError(std::string("cooperative launch of ") + __PRETTY_FUNCTION__ + ": " +
                       cudaGetErrorString(err));
  return blocks;
}

}  // namespace tissue::cuda
