#pragma once
/// @file grid_rd_tuned.hpp
/// Tuned CUDA kernels for the grid reaction-diffusion Euler step (modules/grid_rd), replacing the
/// generic EulerStep functor where they apply, with bit-identical results (tests/cuda/).
///   2D one step (seed9, five): each warp marches a strip of rows of 32 columns with a register ring of
///       rows; x-neighbours by warp shuffles; the next burst of rows is requested before the current one
///       is computed.
///   2D, `steps` > 1 per launch (temporal blocking): a tile plus a halo of one node per step is loaded
///       into shared memory once, the steps run there (each thread a run of rows with a register
///       window), ghost nodes of non-periodic faces are refreshed after every step.
///   3D one step (seven): a 32 x 8 tile of columns marches along z, planes in registers, y-neighbours
///       through a double-buffered shared row.
/// Measured throughput and the analysis of what limits it: BENCHMARKS.md.
/// Plain C++ interface (no CUDA headers); implemented in grid_rd_tuned.cu.

#include "modules/grid_rd/grid_rd_kernels.hpp"
#include "modules/reactions/reactions.hpp"

namespace tissue::cuda {

/// Advances `in` by `steps` explicit Euler steps of dt into `out` (both species-major device arrays
/// of the grid; `in` is used as scratch). @return false, having done nothing, when no tuned kernel
/// covers the configuration (grid smaller than a tile, a stencil/dimension mismatch).
template <class Real, class Reaction>
bool rd_euler_tuned(const grid_rd::RdParams<Real>& p, const Reaction& reaction, Real dt, Real* in, Real* out,
                    int steps);

}  // namespace tissue::cuda
