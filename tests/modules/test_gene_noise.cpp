// Noise in the gene-network ODEs ([gene_network] noise, noise_kind; issue 32, item 3): off by default and
// byte-identical at noise = 0, keyed by (seed, step, sub-step, cell id, species), the stationary statistics
// of an Ornstein-Uhlenbeck network against their exact values for the scheme (noise step, then midpoint
// RK2), independence of the thread count, and the input errors. On the CUDA backend the same cases run the
// device kernels (and the NVRTC-compiled network).
#include <catch2/catch.hpp>

#include <omp.h>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/cell_centres.hpp"
#include "engine/io/scenario.hpp"
#include "modules/builtin_modules.hpp"
#include "modules/gene_network/gene_network.hpp"
#include "modules/gene_network/user_network.hpp"

#include "tests/tissue_world.hpp"

using namespace tissue;
using namespace tissue::grn;

namespace {

io::Scenario network_scenario(const std::string& gene_network) {
  return io::Scenario::from_string("[gene_network]\n" + gene_network, "noise.toml");
}

UserNetworkSpec user_spec(const std::string& gene_network) {
  return read_user_network(network_scenario(gene_network).root().table("gene_network"), {});
}

/// `n` cells of one element each on a square lattice of pitch 0.7 (periodic box, 4 neighbours within 0.8),
/// every other cell on the membrane (adhesive, A = 0.2), species rows = `rows`, all species = `initial`.
std::unique_ptr<test::TissueWorld> cell_world(int side, int rows, float initial, std::uint64_t seed) {
  const float pitch = 0.7f, l = pitch * static_cast<float>(side);
  auto w = std::make_unique<test::TissueWorld>(Box{l, l, true, true, true}, rows);
  w->seed = seed;
  for (int i = 0; i < side * side; ++i) {
    const auto c = w->add_cell_host();
    const bool adhesive = i % 2 == 0;
    w->add_element_host(c, pitch * static_cast<float>(i % side) + 0.35f,
                        pitch * static_cast<float>(i / side) + 0.35f, adhesive ? 0.2f : 0.9f,
                        adhesive ? sem::kAdhesiveElement : 0);
  }
  w->commit();
  for (std::size_t c = 0; c < w->cells.size(); ++c)
    for (int k = 0; k + 1 < rows; ++k) w->species.host(c, k) = initial;
  w->cells.upload();
  update_cell_centres(*w);
  return w;
}

/// Every species value of every cell, cell-major.
std::vector<float> species_of(World& w, int rows) {
  w.download();
  auto& s = species_column(w);
  std::vector<float> out;
  for (std::size_t c = 0; c < w.cells.size(); ++c)
    for (int k = 0; k < rows; ++k) out.push_back(s.host(c, k));
  return out;
}

/// Runs `steps` steps of `system` from step `first`.
void run(System& system, World& w, std::int64_t first, int steps, double dt) {
  for (std::int64_t s = first; s < first + steps; ++s)
    system.run(w, StepContext{s, static_cast<double>(s) * dt, dt});
}

/// Sample mean and (n - 1) variance of species row 0 pooled over snapshots.
struct Moments {
  double mean = 0.0, variance = 0.0;
  std::size_t n = 0;
};
Moments moments(const std::vector<double>& x) {
  Moments m;
  m.n = x.size();
  for (double v : x) m.mean += v;
  m.mean /= static_cast<double>(m.n);
  for (double v : x) m.variance += (v - m.mean) * (v - m.mean);
  m.variance /= static_cast<double>(m.n - 1);
  return m;
}

/// The OU network dx = k (m - x) dt + noise on 64 x 64 = 4096 cells, all starting at m: after `burn_in`
/// steps, `snapshots` samples of every cell `gap` steps apart.
std::vector<double> ou_samples(const std::string& kind, double sigma, double k, double m, double h,
                               int burn_in, int snapshots, int gap) {
  const std::string text = "noise = " + std::to_string(sigma) + "\nnoise_kind = \"" + kind +
                           "\"\nparameters = { k = " + std::to_string(k) + ", m = " + std::to_string(m) +
                           " }\nspecies = [ { name = \"x\", rate = \"k * (m - x)\" } ]\n";
  const auto scenario = network_scenario(text);
  const auto table = scenario.root().table("gene_network");
  UserNetworkSystem system(read_user_network(table, {}), read_noise_params(table));
  auto w = cell_world(64, 2, static_cast<float>(m), 17);
  run(system, *w, 0, burn_in, h);
  std::vector<double> x;
  for (int s = 0; s < snapshots; ++s) {
    run(system, *w, burn_in + s * gap, gap, h);
    for (float v : species_of(*w, 1)) x.push_back(static_cast<double>(v));
  }
  return x;
}

}  // namespace

