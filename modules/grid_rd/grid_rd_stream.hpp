#pragma once
/// @file grid_rd_stream.hpp
/// Streaming one-step kernel of the 3D grid reaction-diffusion Euler step (grid_rd_stream.cu): each
/// thread streams four x nodes along z through a register ring. Called by rd_euler_tuned where nx is a
/// multiple of 4 and the arrays are 16-byte aligned. Plain C++ interface (no CUDA headers).

#include "engine/reactions/reactions.hpp"
#include "modules/grid_rd/grid_rd_kernels.hpp"

namespace tissue::grid_rd {

/// Launch shape of the streaming kernel. The defaults are the fastest measured on an H100
/// (BENCHMARKS.md); the alternatives are compiled for float Gray-Scott only (bench_grid_rd --sweep).
struct StreamShape {
  int warps_3d = 4;    ///< warps per block, stacked in y (4, 8 or 16)
  int planes_3d = 32;  ///< planes per chunk (one warp marches a chunk): 32 or 64
  int depth_3d = 1;    ///< planes requested ahead of the plane computed: 1, 2 or 3
};

/// Every shape rd_stream_3d runs for float Gray-Scott (the default first; rd_stream_3d compiles each of
/// them): what `bench_grid_rd --sweep` times and the CUDA tests compare with the generic step.
inline constexpr StreamShape kStreamShapes[] = {{4, 32, 1}, {4, 32, 2},  {4, 32, 3}, {8, 32, 1},
                                                {8, 32, 2}, {16, 32, 1}, {4, 64, 2}};

/// One explicit Euler step of the 3D grid (stencil seven) from `in` to `out` (species-major device
/// arrays, 16-byte aligned, nx a multiple of 4). @throws std::invalid_argument for a shape that is not
/// compiled; BackendError if the launch fails.
template <class Real, class Reaction>
void rd_stream_3d(const StreamShape& shape, const RdParams<Real>& p, const Reaction& reaction, Real dt,
                  const Real* in, Real* out);

}  // namespace tissue::grid_rd
