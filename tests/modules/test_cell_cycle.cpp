// The stochastic cell cycle ([lifecycle] cycle_cv; issue "Cell types, behaviour rules and stochasticity",
// item 3): gamma-distributed growth intervals drawn from the counter-based RNG, checked against the gamma
// distribution (Boost.Math), and a tissue whose divisions no longer come in whole generations.
#include <catch2/catch.hpp>

#include <omp.h>
#include <algorithm>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <vector>

#include "engine/io/scenario.hpp"
#include "modules/builtin_modules.hpp"
#include "modules/lifecycle/lifecycle.hpp"

using namespace tissue;

TEST_CASE("growth intervals follow the gamma distribution of the requested mean and CV",
          "[lifecycle][cycle]") {
  const int n = 10000;
  for (const double cv : {0.2, 0.5, 1.5}) {  // 1.5: shape 0.44 < 1, the boosted branch
    const double mean = 2000.0, shape = 1.0 / (cv * cv), scale = mean / shape;
    std::vector<double> x(n);
    for (int i = 0; i < n; ++i)
      x[static_cast<std::size_t>(i)] = lifecycle::draw_growth_interval(7, i, 0, mean, cv);
    double m = 0.0, v = 0.0;
    for (double d : x) m += d;
    m /= n;
    for (double d : x) v += (d - m) * (d - m);
    v /= n - 1;
    INFO("cv " << cv << ": sample mean " << m << ", sample cv " << std::sqrt(v) / m);
    // the sample mean within 4 standard errors; the sample variance within 4 of its standard errors
    // (for a gamma variable Var(s^2) = sigma^4 (2 / (n - 1) + 6 / (shape n)))
    CHECK(std::abs(m - mean) < 4.0 * mean * cv / std::sqrt(n));
    const double var = mean * mean * cv * cv;
    CHECK(std::abs(v - var) < 4.0 * var * std::sqrt(2.0 / (n - 1) + 6.0 / (shape * n)));
    // Kolmogorov-Smirnov against the gamma CDF (an independent evaluation): D below the 1 % critical value
    std::sort(x.begin(), x.end());
    double ks = 0.0;
    for (int i = 0; i < n; ++i) {
      const double f = boost::math::gamma_p(shape, x[static_cast<std::size_t>(i)] / scale);
      ks = std::max({ks, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
    }
    CHECK(ks < 1.63 / std::sqrt(n));
  }
  // a pure function of (seed, cell id, birth step): the same arguments, the same interval; others differ
  CHECK(lifecycle::draw_growth_interval(7, 3, 100, 2000, 0.2) ==
        lifecycle::draw_growth_interval(7, 3, 100, 2000, 0.2));
  CHECK(lifecycle::draw_growth_interval(7, 3, 100, 2000, 0.2) !=
        lifecycle::draw_growth_interval(7, 3, 200, 2000, 0.2));
  CHECK(lifecycle::draw_growth_interval(7, 3, 100, 2000, 0.2) !=
        lifecycle::draw_growth_interval(8, 3, 100, 2000, 0.2));
  CHECK(lifecycle::draw_growth_interval(7, 3, 100, 2000, 0.0) == 2000.0);
}

namespace {
/// A 3 x 3 sheet growing every 100 steps on average (every cell grows: threshold 1e6), to step 5000.
std::unique_ptr<Simulation> sheet(double cv) {
  std::string text =
      "[simulation]\nsteps = 5000\nseed = 5\n[initial]\ncells_x = 3\ncells_y = 3\nspacing = 0.6\n"
      "[lifecycle]\ngrowth_interval = 100\ndelta_threshold = 1e6\n";
  if (cv > 0.0) text += "cycle_cv = " + std::to_string(cv) + "\n";
  return build_simulation(io::Scenario::from_string(text, "cycle.toml"));
}
}  // namespace

TEST_CASE("with a stochastic cycle cells divide at their own times, reproducibly", "[lifecycle][cycle]") {
  // the seed's cycle: all 9 cells divide together, so the count is 9 x 2^k at every step
  auto fixed = sheet(0.0);
  std::vector<std::size_t> fixed_counts;
  for (int k = 0; k < 50; ++k) {
    fixed->advance(100);
    fixed_counts.push_back(fixed->world->cells.size());
  }
  for (std::size_t c : fixed_counts) CHECK((c == 9 || c == 18 || c == 36 || c == 72));
  // CV 0.3: counts between whole generations occur, the intervals are the cells' own
  auto stochastic = sheet(0.3);
  std::vector<std::size_t> counts;
  for (int k = 0; k < 50; ++k) {
    stochastic->advance(100);
    counts.push_back(stochastic->world->cells.size());
  }
  const bool between = std::any_of(counts.begin(), counts.end(),
                                   [](std::size_t c) { return c != 9 && c != 18 && c != 36 && c != 72; });
  CHECK(between);
  CHECK(counts.back() > 9);
  World& w = *stochastic->world;
  w.download();
  const auto& interval = w.cells.column<float>(lifecycle::kGrowthIntervalColumn);
  const auto& next = w.cells.column<std::int64_t>(lifecycle::kNextGrowthColumn);
  for (std::size_t c = 0; c < w.cells.size(); ++c) {
    CHECK(interval.host(c) > 0.0f);
    CHECK(next.host(c) > w.step - 100);  // every clock was advanced past the last check
  }
  // the same run on one thread (the run above had them all): the same tissue, bit for bit
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  auto one = sheet(0.3);
  one->advance(5000);
  omp_set_num_threads(threads);
  one->world->download();
  INFO("threads: " << threads << " and 1");
  REQUIRE(one->world->cells.size() == w.cells.size());
  CHECK(one->world->x.host_data() == w.x.host_data());
  CHECK(one->world->z.host_data() == w.z.host_data());
}

TEST_CASE("cycle_cv and cycle_resolution are checked", "[lifecycle][cycle]") {
  const auto fails = [](const std::string& lifecycle, const std::string& what) {
    const std::string text =
        "[simulation]\nsteps = 10\n[initial]\ncells_x = 3\ncells_y = 3\nspacing = 0.6\n[lifecycle]\n" + lifecycle;
    CHECK_THROWS_WITH(build_simulation(io::Scenario::from_string(text, "bad.toml")), Catch::Contains(what));
  };
  fails("cycle_cv = -0.1\n", "lifecycle.cycle_cv");
  fails("cycle_cv = 4.0\n", "lifecycle.cycle_cv");
  fails("cycle_resolution = 10\n", "needs lifecycle.cycle_cv > 0");
  fails("cycle_cv = 0.2\ncycle_resolution = 0\n", "lifecycle.cycle_resolution");
}
