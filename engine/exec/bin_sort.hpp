#pragma once
/// @file bin_sort.hpp
/// Sorting points into bins (the cell list's build): a stable counting sort by bin.

#include <cstddef>
#include <cstdint>

#include "engine/exec/device_buffer.hpp"
#include "engine/exec/span.hpp"

namespace tissue::exec {

/// Stable counting sort of keys (bin numbers) into bins, keeping its scratch between calls so that a
/// warm sort allocates nothing. The result equals a stable sort of (key, index) pairs followed by
/// bin_starts(): indices ascending within each bin. On the CUDA backend: histogram and scatter with
/// atomics, a CUB exclusive sum in place and a per-entry rank within its bin (O(n + bins), no sort
/// passes); on the CPU: the serial counting sort. Scratch: two ints per entry, none per bin.
class BinSorter {
 public:
  /// @param keys   n bin numbers, each < bins
  /// @param bins   number of bins
  /// @param order  out, n entries: order[s] = the index of the s-th entry in (key, index) order
  /// @param starts out, bins + 1 entries: starts[b] = the number of keys below b (bin b is
  ///               order[starts[b] .. starts[b + 1]))
  /// @throws std::invalid_argument when order or starts is too short; BackendError on a CUDA failure.
  void sort(Span<const std::uint32_t> keys, std::size_t bins, Span<std::int32_t> order,
            Span<std::int32_t> starts);

 private:
  DeviceBuffer<std::int32_t> arrival_, scattered_;  ///< n each: no scratch per bin
  DeviceBuffer<unsigned char> temp_;
};

}  // namespace tissue::exec
