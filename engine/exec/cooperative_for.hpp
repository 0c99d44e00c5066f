#pragma once
/// @file cooperative_for.hpp
/// Persistent cooperative launches, for algorithms whose every step is too small to pay a kernel launch
/// (an adaptive Runge-Kutta loop on a 256^2 grid: five stages and a step decision every ~20 us):
/// exec::cooperative_for(max_blocks, threads, shared_bytes, f) starts as many blocks as can all be
/// resident at once (at most max_blocks) and calls f(block, grid) once in each; grid.sync() is a barrier
/// across all of them, so one launch can run a whole loop of dependent phases.
///
/// The functor has a `TISSUE_HD void operator()(const exec::Block&, const exec::Grid&) const`. It strides
/// over its work items itself (item = block.index(); item < items; item += grid.blocks()), since the
/// number of blocks depends on the device, and every block must reach every grid.sync() (the same number
/// of times: loop conditions must agree across blocks). Within a block it works as under block_for
/// (for_each, sync, shared()). On the CUDA backend the blocks are one cooperative launch
/// (cudaLaunchCooperativeKernel, blocks from the occupancy calculator: all resident together) and
/// grid.sync() is a counting barrier on a device word (Grid::sync); on the CPU backend each OpenMP thread is
/// one block with its own scratch memory and grid.sync() is an OpenMP barrier. Both backends give the same
/// results for the same arithmetic.
///
/// As with parallel_for, a translation unit that launches must be compiled as CUDA in CUDA builds.

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <memory>

#include "engine/exec/backend.hpp"
#include "engine/exec/block_for.hpp"
#include "engine/exec/config.hpp"

namespace tissue::exec {

/// All blocks of a cooperative_for launch: their count and the barrier across them.
class Grid {
 public:
  /// Words between two blocks' signal words (signal()): one 32-byte sector each.
  static constexpr std::size_t kSignalStride = 8;
  /// `barrier`: on the CUDA backend a device word whose low 31 bits are 0 and that no other running
  /// launch uses; `signals`: blocks * kSignalStride words, 0 at the start of the launch (cooperative_for
  /// supplies both); unused on the CPU backend.
  TISSUE_HD explicit Grid(std::size_t blocks, unsigned* barrier = nullptr, unsigned* signals = nullptr)
      : blocks_(blocks), barrier_(barrier), signals_(signals) {}
  /// Blocks in the launch (block indices are 0 .. blocks() - 1).
  TISSUE_HD std::size_t blocks() const { return blocks_; }
  /// Barrier across every thread of every block; global-memory writes before it are visible after it.
  ///
  /// On CUDA the counting barrier of cooperative groups' grid sync: after a block barrier, one thread
  /// per block adds to the word with release semantics (block 0 adds 2^31 - (blocks - 1), the others 1,
  /// so the top bit flips once all have arrived and the low bits return to 0 for the next barrier). It
  /// then polls with relaxed loads and acquires once when it sees the flip, where cooperative groups
  /// acquire on every poll: each acquire invalidates the multiprocessor's L1, so blocks that arrive early
  /// would keep evicting the cached data of the blocks still computing on the same multiprocessor.
  TISSUE_HD void sync() const { wait(arrive()); }

  /// sync() in two halves, so that a block can work between them on what no other block writes before
  /// the barrier (its own data, its shared memory): arrive() releases this block's writes so far and
  /// counts it in; wait(ticket) returns once every block has arrived, with their writes before arrive()
  /// visible. Every thread of every block calls both, in order, with the ticket arrive() returned
  /// (meaningful in thread 0 only). On the CPU backend arrive() does nothing and wait() is the barrier.
  TISSUE_HD unsigned arrive() const {
    unsigned old = 0;
#if TISSUE_ON_DEVICE
    __syncthreads();
    if (threadIdx.x == 0) {
      const unsigned add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1) : 1u;
      asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;" : "=r"(old) : "l"(barrier_), "r"(add) : "memory");
    }
#endif
    return old;
  }
  /// The second half of sync() (arrive()).
  TISSUE_HD void wait(unsigned ticket) const {
#if TISSUE_ON_DEVICE
    if (threadIdx.x == 0) {
      unsigned now = 0;
      do {
        asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(now) : "l"(barrier_) : "memory");
      } while (((ticket ^ now) & 0x80000000u) == 0);
      asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(barrier_) : "memory");
    }
    __syncthreads();
#else
    (void)ticket;
#pragma omp barrier
#endif
  }

  /// Point-to-point ordering, for a phase that depends on a few other blocks only (a tile of a stencil
  /// on the tiles around it), where sync() would wait for the slowest block of the whole grid.
  /// signal(epoch) releases this block's writes so far and publishes `epoch` in its signal word;
  /// wait_for(others, count, epoch) returns once each of the blocks others[0 .. count) (count <= the
  /// block's threads, `others` readable by every thread, e.g. in its scratch) has signalled an epoch >=
  /// `epoch`, with their writes before that signal visible. Epochs of a block must not decrease within a
  /// launch; signal words start at 0 in every launch. Every thread of the block calls both. A block that
  /// overwrites data other blocks read must itself wait for their signal that they are done reading.
  /// On the CPU backend signal() does nothing and wait_for() is the barrier of all blocks, so every block
  /// must call it the same number of times (as it must call sync()).
  TISSUE_HD void signal(unsigned epoch) const {
#if TISSUE_ON_DEVICE
    __syncthreads();
    if (threadIdx.x == 0)
      asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(signals_ + blockIdx.x * kSignalStride), "r"(epoch)
                   : "memory");
