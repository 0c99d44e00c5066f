#pragma once
/// @file block_for.hpp
/// Block-cooperative launches, for kernels whose threads share scratch memory and synchronise (a mesh
/// patch and its halo advanced several steps in shared memory): exec::block_for(blocks, threads,
/// shared_bytes, f) calls f(block) once per block index in [0, blocks).
///
/// The functor has a `TISSUE_HD void operator()(const exec::Block&) const` and works only through the
/// block: block.for_each(count, g) calls g(l) for l in [0, count) spread over the block's threads, and
/// block.sync() is a barrier between such loops; block.shared() is the block's scratch memory
/// (shared_bytes, aligned for any scalar). Iterations of one for_each must be independent. On the CUDA
/// backend a block is a thread block with `threads` threads and dynamic shared memory; on the CPU backend
/// one OpenMP thread runs a whole block (for_each is a plain loop, sync does nothing) with its own scratch
/// buffer, blocks spread over the threads. Both backends then give the same results.
///
/// As with parallel_for, a translation unit that launches must be compiled as CUDA in CUDA builds.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "engine/exec/backend.hpp"
#include "engine/exec/config.hpp"

namespace tissue::exec {

/// One block of a block_for launch: its index, its scratch memory, and its collective loop and barrier.
class Block {
 public:
  TISSUE_HD Block(std::size_t index, void* shared) : index_(index), shared_(shared) {}
  TISSUE_HD std::size_t index() const { return index_; }
  TISSUE_HD void* shared() const { return shared_; }
  /// Calls f(l) for l in [0, count), spread over the block's threads.
  template <class F>
  TISSUE_HD void for_each(std::size_t count, const F& f) const {
#if TISSUE_ON_DEVICE
    for (std::size_t l = threadIdx.x; l < count; l += blockDim.x) f(l);
#else
    for (std::size_t l = 0; l < count; ++l) f(l);
#endif
  }
  /// Lane groups, for sums over a few irregular terms per item (a sparse row's entries, an aggregate's
  /// members) whose loads should be in flight together rather than one after another: item i in
  /// [0, count) gets G lanes; partial(i, lane, s) adds lane's terms into s[0 .. V) (zeroed), the lanes'
  /// s are summed by a butterfly (offsets G/2, G/4, .. 1), and finish(i, lane, totals) is called by every
  /// lane with the same totals. On CUDA the lanes are G consecutive threads of a warp summed by
  /// __shfl_xor_sync: blockDim.x must be a multiple of 32 and G a power of two <= 32. On the CPU backend
  /// the lanes run one after another and are summed in the butterfly's order, so both backends round
  /// alike. Items of one call must be independent.
  template <int G, int V, class Partial, class Finish>
  TISSUE_HD void for_each_group(std::size_t count, const Partial& partial, const Finish& finish) const {
    static_assert(G >= 1 && G <= 32 && (G & (G - 1)) == 0, "G: a power of two up to the warp size");
#if TISSUE_ON_DEVICE
    const std::size_t per_pass = blockDim.x / G;
    const int lane = static_cast<int>(threadIdx.x % G);
    for (std::size_t first = 0; first < count; first += per_pass) {  // the same passes in every thread
      const std::size_t i = first + threadIdx.x / G;
      double s[V] = {};
      if (i < count) partial(i, lane, s);
      for (int offset = G / 2; offset > 0; offset /= 2)
        for (int v = 0; v < V; ++v) s[v] += __shfl_xor_sync(0xffffffffu, s[v], offset);
      if (i < count) finish(i, lane, s);
    }
#else
    for (std::size_t i = 0; i < count; ++i) {
      double s[G][V] = {};
      for (int lane = 0; lane < G; ++lane) partial(i, lane, s[lane]);
      for (int offset = G / 2; offset > 0; offset /= 2)  // lane l < offset: s_l + s_(l ^ offset)
        for (int l = 0; l < offset; ++l)
          for (int v = 0; v < V; ++v) s[l][v] += s[l + offset][v];
      for (int lane = 0; lane < G; ++lane) finish(i, lane, s[0]);
    }
#endif
  }
  /// Barrier: every for_each before it has finished in every thread of the block.
  TISSUE_HD void sync() const {
#if TISSUE_ON_DEVICE
    __syncthreads();
#endif
  }

 private:
  std::size_t index_;
  void* shared_;
};

/// The largest of values[0, count) (count >= 1), returned to every thread of the block: values is the
/// block's scratch memory (read, not written). Begins with a barrier: values may have just been written.
/// On CUDA (blockDim.x a multiple of 32): each thread's strided maximum, a warp-shuffle maximum, one
/// barrier, and the warps' maxima reduced again by shuffles, so two barriers in all whatever the count.
/// On the CPU backend a plain loop. Exact (a maximum does not round), so both backends agree.
template <class T>
TISSUE_HD T block_max(const Block& block, const T* values, std::size_t count) {
  block.sync();
#if TISSUE_ON_DEVICE
  __shared__ T partial[32];
  const auto larger = [](T a, T b) { return a < b ? b : a; };
  T m = values[0];
  for (std::size_t l = threadIdx.x; l < count; l += blockDim.x) m = larger(m, values[l]);
  for (int offset = 16; offset > 0; offset >>= 1) m = larger(m, __shfl_xor_sync(0xffffffffu, m, offset));
  const unsigned lane = threadIdx.x & 31u, warps = (blockDim.x + 31u) / 32u;
  if (lane == 0) partial[threadIdx.x / 32u] = m;
  block.sync();
  m = partial[lane < warps ? lane : 0u];
  for (int offset = 16; offset > 0; offset >>= 1) m = larger(m, __shfl_xor_sync(0xffffffffu, m, offset));
  return m;
#else
  (void)block;
  T m = values[0];
  for (std::size_t l = 1; l < count; ++l) m = m < values[l] ? values[l] : m;
  return m;
#endif
}

}  // namespace tissue::exec

#if defined(TISSUE_BACKEND_CUDA) && defined(__CUDACC__)
#include "cuda/launch_blocks.cuh"
#endif

namespace tissue::exec {

/// Runs f(Block) for every block in [0, blocks) on the active backend (asynchronous on CUDA, like
/// parallel_for). `threads` (1 to 1024) applies to the CUDA backend; `shared_bytes` is each block's
/// scratch memory (at most the device's shared memory per block on CUDA).
template <class F>
void block_for(std::size_t blocks, unsigned threads, std::size_t shared_bytes, const F& f) {
  if (blocks == 0) return;
#if defined(TISSUE_BACKEND_CUDA)
  if (backend() == Backend::cuda) {
#if defined(__CUDACC__)
    cuda::launch_blocks(blocks, threads, shared_bytes, f);
    return;
#else
    static_assert(sizeof(F) == 0,
                  "block_for in a CUDA build needs this file compiled as CUDA: add it to "
                  "tissue_kernel_sources() in CMake");
#endif
  }
#endif
  (void)threads;
  const std::size_t words = (shared_bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
  if (blocks == 1) {  // no parallel region (whose idle threads would only wait) for a single block
    const std::unique_ptr<std::max_align_t[]> scratch(new std::max_align_t[words > 0 ? words : 1]);
    f(Block(0, scratch.get()));
    return;
  }
  const auto count = static_cast<std::int64_t>(blocks);
#pragma omp parallel
  {
    const std::unique_ptr<std::max_align_t[]> scratch(new std::max_align_t[words > 0 ? words : 1]);
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < count; ++b) f(Block(static_cast<std::size_t>(b), scratch.get()));
  }
}

}  // namespace tissue::exec
