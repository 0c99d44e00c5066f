// The epidermal gene network (Christley et al. 2010, "Intracellular Gene Network", Table 2) against an
// independent transcription of its equations, an independent RK2 step, and its steady states.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "engine/core/cell_centres.hpp"
#include "modules/gene_network/gene_network.hpp"
#include "tests/support.hpp"

#include "tests/tissue_world.hpp"

using namespace tissue;
using tissue::sem::kAdhesiveElement;
using namespace tissue::grn;

namespace {

/// The seed's equations written out with Table 2's numbers (h_on = -2, see the module README) and
/// G = 0.4; H(x) = a + b / (1 + (c x)^h).
std::array<double, 7> seed_rhs(const std::array<double, 7>& s, double mN, double mD, double mB) {
  const double N = s[0], D = s[1], B = s[2], O2 = s[3], O1 = s[4], M = s[5], A = s[6];
  auto H = [](double x, double a, double b, double c, double h) { return a + b / (1 + std::pow(c * x, h)); };
  const double G = 0.4;
  std::array<double, 7> d{};
  d[0] = -0.0003 * N * mD + 0.12 * B - 0.03 * N + H(B, 0.01, 1, 1, -2) * H(O2, 0, 1, 0.5, -2);
  d[1] = -0.0003 * D * mN + 0.12 * mB - 0.006 * D + H(N, 0.01, 1, 10, 2);
  d[2] = 0.0003 * N * mD - 0.12 * B - 0.19 * B;
  d[3] = -1.0 * O2 + H(O1, 0.1, 2, 1, 2) * H(G, 0, 1, 1, 1);
  d[4] = -1.0 * O1 + H(O2, 0, 2, 1, 2) * H(A, 0, 1, 1, 1);
  d[5] = -1.0 * M + H(O2, 0.1, 1, 1, 1);
  d[6] = 0;
  return d;
}

/// Independent steady state of an isolated cell (no neighbours: B = 0) with adhesion input A: all roots of
/// the Ovol1/Ovol2 toggle g(O2) = 0, then N, D, M in closed form.
std::vector<std::array<double, 7>> isolated_steady_states(double A) {
  auto H = [](double x, double a, double b, double c, double h) { return a + b / (1 + std::pow(c * x, h)); };
  auto o1_of = [&](double o2) { return H(o2, 0, 2, 1, 2) * H(A, 0, 1, 1, 1) / 1.0; };
  auto g = [&](double o2) { return o2 - H(o1_of(o2), 0.1, 2, 1, 2) * H(0.4, 0, 1, 1, 1) / 1.0; };
  std::vector<std::array<double, 7>> out;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    double lo = 10.0 * i / n, hi = 10.0 * (i + 1) / n;
    if ((g(lo) > 0) == (g(hi) > 0)) continue;
    for (int it = 0; it < 200; ++it) {
      const double mid = 0.5 * (lo + hi);
      ((g(lo) > 0) == (g(mid) > 0) ? lo : hi) = mid;
    }
    const double o2 = 0.5 * (lo + hi), o1 = o1_of(o2);
    const double N = H(0, 0.01, 1, 1, -2) * H(o2, 0, 1, 0.5, -2) / 0.03;
    const double D = H(N, 0.01, 1, 10, 2) / 0.006;
    const double M = H(o2, 0.1, 1, 1, 1) / 1.0;
    out.push_back({N, D, 0.0, o2, o1, M, A});
  }
  return out;
}

/// A world with cells whose 4 elements sit at given centres; `adhesive` cells get 4 adhesive
/// elements at height `z_adh` (A = 4 z_adh).
void add_cell(test::TissueWorld& w, float x, float y, float z, bool adhesive, float z_adh = 0.3f) {
  const auto c = w.add_cell_host();
  const float o = 0.1f;
  if (adhesive) {
    for (int k = 0; k < 4; ++k)
      w.add_element_host(c, x + (k % 2 ? o : -o), y + (k / 2 ? o : -o), z_adh, kAdhesiveElement);
  } else {
    for (int k = 0; k < 4; ++k) w.add_element_host(c, x + (k % 2 ? o : -o), y + (k / 2 ? o : -o), z, 0);
  }
}

}  // namespace