TEST_CASE("noise = 0 leaves both networks' results byte for byte as without the key",
          "[gene_network][noise]") {
  const auto species = [](const std::string& network, const std::string& noise) {
    const std::string text =
        "[simulation]\nmodel = \"epidermis\"\ndt = 0.01\nsteps = 200\nseed = 3\n[initial]\ncells_x = 3\n"
        "cells_y = 3\nelements_per_cell = 20\nadhesive_elements = 10\nspacing = 0.6\ncell_radius = 0.3\n"
        "[gene_network]\n" +
        noise + network;
    auto sim = build_simulation(io::Scenario::from_string(text, "zero.toml"));
    sim->advance(200);
    const int rows = species_column(*sim->world).components();
    return species_of(*sim->world, rows);
  };
  const std::string user =
      "species = [ { name = \"delta\", initial = 10, rate = \"1 - 0.1 * delta\" },\n"
      "            { name = \"y\", initial = 1, rate = \"0.5 * mean_delta - y\" } ]\n";
  for (const std::string& network : {std::string(), user}) {
    INFO((network.empty() ? "built-in network" : "scenario network"));
    const auto without = species(network, "");
    const auto zero = species(network, "noise = 0\n");
    const auto noisy = species(network, "noise = 0.01\n");
    REQUIRE(without.size() == zero.size());
    CHECK(zero == without);  // float ==: bit for bit (no NaN here)
    CHECK(noisy != without);
  }
}

TEST_CASE("each (step, sub-step, cell id, species) gets its own standard normal, the adhesion row none",
          "[gene_network][noise]") {
  // a network that does nothing but the noise: x_after = max(0, x + sigma sqrt(h) xi) with xi keyed by the
  // cell's stable id, so a cell keeps its draws when others before it are removed
  const double sigma = 0.5, h = 0.04, x0 = 10.0;
  const int rows = 6;  // 5 species: two Philox counters per cell
  const auto spec = user_spec(
      "species = [ { name = \"a\", rate = \"0\" }, { name = \"b\", rate = \"0\" }, { name = \"c\", rate = "
      "\"0\" }, { name = \"d\", rate = \"0\" }, { name = \"e\", rate = \"0\" } ]\n");
  UserNetworkSystem system(spec, NoiseParams{sigma, NoiseKind::additive});
  auto w = cell_world(4, rows, static_cast<float>(x0), 99);
  w->flags.host(3) |= cell_flags::dead;  // cell id 3 gone: the cells after it move down one row
  w->commit();
  update_cell_centres(*w);
  system.run(*w, StepContext{41, 0.0, h, 2});
  const auto after = species_of(*w, rows);
  for (std::size_t c = 0; c < w->cells.size(); ++c) {
    const std::int64_t id = w->cell_id.host(c);
    for (int k = 0; k + 1 < rows; ++k) {
      const double normal = gene_noise_normal(99, 41, 2, id, static_cast<std::size_t>(k));
      INFO("cell id " << id << " species " << k);
      // to float rounding (a device's double log/cos may differ from the host's in the last bits)
      CHECK(after[c * rows + static_cast<std::size_t>(k)] ==
            Approx(x0 + sigma * std::sqrt(h) * normal).epsilon(0).margin(2e-6));
    }
    // the adhesion row is the geometry's A (the element's height on adhesive cells, made with even ids),
    // never perturbed
    CHECK(after[c * rows + rows - 1] == (id % 2 == 0 ? 0.2f : 0.0f));
  }
  // the draws differ between species, sub-steps, steps and seeds
  const double base = gene_noise_normal(99, 41, 2, 5, 1);
  CHECK(base != gene_noise_normal(99, 41, 2, 5, 2));
  CHECK(base != gene_noise_normal(99, 41, 1, 5, 1));
  CHECK(base != gene_noise_normal(99, 42, 2, 5, 1));
  CHECK(base != gene_noise_normal(98, 41, 2, 5, 1));
  CHECK(base != gene_noise_normal(99, 41, 2, 6, 1));
  // and they look standard normal: 10^5 draws over ids and species, mean and variance within 4 standard
  // errors, no correlation between neighbouring species above 4 / sqrt(n)
  std::vector<double> z;
  for (std::int64_t id = 0; id < 20000; ++id)
    for (std::size_t s = 0; s < 5; ++s) z.push_back(gene_noise_normal(7, 3, 0, id, s));
  const Moments mz = moments(z);
  const double n = static_cast<double>(z.size());
  CHECK(std::abs(mz.mean) < 4.0 / std::sqrt(n));
  CHECK(std::abs(mz.variance - 1.0) < 4.0 * std::sqrt(2.0 / n));
  double corr = 0.0;
  for (std::size_t i = 0; i + 1 < z.size(); i += 5) corr += z[i] * z[i + 1];
  CHECK(std::abs(corr / (n / 5.0)) < 4.0 / std::sqrt(n / 5.0));
}

