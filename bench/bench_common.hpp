#pragma once
// Shared by the benchmark executables: wall-clock timing and the device-to-device copy bandwidth that
// every benchmark reports its throughput against.

#include <chrono>
#include <cstddef>

#include "engine/exec/backend.hpp"
#include "engine/exec/device_buffer.hpp"

namespace tissue::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// Copy bandwidth [bytes/s]: (read + written) bytes per second of a large copy on the active backend.
inline double copy_bandwidth(std::size_t bytes) {
  DeviceBuffer<unsigned char> a(bytes), b(bytes);
  a.zero();
  b.copy_from(a, bytes);  // warm-up
  const int repeats = exec::backend() == exec::Backend::cuda ? 20 : 3;
  exec::synchronize();
  const auto t0 = Clock::now();
  for (int r = 0; r < repeats; ++r) b.copy_from(a, bytes);
  exec::synchronize();
  return 2.0 * static_cast<double>(bytes) * repeats / seconds_since(t0);
}

}  // namespace tissue::bench
