// Subcellular element mechanics against independent double-precision evaluations of the seed's
// equations (Christley et al. 2010, equations of motion and Table 1).
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "engine/exec/device_buffer.hpp"
#include "engine/mesh/vec3.hpp"
#include "engine/schedule/schedule.hpp"
#include "modules/sem/sem.hpp"
#include "modules/sem/sem_layout.hpp"
#include "tests/support.hpp"

#include "tests/tissue_world.hpp"

using namespace tissue;
using tissue::sem::kAdhesiveElement;
using namespace tissue::sem;

namespace {

// ---- independent reference (double, all pairs, written from the seed's equations) ----
struct RefMorse {
  double u0, xi1, w0, xi2;
};
double ref_v(double r, const RefMorse& m) {
  return m.u0 * std::exp(-r / m.xi1) - m.w0 * std::exp(-r / m.xi2);
}
double ref_dv(double r, const RefMorse& m) {
  return -m.u0 / m.xi1 * std::exp(-r / m.xi1) + m.w0 / m.xi2 * std::exp(-r / m.xi2);
}
RefMorse ref(const Morse<double>& m) {
  return {m.u0, m.xi1, m.w0, m.xi2};
}

struct Config {
  std::vector<double> x, y, z;
  std::vector<int> cell, type;
  double lx = 0, ly = 0;  // periods (0: open)
};

Config config_of(World& w) {
  w.download();
  Config c;
  c.lx = w.box.periodic_x ? w.box.lx : 0.0;
  c.ly = w.box.periodic_y ? w.box.ly : 0.0;
  for (std::size_t e = 0; e < w.elements.size(); ++e) {
    c.x.push_back(w.x.host(e));
    c.y.push_back(w.y.host(e));
    c.z.push_back(w.z.host(e));
    c.cell.push_back(w.cell.host(e));
    c.type.push_back(element_types(w).host(e));
  }
  return c;
}

/// Total potential energy: intracellular Morse over all same-cell pairs, the intercellular potential
/// whose force is the repulsive part of Morse (V(r) - V(r*) below the minimum r*), membrane Morse.
double ref_energy(const Config& c, const SemParams& p) {
  const RefMorse intra = ref(p.intra), inter = ref(p.inter), adh = ref(p.adhesion);
  const double r_star =
      std::log(inter.u0 * inter.xi2 / (inter.w0 * inter.xi1)) / (1 / inter.xi1 - 1 / inter.xi2);
  double e = 0;
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    for (std::size_t j = i + 1; j < c.x.size(); ++j) {
      const double dx = test::min_image(c.x[i] - c.x[j], c.lx), dy = test::min_image(c.y[i] - c.y[j], c.ly);
      const double r = std::sqrt(dx * dx + dy * dy + (c.z[i] - c.z[j]) * (c.z[i] - c.z[j]));
      if (c.cell[i] == c.cell[j])
        e += ref_v(r, intra);
      else if (r < r_star)
        e += ref_v(r, inter) - ref_v(r_star, inter);
    }
    if (c.type[i] == kAdhesiveElement) e += ref_v(c.z[i], adh);
  }
  return e;
}

/// All-pairs forces in double, summed pair by pair (no cell list); intercellular pairs at or beyond
/// `inter_cutoff` are skipped.
void ref_forces(const Config& c, const SemParams& p, std::vector<double>& fx, std::vector<double>& fy,
                std::vector<double>& fz, double inter_cutoff = 1e300) {
  const RefMorse intra = ref(p.intra), inter = ref(p.inter), adh = ref(p.adhesion);
  const std::size_t n = c.x.size();
  fx.assign(n, 0);
  fy.assign(n, 0);
  fz.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const double dx = test::min_image(c.x[i] - c.x[j], c.lx), dy = test::min_image(c.y[i] - c.y[j], c.ly);
      const double dz = c.z[i] - c.z[j];
      const double r = std::sqrt(dx * dx + dy * dy + dz * dz);
      if (c.cell[i] != c.cell[j] && r >= inter_cutoff) continue;
      double f = -ref_dv(r, c.cell[i] == c.cell[j] ? intra : inter);
      if (c.cell[i] != c.cell[j]) f = std::max(f, 0.0);
      fx[i] += f * dx / r;
      fy[i] += f * dy / r;
      fz[i] += f * dz / r;
    }
    if (c.type[i] == kAdhesiveElement) fz[i] += -ref_dv(c.z[i], adh);
  }
}

