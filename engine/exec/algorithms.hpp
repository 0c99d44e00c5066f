#pragma once
/// @file algorithms.hpp
/// Device-wide primitives of the active backend: sort, reduce, fill. Thrust (OpenMP system) on the CPU
/// backend, CUB on the CUDA backend. Modules use these instead of writing their own.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/exec/device_buffer.hpp"
#include "engine/exec/parallel_for.hpp"

namespace tissue::exec {

/// Stable sort of (key, value) pairs by key, with a workspace reused across calls so that a sort
/// per time step allocates nothing once warm. CPU: thrust::stable_sort_by_key (OpenMP); CUDA:
/// cub::DeviceRadixSort::SortPairs over the low `key_bits` bits.
///
/// Usage: write n keys and values into keys()/values(), call sort(n, bits), read sorted_keys() and
/// sorted_values().
class RadixSorter {
 public:
  /// Makes room for n pairs; previous contents are lost if it grows.
  void reserve(std::size_t n);
  /// Input keys, at least n long after reserve(n).
  Span<std::uint32_t> keys() { return keys_[0].span(); }
  /// Input values, at least n long after reserve(n).
  Span<std::int32_t> values() { return values_[0].span(); }
  /// Sorts the first n pairs by the low `key_bits` bits of the key (1..32); stable.
  void sort(std::size_t n, int key_bits);
  Span<const std::uint32_t> sorted_keys() const { return keys_[current_].span(); }
  Span<const std::int32_t> sorted_values() const { return values_[current_].span(); }

 private:
  DeviceBuffer<std::uint32_t> keys_[2];
  DeviceBuffer<std::int32_t> values_[2];
  DeviceBuffer<unsigned char> temp_;
  int current_ = 0;
};

/// Bin starts of sorted keys: starts[b] = number of keys < b, for b in [0, bins] (keys < bins). Bin b
/// then holds sorted entries [starts[b], starts[b + 1]), empty bins included, so that consecutive bins
/// form one contiguous range. `starts` has bins + 1 entries. O(keys + bins): each run's end is scattered
/// to the next bin, then an inclusive max-scan fills the empty bins (CUB on the GPU with `temp` kept
/// for the next call, Thrust on the CPU).
void bin_starts(Span<const std::uint32_t> sorted_keys, Span<std::int32_t> starts,
                DeviceBuffer<unsigned char>& temp);

/// Sum of x in double precision (deterministic for a given backend and size).
double sum(Span<const float> x);
double sum(Span<const double> x);
/// The sums of the `columns` consecutive equal-length columns of x (x.size() a multiple of columns), in
/// one reduction and one copy to the host instead of one each (thrust::reduce_by_key; deterministic for a
/// given backend and size). `scratch` (grown as needed, kept by the caller) receives the sums on the
/// backend, so that a per-step call allocates nothing once warm. @throws std::invalid_argument when x
/// does not split into the columns.
std::vector<double> column_sums(Span<const double> x, std::size_t columns, DeviceBuffer<double>& scratch);
/// The largest |value| of each of `columns` blocks of `rows` values, block c at x[c * stride, c * stride +
/// rows) (a multi-component column's components): one reduction and one download; a NaN counts as
/// +infinity. `scratch` is kept for the next call. @throws std::invalid_argument when the blocks do not fit
/// x.
std::vector<double> column_max_abs(Span<const float> x, std::size_t rows, std::size_t stride,
                                   std::size_t columns, DeviceBuffer<float>& scratch);
/// Largest value of x; -infinity for an empty span. NaN entries are ignored.
float max_value(Span<const float> x);
double max_value(Span<const double> x);
/// Smallest value of x; +infinity for an empty span. NaN entries are ignored.
float min_value(Span<const float> x);
double min_value(Span<const double> x);
/// Writes the largest value of x (x non-empty, no NaN: map NaN to +infinity first) into result[0], which
/// lives in the active backend's memory, without a round trip to the host: on the CUDA backend this is
/// cub::DeviceReduce::Max, queued on the stream like a kernel, with `temp` kept for the next call. For
/// loops whose control stays on the device (the adaptive Runge-Kutta-Merson step).
void max_into(Span<const float> x, Span<float> result, DeviceBuffer<unsigned char>& temp);
void max_into(Span<const double> x, Span<double> result, DeviceBuffer<unsigned char>& temp);
/// Number of entries that are NaN or infinite.
std::size_t count_non_finite(Span<const float> x);
std::size_t count_non_finite(Span<const double> x);
/// Sets flag[0] (in the active backend's memory) to 1 when x holds a NaN or an infinity, and leaves it
/// otherwise: queued like a kernel, without a round trip to the host, so that many arrays are checked
/// with one download of the flag at the end.
void flag_non_finite(Span<const float> x, Span<std::int32_t> flag);
void flag_non_finite(Span<const double> x, Span<std::int32_t> flag);

/// Fills x with `value`.
template <class T>
struct FillFunctor {
  Span<T> x;
  T value;
  TISSUE_HD void operator()(std::size_t i) const { x[i] = value; }
};
template <class T>
void fill(Span<T> x, T value) {
  parallel_for(x.size(), FillFunctor<T>{x, value});
}

/// dst[i] = src[i] for i < n, both on the active backend.
template <class T>
struct CopyFunctor {
  Span<const T> src;
  Span<T> dst;
  TISSUE_HD void operator()(std::size_t i) const { dst[i] = src[i]; }
};
template <class T>
void copy(Span<const T> src, Span<T> dst, std::size_t n) {
  parallel_for(n, CopyFunctor<T>{src, dst});
}

}  // namespace tissue::exec