TEST_CASE("gene network right-hand side matches the seed's equations with Table 2 values", "[gene_network]") {
  const GeneNetworkParams defaults;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0.0, 3.0), big(0.0, 200.0);
  for (int trial = 0; trial < 200; ++trial) {
    std::array<double, 7> s{u(rng), big(rng), u(rng), u(rng), u(rng), u(rng), u(rng)};
    if (trial == 0) s = {0, 0, 0, 0, 0, 0, 0};  // zeros: (c x)^h with h < 0 is infinite, H -> a
    const double mN = u(rng), mD = big(rng), mB = u(rng);
    std::array<double, 7> ds{};
    gene_network_rhs(s.data(), mN, mD, mB, defaults.rates, ds.data());
    const auto expected = seed_rhs(s, mN, mD, mB);
    for (int k = 0; k < 7; ++k)
      REQUIRE(ds[static_cast<std::size_t>(k)] ==
              Approx(expected[static_cast<std::size_t>(k)]).epsilon(1e-12).margin(1e-14));
    // the single-precision path used by the kernels agrees
    std::array<float, 7> sf{}, dsf{};
    for (int k = 0; k < 7; ++k)
      sf[static_cast<std::size_t>(k)] = static_cast<float>(s[static_cast<std::size_t>(k)]);
    gene_network_rhs(sf.data(), static_cast<float>(mN), static_cast<float>(mD), static_cast<float>(mB),
                     defaults.rates.as<float>(), dsf.data());
    for (int k = 0; k < 7; ++k)
      REQUIRE(dsf[static_cast<std::size_t>(k)] ==
              Approx(expected[static_cast<std::size_t>(k)]).epsilon(1e-4).margin(1e-5));
  }
}

TEST_CASE("one network step equals an independent RK2 step with neighbour means and the adhesion input",
          "[gene_network]") {
  test::TissueWorld w(Box{6.0f, 6.0f, true, true, true}, kSpeciesCount);
  add_cell(w, 0.2f, 0.2f, 1.0f, true, 0.3f);  // neighbours: cells 1 and 2 (across the periodic corner)
  add_cell(w, 5.5f, 0.4f, 1.0f, false);
  add_cell(w, 0.3f, 5.3f, 1.2f, false);
  add_cell(w, 3.0f, 3.0f, 1.0f, true, 0.45f);  // isolated
  w.commit();
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(0.1f, 2.0f), big(5.0f, 150.0f);
  std::vector<std::array<double, 7>> s(4);
  for (std::size_t c = 0; c < 4; ++c) {
    for (int k = 0; k < kAdhesion; ++k) {
      const float v = k == kDelta ? big(rng) : u(rng);
      w.species.host(c, k) = v;
      s[c][static_cast<std::size_t>(k)] = v;
    }
  }
  w.cells.upload();
  update_cell_centres(w);
  GeneNetworkParams p;
  p.neighbour_distance = 1.5;
  GeneNetworkSystem sys(p);
  const double dt = 0.1;
  sys.run(w, StepContext{0, 0, dt});
  w.download();

  // independent: A from the adhesive elements, neighbours by brute force on the centres, midpoint RK2
  s[0][6] = 4 * 0.3;
  s[1][6] = s[2][6] = 0.0;
  s[3][6] = 4 * 0.45;
  const std::vector<std::vector<int>> nb{{1, 2}, {0, 2}, {0, 1}, {}};
  auto stage = [&](const std::vector<std::array<double, 7>>& eval,
                   const std::vector<std::array<double, 7>>& base, double h) {
    std::vector<std::array<double, 7>> out(4);
    for (std::size_t c = 0; c < 4; ++c) {
      double mN = 0, mD = 0, mB = 0;
      for (int j : nb[c])
        mN += eval[static_cast<std::size_t>(j)][0], mD += eval[static_cast<std::size_t>(j)][1],
            mB += eval[static_cast<std::size_t>(j)][2];
      if (!nb[c].empty())
        mN /= static_cast<double>(nb[c].size()), mD /= static_cast<double>(nb[c].size()),
            mB /= static_cast<double>(nb[c].size());
      const auto d = seed_rhs(eval[c], mN, mD, mB);
      for (std::size_t k = 0; k < 7; ++k) out[c][k] = std::max(0.0, base[c][k] + h * d[k]);
    }
    return out;
  };
  const auto mid = stage(s, s, dt / 2);
  const auto next = stage(mid, s, dt);
  for (std::size_t c = 0; c < 4; ++c)
    for (int k = 0; k < kSpeciesCount; ++k)
      REQUIRE(w.species.host(c, k) ==
              Approx(next[c][static_cast<std::size_t>(k)]).epsilon(2e-5).margin(1e-6));
}

