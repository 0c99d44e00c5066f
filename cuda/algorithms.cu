#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <string>

#include "cuda/algorithms.hpp"
#include "cuda/runtime.hpp"
#include "engine/exec/error.hpp"

namespace tissue::cuda {

namespace {
int clamp_bits(int key_bits) {
  return key_bits < 1 ? 1 : (key_bits > 32 ? 32 : key_bits);
}
void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw BackendError(std::string(what) + ": " + cudaGetErrorString(err));
}
}  // namespace

std::size_t radix_sort_pairs_temp_bytes(std::size_t n, int key_bits) {
  cub::DoubleBuffer<std::uint32_t> keys(nullptr, nullptr);
  cub::DoubleBuffer<std::int32_t> values(nullptr, nullptr);
  std::size_t bytes = 0;
  check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, values, static_cast<int>(n), 0,
                                        clamp_bits(key_bits)),
        "cub radix sort (sizing)");
  return bytes;
}

int radix_sort_pairs(std::uint32_t* keys0, std::uint32_t* keys1, std::int32_t* values0, std::int32_t* values1,
                     std::size_t n, int key_bits, void* temp, std::size_t temp_bytes) {
  cub::DoubleBuffer<std::uint32_t> keys(keys0, keys1);
  cub::DoubleBuffer<std::int32_t> values(values0, values1);
  note_enqueue();
  check(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, values, static_cast<int>(n), 0,
                                        clamp_bits(key_bits), static_cast<cudaStream_t>(current_stream())),
        "cub radix sort");
  return keys.selector;
}

namespace {
struct MaxOp {
  __device__ std::int32_t operator()(std::int32_t a, std::int32_t b) const { return a < b ? b : a; }
};
}  // namespace

std::size_t inclusive_max_scan_temp_bytes(std::size_t n) {
  std::size_t bytes = 0;
  check(cub::DeviceScan::InclusiveScan(nullptr, bytes, static_cast<std::int32_t*>(nullptr),
                                       static_cast<std::int32_t*>(nullptr), MaxOp{}, static_cast<int>(n)),
        "cub scan (sizing)");
  return bytes;
}

void inclusive_max_scan(std::int32_t* data, std::size_t n, void* temp, std::size_t temp_bytes) {
  note_enqueue();
  check(cub::DeviceScan::InclusiveScan(temp, temp_bytes, data, data, MaxOp{}, static_cast<int>(n),
                                       static_cast<cudaStream_t>(current_stream())),
        "cub scan");
}

namespace {
template <class Real>
std::size_t reduce_max_bytes(std::size_t n) {
  std::size_t bytes = 0;
  check(cub::DeviceReduce::Max(nullptr, bytes, static_cast<const Real*>(nullptr), static_cast<Real*>(nullptr),
                               static_cast<int>(n)),
        "cub max (sizing)");
  return bytes;
}
}  // namespace

std::size_t reduce_max_temp_bytes(const float*, std::size_t n) {
  return reduce_max_bytes<float>(n);
}
std::size_t reduce_max_temp_bytes(const double*, std::size_t n) {
  return reduce_max_bytes<double>(n);
}
void reduce_max(const float* x, std::size_t n, float* result, void* temp, std::size_t temp_bytes) {
  note_enqueue();
  check(cub::DeviceReduce::Max(temp, temp_bytes, x, result, static_cast<int>(n),
                               static_cast<cudaStream_t>(current_stream())),
        "cub max");
}
void reduce_max(const double* x, std::size_t n, double* result, void* temp, std::size_t temp_bytes) {
  note_enqueue();
  check(cub::DeviceReduce::Max(temp, temp_bytes, x, result, static_cast<int>(n),
                               static_cast<cudaStream_t>(current_stream())),
        "cub max");
}

}  // namespace tissue::cuda

namespace tissue::cuda {

namespace {
constexpr int kSortThreads = 256;

unsigned sort_blocks(std::size_t n) {
  return static_cast<unsigned>((n + kSortThreads - 1) / kSortThreads);
}

/// Counts each bin's entries in `counts` and gives entry i its arrival rank among them (atomics: the ranks
/// depend on scheduling; bin_rank below makes the final order deterministic).
__global__ void bin_histogram(const std::uint32_t* keys, std::size_t n, std::int32_t* counts,
                              std::int32_t* arrival) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) arrival[i] = atomicAdd(counts + keys[i], 1);
}

__global__ void bin_scatter(const std::uint32_t* keys, std::size_t n, const std::int32_t* starts,
                            const std::int32_t* arrival, std::int32_t* scattered) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) scattered[starts[keys[i]] + arrival[i]] = static_cast<std::int32_t>(i);
}

/// Slot s of the scattered order holds some index i of bin b; its place in the stable order is b's
/// start plus the number of b's indices below i.
__global__ void bin_rank(const std::uint32_t* keys, std::size_t n, const std::int32_t* starts,
                         const std::int32_t* scattered, std::int32_t* order) {
  const std::size_t s = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (s >= n) return;
  const std::int32_t i = scattered[s];
  const std::uint32_t b = keys[i];
  const std::int32_t begin = starts[b], end = starts[b + 1];
  std::int32_t rank = 0;
  for (std::int32_t t = begin; t < end; ++t) rank += scattered[t] < i ? 1 : 0;
  order[begin + rank] = i;
}
}  // namespace

std::size_t counting_sort_bins_temp_bytes(std::size_t bins) {
  std::size_t bytes = 0;
  check(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<std::int32_t*>(nullptr),
                                      static_cast<std::int32_t*>(nullptr), static_cast<int>(bins + 1)),
        "cub exclusive sum (sizing)");
  return bytes;
}

void counting_sort_bins(const std::uint32_t* keys, std::size_t n, std::size_t bins, std::int32_t* order,
                        std::int32_t* starts, std::int32_t* arrival, std::int32_t* scattered, void* temp,
                        std::size_t temp_bytes) {
  const auto stream = static_cast<cudaStream_t>(current_stream());
  note_enqueue();
  check(cudaMemsetAsync(starts, 0, (bins + 1) * sizeof(std::int32_t), stream), "bin counts (memset)");
  if (n > 0) bin_histogram<<<sort_blocks(n), kSortThreads, 0, stream>>>(keys, n, starts, arrival);
  check(cudaGetLastError(), "bin histogram");
  // in place: the counts become the starts (starts[bins] = n, as counts[bins] = 0)
  check(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, starts, starts, static_cast<int>(bins + 1), stream),
        "cub exclusive sum");
  if (n == 0) return;
  bin_scatter<<<sort_blocks(n), kSortThreads, 0, stream>>>(keys, n, starts, arrival, scattered);
  check(cudaGetLastError(), "bin scatter");
  bin_rank<<<sort_blocks(n), kSortThreads, 0, stream>>>(keys, n, starts, scattered, order);
  check(cudaGetLastError(), "bin rank");
}

}  // namespace tissue::cuda