struct Forces {
  std::vector<float> x, y, z;
};
Forces engine_forces(World& w, SemSystem& sys) {
  const std::size_t n = w.elements.size();
  DeviceBuffer<float> fx(n), fy(n), fz(n);
  sys.compute_forces(w, fx.span(), fy.span(), fz.span());
  return {fx.to_host(), fy.to_host(), fz.to_host()};
}

/// Cells of `per_cell` random elements in a ball of radius 0.5 at random places (uniform in the box,
/// z in [0.3, height]), a random half of each cell's elements adhesive.
void random_tissue(World& w, int cells, int per_cell, float height, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> ux(0.0f, w.box.lx), uy(0.0f, w.box.ly), uz(0.3f, height);
  for (int c = 0; c < cells; ++c) add_ball_cell(w, ux(rng), uy(rng), uz(rng), per_cell, 0.5f, per_cell / 2);
  w.commit();
}

double max_abs_diff(const Forces& f, const std::vector<double>& rx, const std::vector<double>& ry,
                    const std::vector<double>& rz, double& scale) {
  double worst = 0;
  scale = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) {
    const double m = std::max({std::abs(rx[i]), std::abs(ry[i]), std::abs(rz[i])});
    scale = std::max(scale, m);
    worst = std::max({worst, std::abs(f.x[i] - rx[i]) / (1.0 + m), std::abs(f.y[i] - ry[i]) / (1.0 + m),
                      std::abs(f.z[i] - rz[i]) / (1.0 + m)});
  }
  return worst;
}

}  // namespace

TEST_CASE("Morse force equals the negative numerical gradient of the potential", "[sem]") {
  const SemParams p;
  for (const auto& m : {p.intra, p.inter, p.adhesion}) {
    for (double r = 0.02; r < 1.5; r += 0.0137) {
      const double h = 1e-6;
      const double numeric = -(morse_potential(r + h, m) - morse_potential(r - h, m)) / (2 * h);
      REQUIRE(morse_force(r, m) == Approx(numeric).epsilon(1e-7).margin(1e-9));
      const double numeric_pos =
          -(positive_morse_potential(r + h, m) - positive_morse_potential(r - h, m)) / (2 * h);
      REQUIRE(positive_morse_force(r, m) == Approx(numeric_pos).epsilon(1e-6).margin(1e-8));
      // the single-precision kernel path agrees with double
      REQUIRE(morse_force(static_cast<float>(r), m.as<float>()) ==
              Approx(morse_force(r, m)).epsilon(1e-5).margin(1e-6));
    }
    // force vanishes at the minimum; repulsive inside, attractive outside
    const double r_star = morse_minimum(m);
    CHECK(std::abs(morse_force(r_star, m)) < 1e-12);
    CHECK(morse_force(0.9 * r_star, m) > 0);
    CHECK(morse_force(1.1 * r_star, m) < 0);
  }
  CHECK(morse_minimum(p.inter) == Approx(0.156941).epsilon(1e-5));  // Table 1 V_inter minimum
  CHECK(morse_minimum(p.intra) == Approx(0.304231).epsilon(1e-5));  // Table 1 V_intra minimum
}

TEST_CASE("element forces are the negative gradient of the total potential energy", "[sem]") {
  test::TissueWorld w(Box{3.0f, 3.0f, true, true, true}, 0);
  random_tissue(w, 6, 12, 1.2f, 11);  // crowded, with pairs across the periodic boundary
  SemParams p;
  SemSystem sys(p);
  const Forces f = engine_forces(w, sys);
  Config c = config_of(w);
  const double h = 1e-5;
  for (std::size_t i = 0; i < c.x.size(); i += 3) {
    std::array<double*, 3> coord{&c.x[i], &c.y[i], &c.z[i]};
    std::array<float, 3> engine{f.x[i], f.y[i], f.z[i]};
    for (int a = 0; a < 3; ++a) {
      const double saved = *coord[a];
      *coord[a] = saved + h;
      const double ep = ref_energy(c, p);
      *coord[a] = saved - h;
      const double em = ref_energy(c, p);
      *coord[a] = saved;
      const double numeric = -(ep - em) / (2 * h);
      REQUIRE(engine[a] == Approx(numeric).epsilon(2e-3).margin(2e-3));
    }
  }
}