TEST_CASE("steady states: an adherent cell is basal (high Ovol2), a free cell suprabasal (high Ovol1)",
          "[gene_network]") {
  test::TissueWorld w(Box{0, 0, false, false, true}, kSpeciesCount);
  add_cell(w, 0.0f, 0.0f, 0.3f, true,
           0.75f);                        // A = 4 * 0.75 = 3, as 10 adhesive elements at the Morse minimum
  add_cell(w, 10.0f, 0.0f, 3.0f, false);  // no adhesive elements, A = 0
  w.commit();
  update_cell_centres(w);
  GeneNetworkSystem sys(GeneNetworkParams{});
  for (int k = 0; k < 60000; ++k) sys.run(w, StepContext{k, 0, 0.05});  // t = 3000 >> 1/d_D = 167
  w.download();
  const auto basal = isolated_steady_states(3.0);
  const auto free = isolated_steady_states(0.0);
  REQUIRE(basal.size() == 1);  // monostable for these inputs
  REQUIRE(free.size() == 1);
  for (int k = 0; k < kSpeciesCount; ++k) {
    INFO("species " << kSpeciesNames[k]);
    CHECK(w.species.host(0, k) == Approx(basal[0][static_cast<std::size_t>(k)]).epsilon(1e-3).margin(1e-6));
    CHECK(w.species.host(1, k) == Approx(free[0][static_cast<std::size_t>(k)]).epsilon(1e-3).margin(1e-6));
  }
  // basal: high Ovol2 / low Ovol1; suprabasal: the reverse, and the state flag says so
  CHECK(w.species.host(0, kOvol2) > 5 * w.species.host(0, kOvol1));
  CHECK(w.species.host(1, kOvol1) > 3 * w.species.host(1, kOvol2));
  CHECK((w.flags.host(0) & w.suprabasal()) == 0);
  CHECK((w.flags.host(1) & w.suprabasal()) != 0);
  // the seed's growth criterion "low Delta" selects the basal state with the default threshold
  CHECK(w.species.host(0, kDelta) < 140.0f);
  CHECK(w.species.host(1, kDelta) > 140.0f);
  CHECK(basal[0][1] == Approx(72.46).epsilon(1e-3));  // cross-check with a SciPy integration (README)
  CHECK(free[0][1] == Approx(164.1).epsilon(1e-3));
}

// ---- The seed's contradiction about h_on, checked (issue 32, item 4; modules/gene_network/README.md) ----

