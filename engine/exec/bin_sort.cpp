#include "engine/exec/bin_sort.hpp"

#include <stdexcept>

#include "engine/exec/backend.hpp"

#if defined(TISSUE_BACKEND_CUDA)
#include "cuda/algorithms.hpp"
#endif

namespace tissue::exec {

void BinSorter::sort(Span<const std::uint32_t> keys, std::size_t bins, Span<std::int32_t> order,
                     Span<std::int32_t> starts) {
  const std::size_t n = keys.size();
  if (order.size() < n || starts.size() < bins + 1)
    throw std::invalid_argument("bin sort: order needs n entries and starts bins + 1");
#if defined(TISSUE_BACKEND_CUDA)
  if (backend() == Backend::cuda) {
    arrival_.ensure(n);
    scattered_.ensure(n);
    const std::size_t bytes = cuda::counting_sort_bins_temp_bytes(bins);
    temp_.ensure(bytes);
    cuda::counting_sort_bins(keys.data(), n, bins, order.data(), starts.data(), arrival_.data(),
                             scattered_.data(), temp_.data(), bytes);
    return;
  }
#endif
  // serial: counts in starts, scanned in place, then each entry to its bin's start plus its arrival rank
  // (kept per entry, like the GPU's scratch: nothing per bin besides starts)
  arrival_.ensure(n);
  std::int32_t* arrival = arrival_.data();
  for (std::size_t b = 0; b <= bins; ++b) starts[b] = 0;
  for (std::size_t i = 0; i < n; ++i) arrival[i] = starts[keys[i]]++;
  std::int32_t total = 0;
  for (std::size_t b = 0; b <= bins; ++b) {
    const std::int32_t count = starts[b];
    starts[b] = total;
    total += count;
  }
  for (std::size_t i = 0; i < n; ++i)
    order[static_cast<std::size_t>(starts[keys[i]] + arrival[i])] = static_cast<std::int32_t>(i);
}

}  // namespace tissue::exec