TEST_CASE("cell-list forces equal all-pairs forces on random configurations", "[sem]") {
  for (unsigned seed = 1; seed <= 4; ++seed) {
    const float l = seed % 2 ? 4.0f : 5.5f;
    test::TissueWorld w(Box{l, l, true, true, true}, 0);
    random_tissue(w, 30 + 10 * static_cast<int>(seed), 20, 3.0f, seed);
    SemParams p;
    if (seed == 3) p.bin_size = 0.7;      // larger bins: more candidates, same answer
    if (seed == 4) p.inter_cutoff = 0.1;  // a cutoff below the minimum truncates the force
    SemSystem sys(p);
    const Forces f = engine_forces(w, sys);
    std::vector<double> rx, ry, rz;
    ref_forces(config_of(w), p, rx, ry, rz, p.inter_cutoff > 0 ? p.inter_cutoff : 1e300);
    double scale = 0;
    const double worst = max_abs_diff(f, rx, ry, rz, scale);
    INFO("seed " << seed << ", largest force " << scale);
    REQUIRE(worst < 2e-5);
    REQUIRE(scale > 0.5);  // the configuration is crowded enough to exercise repulsion
  }
}

TEST_CASE(
    "steps on a reused cell list equal all-pairs midpoint steps, also after elements jump past the skin",
    "[sem]") {
  // the list is built at step 0 and reused for 7 steps (rebuild_every = 8); before step 3 a few elements
  // are moved by 0.35 (past the bins' slack of 0.03 and past a whole bin) without a commit, as a user's edit
  // or another system would: the search must widen to what moved, or those pairs would be lost
  const float l = 5.0f;
  test::TissueWorld w(Box{l, l, true, true, true}, 0);
  random_tissue(w, 45, 20, 2.5f, 11);
  SemParams p;
  p.rebuild_every = 8;
  SemSystem sys(p);
  const double dt = 0.002, mobility = 1.0 / p.friction;
  const auto wrap = [](double v, double period) { return v - period * std::floor(v / period); };
  bool jumped_pair = false;
  for (int k = 0; k < 8; ++k) {
    if (k == 3) {
      w.download();
      for (std::size_t e = 0; e < w.elements.size(); e += 97)
        w.x.host(e) = static_cast<float>(wrap(w.x.host(e) + 0.35, l));
      w.x.upload(w.elements.size());
    }
    // the reference midpoint step in double, all pairs: X_mid = X + dt/2 F(X), X <- X + dt F(X_mid)
    const Config c0 = config_of(w);
    std::vector<double> fx, fy, fz;
    ref_forces(c0, p, fx, fy, fz, p.effective_inter_cutoff());
    if (k == 3)  // some moved element has another cell's elements within the cutoff now
      for (std::size_t i = 0; i < c0.x.size(); i += 97)
        for (std::size_t j = 0; j < c0.x.size(); ++j) {
          const double dx = test::min_image(c0.x[i] - c0.x[j], l), dy = test::min_image(c0.y[i] - c0.y[j], l);
          const double dz = c0.z[i] - c0.z[j];
          jumped_pair =
              jumped_pair || (c0.cell[i] != c0.cell[j] &&
                              dx * dx + dy * dy + dz * dz < std::pow(p.effective_inter_cutoff(), 2));
        }
    Config mid = c0;
    for (std::size_t i = 0; i < mid.x.size(); ++i) {
      mid.x[i] = wrap(static_cast<float>(c0.x[i] + 0.5 * dt * mobility * fx[i]), l);
      mid.y[i] = wrap(static_cast<float>(c0.y[i] + 0.5 * dt * mobility * fy[i]), l);
      mid.z[i] = std::max(0.0f, static_cast<float>(c0.z[i] + 0.5 * dt * mobility * fz[i]));
    }
    ref_forces(mid, p, fx, fy, fz, p.effective_inter_cutoff());
    const StepContext ctx{k, 0.0, dt};
    CHECK(sys.prepare(w, ctx) == (k == 0 ? 1u : 0u));  // built once, then reused
    sys.run(w, ctx);
    const Config c1 = config_of(w);
    double worst = 0, largest = 0;
    for (std::size_t i = 0; i < c1.x.size(); ++i) {
      const double ex = test::min_image(c1.x[i] - (c0.x[i] + dt * mobility * fx[i]), l);
      const double ey = test::min_image(c1.y[i] - (c0.y[i] + dt * mobility * fy[i]), l);
      const double ez = c1.z[i] - std::max(0.0, c0.z[i] + dt * mobility * fz[i]);
      worst = std::max({worst, std::abs(ex), std::abs(ey), std::abs(ez)});
      largest = std::max(largest, dt * mobility * std::sqrt(fx[i] * fx[i] + fy[i] * fy[i] + fz[i] * fz[i]));
    }
    INFO("step " << k << ": largest move " << largest);
    REQUIRE(worst < 2e-5 * (1.0 + largest / 1e-3));
  }
  REQUIRE(jumped_pair);  // a moved element landed among another cell's elements: its pairs were found
}

