#pragma once
/// @file grid_rd_common.cuh
/// Device helpers shared by the tuned grid reaction-diffusion kernels (grid_rd_tuned.cu, grid_rd_stream.cu,
/// grid_rd_bulk.cu): the z chunks a 3D march covers, and the dynamic shared-memory opt-in.

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "engine/exec/error.hpp"

namespace tissue::cuda {

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

}  // namespace tissue::cuda
