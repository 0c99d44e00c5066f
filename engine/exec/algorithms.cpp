// Device-wide primitives. Compiled as CUDA in CUDA builds (so that Thrust comes from the toolkit's
// CCCL on both paths), as C++ otherwise.
#include "engine/exec/algorithms.hpp"

#include <thrust/count.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/discard_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/system/omp/execution_policy.h>
#include <thrust/transform_reduce.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#if defined(TISSUE_BACKEND_CUDA)
#include <thrust/system/cuda/execution_policy.h>

#include "cuda/algorithms.hpp"
#include "cuda/runtime.hpp"
#endif

namespace tissue::exec {

namespace {

/// The column of entry i of equal columns of `rows` entries.
struct ColumnOf {
  std::size_t rows;
  TISSUE_HD std::size_t operator()(std::size_t i) const { return i / rows; }
};
struct ToDouble {
  TISSUE_HD double operator()(float v) const { return static_cast<double>(v); }
};
template <class Real>
struct NanTo {
  Real fallback;
  TISSUE_HD Real operator()(Real v) const { return (v == v) ? v : fallback; }
};
template <class Real>
struct MaxOp {
  TISSUE_HD Real operator()(Real a, Real b) const { return a < b ? b : a; }
};
template <class Real>
struct MinOp {
  TISSUE_HD Real operator()(Real a, Real b) const { return b < a ? b : a; }
};
struct NonFinite {
  template <class Real>
  TISSUE_HD bool operator()(Real v) const {
    return !(v == v) || v == std::numeric_limits<Real>::infinity() ||
           v == -std::numeric_limits<Real>::infinity();
  }
};

#if defined(TISSUE_BACKEND_CUDA)
/// Thrust's temporary storage through the engine's runtime layer, so that a thread with a stream of its own
/// allocates it in stream order (cudaFree could wait for the whole device, other threads' streams too).
struct TemporaryAllocator {
  using value_type = char;
  char* allocate(std::ptrdiff_t bytes) {
    return static_cast<char*>(cuda::device_allocate(static_cast<std::size_t>(bytes)));
  }
  void deallocate(char* p, std::size_t) { cuda::device_free(p); }
};
#endif

/// Calls f with the Thrust execution policy of the active backend (sequential for small CPU inputs); on
/// CUDA on the engine's stream of the calling thread (cuda::current_stream()).
template <class F>
auto with_policy(std::size_t n, F&& f) {
#if defined(TISSUE_BACKEND_CUDA)
  if (backend() == Backend::cuda) {
    thread_local TemporaryAllocator allocator;
    return f(thrust::cuda::par(allocator).on(static_cast<cudaStream_t>(cuda::current_stream())));
  }
#endif
  if (n < kMinParallelIterations) return f(thrust::seq);
  return f(thrust::omp::par);
}

}  // namespace

void RadixSorter::reserve(std::size_t n) {
  for (int k = 0; k < 2; ++k) {
    keys_[k].ensure(n);
    values_[k].ensure(n);
  }
  current_ = 0;
}

void RadixSorter::sort(std::size_t n, int key_bits) {
  current_ = 0;
  if (n <= 1) return;
#if defined(TISSUE_BACKEND_CUDA)
  if (backend() == Backend::cuda) {
    const std::size_t bytes = cuda::radix_sort_pairs_temp_bytes(n, key_bits);
    temp_.ensure(bytes);
    current_ = cuda::radix_sort_pairs(keys_[0].data(), keys_[1].data(), values_[0].data(), values_[1].data(),
                                      n, key_bits, temp_.data(), bytes);
    return;
  }
#endif
  (void)key_bits;
  if (n < kMinParallelIterations)  // see parallel_for.hpp: small inputs stay on the calling thread
    thrust::stable_sort_by_key(thrust::seq, keys_[0].data(), keys_[0].data() + n, values_[0].data());
  else
    thrust::stable_sort_by_key(thrust::omp::par, keys_[0].data(), keys_[0].data() + n, values_[0].data());
}

namespace {
/// starts[k + 1] = s + 1 where s is the last entry of the run of key k.
struct RunEnds {
  Span<const std::uint32_t> keys;
  Span<std::int32_t> starts;
  TISSUE_HD void operator()(std::size_t s) const {
    if (s + 1 == keys.size() || keys[s + 1] != keys[s])
      starts[keys[s] + 1] = static_cast<std::int32_t>(s + 1);
  }
};
struct MaxInt {
  TISSUE_HD std::int32_t operator()(std::int32_t a, std::int32_t b) const { return a < b ? b : a; }
};
}  // namespace

void bin_starts(Span<const std::uint32_t> sorted_keys, Span<std::int32_t> starts,
                DeviceBuffer<unsigned char>& temp) {
  zero_bytes(starts.data(), backend(), starts.size() * sizeof(std::int32_t));
  parallel_for(sorted_keys.size(), RunEnds{sorted_keys, starts});
#if defined(TISSUE_BACKEND_CUDA)
  if (backend() == Backend::cuda) {
    const std::size_t bytes = cuda::inclusive_max_scan_temp_bytes(starts.size());
    temp.ensure(bytes);
    cuda::inclusive_max_scan(starts.data(), starts.size(), temp.data(), bytes);
    return;
  }
#endif
  (void)temp;
  with_policy(starts.size(), [&](auto policy) {
    thrust::inclusive_scan(policy, starts.begin(), starts.end(), starts.begin(), MaxInt{});
    return 0;
  });
}

double sum(Span<const float> x) {
  return with_policy(x.size(), [&](auto policy) {
    return thrust::transform_reduce(policy, x.begin(), x.end(), ToDouble{}, 0.0, thrust::plus<double>());
  });
}

double sum(Span<const double> x) {
  return with_policy(x.size(), [&](auto policy) {
    return thrust::reduce(policy, x.begin(), x.end(), 0.0, thrust::plus<double>());
  });
}

namespace {
/// |x[(k / rows) * stride + k % rows]|, NaN as +infinity: the k-th value of `columns` blocks of `rows`.
struct StridedAbs {
  const float* x;
  std::size_t rows, stride;
  TISSUE_HD float operator()(std::size_t k) const {
    const float v = x[(k / rows) * stride + k % rows];
    if (!(v == v)) return std::numeric_limits<float>::infinity();
    return v < 0.0f ? -v : v;
  }
};
}  // namespace

std::vector<double> column_max_abs(Span<const float> x, std::size_t rows, std::size_t stride,
                                   std::size_t columns, DeviceBuffer<float>& scratch) {
  if (columns > 0 && rows > 0 && (stride < rows || (columns - 1) * stride + rows > x.size()))
    throw std::invalid_argument("column_max_abs: " + std::to_string(columns) + " columns of " +
                                std::to_string(rows) + " rows at a stride of " + std::to_string(stride) +
                                " do not fit in " + std::to_string(x.size()) + " values");
  std::vector<double> out(columns, 0.0);
  if (rows == 0 || columns == 0) return out;
  scratch.ensure(columns);
  const std::size_t total = rows * columns;
  const auto counting = thrust::make_counting_iterator<std::size_t>(0);
  const auto column = thrust::make_transform_iterator(counting, ColumnOf{rows});
  const auto value = thrust::make_transform_iterator(counting, StridedAbs{x.data(), rows, stride});
  with_policy(total, [&](auto policy) {
    thrust::reduce_by_key(policy, column, column + static_cast<std::ptrdiff_t>(total), value,
                          thrust::make_discard_iterator(), scratch.data(), thrust::equal_to<std::size_t>(),
                          MaxOp<float>{});
    return 0;
  });
  std::vector<float> host(columns);
  scratch.download(host.data(), columns);
  for (std::size_t c = 0; c < columns; ++c) out[c] = static_cast<double>(host[c]);
  return out;
}

std::vector<double> column_sums(Span<const double> x, std::size_t columns, DeviceBuffer<double>& scratch) {
  if (columns == 0 || x.size() % columns != 0)
    throw std::invalid_argument("column_sums: " + std::to_string(x.size()) + " values do not form " +
                                std::to_string(columns) + " equal columns");
  std::vector<double> out(columns, 0.0);
  const std::size_t rows = x.size() / columns;
  if (rows == 0) return out;
  scratch.ensure(columns);
  const auto column =
      thrust::make_transform_iterator(thrust::make_counting_iterator<std::size_t>(0), ColumnOf{rows});
  with_policy(x.size(), [&](auto policy) {
    thrust::reduce_by_key(policy, column, column + static_cast<std::ptrdiff_t>(x.size()), x.begin(),
                          thrust::make_discard_iterator(), scratch.data());
    return 0;
  });
  scratch.download(out.data(), columns);
  return out;
}

namespace {
template <class Real>
Real max_of(Span<const Real> x) {
  const Real lowest = -std::numeric_limits<Real>::infinity();
  return with_policy(x.size(), [&](auto policy) {
    return thrust::transform_reduce(policy, x.begin(), x.end(), NanTo<Real>{lowest}, lowest, MaxOp<Real>{});
  });
}
template <class Real>
Real min_of(Span<const Real> x) {
  const Real highest = std::numeric_limits<Real>::infinity();
  return with_policy(x.size(), [&](auto policy) {
    return thrust::transform_reduce(policy, x.begin(), x.end(), NanTo<Real>{highest}, highest, MinOp<Real>{});
  });
}
}  // namespace

float max_value(Span<const float> x) {
  return max_of(x);
}
double max_value(Span<const double> x) {
  return max_of(x);
}
float min_value(Span<const float> x) {
  return min_of(x);
}
double min_value(Span<const double> x) {
  return min_of(x);
}

namespace {
template <class Real>
void max_into_impl(Span<const Real> x, Span<Real> result, DeviceBuffer<unsigned char>& temp) {
#if defined(TISSUE_BACKEND_CUDA)
  if (backend() == Backend::cuda) {
    const std::size_t bytes = cuda::reduce_max_temp_bytes(x.data(), x.size());
    temp.ensure(bytes);
    cuda::reduce_max(x.data(), x.size(), result.data(), temp.data(), bytes);
    return;
  }
#endif
  (void)temp;
  result[0] = max_of(x);
}
}  // namespace

void max_into(Span<const float> x, Span<float> result, DeviceBuffer<unsigned char>& temp) {
  max_into_impl(x, result, temp);
}
void max_into(Span<const double> x, Span<double> result, DeviceBuffer<unsigned char>& temp) {
  max_into_impl(x, result, temp);
}

std::size_t count_non_finite(Span<const float> x) {
  return with_policy(x.size(), [&](auto policy) {
    return static_cast<std::size_t>(thrust::count_if(policy, x.begin(), x.end(), NonFinite{}));
  });
}

std::size_t count_non_finite(Span<const double> x) {
  return with_policy(x.size(), [&](auto policy) {
    return static_cast<std::size_t>(thrust::count_if(policy, x.begin(), x.end(), NonFinite{}));
  });
}

namespace {
/// flag[0] = 1 where x[i] is not finite; every writer stores the same value.
template <class Real>
struct FlagNonFinite {
  Span<const Real> x;
  Span<std::int32_t> flag;
  TISSUE_HD void operator()(std::size_t i) const {
    if (NonFinite{}(x[i])) flag[0] = 1;
  }
};
}  // namespace

void flag_non_finite(Span<const float> x, Span<std::int32_t> flag) {
  parallel_for(x.size(), FlagNonFinite<float>{x, flag});
}

void flag_non_finite(Span<const double> x, Span<std::int32_t> flag) {
  parallel_for(x.size(), FlagNonFinite<double>{x, flag});
}

}  // namespace tissue::exec
