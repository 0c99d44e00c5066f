#pragma once
/// @file launch.cuh
/// CUDA implementation of exec::parallel_for: one thread per index, 256 threads per block, launched as a
/// programmatic dependent launch (cuda/pdl.cuh); and of exec::group_for: G consecutive threads of a warp
/// per index, their partial values summed by __shfl_xor_sync.
/// Included by engine/exec/parallel_for.hpp only when compiling CUDA in a CUDA build.

#include <cstddef>
#include <cstring>
#include <type_traits>

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

/// `v` of the lane `offset` away in the butterfly (lane ^ offset), word by word. `mask`: the lanes of the
/// calling group, all active.
template <class T>
__device__ __forceinline__ T shuffle_xor(const T& v, int offset, unsigned mask) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 4 == 0, "a value of 4-byte words");
  constexpr int kWords = sizeof(T) / 4;
  unsigned words[kWords];
  std::memcpy(words, &v, sizeof(T));
  for (int k = 0; k < kWords; ++k) words[k] = __shfl_xor_sync(mask, words[k], offset);
  T out;
  std::memcpy(&out, words, sizeof(T));
  return out;
}

template <int G, class F>
__global__ void __launch_bounds__(kBlockSize) group_kernel(std::size_t n, F f) {
  pdl_prologue();
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t i = t / G;
  if (i >= n) return;  // whole groups: n * G threads, groups aligned to G
  const int lane = static_cast<int>(t % G);
  const unsigned mask = G == 32 ? 0xffffffffu
                                : ((1u << (G % 32)) - 1u)
                                      << (static_cast<unsigned>(threadIdx.x % 32) & ~(G - 1u));
  auto v = f.partial(i, lane);
  for (int offset = G / 2; offset > 0; offset /= 2) v = v + shuffle_xor(v, offset, mask);
  if (lane == 0) f.finish(i, v);
}

template <int G, class F>
void launch_group_for(std::size_t n, const F& f) {
  const std::size_t threads = n * G;
  const std::size_t blocks = (threads + kBlockSize - 1) / kBlockSize;
  launch_pdl(__PRETTY_FUNCTION__, group_kernel<G, F>, dim3(static_cast<unsigned>(blocks)), dim3(kBlockSize),
             0, static_cast<cudaStream_t>(current_stream()), n, f);
}

}  // namespace tissue::cuda