#else
    (void)epoch;
#endif
  }
  /// The waiting half of signal(): thread t < count reads the word of block others[t] with an acquire,
  /// which is all it takes when that block has signalled already (the common case when the tiles keep
  /// pace: one round trip to L2 instead of a relaxed read and then the acquire); else it polls with
  /// relaxed loads and acquires once more when the epoch is there (an acquire invalidates the
  /// multiprocessor's L1, so not on every poll). Then the block's threads meet at a block barrier.
  TISSUE_HD void wait_for(const unsigned* others, unsigned count, unsigned epoch) const {
#if TISSUE_ON_DEVICE
    if (threadIdx.x < count) {
      const unsigned* word = signals_ + others[threadIdx.x] * kSignalStride;
      unsigned now = 0;
      asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(word) : "memory");
      if (static_cast<int>(now - epoch) < 0) {
        do {
          asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(now) : "l"(word) : "memory");
        } while (static_cast<int>(now - epoch) < 0);
        asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(word) : "memory");
      }
    }
    __syncthreads();
#else
    (void)others;
    (void)count;
    (void)epoch;
#pragma omp barrier
#endif
  }

 private:
  std::size_t blocks_;
  unsigned* barrier_;
  unsigned* signals_;
};

}  // namespace tissue::exec

#if defined(TISSUE_BACKEND_CUDA) && defined(__CUDACC__)
#include "cuda/launch_cooperative.cuh"
#endif

namespace tissue::exec {

/// How many blocks of `threads` threads and `shared_bytes` of scratch the backend keeps resident together
/// for cooperative_for<MaxThreads, MinBlocksPerSM>(.., f) with a functor of type F: on CUDA from the
/// occupancy calculator (0 if not one fits), on the CPU the OpenMP team size (more blocks are not refused:
/// cooperative_for runs fewer and the work items stride over them).
/// @throws BackendError on the CUDA backend if the device cannot launch cooperatively.
template <unsigned MaxThreads = 0, unsigned MinBlocksPerSM = 1, class F>
std::size_t cooperative_capacity(unsigned threads, std::size_t shared_bytes) {
#if defined(TISSUE_BACKEND_CUDA)
  if (backend() == Backend::cuda) {
#if defined(__CUDACC__)
    return cuda::cooperative_capacity<MaxThreads, MinBlocksPerSM, F>(threads, shared_bytes);
#else
    static_assert(sizeof(F) == 0,
                  "cooperative_capacity in a CUDA build needs this file compiled as CUDA: add it to "
                  "tissue_kernel_sources() in CMake");
#endif
  }
#endif
  (void)threads;
  (void)shared_bytes;
  return static_cast<std::size_t>(omp_get_max_threads());
}

/// Runs f(Block, Grid) once in each of min(max_blocks, what the backend keeps resident) blocks, all
/// resident together (asynchronous on CUDA, like block_for; the CPU backend returns when done). `threads`
/// (1 to 1024, at most MaxThreads if that is not 0) applies to the CUDA backend; `shared_bytes` is each
/// block's scratch memory. MaxThreads > 0 compiles the CUDA kernel with __launch_bounds__(MaxThreads,
/// MinBlocksPerSM), so that ptxas limits the registers to what MinBlocksPerSM such blocks per
/// multiprocessor allow (a persistent loop carries state that ptxas would otherwise keep in registers).
/// @returns the number of blocks that ran (>= 1 for max_blocks >= 1; 0 for max_blocks == 0).
/// @throws BackendError on the CUDA backend if the device cannot launch cooperatively or cannot keep even
/// one such block resident (too many threads or too much shared memory).
template <unsigned MaxThreads = 0, unsigned MinBlocksPerSM = 1, class F>
std::size_t cooperative_for(std::size_t max_blocks, unsigned threads, std::size_t shared_bytes, const F& f) {
  if (max_blocks == 0) return 0;
#if defined(TISSUE_BACKEND_CUDA)
  if (backend() == Backend::cuda) {
#if defined(__CUDACC__)
    return cuda::launch_cooperative<MaxThreads, MinBlocksPerSM>(max_blocks, threads, shared_bytes, f);
#else
    static_assert(sizeof(F) == 0,
                  "cooperative_for in a CUDA build needs this file compiled as CUDA: add it to "
                  "tissue_kernel_sources() in CMake");
#endif
  }
#endif
  (void)threads;
  const std::size_t words = (shared_bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
  const int team =
      static_cast<int>(std::min<std::size_t>(max_blocks, static_cast<std::size_t>(omp_get_max_threads())));
  std::size_t ran = 1;
#pragma omp parallel num_threads(team)
  {
    const std::unique_ptr<std::max_align_t[]> scratch(new std::max_align_t[words > 0 ? words : 1]);
    const auto blocks = static_cast<std::size_t>(omp_get_num_threads());
#pragma omp single nowait
    ran = blocks;
    f(Block(static_cast<std::size_t>(omp_get_thread_num()), scratch.get()), Grid(blocks));
  }
  return ran;
}

}  // namespace tissue::exec