TEST_CASE(
    "Verlet lists give the bin search's steps bit for bit, through overflowing lists and jumps past the skin",
    "[sem][verlet_list]") {
  // one lane per element on every backend (where the lists apply); the list is built at steps 0, 4 and 8;
  // before step 5 some elements jump by 0.35 (past the skin of 0.03), and the random cells overlap, so that
  // some lists overflow: the elements whose lists do not hold search the bins, the others visit their lists,
  // and every step equals the run without lists to the bit
  const float l = 5.0f;
  test::TissueWorld a(Box{l, l, true, true, true}, 0), b(Box{l, l, true, true, true}, 0);
  for (test::TissueWorld* w : {&a, &b}) {
    // two cells squeezed into one ball of radius 0.15: each of their elements has 20 of the other's
    // within the list's radius (0.19), more than a list holds
    add_ball_cell(*w, 1.0f, 1.0f, 1.0f, 20, 0.15f, 0);
    add_ball_cell(*w, 1.0f, 1.0f, 1.0f, 20, 0.15f, 0);
    random_tissue(*w, 45, 20, 2.5f, 11);
  }
  SemParams p;
  p.lanes = 1;
  p.rebuild_every = 4;
  SemParams without = p;
  without.verlet_list = false;
  SemSystem with_lists(p), searching(without);
  const double dt = 0.002;
  const auto wrap = [](double v, double period) { return v - period * std::floor(v / period); };
  std::size_t overflowed = 0;
  for (int k = 0; k < 12; ++k) {
    if (k == 5)
      for (test::TissueWorld* w : {&a, &b}) {
        w->download();
        for (std::size_t e = 0; e < w->elements.size(); e += 97)
          w->x.host(e) = static_cast<float>(wrap(w->x.host(e) + 0.35, l));
        w->x.upload(w->elements.size());
      }
    const StepContext ctx{k, 0.0, dt};
    with_lists.prepare(a, ctx);
    with_lists.run(a, ctx);
    searching.prepare(b, ctx);
    searching.run(b, ctx);
    REQUIRE(with_lists.verlet_list().size() == a.elements.size());
    REQUIRE(searching.verlet_list().size() == 0);
    overflowed = std::max(overflowed, with_lists.verlet_list().overflowed());
    a.download();
    b.download();
    bool same = true;
    for (std::size_t e = 0; e < a.elements.size(); ++e)
      same = same && a.x.host(e) == b.x.host(e) && a.y.host(e) == b.y.host(e) && a.z.host(e) == b.z.host(e);
    INFO("step " << k);
    REQUIRE(same);
  }
  CHECK(overflowed > 0);
  CHECK(overflowed < a.elements.size() / 2);
}