TEST_CASE("an Ornstein-Uhlenbeck network reaches the stationary mean and variance of the scheme",
          "[gene_network][noise]") {
  // dx = k (m - x) dt + sigma dW, one noise step then one midpoint RK2 step per h:
  //   x' = m + a (x + s xi - m),  a = 1 - k h + (k h)^2 / 2 (midpoint RK2 of a linear rate), s = sigma
  //   sqrt(h),
  // so the stationary variance (after the deterministic step) solves V = a^2 (V + s^2): V = a^2 s^2 / (1 -
  // a^2), the mean is m; as h -> 0, V -> sigma^2 / (2 k) (the OU process). m = 50 keeps x > 20 standard
  // deviations from the clamp at 0. Sample errors: SE(mean) = sqrt(V / n), SE(variance) = V sqrt(2 / (n -
  // 1)).
  const double k = 1.0, m = 50.0;
  SECTION("additive, k h = 0.5: the scheme's discrete variance, 36 % below the continuous one") {
    const double sigma = 2.0, h = 0.5, a = 1.0 - k * h + 0.5 * k * h * k * h;
    const double v_exact = a * a * sigma * sigma * h / (1.0 - a * a), v_ou = sigma * sigma / (2.0 * k);
    // 40 steps between snapshots: correlation a^40 = 7e-9
    const Moments x = moments(ou_samples("additive", sigma, k, m, h, 100, 10, 40));
    const double n = static_cast<double>(x.n), se_v = v_exact * std::sqrt(2.0 / (n - 1.0));
    INFO("mean " << x.mean << " variance " << x.variance << " exact " << v_exact << " (OU " << v_ou << ") n "
                 << x.n);
    CHECK(std::abs(x.mean - m) < 4.0 * std::sqrt(v_exact / n));
    CHECK(std::abs(x.variance - v_exact) < 4.0 * se_v);
    CHECK(std::abs(x.variance - v_ou) > 20.0 * se_v);  // the test tells the scheme's answer from the limit's
  }
  SECTION("additive, k h = 0.01: the variance approaches sigma^2 / (2 k)") {
    const double sigma = 2.0, h = 0.01, a = 1.0 - k * h + 0.5 * k * h * k * h;
    const double v_exact = a * a * sigma * sigma * h / (1.0 - a * a), v_ou = sigma * sigma / (2.0 * k);
    // burn-in 1000 steps (a^2000 = 2e-9), snapshots 500 steps apart (correlation a^500 = 0.007)
    const Moments x = moments(ou_samples("additive", sigma, k, m, h, 1000, 5, 500));
    const double n = static_cast<double>(x.n), se_v = v_exact * std::sqrt(2.0 / (n - 1.0));
    INFO("mean " << x.mean << " variance " << x.variance << " exact " << v_exact << " (OU " << v_ou << ") n "
                 << x.n);
    CHECK(std::abs(v_exact - v_ou) < 0.011 * v_ou);
    CHECK(std::abs(x.mean - m) < 4.0 * std::sqrt(v_exact / n));
    CHECK(std::abs(x.variance - v_ou) < 4.0 * se_v + std::abs(v_exact - v_ou));
  }
  SECTION("langevin, k h = 0.5: V = a^2 sigma^2 h m / (1 - a^2) (E[x] = m in the noise's variance)") {
    // the noise variance is sigma^2 h max(x, 0) = sigma^2 h x away from the clamp, whose mean is m
    const double sigma = 0.5, h = 0.5, a = 1.0 - k * h + 0.5 * k * h * k * h;
    const double v_exact = a * a * sigma * sigma * h * m / (1.0 - a * a);
    const Moments x = moments(ou_samples("langevin", sigma, k, m, h, 100, 10, 40));
    const double n = static_cast<double>(x.n), se_v = v_exact * std::sqrt(2.0 / (n - 1.0));
    INFO("mean " << x.mean << " variance " << x.variance << " exact " << v_exact << " n " << x.n);
    CHECK(std::abs(x.mean - m) < 4.0 * std::sqrt(v_exact / n));
    CHECK(std::abs(x.variance - v_exact) < 4.0 * se_v);
  }
}

