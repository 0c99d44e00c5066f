#pragma once
/// @file group_for.hpp
/// exec::group_for<G>(n, f): a sum over many irregular terms per item (an element's neighbours, a cell's
/// neighbour cells) split over G lanes, so that a small problem fills the GPU and each lane's chain of
/// dependent loads is G times shorter. Item i in [0, n) gets G lanes; lane l computes f.partial(i, l), the
/// lanes' values are summed by a butterfly (lane l adds lane l ^ h for h = G/2, G/4, .., 1: for G = 4,
/// (v0 + v2) + (v1 + v3)), and f.finish(i, total) runs once per item. With G = 1 it is parallel_for with
/// finish(i, partial(i, 0)).
///
/// On CUDA the lanes are G consecutive threads of a warp summed by __shfl_xor_sync (cuda/launch.cuh); on the
/// CPU backend the lanes run one after another and are summed in the same butterfly, so both backends add
/// in the same order for the same G (lanes_for() gives the CPU G = 1, where lanes only cost). The functor
/// provides
///   using Value = ...;  // trivially copyable, a whole number of 4-byte words, with Value + Value
///   TISSUE_HD Value partial(std::size_t i, int lane) const;
///   TISSUE_HD void finish(std::size_t i, const Value& total) const;
/// Items must be independent. As with parallel_for, a launching translation unit is compiled as CUDA in
/// CUDA builds.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "engine/exec/backend.hpp"
#include "engine/exec/config.hpp"
#include "engine/exec/parallel_for.hpp"

namespace tissue::exec {

/// The lanes' values summed in group_for's butterfly order, as lane 0 of a warp ends up with them.
template <int G, class Value>
TISSUE_HD Value butterfly_sum(Value (&v)[G]) {
  for (int h = G / 2; h > 0; h /= 2) {
    Value next[G];
    for (int l = 0; l < G; ++l) next[l] = v[l] + v[l ^ h];
    for (int l = 0; l < G; ++l) v[l] = next[l];
  }
  return v[0];
}

template <int G, class F>
void group_for(std::size_t n, const F& f) {
  static_assert(G >= 1 && G <= 32 && (G & (G - 1)) == 0, "G: a power of two up to the warp size");
  if (n == 0) return;
#if defined(TISSUE_BACKEND_CUDA)
  if (backend() == Backend::cuda) {
#if defined(__CUDACC__)
    cuda::launch_group_for<G>(n, f);
    return;
#else
    static_assert(detail::always_false<F>,
                  "group_for in a CUDA build needs this file compiled as CUDA: add it to "
                  "tissue_kernel_sources() in CMake");
#endif
  }
#endif
  host_for(n, [&](std::size_t i) {
    typename F::Value v[G];
    for (int lane = 0; lane < G; ++lane) v[lane] = f.partial(i, lane);
    f.finish(i, butterfly_sum<G>(v));
  });
}

/// group_for with G chosen at run time: 1, 2, 4 or 8 (the kernels for each are compiled).
/// @throws std::invalid_argument for another G.
template <class F>
void group_for(int lanes, std::size_t n, const F& f) {
  switch (lanes) {
    case 1:
      group_for<1>(n, f);
      return;
    case 2:
      group_for<2>(n, f);
      return;
    case 4:
      group_for<4>(n, f);
      return;
    case 8:
      group_for<8>(n, f);
      return;
    default:
      throw std::invalid_argument("group_for: lanes must be 1, 2, 4 or 8, got " + std::to_string(lanes));
  }
}

/// Lanes per item for sums over a few dozen irregular terms per item (neighbour searches) on n items, on
/// the active backend. CUDA: 8 below 2^15 items, 4 below 2^16, 2 below 2^17, 1 from there (gpu_lanes_for).
/// A small problem fills the GPU only with several threads per item; a large one does with one, which has
/// the least overhead (H100, SEM forces: 8 lanes best at 11 500 elements, 1 and 2 equal at 98 000, 1 best
/// at 10^6; BENCHMARKS.md). A function of n alone, so every GPU sums in the same order. CPU backend: 1
/// (the lanes run one after another there: 8 lanes made the epidermis' force stages 1.6 times slower), so
/// the backends add in different orders, which differ in float rounding.
inline int gpu_lanes_for(std::size_t n) {
  if (n < (std::size_t{1} << 15)) return 8;
  if (n < (std::size_t{1} << 16)) return 4;
  if (n < (std::size_t{1} << 17)) return 2;
  return 1;
}
inline int lanes_for(std::size_t n) {
  return backend() == Backend::cuda ? gpu_lanes_for(n) : 1;
}

}  // namespace tissue::exec