TEST_CASE("periodic images interact across the x/y boundary exactly as the unwrapped configuration",
          "[sem]") {
  // two touching cells; unwrapped in an open box, then translated so that they straddle the corner of
  // a periodic box
  const std::vector<std::array<float, 3>> a{{0.0f, 0.0f, 2.0f},
                                            {0.3f, 0.05f, 2.05f},
                                            {0.1f, 0.28f, 1.9f},
                                            {-0.12f, 0.15f, 2.25f},
                                            {0.2f, -0.2f, 2.1f}};
  const std::vector<std::array<float, 3>> b{
      {0.42f, 0.1f, 2.0f}, {0.65f, 0.3f, 2.1f}, {0.6f, -0.1f, 1.9f}, {0.8f, 0.12f, 2.2f}};
  const auto build = [&](test::TissueWorld& w, float tx, float ty) {
    const auto ca = w.add_cell_host();
    const auto cb = w.add_cell_host();
    for (auto q : a) w.add_element_host(ca, q[0] + tx, q[1] + ty, q[2], kAdhesiveElement);
    for (auto q : b) w.add_element_host(cb, q[0] + tx, q[1] + ty, q[2], 0);
    w.commit();
  };
  test::TissueWorld open(Box{0, 0, false, false, true}, 0);
  build(open, 0.0f, 0.0f);
  test::TissueWorld periodic(Box{4.0f, 4.0f, true, true, true}, 0);
  build(periodic, 3.55f, 3.9f);  // cell a spans both boundaries, b lies across x = 0 and y = 0
  SemParams p;
  SemSystem s_open(p), s_periodic(p);
  const Forces fo = engine_forces(open, s_open);
  const Forces fp = engine_forces(periodic, s_periodic);
  double largest = 0;
  for (std::size_t i = 0; i < fo.x.size(); ++i) {
    REQUIRE(fp.x[i] == Approx(fo.x[i]).margin(2e-5));
    REQUIRE(fp.y[i] == Approx(fo.y[i]).margin(2e-5));
    REQUIRE(fp.z[i] == Approx(fo.z[i]).margin(2e-5));
    largest = std::max(largest, std::abs(static_cast<double>(fo.x[i])));
  }
  REQUIRE(largest > 0.1);  // the cells do interact
  // and a time step moves them the same way
  for (int k = 0; k < 20; ++k) {
    s_open.run(open, StepContext{k, 0, 0.01});
    s_periodic.run(periodic, StepContext{k, 0, 0.01});
  }
  const auto po = test::positions(open), pp = test::positions(periodic);
  for (std::size_t i = 0; i < po.x.size(); ++i) {
    REQUIRE(test::min_image(pp.x[i] - 3.55 - po.x[i], 4.0) == Approx(0).margin(2e-5));
    REQUIRE(test::min_image(pp.y[i] - 3.9 - po.y[i], 4.0) == Approx(0).margin(2e-5));
    REQUIRE(pp.z[i] == Approx(po.z[i]).margin(2e-5));
    REQUIRE(pp.x[i] >= 0.0);
    REQUIRE(pp.x[i] < 4.0);
  }
}

TEST_CASE("a single cell of 20 elements relaxes to a stable compact shape", "[sem]") {
  test::TissueWorld w(Box{0, 0, false, false, true}, 0);
  add_ball_cell(w, 0.0f, 0.0f, 5.0f, 20, 0.6f, 0);  // far above the membrane, no adhesive elements
  w.commit();
  SemParams p;
  SemSystem sys(p);
  double energy = ref_energy(config_of(w), p);
  const double initial_energy = energy;
  for (int block = 0; block < 40; ++block) {
    for (int k = 0; k < 500; ++k) sys.run(w, StepContext{k, 0, 0.01});
    const double e = ref_energy(config_of(w), p);
    REQUIRE(e <= energy + 1e-6);  // gradient flow: the energy never increases
    energy = e;
  }
  REQUIRE(energy < initial_energy);
  const Config before = config_of(w);
  for (int k = 0; k < 2000; ++k) sys.run(w, StepContext{k, 0, 0.01});
  const Config after = config_of(w);
  // stable: nothing moves any more and no force is left
  double moved = 0, d_min = 1e9, rg2 = 0;
  const auto centre = test::centre_of(w, 0);
  for (std::size_t i = 0; i < after.x.size(); ++i) {
    moved = std::max(moved, std::abs(after.x[i] - before.x[i]) + std::abs(after.y[i] - before.y[i]) +
                                std::abs(after.z[i] - before.z[i]));
    rg2 += std::pow(after.x[i] - centre[0], 2) + std::pow(after.y[i] - centre[1], 2) +
           std::pow(after.z[i] - centre[2], 2);
    for (std::size_t j = i + 1; j < after.x.size(); ++j)
      d_min = std::min(d_min,
                       std::sqrt(std::pow(after.x[i] - after.x[j], 2) + std::pow(after.y[i] - after.y[j], 2) +
                                 std::pow(after.z[i] - after.z[j], 2)));
  }
  const Forces f = engine_forces(w, sys);
  double f_max = 0;
  for (std::size_t i = 0; i < f.x.size(); ++i)
    f_max = std::max({f_max, std::abs(double(f.x[i])), std::abs(double(f.y[i])), std::abs(double(f.z[i]))});
  const double rg = std::sqrt(rg2 / static_cast<double>(after.x.size()));
  INFO("moved " << moved << ", max force " << f_max << ", radius of gyration " << rg << ", closest pair "
                << d_min);
  CHECK(moved < 1e-3);
  CHECK(f_max < 1e-3);
  // compact: all 190 pairs attract, so the cell is denser than the pair minimum (0.304) suggests, but the
  // repulsive core keeps elements apart; measured: closest pair 0.148, radius of gyration 0.240
  CHECK(d_min > 0.1);
  CHECK(d_min < morse_minimum(p.intra));
  CHECK(rg > 0.15);
  CHECK(rg < 0.35);
}