namespace {

/// The seed's equations with Table 2's numbers and h_on as given, written out again (independent of
/// gene_network_rhs), for a cell whose neighbour means are mN, mD, mB.
std::array<double, 7> seed_rhs_h_on(const std::array<double, 7>& s, double mN, double mD, double mB,
                                    double h_on) {
  const double N = s[0], D = s[1], B = s[2], O2 = s[3], O1 = s[4], M = s[5], A = s[6];
  auto H = [](double x, double a, double b, double c, double h) { return a + b / (1 + std::pow(c * x, h)); };
  std::array<double, 7> d{};
  d[0] = -0.0003 * N * mD + 0.12 * B - 0.03 * N + H(B, 0.01, 1, 1, -2) * H(O2, 0, 1, 0.5, h_on);
  d[1] = -0.0003 * D * mN + 0.12 * mB - 0.006 * D + H(N, 0.01, 1, 10, 2);
  d[2] = 0.0003 * N * mD - 0.12 * B - 0.19 * B;
  d[3] = -O2 + H(O1, 0.1, 2, 1, 2) * H(0.4, 0, 1, 1, 1);
  d[4] = -O1 + H(O2, 0, 2, 1, 2) * H(A, 0, 1, 1, 1);
  d[5] = -M + H(O2, 0.1, 1, 1, 1);
  return d;
}

/// Classical RK4 of one cell to t = 4000 (>> 1/d_D = 167). sheet: every neighbour equals the cell (the
/// uniform sheet's mean field); else the neighbour means are fixed at (mN, mD, mB).
std::array<double, 7> settle(std::array<double, 7> s, double h_on, bool sheet, double mN = 0, double mD = 0,
                             double mB = 0) {
  auto f = [&](const std::array<double, 7>& x) {
    return sheet ? seed_rhs_h_on(x, x[0], x[1], x[2], h_on) : seed_rhs_h_on(x, mN, mD, mB, h_on);
  };
  const double h = 0.1;
  for (int k = 0; k < 40000; ++k) {
    auto add = [&](const std::array<double, 7>& a, const std::array<double, 7>& b, double w) {
      std::array<double, 7> r{};
      for (std::size_t i = 0; i < 7; ++i) r[i] = a[i] + w * b[i];
      return r;
    };
    const auto k1 = f(s), k2 = f(add(s, k1, h / 2)), k3 = f(add(s, k2, h / 2)), k4 = f(add(s, k3, h));
    for (std::size_t i = 0; i < 6; ++i)
      s[i] = std::max(0.0, s[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]));
  }
  return s;
}

/// A periodic 3 x 3 sheet at pitch 0.6 (neighbour distance 0.8: four neighbours each, all cells alike)
/// run by the module to t = 4000; returns cell 4's species.
std::array<double, 7> module_sheet(bool adherent, double h_on) {
  test::TissueWorld w(Box{1.8f, 1.8f, true, true, true}, kSpeciesCount);
  for (int i = 0; i < 9; ++i)
    add_cell(w, 0.3f + 0.6f * static_cast<float>(i % 3), 0.3f + 0.6f * static_cast<float>(i / 3), 0.3f,
             adherent,
             0.75f);  // adherent: A = 4 * 0.75 = 3
  w.commit();
  update_cell_centres(w);
  GeneNetworkParams p;
  p.rates.on.h = h_on;
  GeneNetworkSystem sys(p);
  for (int k = 0; k < 40000; ++k) sys.run(w, StepContext{k, 0, 0.1});
  w.download();
  std::array<double, 7> s{};
  for (int k = 0; k < kSpeciesCount; ++k) s[static_cast<std::size_t>(k)] = w.species.host(4, k);
  for (std::size_t c = 0; c < 9; ++c)  // a uniform sheet stays uniform
    REQUIRE(w.species.host(c, kDelta) == Approx(s[kDelta]).epsilon(1e-5));
  return s;
}

}  // namespace

TEST_CASE("printed h_on = +2: a uniform sheet's basal cells have the higher Delta, against the seed's text",
          "[gene_network][seed]") {
  // The seed: basal cells (high Ovol2) are the low-Delta ones. With Table 2 as printed (h_on = +2) a
  // uniform sheet settles the other way round; with h_on = -2 (our default) the order is the seed's.
  for (const double h_on : {2.0, -2.0}) {
    INFO("h_on " << h_on);
    const auto basal = module_sheet(true, h_on), supra = module_sheet(false, h_on);
    const auto basal_ref = settle({0, 0, 0, 0, 0, 0, 3.0}, h_on, true);
    const auto supra_ref = settle({0, 0, 0, 0, 0, 0, 0.0}, h_on, true);
    for (std::size_t k = 0; k < 6; ++k) {
      CHECK(basal[k] == Approx(basal_ref[k]).epsilon(2e-3).margin(1e-6));
      CHECK(supra[k] == Approx(supra_ref[k]).epsilon(2e-3).margin(1e-6));
    }
    CHECK(basal[kOvol2] > basal[kOvol1]);  // the states themselves do not depend on h_on
    CHECK(supra[kOvol1] > supra[kOvol2]);
    if (h_on > 0) {
      CHECK(basal[kDelta] > 2 * supra[kDelta]);  // 43.5 vs 19.9 (README)
    } else {
      CHECK(basal[kDelta] < supra[kDelta] - 40);  // 114.6 vs 167.2 (README)
    }
  }
}

