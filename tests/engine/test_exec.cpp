// The launch layer and device-wide primitives, on the backend under test.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/bin_sort.hpp"
#include "engine/exec/block_for.hpp"
#include "engine/exec/cooperative_for.hpp"
#include "engine/exec/group_for.hpp"
#include "engine/exec/parallel_for.hpp"

using namespace tissue;

namespace {
/// Sum of a float and a count over group_for's lanes.
struct SumCount {
  float sum = 0.0f;
  std::int32_t count = 0;
  TISSUE_HD friend SumCount operator+(const SumCount& a, const SumCount& b) {
    return {a.sum + b.sum, a.count + b.count};
  }
};

/// Item i sums terms[i * width + k] for k < width, lane l taking every lanes-th term from l; the total goes
/// to out[i], the number of terms to count[i].
struct RowSums {
  using Value = SumCount;
  Span<const float> terms;
  std::size_t width;
  Span<float> out;
  Span<std::int32_t> count;
  int lanes;
  TISSUE_HD Value partial(std::size_t i, int lane) const {
    Value v;
    for (std::size_t k = static_cast<std::size_t>(lane); k < width; k += static_cast<std::size_t>(lanes)) {
      v.sum += terms[i * width + k];
      ++v.count;
    }
    return v;
  }
  TISSUE_HD void finish(std::size_t i, const Value& v) const {
    out[i] = v.sum;
    count[i] = v.count;
  }
};

struct Square {
  Span<const float> in;
  Span<float> out;
  TISSUE_HD void operator()(std::size_t i) const { out[i] = in[i] * in[i]; }
};

/// Each block reverses its segment of `in` through scratch memory, then adds the segment's first value
/// (read back from scratch after a barrier): wrong without the barrier or with scratch shared across blocks.
struct ReverseSegments {
  Span<const int> in;
  Span<int> out;
  std::size_t segment;
  TISSUE_HD void operator()(const exec::Block& block) const {
    int* scratch = static_cast<int*>(block.shared());
    const std::size_t first = block.index() * segment;
    const std::size_t count = first + segment <= in.size() ? segment : in.size() - first;
    block.for_each(count, [&](std::size_t l) { scratch[count - 1 - l] = in[first + l]; });
    block.sync();
    block.for_each(count, [&](std::size_t l) { out[first + l] = scratch[l] + scratch[count - 1]; });
  }
};
/// Rounds of b[i] = a[i] + a[(i + 1) % n] (then a and b swap), work items of 64 values strided over the
/// blocks: each round reads values that other blocks wrote in the round before, so it needs the grid
/// barrier. The scratch holds a block's count of items, checked against the stride rule.
struct NeighbourRounds {
  Span<std::int64_t> a, b;
  Span<int> items_seen;  ///< per block: the items it handled in the last round
  int rounds;
  TISSUE_HD void operator()(const exec::Block& block, const exec::Grid& grid) const {
    const std::size_t n = a.size(), items = (n + 63) / 64;
    int* const count = static_cast<int*>(block.shared());
    for (int r = 0; r < rounds; ++r) {
      const Span<std::int64_t> from = r % 2 ? b : a, to = r % 2 ? a : b;
      block.for_each(1, [&](std::size_t) { *count = 0; });
      block.sync();
      for (std::size_t item = block.index(); item < items; item += grid.blocks()) {
        block.for_each(64, [&](std::size_t l) {
          const std::size_t i = item * 64 + l;
          if (i < n) to[i] = from[i] + from[(i + 1) % n];
        });
        block.for_each(1, [&](std::size_t) { ++*count; });
      }
      grid.sync();
    }
    block.sync();
    block.for_each(1, [&](std::size_t) { items_seen[block.index()] = *count; });
  }
};
/// Rounds of b[i] = (a[i - 1] + a[i] + a[i + 1]) mod 1000003 on a ring of 64 values per block (then a
/// and b swap), ordered only by each block waiting for the signals of the two blocks beside it
/// (Grid::signal / wait_for): a round reads the neighbours' edge values of the round before, and
/// overwrites the buffer they read in it. The ring has 64 * grid.blocks() values of a and b.
struct SignalRounds {
  Span<std::int64_t> a, b;
  int rounds;
  TISSUE_HD void operator()(const exec::Block& block, const exec::Grid& grid) const {
    const std::size_t blocks = grid.blocks(), n = 64 * blocks;
    auto* const others = static_cast<unsigned*>(block.shared());
    block.for_each(1, [&](std::size_t) {
      others[0] = static_cast<unsigned>((block.index() + blocks - 1) % blocks);
      others[1] = static_cast<unsigned>((block.index() + 1) % blocks);
    });
    block.sync();
    for (int r = 0; r < rounds; ++r) {
      const Span<std::int64_t> from = r % 2 ? b : a, to = r % 2 ? a : b;
      block.for_each(64, [&](std::size_t l) {
        const std::size_t i = block.index() * 64 + l;
        to[i] = (from[(i + n - 1) % n] + from[i] + from[(i + 1) % n]) % 1000003;
      });
      grid.signal(static_cast<unsigned>(r + 1));
      grid.wait_for(others, blocks > 1 ? 2u : 0u, static_cast<unsigned>(r + 1));
    }
  }
};
/// Each block copies its segment into scratch and reduces it with block_max; every thread's result is
/// checked (one slot per thread through a second for_each).
struct SegmentMax {
  Span<const double> in;
  Span<double> out;
  std::size_t segment;
  TISSUE_HD void operator()(const exec::Block& block) const {
    double* scratch = static_cast<double*>(block.shared());
    const std::size_t first = block.index() * segment;
    const std::size_t count = first + segment <= in.size() ? segment : in.size() - first;
    block.for_each(count, [&](std::size_t l) { scratch[l] = in[first + l]; });
    const double m = exec::block_max(block, scratch, count);
    block.for_each(count, [&](std::size_t l) { out[first + l] = m; });
  }
};
/// Item i sums terms[offsets[i] ..) and their magnitudes over G lanes (lane l: terms l, l + G, ...); every
/// lane writes the totals it got to its own slot.
template <int G>
struct LaneGroupSums {
  Span<const std::int32_t> offsets;
  Span<const double> terms;
  Span<double> out;  ///< 2 G per item
  std::size_t items_per_block;
  TISSUE_HD void operator()(const exec::Block& block) const {
    const std::size_t first = block.index() * items_per_block;
    const std::size_t items = offsets.size() - 1;
    const std::size_t count = first + items_per_block <= items ? items_per_block : items - first;
    block.template for_each_group<G, 2>(
        count,
        [&](std::size_t i, int lane, double* s) {
          for (std::int32_t k = offsets[first + i] + lane; k < offsets[first + i + 1]; k += G) {
            const double t = terms[static_cast<std::size_t>(k)];
            s[0] += t;
            s[1] += t < 0.0 ? -t : t;  // no product: a fused multiply-add would round differently
          }
        },
        [&](std::size_t i, int lane, const double* s) {
          const std::size_t slot = 2 * (G * (first + i) + static_cast<std::size_t>(lane));
          out[slot] = s[0];
          out[slot + 1] = s[1];
        });
  }
};

template <int G>
void check_lane_groups(std::size_t items, unsigned threads) {
  std::mt19937 rng(11 + G);
  std::uniform_int_distribution<int> length(0, 3 * G + 1);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<std::int32_t> offsets{0};
  std::vector<double> terms;
  for (std::size_t i = 0; i < items; ++i) {
    const int m = length(rng);
    for (int k = 0; k < m; ++k) terms.push_back(u(rng) * std::pow(10.0, 3 * u(rng)));  // rounding matters
    offsets.push_back(static_cast<std::int32_t>(terms.size()));
  }
  DeviceBuffer<std::int32_t> o;
  DeviceBuffer<double> t, out(2 * G * items);
  o.assign(offsets);
  t.assign(terms);
  const std::size_t per_block = 3 * threads / G + 1;  // several passes per block, the last one partial
  exec::block_for((items + per_block - 1) / per_block, threads, 0,
                  LaneGroupSums<G>{o.span(), t.span(), out.span(), per_block});
  const std::vector<double> got = out.to_host();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < items; ++i) {
    double s[G][2] = {};  // the butterfly's order: lane sums, then s_l + s_(l + offset) for l < offset
    for (int lane = 0; lane < G; ++lane)
      for (std::int32_t k = offsets[i] + lane; k < offsets[i + 1]; k += G) {
        s[lane][0] += terms[static_cast<std::size_t>(k)];
        s[lane][1] += std::abs(terms[static_cast<std::size_t>(k)]);
      }
    for (int offset = G / 2; offset > 0; offset /= 2)
      for (int l = 0; l < offset; ++l)
        for (int v = 0; v < 2; ++v) s[l][v] += s[l + offset][v];
    for (int lane = 0; lane < G; ++lane)
      for (int v = 0; v < 2; ++v)
        wrong += got[2 * (G * i + static_cast<std::size_t>(lane)) + static_cast<std::size_t>(v)] != s[0][v];
  }
  INFO(G << " lanes, " << threads << " threads per block");
  CHECK(wrong == 0);
}
}  // namespace

