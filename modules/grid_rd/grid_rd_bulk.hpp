#pragma once
/// @file grid_rd_bulk.hpp
/// Bulk-copy z-march of the 3D grid reaction-diffusion Euler step (grid_rd_bulk.cu): a block marches an
/// (x, y) tile along z, each plane of the tile and its halo landing in shared memory by Hopper bulk copies
/// (cp.async.bulk, completion on an mbarrier) issued by a producer warp ahead of the plane computed.
/// Called by rd_euler_tuned where the rows are 16-byte aligned (nx * sizeof(Real) a multiple of 16).
/// Plain C++ interface (no CUDA headers).

#include "engine/reactions/reactions.hpp"
#include "modules/grid_rd/grid_rd_kernels.hpp"
#include "modules/grid_rd/step_chain.hpp"

namespace tissue::grid_rd {

/// Launch shape of the bulk-copy kernel. The default is the fastest measured on an H100 (BENCHMARKS.md);
/// the alternatives are compiled for float Gray-Scott only (bench_grid_rd --sweep).
struct BulkShape {
  int tile_bytes = 2048;  ///< tile width in x: 512, 1024 or 2048 bytes of a row
  int rows = 8;           ///< tile rows (y) per block
  int buffers = 4;        ///< plane buffers in shared memory: the three the stencil reads and the rest ahead
  /// planes per chunk (a block marches a chunk) of a launch that continues a chain (StepChain), and of any
  /// other launch; fewer where the grid would not give every block slot of the device a chunk (grids of
  /// 128^3 and below); 0 for the fewest chunks that do. The chain's overlap hides the ends of shorter
  /// chunks: 32 planes are fastest chained, 64 without.
  int planes = 32;
  int unchained_planes = 64;
};

/// Every shape rd_bulk_3d runs for float Gray-Scott (the default first; rd_bulk_3d compiles each of them):
/// what `bench_grid_rd --sweep` times and the CUDA tests compare with the generic step.
inline constexpr BulkShape kBulkShapes[] = {
    {2048, 8, 4, 32, 64},    {2048, 8, 4, 32, 32},  {2048, 8, 4, 64, 64},  {2048, 8, 4, 128, 128},
    {2048, 8, 4, 0, 0},      {2048, 8, 5, 64, 64},  {2048, 10, 4, 64, 64}, {1024, 16, 4, 64, 64},
    {1024, 16, 4, 128, 128}, {1024, 16, 5, 64, 64}, {512, 16, 4, 24, 24},  {512, 8, 8, 24, 24}};

/// One explicit Euler step of the 3D grid (stencil seven) from `in` to `out` (species-major device
/// arrays of two species, 16-byte aligned, nx * sizeof(Real) a multiple of 16), joining `chain` when one
/// is given (StepChain: a counter per (y tile, z chunk)). @throws std::invalid_argument for a shape that
/// is not compiled; BackendError if the launch fails.
template <class Real, class Reaction>
void rd_bulk_3d(const BulkShape& shape, const RdParams<Real>& p, const Reaction& reaction, Real dt,
                const Real* in, Real* out, StepChain* chain = nullptr);

}  // namespace tissue::grid_rd
