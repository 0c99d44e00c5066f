#pragma once
/// @file host_for.hpp
/// exec::host_for(n, f): f(i) for i in [0, n) on the host's threads (OpenMP), whatever the active backend.
/// For host-side passes over host mirrors (hooks, compaction, output copies); kernels use parallel_for.

#include <cstddef>
#include <cstdint>

namespace tissue::exec {

/// Loops shorter than this run on the calling thread: an OpenMP fork/join costs microseconds, more
/// than such loops take, and idle-spinning teams of several small runs sharing cores slow each other
/// down by orders of magnitude.
inline constexpr std::size_t kMinParallelIterations = 2048;

/// Runs f(i) for i in [0, n) on the host with OpenMP (static schedule), whatever the active backend.
/// Iterations must be independent (each writes only its own outputs).
template <class F>
void host_for(std::size_t n, const F& f) {
  const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static) if (n >= kMinParallelIterations)
  for (std::int64_t i = 0; i < count; ++i) f(static_cast<std::size_t>(i));
}

}  // namespace tissue::exec