TEST_CASE("block_max gives every thread of a block the largest value of its segment", "[exec]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-5.0, 5.0);
  for (const std::size_t segment : {1u, 2u, 3u, 17u, 289u, 1000u}) {
    const std::size_t n = 5 * segment + segment / 2 + 1;
    std::vector<double> host(n);
    for (double& v : host) v = u(rng);
    DeviceBuffer<double> in, out(n);
    in.assign(host);
    const std::size_t blocks = (n + segment - 1) / segment;
    exec::block_for(blocks, 128, segment * sizeof(double), SegmentMax{in.span(), out.span(), segment});
    const std::vector<double> got = out.to_host();
    std::size_t wrong = 0;
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::size_t first = b * segment, last = std::min(n, first + segment);
      const double expected = *std::max_element(host.begin() + first, host.begin() + last);
      for (std::size_t i = first; i < last; ++i) wrong += got[i] != expected;
    }
    INFO("segments of " << segment);
    CHECK(wrong == 0);
  }
}

TEST_CASE("cooperative_for keeps its blocks resident together and its grid barrier orders their rounds",
          "[exec]") {
  for (const std::size_t n : {1u, 100u, 100000u}) {
    const int rounds = 9;
    std::vector<std::int64_t> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<std::int64_t>((i * 7919) % 1000);
    DeviceBuffer<std::int64_t> a, b(n);
    a.assign(host);
    const std::size_t items = (n + 63) / 64, max_blocks = 4096;
    DeviceBuffer<int> seen(max_blocks + 1);
    exec::fill(seen.span(), -1);
    const std::size_t blocks = exec::cooperative_for(
        max_blocks, 64, sizeof(int), NeighbourRounds{a.span(), b.span(), seen.span(), rounds});
    REQUIRE(blocks >= 1);
    REQUIRE(blocks <= max_blocks);
    for (int r = 0; r < rounds; ++r) {
      std::vector<std::int64_t> next(n);
      for (std::size_t i = 0; i < n; ++i) next[i] = host[i] + host[(i + 1) % n];
      host.swap(next);
    }
    const std::vector<std::int64_t> got = (rounds % 2 ? b : a).to_host();
    const std::vector<int> count = seen.to_host();
    std::size_t wrong = 0, handled = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += got[i] != host[i];
    for (std::size_t k = 0; k < blocks; ++k) {
      // block k handles items k, k + blocks, ...
      CHECK(count[k] == static_cast<int>(k < items ? (items - k + blocks - 1) / blocks : 0));
      handled += static_cast<std::size_t>(count[k]);
    }
    CHECK(count[blocks] == -1);  // no block beyond the count reported
    INFO(n << " values on " << blocks << " blocks");
    CHECK(handled == items);
    CHECK(wrong == 0);
  }
}

