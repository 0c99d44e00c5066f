#pragma once
/// @file grid_rd_common.cuh
/// Helpers shared by the tuned grid reaction-diffusion kernels (grid_rd_tuned.cu, grid_rd_stream.cu,
/// grid_rd_bulk.cu): the (precision, reaction) pairs they are compiled for, the z chunks a 3D march covers,
/// and the dynamic shared-memory opt-in.

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include <type_traits>

#include "engine/exec/error.hpp"
#include "engine/reactions/reactions.hpp"

/// M(Real, Reaction) for every precision and reaction model the tuned grid-RD kernels are compiled for
/// (their explicit instantiations); a new reaction model is added here once.
#define TISSUE_GRID_RD_REACTIONS(M)                 \
  M(float, ::tissue::reactions::GrayScott<float>)   \
  M(double, ::tissue::reactions::GrayScott<double>) \
  M(float, ::tissue::reactions::Polynomial<float>)  \
  M(double, ::tissue::reactions::Polynomial<double>)

namespace tissue::grid_rd {

/// Rows (planes) [begin, begin + count) of chunk `chunk` of `size` rows in an extent of `extent`, marched
/// from `first` in direction `step` (+1 or -1). Even chunks march up, odd chunks down, so that two
/// neighbouring chunks read the halo plane they share at about the same time (from L2).
struct Chunk {
  int first, step, count;
};
__device__ __forceinline__ Chunk chunk_of(int chunk, int size, int extent) {
  const int begin = chunk * size, count = min(size, extent - begin);
  const bool up = (chunk & 1) == 0;
  return Chunk{up ? begin : begin + count - 1, up ? 1 : -1, count};
}

/// Launch shapes other than the default are compiled for float Gray-Scott only (the benchmark's sweep and
/// the CUDA tests time and check them); every other combination runs the default shape.
template <class Reaction>
constexpr bool kSweepShapes = std::is_same_v<Reaction, reactions::GrayScott<float>>;

/// Raises `Kernel`'s dynamic shared-memory limit to `bytes` (needed above 48 KiB), once per kernel.
/// @throws BackendError if the device refuses.
template <auto Kernel>
void allow_dynamic_smem(std::size_t bytes) {
  static bool done = false;
  if (done) return;
  const cudaError_t err =
      cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
  if (err != cudaSuccess) throw BackendError(std::string("cudaFuncSetAttribute: ") + cudaGetErrorString(err));
  done = true;
}

}  // namespace tissue::grid_rd
