#pragma once
/// @file algorithms.hpp
/// CUB-backed primitives for the CUDA backend (plain C++ interface; implemented in algorithms.cu).
/// Memory is owned by the caller (engine/exec/algorithms.cpp), so this layer allocates nothing.

#include <cstddef>
#include <cstdint>

namespace tissue::cuda {

/// Bytes of temporary storage radix_sort_pairs needs for n pairs and key_bits bits.
std::size_t radix_sort_pairs_temp_bytes(std::size_t n, int key_bits);

/// Stable LSD radix sort of n (key, value) pairs over the low `key_bits` bits of the key, ping-ponging
/// between (keys0, values0) and (keys1, values1) (cub::DeviceRadixSort with DoubleBuffer), using
/// `temp` (at least radix_sort_pairs_temp_bytes(n, key_bits) bytes). Returns the index (0 or 1) of the
/// buffers that hold the sorted result. @throws BackendError on failure.
int radix_sort_pairs(std::uint32_t* keys0, std::uint32_t* keys1, std::int32_t* values0, std::int32_t* values1,
                     std::size_t n, int key_bits, void* temp, std::size_t temp_bytes);

/// Bytes of temporary storage inclusive_max_scan needs for n values.
std::size_t inclusive_max_scan_temp_bytes(std::size_t n);

/// In-place inclusive scan with max over n int32 values (cub::DeviceScan::InclusiveScan), using `temp`
/// (at least inclusive_max_scan_temp_bytes(n) bytes). @throws BackendError on failure.
void inclusive_max_scan(std::int32_t* data, std::size_t n, void* temp, std::size_t temp_bytes);

/// Bytes of temporary storage reduce_max needs for n values (the pointer only selects the type).
std::size_t reduce_max_temp_bytes(const float* x, std::size_t n);
std::size_t reduce_max_temp_bytes(const double* x, std::size_t n);

/// result[0] = max of x[0..n) (cub::DeviceReduce::Max on the engine stream, asynchronous), using `temp`
/// (at least reduce_max_temp_bytes bytes). result is device memory. @throws BackendError on failure.
void reduce_max(const float* x, std::size_t n, float* result, void* temp, std::size_t temp_bytes);
void reduce_max(const double* x, std::size_t n, double* result, void* temp, std::size_t temp_bytes);

/// Bytes of temporary storage counting_sort_bins needs for `bins` bins.
std::size_t counting_sort_bins_temp_bytes(std::size_t bins);

/// Stable counting sort of n keys in [0, bins): order[s] = the index of the s-th key in (key, index) order
/// and starts[b] = the number of keys below b (bins + 1 entries), i.e. exactly what a stable sort of
/// (key, index) pairs and bin_starts give. The counts are taken in `starts` with atomics (each entry's
/// arrival rank in `arrival`), scanned in place (CUB), the entries scattered by start + arrival, then each
/// slot's rank among its bin's indices gives the order (deterministic; O(m) per entry for a bin of m).
/// `arrival` and `scattered` (n ints each) and `temp` (counting_sort_bins_temp_bytes(bins)) are scratch
/// owned by the caller: no scratch per bin. Everything is queued on the engine stream. @throws BackendError.
void counting_sort_bins(const std::uint32_t* keys, std::size_t n, std::size_t bins, std::int32_t* order,
                        std::int32_t* starts, std::int32_t* arrival, std::int32_t* scattered, void* temp,
                        std::size_t temp_bytes);

}  // namespace tissue::cuda