TEST_CASE("cooperative_for's block signals order rounds that depend on the neighbouring blocks only",
          "[exec]") {
  const std::size_t max_blocks = 4096;
  const int rounds = 101;  // odd: the result is in b
  std::vector<std::int64_t> host(64 * max_blocks);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::int64_t>((i * 7919) % 1000);
  DeviceBuffer<std::int64_t> a, b(host.size());
  a.assign(host);
  // twice, so the second launch starts from signal words the first one left at `rounds`
  for (const std::size_t launch_blocks : {max_blocks, std::size_t{3}}) {
    a.assign(host);
    const std::size_t blocks = exec::cooperative_for(launch_blocks, 128, 2 * sizeof(unsigned),
                                                     SignalRounds{a.span(), b.span(), rounds});
    REQUIRE(blocks >= 1);
    const std::size_t n = 64 * blocks;
    std::vector<std::int64_t> expected(host.begin(), host.begin() + static_cast<std::ptrdiff_t>(n)), next(n);
    for (int r = 0; r < rounds; ++r) {
      for (std::size_t i = 0; i < n; ++i)
        next[i] = (expected[(i + n - 1) % n] + expected[i] + expected[(i + 1) % n]) % 1000003;
      expected.swap(next);
    }
    const std::vector<std::int64_t> got = b.to_host();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += got[i] != expected[i];
    INFO(n << " values on " << blocks << " blocks");
    CHECK(wrong == 0);
  }
}

