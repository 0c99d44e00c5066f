#pragma once
/// @file parallel_for.hpp
/// The one launch API: exec::parallel_for(n, functor) calls functor(i) for i in [0, n).
///
/// The functor holds spans and parameters by value and has a `TISSUE_HD void operator()(std::size_t)
/// const`. On the CPU backend the loop is an OpenMP `parallel for` (static schedule); on the CUDA
/// backend it is a kernel with one thread per index (cuda/launch.cuh). Iterations must be independent:
/// each index writes only its own outputs (gather, never scatter with atomics), which makes results
/// independent of thread count and scheduling.
///
/// A translation unit that launches kernels must be compiled as CUDA in CUDA builds: list it with
/// tissue_kernel_sources() in CMake. Doing otherwise is a compile-time error, not a silent CPU fallback.

#include <cstddef>
#include <cstdint>

#include "engine/exec/backend.hpp"
#include "engine/exec/config.hpp"
#include "engine/exec/host_for.hpp"

#if defined(TISSUE_BACKEND_CUDA) && defined(__CUDACC__)
#include "cuda/launch.cuh"
#endif

namespace tissue::exec {

namespace detail {
template <class>
inline constexpr bool always_false = false;
}  // namespace detail

/// Runs f(i) for i in [0, n) on the active backend. Asynchronous on the CUDA backend (ordered with
/// every other launch and copy of the engine); use exec::synchronize() before timing on the host.
template <class F>
void parallel_for(std::size_t n, const F& f) {
  if (n == 0) return;
#if defined(TISSUE_BACKEND_CUDA)
  if (backend() == Backend::cuda) {
#if defined(__CUDACC__)
    cuda::launch_for(n, f);
    return;
#else
    static_assert(detail::always_false<F>,
                  "parallel_for in a CUDA build needs this file compiled as CUDA: add it to "
                  "tissue_kernel_sources() in CMake");
#endif
  }
#endif
  host_for(n, f);
}

}  // namespace tissue::exec
