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