TEST_CASE("for_each_group sums every item's lanes in the butterfly's order and gives all lanes the totals",
          "[exec]") {
  check_lane_groups<1>(1000, 128);
  check_lane_groups<4>(1000, 128);
  check_lane_groups<8>(777, 256);
  check_lane_groups<32>(300, 64);
}

TEST_CASE("block_for gives every block its own scratch memory and a barrier", "[exec]") {
  for (const std::size_t n : {1u, 700u, 100000u})
    for (const std::size_t segment : {1u, 37u, 1000u}) {
      std::vector<int> host(n);
      std::iota(host.begin(), host.end(), 3);
      DeviceBuffer<int> in(n), out(n);
      in.upload(host.data(), n);
      exec::fill(out.span(), -1);
      const std::size_t blocks = (n + segment - 1) / segment;
      exec::block_for(blocks, 128, segment * sizeof(int), ReverseSegments{in.span(), out.span(), segment});
      std::vector<int> got(n);
      out.download(got.data(), n);
      std::size_t wrong = 0;
      for (std::size_t b = 0; b < blocks; ++b) {
        const std::size_t first = b * segment, count = std::min(segment, n - first);
        for (std::size_t l = 0; l < count; ++l)
          wrong += got[first + l] != host[first + count - 1 - l] + host[first];
      }
      INFO(n << " values in segments of " << segment);
      CHECK(wrong == 0);
    }
}

TEST_CASE("parallel_for visits every index exactly once", "[exec]") {
  for (std::size_t n : {1u, 255u, 256u, 257u, 100000u}) {
    std::vector<float> host(n);
    std::iota(host.begin(), host.end(), 1.0f);
    DeviceBuffer<float> in(n), out(n);
    in.upload(host.data(), n);
    exec::fill(out.span(), -1.0f);
    exec::parallel_for(n, Square{in.span(), out.span()});
    const auto result = out.to_host();
    for (std::size_t i = 0; i < n; ++i) REQUIRE(result[i] == host[i] * host[i]);
  }
}

TEST_CASE("RadixSorter sorts pairs stably by the low key bits", "[exec]") {
  std::mt19937 rng(7);
  for (std::size_t n : {2u, 1000u, 300000u}) {
    const int bits = 13;
    std::vector<std::uint32_t> keys(n);
    for (auto& k : keys) k = rng() & ((1u << bits) - 1u);
    exec::RadixSorter sorter;
    sorter.reserve(n);
    DeviceBuffer<std::uint32_t> k(n);
    k.upload(keys.data(), n);
    exec::copy(Span<const std::uint32_t>(k.span()), sorter.keys(), n);
    std::vector<std::int32_t> values(n);
    std::iota(values.begin(), values.end(), 0);
    DeviceBuffer<std::int32_t> v(n);
    v.upload(values.data(), n);
    exec::copy(Span<const std::int32_t>(v.span()), sorter.values(), n);
    sorter.sort(n, bits);
    std::vector<std::uint32_t> got_keys(n);
    std::vector<std::int32_t> got_values(n);
    exec::copy_bytes(got_keys.data(), exec::Backend::cpu, sorter.sorted_keys().data(), exec::backend(),
                     n * 4);
    exec::copy_bytes(got_values.data(), exec::Backend::cpu, sorter.sorted_values().data(), exec::backend(),
                     n * 4);
    std::vector<std::int32_t> expected(n);
    std::iota(expected.begin(), expected.end(), 0);
    std::stable_sort(expected.begin(), expected.end(), [&](int a, int b) { return keys[a] < keys[b]; });
    REQUIRE(got_values == expected);
    for (std::size_t i = 0; i < n; ++i) REQUIRE(got_keys[i] == keys[static_cast<std::size_t>(expected[i])]);
  }
}

