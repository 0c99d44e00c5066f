#pragma once
/// @file solver_blocks.hpp
/// What the block kernels of the iterative solvers (conjugate_gradient.hpp, aggregation_multigrid.hpp)
/// share: the blocks of kSolverBlockUnknowns consecutive unknowns, the threads that an operator's items
/// and lanes need for one, the block's fixed-order sums, and where per-block partial sums of a dot
/// product go. A block of kSolverBlockUnknowns unknowns holds kSolverBlockUnknowns / U items of U
/// unknowns (an operator's kItemUnknowns), each computed by G lanes (its kLanes).

#include <cstddef>
#include <cstdint>

#include "engine/exec/block_for.hpp"
#include "engine/exec/span.hpp"
#include "engine/linalg/sparse_matrix.hpp"

namespace tissue::linalg {

/// Threads per solver block for an operator: kSolverBlockUnknowns / kItemUnknowns items of kLanes
/// lanes, at least one per unknown (whole warps, at most 1024; checked at compile time).
template <class Operator>
constexpr unsigned solver_block_threads() {
  constexpr std::size_t threads = kSolverBlockUnknowns / Operator::kItemUnknowns * Operator::kLanes;
  static_assert(kSolverBlockUnknowns % Operator::kItemUnknowns == 0 && threads % 32 == 0 && threads <= 1024,
                "items and lanes must fill whole warps of one block");
  return static_cast<unsigned>(threads < kSolverBlockUnknowns ? kSolverBlockUnknowns : threads);
}

/// Where a kernel writes the partial sums of a dot product, one per solver block b: out[stride b +
/// offset] (an empty out: nowhere).
struct BlockPartials {
  Span<double> out;
  std::size_t stride = 1, offset = 0;
};

/// Sums the K rows of kSolverBlockUnknowns slots in shared (written by the block before; one barrier
/// first) by a tree in a fixed order, so every backend and block size rounds alike; every thread gets
/// the K totals.
template <int K>
TISSUE_HD void block_slot_sums(const exec::Block& block, double* shared, double* totals) {
  constexpr std::size_t n = kSolverBlockUnknowns;
  block.sync();
  for (std::size_t half = n / 2; half > 0; half /= 2) {
    block.for_each(half, [&](std::size_t l) {
      for (int k = 0; k < K; ++k) shared[k * n + l] += shared[k * n + l + half];
    });
    block.sync();
  }
  for (int k = 0; k < K; ++k) totals[k] = shared[k * n];
  block.sync();  // the shared values are read before anyone reuses them
}

/// Calls f(u) for the unknowns u in [0, U) of an item that lane (of G) writes: u = lane, lane + G, ...
/// (on the CPU backend, where for_each_group calls every lane, each u once as well).
template <int G, int U, class F>
TISSUE_HD void for_lane_unknowns(int lane, const F& f) {
  for (int u = 0; u < U; ++u)
    if (u % G == lane) f(u);
}

}  // namespace tissue::linalg