TEST_CASE("two cells repel but do not pass through each other", "[sem]") {
  test::TissueWorld w(Box{0, 0, false, false, true}, 0);
  add_ball_cell(w, 0.0f, 0.0f, 5.0f, 20, 0.3f, 0);
  add_ball_cell(w, 0.4f, 0.0f, 5.0f, 20, 0.3f, 0);  // overlapping surfaces (a relaxed cell is ~0.5 wide)
  w.commit();
  SemParams p;
  SemSystem sys(p);
  auto separation = [&] {
    w.download();
    return test::centre_of(w, 1)[0] - test::centre_of(w, 0)[0];
  };
  const double d0 = separation();
  double d = d0, d_min = d0;
  for (int block = 0; block < 60; ++block) {
    for (int k = 0; k < 250; ++k) sys.run(w, StepContext{k, 0, 0.01});
    d = separation();
    d_min = std::min(d_min, d);
  }
  const Config c = config_of(w);
  const auto ca = test::centre_of(w, 0), cb = test::centre_of(w, 1);
  int crossed = 0;  // elements beyond the other cell's centre
  for (std::size_t i = 0; i < c.x.size(); ++i) crossed += c.cell[i] == 0 ? c.x[i] > cb[0] : c.x[i] < ca[0];
  double closest = 1e9;
  for (std::size_t i = 0; i < c.x.size(); ++i)
    for (std::size_t j = 0; j < c.x.size(); ++j)
      if (c.cell[i] == 0 && c.cell[j] == 1)
        closest = std::min(closest, std::sqrt(std::pow(c.x[i] - c.x[j], 2) + std::pow(c.y[i] - c.y[j], 2) +
                                              std::pow(c.z[i] - c.z[j], 2)));
  INFO("separation " << d0 << " -> " << d << ", closest inter-cell pair " << closest << ", crossed "
                     << crossed);
  CHECK(crossed == 0);
  const double range = morse_minimum(p.inter);  // the intercellular force vanishes beyond it
  CHECK(d_min >= d0 - 1e-3);                    // they never approach
  CHECK(d > d0 + 0.1);                          // they were pushed apart
  CHECK(closest > 0.95 * range);  // the overlap was resolved (the force fades towards the range)
  CHECK(d < 1.5);                 // and they stop: no force acts beyond that range
}