TEST_CASE("BinSorter gives the stable sort's order and every bin's start", "[exec]") {
  std::mt19937 rng(13);
  // sparse bins, dense ones, one bin holding a third of the keys, empty first and last bins, no keys
  for (std::size_t n : {0u, 1u, 9u, 4000u, 200000u}) {
    const std::size_t bins = 50000;
    std::vector<std::uint32_t> keys(n);
    for (auto& k : keys) k = rng() % 3 == 0 ? 777u : 1u + static_cast<std::uint32_t>(rng() % (bins - 2));
    DeviceBuffer<std::uint32_t> k(std::max<std::size_t>(n, 1));
    if (n > 0) k.upload(keys.data(), n);
    DeviceBuffer<std::int32_t> order(std::max<std::size_t>(n, 1)), starts(bins + 1);
    exec::BinSorter sorter;
    for (int repeat = 0; repeat < 2; ++repeat) {  // the second call reuses the scratch
      sorter.sort(std::as_const(k).span().subspan(0, n), bins, order.span(), starts.span());
      std::vector<std::int32_t> expected(n);
      std::iota(expected.begin(), expected.end(), 0);
      std::stable_sort(expected.begin(), expected.end(), [&](int a, int b) { return keys[a] < keys[b]; });
      auto got = order.to_host();
      got.resize(n);
      REQUIRE(got == expected);
      std::vector<std::uint32_t> sorted_keys(keys);
      std::sort(sorted_keys.begin(), sorted_keys.end());
      const auto got_starts = starts.to_host();
      for (std::size_t b = 0; b <= bins; ++b)  // the number of keys below b
        REQUIRE(got_starts[b] ==
                std::lower_bound(sorted_keys.begin(), sorted_keys.end(), b) - sorted_keys.begin());
    }
  }
  DeviceBuffer<std::uint32_t> k(4);
  DeviceBuffer<std::int32_t> order(3), starts(11);
  exec::BinSorter sorter;
  CHECK_THROWS_AS(sorter.sort(std::as_const(k).span(), 10, order.span(), starts.span()),
                  std::invalid_argument);
}

TEST_CASE("bin_starts gives every bin, empty ones included, the lower bound of its key", "[exec]") {
  std::mt19937 rng(11);
  for (std::size_t n : {1u, 7u, 5000u}) {
    const std::uint32_t bins = 3000;  // sparse and dense runs, empty first and last bins
    std::vector<std::uint32_t> keys(n);
    for (auto& k : keys) k = 1 + (rng() % (bins - 2));
    std::sort(keys.begin(), keys.end());
    DeviceBuffer<std::uint32_t> k;
    k.assign(keys);
    DeviceBuffer<std::int32_t> starts(bins + 1);
    DeviceBuffer<unsigned char> temp;
    exec::bin_starts(k.span(), starts.span(), temp);
    const auto got = starts.to_host();
    for (std::uint32_t b = 0; b <= bins; ++b)
      REQUIRE(got[b] == std::lower_bound(keys.begin(), keys.end(), b) - keys.begin());
  }
}

TEST_CASE("reductions match a host evaluation", "[exec]") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-5.0f, 5.0f);
  std::vector<float> host(12345);
  for (auto& v : host) v = u(rng);
  host[100] = std::numeric_limits<float>::quiet_NaN();
  host[200] = std::numeric_limits<float>::infinity();
  DeviceBuffer<float> d;
  d.assign(host);
  CHECK(exec::count_non_finite(d.span()) == 2);
  host[100] = 0.0f;
  host[200] = 1.0f;
  d.assign(host);
  double sum = 0.0;
  for (float v : host) sum += v;
  CHECK(exec::sum(d.span()) == Approx(sum).epsilon(1e-12));
  CHECK(exec::max_value(d.span()) == *std::max_element(host.begin(), host.end()));
  CHECK(exec::min_value(d.span()) == *std::min_element(host.begin(), host.end()));
}

TEST_CASE("column_sums adds up each of several equal columns in one reduction", "[exec]") {
  // integers: every order of summation is exact, so the sums are known exactly
  const std::size_t rows = 4099, columns = 7;
  std::vector<double> host(rows * columns);
  std::vector<double> expected(columns, 0.0);
  for (std::size_t c = 0; c < columns; ++c)
    for (std::size_t i = 0; i < rows; ++i) {
      host[c * rows + i] = static_cast<double>((i * 31 + c * 7) % 97) - 40.0;
      expected[c] += host[c * rows + i];
    }
  DeviceBuffer<double> d, scratch;
  d.assign(host);
  CHECK(exec::column_sums(d.span(), columns, scratch) == expected);
  CHECK(exec::column_sums(Span<const double>(d.data(), 0), 3, scratch) == std::vector<double>(3, 0.0));
  CHECK_THROWS_AS(exec::column_sums(Span<const double>(d.data(), 10), 3, scratch), std::invalid_argument);
}

