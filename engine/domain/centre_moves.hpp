#pragma once
/// @file centre_moves.hpp
/// How far points (cell centres) moved in the x-y plane since a halo rebuild, on the device: the rebuild
/// test of the decomposed systems that keep their ghosts between rebuilds (docs/multi_gpu.md).

#include <cstddef>

#include "engine/exec/device_buffer.hpp"
#include "engine/exec/span.hpp"

namespace tissue::domain {

/// The positions at the last reset() and the largest x-y move since (one max-reduction on the backend).
class CentreMoves {
 public:
  /// Records the first n positions (x, y on the active backend) [length].
  void reset(Span<const float> x, Span<const float> y, std::size_t n);
  /// The largest x-y distance of the first n positions from those recorded [length] (0 for n = 0; infinity
  /// where a distance is NaN). n must not exceed the count recorded.
  double largest(Span<const float> x, Span<const float> y, std::size_t n);

 private:
  DeviceBuffer<float> x0_, y0_, moved_;
};

}  // namespace tissue::domain
