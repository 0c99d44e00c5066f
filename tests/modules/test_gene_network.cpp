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