TEST_CASE("the RK2 step converges at second order", "[sem]") {
  // two elements of one cell along x: the separation obeys dr/dt = 2 F_intra(r) / eta
  const SemParams p;
  const double r0 = 0.2, t_end = 1.0;
  auto rhs = [&](double r) { return 2.0 * morse_force(r, p.intra) / p.friction; };
  double r_ref = r0;  // reference: classic RK4 in double with a tiny step
  const int fine = 20000;
  for (int k = 0; k < fine; ++k) {
    const double h = t_end / fine;
    const double k1 = rhs(r_ref), k2 = rhs(r_ref + 0.5 * h * k1), k3 = rhs(r_ref + 0.5 * h * k2),
                 k4 = rhs(r_ref + h * k3);
    r_ref += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
  }
  std::vector<double> errors;
  for (int steps : {20, 40, 80}) {
    test::TissueWorld w(Box{0, 0, false, false, true}, 0);
    const auto c = w.add_cell_host();
    w.add_element_host(c, 1.0f - static_cast<float>(r0 / 2), 0.5f, 5.0f, 0);
    w.add_element_host(c, 1.0f + static_cast<float>(r0 / 2), 0.5f, 5.0f, 0);
    w.commit();
    SemSystem sys(p);
    for (int k = 0; k < steps; ++k) sys.run(w, StepContext{k, 0, t_end / steps});
    const auto pos = test::positions(w);
    errors.push_back(std::abs((pos.x[1] - pos.x[0]) - r_ref));
  }
  const double order1 = std::log2(errors[0] / errors[1]), order2 = std::log2(errors[1] / errors[2]);
  INFO("errors " << errors[0] << " " << errors[1] << " " << errors[2]);
  CHECK(order1 == Approx(2.0).margin(0.15));
  CHECK(order2 == Approx(2.0).margin(0.15));
}

TEST_CASE("adhesive elements settle at the membrane's Morse minimum, the floor holds the rest", "[sem]") {
  test::TissueWorld w(Box{0, 0, false, false, true}, 0);
  const auto c = w.add_cell_host();
  w.add_element_host(c, 0.0f, 0.0f, 0.8f, kAdhesiveElement);
  const auto d = w.add_cell_host();
  w.add_element_host(d, 5.0f, 0.0f, 0.0f, 0);  // on the floor, not adhesive
  w.commit();
  SemParams p;
  SemSystem sys(p);
  for (int k = 0; k < 20000; ++k) sys.run(w, StepContext{k, 0, 0.01});
  const auto pos = test::positions(w);
  CHECK(pos.z[0] == Approx(morse_minimum(p.adhesion)).margin(1e-3));
  CHECK(pos.z[1] == 0.0);
}

TEST_CASE("adhesion to a plane mesh equals the seed's adhesion to the plane z = 0", "[sem][substrate]") {
  test::TissueWorld w(Box{6.0f, 6.0f, false, false, true}, 0);
  random_tissue(w, 12, 10, 1.5f, 21);  // every element within the reach (2.88) of the membrane
  SemParams plane_params;
  SemSystem plane(plane_params);
  SemParams mesh_params;
  // the rectangle [-3, 9]^2 reaches 3 beyond every element: the closest point is always the projection
  auto m = mesh::rectangle_mesh(13, 13, 12.0, 12.0);
  for (auto& v : m.x) v -= 3.0;
  for (auto& v : m.y) v -= 3.0;
  mesh_params.substrate = std::make_shared<mesh::TriangleMesh>(m);
  SemSystem curved(mesh_params);
  const auto a = engine_forces(w, plane), b = engine_forces(w, curved);
  for (std::size_t i = 0; i < a.x.size(); ++i) {
    INFO("element " << i);
    REQUIRE(b.x[i] == Approx(a.x[i]).margin(1e-5));
    REQUIRE(b.y[i] == Approx(a.y[i]).margin(1e-5));
    REQUIRE(b.z[i] == Approx(a.z[i]).epsilon(1e-5).margin(1e-5));
  }
}