TEST_CASE("multiplicative gene noise: the stationary variance of the scheme for an Ornstein-Uhlenbeck drift",
          "[gene_network][noise]") {
  // Y = x + sigma x sqrt(h) xi, then the RK2 step x' = m + a (Y - m): in the stationary state
  // V = a^2 (V + sigma^2 h (V + m^2)), so V = a^2 sigma^2 h m^2 / (1 - a^2 (1 + sigma^2 h))
  const double k = 1.0, m = 50.0, sigma = 0.05, h = 0.5, a = 1.0 - k * h + 0.5 * k * h * k * h;
  const double v_exact = a * a * sigma * sigma * h * m * m / (1.0 - a * a * (1.0 + sigma * sigma * h));
  const Moments x = moments(ou_samples("multiplicative", sigma, k, m, h, 100, 10, 40));
  const double n = static_cast<double>(x.n), se_v = v_exact * std::sqrt(2.0 / (n - 1.0));
  INFO("mean " << x.mean << " variance " << x.variance << " exact " << v_exact << " n " << x.n);
  CHECK(std::abs(x.mean - m) < 4.0 * std::sqrt(v_exact / n));
  CHECK(std::abs(x.variance - v_exact) < 4.0 * se_v);
}

TEST_CASE("noisy networks give the same bytes on one thread and on all threads", "[gene_network][noise]") {
  // 64 x 64 = 4096 cells: above exec::kMinParallelIterations, so the loops do run on several threads
  const int threads = omp_get_max_threads();
  const auto built_in = [] {
    GeneNetworkParams params;
    params.noise = NoiseParams{0.3, NoiseKind::langevin};
    GeneNetworkSystem system(params);
    auto w = cell_world(64, kSpeciesCount, 1.0f, 5);
    run(system, *w, 0, 20, 0.05);
    return species_of(*w, kSpeciesCount);
  };
  const auto user = [] {
    UserNetworkSystem system(
        user_spec("species = [ { name = \"x\", initial = 1, rate = \"1 - x + 0.1 * mean_x\" },\n"
                  "            { name = \"y\", initial = 1, rate = \"x - y * adhesion\" } ]\n"),
        NoiseParams{0.2, NoiseKind::additive});
    auto w = cell_world(64, 3, 1.0f, 5);
    run(system, *w, 0, 20, 0.05);
    return species_of(*w, 3);
  };
  const auto built_in_all = built_in(), user_all = user();
  omp_set_num_threads(1);
  const auto built_in_one = built_in(), user_one = user();
  omp_set_num_threads(threads);
  INFO("threads: " << threads << " and 1");
  CHECK(built_in_one == built_in_all);
  CHECK(user_one == user_all);
  // and the noise is there: the run differs from the deterministic one
  GeneNetworkSystem quiet{GeneNetworkParams{}};
  auto w = cell_world(64, kSpeciesCount, 1.0f, 5);
  run(quiet, *w, 0, 20, 0.05);
  CHECK(species_of(*w, kSpeciesCount) != built_in_all);
}

TEST_CASE("a negative noise or an unknown noise_kind is an input error at its file:line:column",
          "[gene_network][noise]") {
  const auto fails = [](const std::string& network, const std::string& keys, const std::string& what) {
    const std::string text =
        "[simulation]\nmodel = \"epidermis\"\nsteps = 10\n[initial]\ncells_x = 3\ncells_y = 3\n"
        "spacing = 0.6\n[gene_network]\n" +
        keys + network;
    INFO(text);
    CHECK_THROWS_WITH(build_simulation(io::Scenario::from_string(text, "bad.toml")), Catch::Contains(what));
  };
  const std::string user = "species = [ { name = \"delta\", rate = \"1 - delta\" } ]\n";
  for (const std::string& network : {std::string(), user}) {
    // [gene_network] is line 8, so the keys are on line 9 (noise) and 10 (noise_kind)
    fails(network, "noise = -0.1\n", "bad.toml:9:9: gene_network.noise: expected a number >= 0, got -0.1");
    fails(network, "noise = 0.1\nnoise_kind = \"gaussian\"\n",
          "bad.toml:10:14: gene_network.noise_kind: expected one of \"additive\", \"langevin\", "
          "\"multiplicative\", got "
          "\"gaussian\"");
    fails(network, "noise_kind = \"langevin\"\n",
          "bad.toml:9:14: gene_network.noise_kind: needs gene_network.noise > 0");
    fails(network, "noise = \"big\"\n", "bad.toml:9:9: gene_network.noise: expected");
  }
}
