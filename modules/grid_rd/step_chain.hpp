#pragma once
/// @file step_chain.hpp
/// Chains of one-step grid reaction-diffusion launches that overlap (grid_rd_tuned.cu, grid_rd_bulk.cu).
/// Plain C++ (no CUDA headers); the device side is step_chain.cuh.

#include <cstddef>
#include <cstdint>

#include "engine/exec/device_buffer.hpp"

namespace tissue::grid_rd {

/// Chain of one-step launches (the 2D shared-memory tile kernel, the 3D bulk-copy march) that overlap: a
/// launch that continues the chain does not wait for the whole previous launch (programmatic dependent
/// launch's grid-wide wait). Each of its blocks waits instead for the tiles its window reads, through
/// completion counters: one per tile row in 2D, one per (y tile, z chunk) in 3D. Every block of a launch
/// adds 1 to its counter when its tile is written (release); a block of the next launch waits until the
/// counters of its own tile and the tiles beside it reach that launch's count (acquire). Launches take
/// their rows (2D) or chunks (3D) rotated by one more each time, so that the first blocks of a launch read
/// tiles that the previous launch finished first, while its last blocks run. Blocks are scheduled only
/// after every block of the previous launch has started, so a waiting block never holds a slot that a
/// block it waits for needs.
///
/// The caller owns the struct and the counters (device memory, zero when first handed over; one word per
/// grid row in 2D, rows x planes in 3D, suffice) and keeps both across calls; the launches update the
/// rest. A launch continues the chain only when the previous operation on the engine's stream
/// (cuda::enqueue_serial) was the chain's last launch, reading the buffer that launch wrote and writing the
/// one it read. Every other launch waits for the whole grid, as without a chain, and takes the tiling
/// that is fastest so (TunedShape::tile1_rows_unchained, BulkShape::unchained_planes); the launch
/// after it starts counting. Not used while a graph is being captured.
struct StepChain {
  unsigned* counters = nullptr;   ///< device words, `capacity` of them
  std::size_t capacity = 0;       ///< counters available
  std::uint64_t launches = 0;     ///< launches counted in `counters` since they were zero
  unsigned used = 0;              ///< counters those launches used
  unsigned per_launch = 0;        ///< blocks of one launch that count on one counter
  bool counted = false;           ///< whether the last launch counted on the counters
  std::uint64_t serial = 0;       ///< cuda::enqueue_serial() right after the last launch
  const void* last_in = nullptr;  ///< the buffers the last launch read and wrote
  const void* last_out = nullptr;
};

/// A StepChain with its counters, zeroed on the active backend's device: one word per node row (y, z) of
/// an nx x ny x nz grid, more than any tiling needs. Kept by the caller across calls (moving it keeps
/// `chain` valid: the device words stay where they are).
struct StepChainStorage {
  StepChainStorage(int ny, int nz) : counters(static_cast<std::size_t>(ny) * static_cast<std::size_t>(nz)) {
    counters.zero();
    chain.counters = counters.data();
    chain.capacity = counters.size();
  }
  DeviceBuffer<unsigned> counters;
  StepChain chain;
};

}  // namespace tissue::grid_rd