TEST_CASE("adhesion to a sphere acts along the normal with V_adh of the signed distance",
          "[sem][substrate]") {
  // a closed icosphere of radius 2 about (3, 3, 3); single-element cells (no intracellular forces) far
  // apart (no intercellular ones), each on the normal through a face centre, outside or inside (offset
  // -0.08: pushed outward), whose closest point is that centre (the sphere is convex)
  const auto sphere = mesh::icosphere(3, 2.0);
  auto shifted = std::make_shared<mesh::TriangleMesh>(sphere);
  for (auto& v : shifted->x) v += 3.0;
  for (auto& v : shifted->y) v += 3.0;
  for (auto& v : shifted->z) v += 3.0;
  SemParams params;
  params.substrate = shifted;
  SemSystem sys(params);
  const RefMorse adh = ref(params.adhesion);
  test::TissueWorld w(Box{20.0f, 20.0f, false, false, false}, 0);
  const std::vector<std::size_t> faces{0, 97, 311, 640, 1001, 1279};
  const std::vector<double> offsets{0.25, 0.4, 0.1, -0.08, 0.6, 0.05};
  std::vector<std::array<double, 3>> expected;
  for (std::size_t k = 0; k < faces.size(); ++k) {
    const std::size_t f = faces[k];
    const auto a = mesh::position(*shifted, shifted->corner(f, 0)),
               b = mesh::position(*shifted, shifted->corner(f, 1)),
               c = mesh::position(*shifted, shifted->corner(f, 2));
    auto n = mesh::cross(mesh::sub(b, a), mesh::sub(c, a));
    const double len = mesh::norm(n);
    for (auto& v : n) v /= len;
    const double s = offsets[k];
    const std::array<double, 3> p{(a[0] + b[0] + c[0]) / 3 + s * n[0], (a[1] + b[1] + c[1]) / 3 + s * n[1],
                                  (a[2] + b[2] + c[2]) / 3 + s * n[2]};
    const auto cell = w.add_cell_host();
    w.add_element_host(cell, static_cast<float>(p[0]), static_cast<float>(p[1]), static_cast<float>(p[2]),
                       kAdhesiveElement);
    const double magnitude = -ref_dv(s, adh);  // signed distance s; outward normal n
    expected.push_back({magnitude * n[0], magnitude * n[1], magnitude * n[2]});
  }
  w.commit();
  const auto f = engine_forces(w, sys);
  for (std::size_t k = 0; k < faces.size(); ++k) {
    INFO("face " << faces[k] << ", offset " << offsets[k]);
    const double scale = std::fabs(expected[k][0]) + std::fabs(expected[k][1]) + std::fabs(expected[k][2]);
    CHECK(f.x[k] == Approx(expected[k][0]).margin(2e-4 * scale));
    CHECK(f.y[k] == Approx(expected[k][1]).margin(2e-4 * scale));
    CHECK(f.z[k] == Approx(expected[k][2]).margin(2e-4 * scale));
  }
}

TEST_CASE("a SEM system restored from its saved state continues a reused cell list bit for bit",
          "[sem][checkpoint]") {
  // with lanes, the order in which neighbours are summed follows the cell list's sorted order: a restart
  // that rebuilt the list on the current positions (instead of those it was built on) would differ in
  // float rounding from the run that went on reusing it
  const float l = 5.0f;
  for (const int lanes : {1, 8}) {
    INFO(lanes << " lanes");
    SemParams p;
    p.rebuild_every = 4;
    p.lanes = lanes;
    const double dt = 0.002;
    test::TissueWorld a(Box{l, l, true, true, true}, 0), b(Box{l, l, true, true, true}, 0);
    random_tissue(a, 45, 20, 2.5f, 11);
    random_tissue(b, 45, 20, 2.5f, 11);
    Schedule sa, sb;
    sa.add(std::make_unique<SemSystem>(p));
    sb.add(std::make_unique<SemSystem>(p));
    for (int k = 0; k < 10; ++k) sa.step(a, dt);  // built at 8: steps 10 and 11 reuse it
    const SystemStates states = sa.save_states(a);
    REQUIRE(states.size() == 1);
    CHECK(states[0].second.integers.at("built_step") == 8);
    // b takes a's state as a restart would: the tables, the clock, then the systems' states
    a.download();
    for (std::size_t e = 0; e < a.elements.size(); ++e) {
      b.x.host(e) = a.x.host(e);
      b.y.host(e) = a.y.host(e);
      b.z.host(e) = a.z.host(e);
    }
    b.elements.upload();
    b.step = a.step;
    b.time = a.time;
    sb.restore_states(b, states);
    for (int k = 0; k < 6; ++k) {
      sa.step(a, dt);
      sb.step(b, dt);
    }
    a.download();
    b.download();
    bool same = true;
    for (std::size_t e = 0; e < a.elements.size(); ++e)
      same = same && a.x.host(e) == b.x.host(e) && a.y.host(e) == b.y.host(e) && a.z.host(e) == b.z.host(e);
    CHECK(same);
    CHECK(sb.save_states(b).empty());  // built at 12: step 16 builds, there is nothing to carry over
  }
}