TEST_CASE("a lone suprabasal cell next to Delta 168 has a Notch-on state with h_on = +2 and none with -2",
          "[gene_network][seed]") {
  // Neighbour means fixed: <D> = 168 (the suprabasal sheet), <N>, <B> as there; the cell's O1/O2 toggle is
  // in the suprabasal state (A = 0). With <D> fixed, B = k_a N <D> / (k_d + d_B) at steady state and N
  // solves the 1-D condition g(N) = 0 below; its roots against what the module's right-hand side settles to
  // from a low and a high Notch start.
  const double mD = 168, mN = 0.008, mB = 0.0013;
  for (const double h_on : {2.0, -2.0}) {
    INFO("h_on " << h_on);
    const double o2 = settle({0, 0, 0, 0, 0, 0, 0}, h_on, false)[3];
    auto H = [](double x, double a, double b, double c, double h) {
      return a + b / (1 + std::pow(c * x, h));
    };
    auto B_of = [&](double n) { return 0.0003 * n * mD / (0.12 + 0.19); };
    auto g = [&](double n) {
      return -0.0003 * n * mD + 0.12 * B_of(n) - 0.03 * n +
             H(B_of(n), 0.01, 1, 1, -2) * H(o2, 0, 1, 0.5, h_on);
    };
    std::vector<double> roots, stable;
    const int steps = 100000;
    for (int i = 0; i < steps; ++i) {
      double lo = 50.0 * i / steps, hi = 50.0 * (i + 1) / steps;
      if ((g(lo) > 0) == (g(hi) > 0)) continue;
      for (int it = 0; it < 100; ++it) ((g(lo) > 0) == (g(0.5 * (lo + hi)) > 0) ? lo : hi) = 0.5 * (lo + hi);
      roots.push_back(0.5 * (lo + hi));
      if (g(lo) > 0) stable.push_back(roots.back());  // g falls through zero: stable
    }
    // the module's right-hand side (gene_network_rhs) integrated with the fixed means, from N = 0 and N = 20
    GeneNetworkParams p;
    p.rates.on.h = h_on;
    std::vector<std::array<double, 7>> ends;
    for (const double n0 : {0.0, 20.0}) {
      std::array<double, 7> s{n0, 100, B_of(n0), 0, 0, 0, 0};
      for (int k = 0; k < 80000; ++k) {  // midpoint, t = 4000
        std::array<double, 7> d{}, mid{}, d2{};
        gene_network_rhs(s.data(), mN, mD, mB, p.rates, d.data());
        for (std::size_t i = 0; i < 7; ++i) mid[i] = s[i] + 0.025 * d[i];
        gene_network_rhs(mid.data(), mN, mD, mB, p.rates, d2.data());
        for (std::size_t i = 0; i < 7; ++i) s[i] = std::max(0.0, s[i] + 0.05 * d2[i]);
      }
      ends.push_back(s);
    }
    if (h_on > 0) {
      REQUIRE(roots.size() == 3);  // low, unstable middle, Notch-on
      REQUIRE(stable.size() == 2);
      CHECK(ends[0][kNotch] == Approx(stable[0]).epsilon(1e-4));
      CHECK(ends[1][kNotch] == Approx(stable[1]).epsilon(1e-4));
      CHECK(ends[1][kDelta] < 140.0);  // Notch-on represses Delta: this cell would grow
      CHECK(ends[0][kDelta] < 140.0);  // (with +2 every suprabasal cell is low-Delta anyway)
    } else {
      REQUIRE(roots.size() == 1);
      REQUIRE(stable.size() == 1);
      for (const auto& e : ends) {
        CHECK(e[kNotch] == Approx(stable[0]).epsilon(1e-4));
        CHECK(e[kDelta] > 160.0);  // 167.2: no start reaches a low-Delta state
      }
    }
  }
}
