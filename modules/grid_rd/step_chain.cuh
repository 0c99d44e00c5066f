#pragma once
/// @file step_chain.cuh
/// Device and launch side of StepChain (step_chain.hpp): what a block of a chained launch takes,
/// the waits and the release on the completion counters, and the host bookkeeping of a launch.

#include <cuda/atomic>

#include <cstdint>

#include "cuda/runtime.hpp"
#include "modules/grid_rd/step_chain.hpp"

namespace tissue::grid_rd {

/// What a block of a chained launch takes of a StepChain (counters == nullptr: no chain).
struct ChainArgs {
  unsigned* counters = nullptr;  ///< per counted tile group: blocks finished since the counters were zero
  unsigned target = 0;           ///< count the groups read must have reached (launches before x per_launch)
  int shift = 0;                 ///< rotation of the launch's rows (2D) or chunks (3D)
  bool wait_grid = true;         ///< wait for the whole previous kernel (the launch starts a chain)
};

/// Index i of a periodic range [0, n), for i in [-n, 2n).
__device__ __forceinline__ int periodic_index(int i, int n) {
  return i < 0 ? i + n : (i >= n ? i - n : i);
}

/// Waits until `counter` reaches `target` (modulo 2^32). Relaxed loads: follow with acquire_counted().
__device__ __forceinline__ void wait_for_count(unsigned& counter, unsigned target) {
  ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_device> c(counter);
  while (static_cast<int>(c.load(::cuda::memory_order_relaxed) - target) < 0) __nanosleep(64);
}

/// After the waits: the writes that the counters count are visible to this thread's later loads.
__device__ __forceinline__ void acquire_counted() {
  ::cuda::atomic_thread_fence(::cuda::memory_order_acquire, ::cuda::thread_scope_device);
}

/// Counts a finished block (release: the block's writes, ordered before by a barrier, come first).
__device__ __forceinline__ void release_count(unsigned& counter) {
  ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_device>(counter).fetch_add(1u,
                                                                               ::cuda::memory_order_release);
}

/// Whether a launch from `in` to `out` would follow the chain's last launch with nothing between them
/// (the launchers pick their chained tiling then, StepChain). False without a chain or during a capture.
inline bool continues_chain(const StepChain* chain, const void* in, const void* out) {
  return chain != nullptr && chain->counters != nullptr && !cuda::capturing() &&
         chain->serial == cuda::enqueue_serial() && chain->last_out == in && chain->last_in == out;
}

/// The chain arguments of the next launch, which counts on `used` counters, `per_launch` blocks on each,
/// and rotates by one in `rotation`; resets the counters when they count another tiling (the launch then
/// waits for the whole grid). No chain (ChainArgs{}) for chain == nullptr, too few counters, or during a
/// graph capture.
inline ChainArgs join_chain(StepChain* chain, unsigned used, unsigned per_launch, unsigned rotation,
                            const void* in, const void* out) {
  if (chain == nullptr || chain->counters == nullptr || used > chain->capacity || cuda::capturing())
    return {};
  if (chain->used != used || chain->per_launch != per_launch) {
    cuda::zero(chain->counters, chain->capacity * sizeof(unsigned));
    *chain = StepChain{chain->counters, chain->capacity, 0, used, per_launch};
  }
  ChainArgs args;
  args.counters = chain->counters;
  args.target = static_cast<unsigned>(chain->launches * per_launch);  // modulo 2^32, as the counters
  args.shift = static_cast<int>(chain->launches % rotation);
  args.wait_grid = !(chain->counted && continues_chain(chain, in, out));
  return args;
}

/// Records a launch from `in` to `out` in the chain: counted (args from join_chain) or not (ChainArgs{}:
/// the next launch may then start counting, after waiting for the whole grid).
inline void count_launch(StepChain* chain, const ChainArgs& args, const void* in, const void* out) {
  if (chain == nullptr || chain->counters == nullptr || cuda::capturing()) return;
  chain->counted = args.counters != nullptr;
  if (chain->counted) ++chain->launches;
  chain->serial = cuda::enqueue_serial();
  chain->last_in = in;
  chain->last_out = out;
}

}  // namespace tissue::grid_rd
