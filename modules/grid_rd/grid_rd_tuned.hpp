#pragma once
/// @file grid_rd_tuned.hpp
/// Tuned CUDA kernels for the grid reaction-diffusion Euler step (GridRdSystem), replacing the
/// generic EulerStep functor where they apply, with bit-identical results (tests/cuda/). Compiled only in
/// CUDA builds (TISSUE_BACKEND=cuda), into the modules library.
///   2D one step (seed9, five): a 128-column window is copied into shared memory asynchronously, each
///       thread marches a column; consecutive launches overlap (StepChain); or (rows_2d > 0) each thread
///       owns a column and `rows_2d` rows and requests every value it reads before computing (neighbours
///       through L1).
///   2D, `steps` > 1 per launch (temporal blocking): a 128-column window (the tile plus a halo of one
///       node per step) is copied into shared memory asynchronously, the steps run there with register
///       windows and fully unrolled loops; windows touching a non-periodic face refresh ghost nodes
///       after every step.
///   3D one step where rows are 16-byte aligned (`bulk`): a block marches a tile along z, its planes
///       landing in shared memory by bulk copies ahead of the one computed (grid_rd_bulk.hpp).
///   3D one step where nx is a multiple of 4 (`streaming`): each thread streams four x nodes along z
///       through a register ring, neighbours in x by warp shuffles (grid_rd_stream.hpp).
///   3D one step (seven): a 64 x 8 x `block_3d` block and its halo are copied into shared memory with
///       cp.async; or (block_3d = 0) each thread owns an (x, y) column and `rows_3d` planes.
/// Measured throughput and the analysis of what limits it: BENCHMARKS.md.
/// Plain C++ interface (no CUDA headers); implemented in grid_rd_tuned.cu.

#include "engine/reactions/reactions.hpp"
#include "modules/grid_rd/grid_rd_bulk.hpp"
#include "modules/grid_rd/grid_rd_kernels.hpp"
#include "modules/grid_rd/grid_rd_stream.hpp"
#include "modules/grid_rd/step_chain.hpp"

namespace tissue::grid_rd {

/// Launch shape of the tuned kernels. The defaults are the fastest measured on an H100 (BENCHMARKS.md);
/// the alternatives exist for float only, for `bench_grid_rd --sweep` (double always uses the defaults).
struct TunedShape {
  /// 3D, where nx * sizeof(Real) is a multiple of 16 bytes: the bulk-copy z-march (grid_rd_bulk.hpp),
  /// unless `bulk` is false (then the streaming, block or column kernel below).
  bool bulk = true;
  BulkShape bulk_shape;
  /// 3D, where nx is a multiple of 4: the streaming kernel (grid_rd_stream.hpp), unless `streaming` is
  /// false (then the block or column kernel below).
  bool streaming = true;
  StreamShape stream;
  int rows_2d = 0;  ///< 2D one step: rows per thread (1, 2 or 4), or 0 for the shared-memory tile
  /// 2D one step, shared-memory tile: window height 8, 16, 32 or 64 (double: 16) of a launch that continues
  /// a chain (StepChain), and of any other launch
  int tile1_rows = 32;
  int tile1_rows_unchained = 16;
  int tile1_threads = 256;  ///< 2D one step, shared-memory tile: threads per block 128 or 256
  int tile_rows = 0;      ///< temporal blocking window height: 32, 48, or 0 (32 for 2 and 4 steps per launch,
                          ///< 48 for 8: the faster measured; double always 48)
  int rows_3d = 2;        ///< planes per thread, 3D: 1, 2 or 4
  bool z_middle = false;  ///< 3D launch order x, z, y (true) or x, y, z
  int block_3d = 4;       ///< 3D: planes of the shared-memory block kernel (4 or 8), 0 for the column kernel
};

/// Advances `in` by `steps` explicit Euler steps of dt into `out` (both species-major device arrays
/// of the grid; `in` is used as scratch). One-step launches of the 2D shared-memory tile kernel and of
/// the 3D bulk-copy march join `chain` when one is given (StepChain). @return false, having done nothing,
/// when no tuned kernel covers the configuration (a stencil/dimension mismatch).
template <class Real, class Reaction>
bool rd_euler_tuned(const RdParams<Real>& p, const Reaction& reaction, Real dt, Real* in, Real* out,
                    int steps, const TunedShape& shape = {}, StepChain* chain = nullptr);

}  // namespace tissue::grid_rd