TEST_CASE("DeviceBuffer moves ownership and copies between host and device", "[exec]") {
  DeviceBuffer<int> a(10);
  std::vector<int> v(10);
  std::iota(v.begin(), v.end(), 5);
  a.upload(v.data(), 10);
  DeviceBuffer<int> b(std::move(a));
  CHECK(a.data() == nullptr);
  CHECK(a.size() == 0);
  CHECK(b.to_host() == v);
  DeviceBuffer<int> c(4);
  c.copy_from(b, 4, 3, 0);
  CHECK(c.to_host() == std::vector<int>{8, 9, 10, 11});
  c.zero();
  CHECK(c.to_host() == std::vector<int>{0, 0, 0, 0});
}

TEST_CASE("group_for sums each item's lanes in the butterfly's order, the same on both backends", "[exec]") {
  // terms of very different sizes, so that the order of the additions shows in the rounded sums
  const std::size_t n = 1000, width = 37;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  std::vector<float> terms(n * width);
  for (auto& t : terms) t = std::ldexp(mantissa(rng), exponent(rng));
  DeviceBuffer<float> d_terms(terms.size());
  d_terms.assign(terms);
  DeviceBuffer<float> out(n);
  DeviceBuffer<std::int32_t> count(n);
  for (const int lanes : {1, 2, 4, 8}) {
    exec::group_for(lanes, n, RowSums{std::as_const(d_terms).span(), width, out.span(), count.span(), lanes});
    const std::vector<float> got = out.to_host();
    const std::vector<std::int32_t> counts = count.to_host();
    for (std::size_t i = 0; i < n; ++i) {
      // the reference: each lane's sum in its order, then the butterfly (lane l adds lane l ^ h)
      std::vector<float> lane_sum(static_cast<std::size_t>(lanes), 0.0f);
      for (int l = 0; l < lanes; ++l)
        for (std::size_t k = static_cast<std::size_t>(l); k < width; k += static_cast<std::size_t>(lanes))
          lane_sum[static_cast<std::size_t>(l)] += terms[i * width + k];
      for (int h = lanes / 2; h > 0; h /= 2) {
        std::vector<float> next(lane_sum.size());
        for (int l = 0; l < lanes; ++l)
          next[static_cast<std::size_t>(l)] =
              lane_sum[static_cast<std::size_t>(l)] + lane_sum[static_cast<std::size_t>(l ^ h)];
        lane_sum = next;
      }
      REQUIRE(got[i] == lane_sum[0]);  // bit for bit
      REQUIRE(counts[i] == static_cast<std::int32_t>(width));
    }
  }
  CHECK(exec::gpu_lanes_for(1000) == 8);
  CHECK(exec::gpu_lanes_for(std::size_t{1} << 17) == 1);
  CHECK(exec::lanes_for(1000) == (exec::backend() == exec::Backend::cuda ? 8 : 1));
  CHECK_THROWS_AS(
      exec::group_for(3, n, RowSums{std::as_const(d_terms).span(), width, out.span(), count.span(), 3}),
      std::invalid_argument);
}

TEST_CASE("column_max_abs gives each strided block's largest |value| in one reduction, NaN as infinity",
          "[exec]") {
  const std::size_t rows = 3001, stride = 4096, columns = 5;
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 10.0f);
  std::vector<float> host(stride * columns, 1e30f);  // beyond each block's rows: never read
  for (std::size_t c = 0; c < columns; ++c)
    for (std::size_t r = 0; r < rows; ++r) host[c * stride + r] = normal(rng) * static_cast<float>(c + 1);
  host[2 * stride + 17] = std::numeric_limits<float>::quiet_NaN();
  host[3 * stride + rows - 1] = -5e6f;
  DeviceBuffer<float> x(host.size());
  x.assign(host);
  DeviceBuffer<float> scratch;
  const std::vector<double> got =
      exec::column_max_abs(std::as_const(x).span(), rows, stride, columns, scratch);
  REQUIRE(got.size() == columns);
  for (std::size_t c = 0; c < columns; ++c) {
    if (c == 2) {
      CHECK(std::isinf(got[c]));
      continue;
    }
    float expected = 0.0f;
    for (std::size_t r = 0; r < rows; ++r) expected = std::max(expected, std::fabs(host[c * stride + r]));
    CHECK(got[c] == static_cast<double>(expected));
  }
  CHECK(got[3] == 5e6);
  CHECK_THROWS_AS(exec::column_max_abs(std::as_const(x).span(), rows, stride, columns + 1, scratch),
                  std::invalid_argument);
}
