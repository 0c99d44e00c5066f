// The adaptive Runge-Kutta-Merson integrator (Algorithm 4.1 of Oberhuber, Suzuki & Zabka 2011) on the
// backend under test, against known solutions and an independent scalar transcription of the algorithm;
// Boost.Odeint's steppers over engine field states against the engine's own integrators.
#include <algorithm>
#include <boost/numeric/odeint/integrate/integrate_adaptive.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/exec/device_buffer.hpp"
#include "engine/exec/error.hpp"
#include "engine/integrate/odeint_adapter.hpp"
#include "engine/integrate/runge_kutta.hpp"
#include "engine/integrate/runge_kutta_merson.hpp"

using namespace tissue;
using integrate::MersonSettings;
using integrate::MersonStage;
using integrate::RungeKuttaMerson;

namespace {

/// y' = -lambda y, every component independent.
struct DecayKernel {
  Span<const double> arg;
  MersonStage<double> stage;
  double lambda;
  TISSUE_HD void operator()(std::size_t i) const { stage.store(i, -lambda * arg[i]); }
};
struct Decay {
  double lambda = 1.0;
  void operator()(Span<const double> arg, const MersonStage<double>& stage) const {
    exec::parallel_for(arg.size(), DecayKernel{arg, stage, lambda});
  }
};

/// y' = cos(t): reads the stage time from the device-resident control record.
struct CosineKernel {
  MersonStage<double> stage;
  TISSUE_HD void operator()(std::size_t i) const { stage.store(i, std::cos(stage.time())); }
};
struct Cosine {
  void operator()(Span<const double> arg, const MersonStage<double>& stage) const {
    exec::parallel_for(arg.size(), CosineKernel{stage});
  }
};

/// 1D heat equation u' = (u[i-1] - 2 u[i] + u[i+1]) / h^2 with u = 0 outside: couples neighbours, so a
/// stage that read its argument while another wrote it would show.
struct HeatKernel {
  Span<const double> arg;
  MersonStage<double> stage;
  double inv_h2;
  TISSUE_HD void operator()(std::size_t i) const {
    const double left = i > 0 ? arg[i - 1] : 0.0, right = i + 1 < arg.size() ? arg[i + 1] : 0.0;
    stage.store(i, (left - 2.0 * arg[i] + right) * inv_h2);
  }
};
struct Heat {
  double inv_h2;
  void operator()(Span<const double> arg, const MersonStage<double>& stage) const {
    exec::parallel_for(arg.size(), HeatKernel{arg, stage, inv_h2});
  }
};

/// Heat as the tile right-hand side of integrate_tiled: tile t owns nodes [t s, t s + s), reduces its
/// last-stage error terms through scratch memory.
struct HeatTile {
  double inv_h2;
  std::size_t segment;
  TISSUE_HD void operator()(const exec::Block& tile, Span<const double> arg,
                            const MersonStage<double>& stage) const {
    const std::size_t n = arg.size(), first = tile.index() * segment;
    const std::size_t count = first + segment <= n ? segment : n - first;
    double* const errors = static_cast<double*>(tile.shared());
    tile.for_each(count, [&](std::size_t l) {
      const std::size_t i = first + l;
      const double left = i > 0 ? arg[i - 1] : 0.0, right = i + 1 < n ? arg[i + 1] : 0.0;
      errors[l] = stage.store(i, (left - 2.0 * arg[i] + right) * inv_h2);
    });
    if (!stage.last()) return;
    tile.sync();
    tile.for_each(1, [&](std::size_t) {
      double m = 0.0;
      for (std::size_t l = 0; l < count; ++l) m = m < errors[l] ? errors[l] : m;
      stage.store_block_error(tile.index(), m);
    });
  }
};

/// Initial state of the heat tests at the n interior nodes x = (i + 1) h, h = 1 / (n + 1):
/// sin(pi x) + 0.3 sin(7 pi x), two eigenmodes of the semi-discrete system.
std::vector<double> heat_initial(std::size_t n) {
  const double h = 1.0 / (n + 1);
  std::vector<double> init(n);
  for (std::size_t i = 0; i < n; ++i)
    init[i] = std::sin(M_PI * (i + 1) * h) + 0.3 * std::sin(7 * M_PI * (i + 1) * h);
  return init;
}

/// The exact solution of the semi-discrete heat system (Heat) from heat_initial(n) at node i and time t:
/// mode k decays at 4/h^2 sin^2(k pi h / 2).
double heat_exact(std::size_t n, std::size_t i, double t) {
  const double h = 1.0 / (n + 1), x = (i + 1) * h;
  const double l1 = 4 / (h * h) * std::pow(std::sin(M_PI * h / 2), 2),
               l7 = 4 / (h * h) * std::pow(std::sin(7 * M_PI * h / 2), 2);
  return std::exp(-l1 * t) * std::sin(M_PI * x) + 0.3 * std::exp(-l7 * t) * std::sin(7 * M_PI * x);
}

/// Algorithm 4.1 for a scalar ODE, transcribed independently of the engine (host, double).
struct ScalarMerson {
  double tolerance, tau;
  long accepted = 0, rejected = 0;
  template <class F>
  double run(double y, double t, double t_end, F f) {
    tau = std::min(tau, t_end - t);
    while (t < t_end) {
      const double k1 = tau * f(t, y);
      const double k2 = tau * f(t + tau / 3, y + k1 / 3);
      const double k3 = tau * f(t + tau / 3, y + k1 / 6 + k2 / 6);
      const double k4 = tau * f(t + tau / 2, y + k1 / 8 + 3 * k3 / 8);
      const double k5 = tau * f(t + tau, y + k1 / 2 - 3 * k3 / 2 + 2 * k4);
      const double e = std::abs(k1 / 5 - 9 * k3 / 10 + 4 * k4 / 5 - k5 / 10) / 3;
      if (e < tolerance) {
        y += (k1 + 4 * k4 + k5) / 6;
        t = tau >= t_end - t ? t_end : t + tau;
        ++accepted;
      } else {
        ++rejected;
      }
      tau = std::min(tau * 0.8 * std::pow(tolerance / e, 0.2), t_end - t);
    }
    return y;
  }
};

}  // namespace

TEST_CASE("Runge-Kutta-Merson solves y' = -y within its tolerance and ends exactly at the end time",
          "[integrate]") {
  const double tolerance = GENERATE(1e-6, 1e-9);
  DeviceBuffer<double> y;
  y.assign({1.0, 2.0});
  RungeKuttaMerson<double> rkm(MersonSettings{tolerance, 1e-3, 0.0, true});
  const auto stats = rkm.integrate(y.span(), 0.0, 2.0, Decay{});
  const auto host = y.to_host();
  CHECK(stats.time == 2.0);  // exactly: the last step is clipped and lands on t_end
  // Merson's estimate bounds the local error per step; the global error stays within a few tolerances here
  CHECK(std::abs(host[0] - std::exp(-2.0)) < 10 * tolerance);
  CHECK(std::abs(host[1] - 2 * std::exp(-2.0)) < 20 * tolerance);
  CHECK(stats.accepted > 0);
}

TEST_CASE("Runge-Kutta-Merson on y' = cos t reads the stage times and hits every end time exactly",
          "[integrate]") {
  DeviceBuffer<double> y;
  y.assign({0.0});
  RungeKuttaMerson<double> rkm(MersonSettings{1e-10, 0.01, 0.0, true});
  double t = 0.0;
  for (int k = 0; k < 7; ++k) {  // seven output intervals of 0.1 (not exact in binary)
    const double t1 = 0.1 * (k + 1);
    const auto stats = rkm.integrate(y.span(), t, t1, Cosine{});
    CHECK(stats.time == t1);
    t = t1;
  }
  CHECK(std::abs(y.to_host()[0] - std::sin(t)) < 1e-8);
}

TEST_CASE("Runge-Kutta-Merson grows the step where the solution is smooth and rejects without applying",
          "[integrate]") {
  const double tolerance = 1e-8;
  SECTION("the step grows as y' = -y decays") {
    DeviceBuffer<double> y;
    y.assign({1.0});
    RungeKuttaMerson<double> rkm(MersonSettings{tolerance, 1e-4, 0.0, true});
    const auto stats = rkm.integrate(y.span(), 0.0, 10.0, Decay{});
    CHECK(stats.last_step > 100 * 1e-4);
    CHECK(stats.accepted < 1000);  // 1e5 steps at the initial size
  }
  SECTION("an oversized first step is rejected, and the trajectory equals Algorithm 4.1 step by step") {
    DeviceBuffer<double> y;
    y.assign({1.0});
    RungeKuttaMerson<double> rkm(MersonSettings{tolerance, 3.0, 0.0, true});
    const auto stats = rkm.integrate(y.span(), 0.0, 5.0, Decay{});
    ScalarMerson ref{tolerance, 3.0};
    const double expected = ref.run(1.0, 0.0, 5.0, [](double, double v) { return -v; });
    CHECK(ref.rejected > 0);
    CHECK(stats.rejected == ref.rejected);
    CHECK(stats.accepted == ref.accepted);
    // a rejected step applied would put the result far off; same operations give the same value
    CHECK(y.to_host()[0] == Approx(expected).epsilon(1e-13));
    CHECK(std::abs(y.to_host()[0] - std::exp(-5.0)) < 10 * tolerance);
  }
}

TEST_CASE("Runge-Kutta-Merson takes its step decisions from the largest error term anywhere in the field",
          "[integrate]") {
  // y' = -y with y = 1 except one component at 2: the error terms scale with y, so the decisions are those
  // of the scalar algorithm started at 2. Sizes for both reductions: one block (up to 256 K values) and CUB.
  const std::size_t n = GENERATE(std::size_t(3001), std::size_t(300001));
  const std::size_t k = GENERATE_COPY(std::size_t(0), n / 2 + 1, n - 1);
  std::vector<double> init(n, 1.0);
  init[k] = 2.0;
  DeviceBuffer<double> y;
  y.assign(init);
  const double tolerance = 1e-8;
  RungeKuttaMerson<double> rkm(MersonSettings{tolerance, 0.7, 0.0, true});
  const auto stats = rkm.integrate(y.span(), 0.0, 3.0, Decay{});
  ScalarMerson ref{tolerance, 0.7};
  const double expected = ref.run(2.0, 0.0, 3.0, [](double, double v) { return -v; });
  CHECK(ref.rejected > 0);
  CHECK(stats.accepted == ref.accepted);
  CHECK(stats.rejected == ref.rejected);
  const auto out = y.to_host();
  CHECK(out[k] == Approx(expected).epsilon(1e-13));
  CHECK(out[(k + 1) % n] == Approx(expected / 2).epsilon(1e-13));
}

TEST_CASE("Runge-Kutta-Merson: fused stage combinations equal the plain kernels on a coupled system",
          "[integrate]") {
  const std::size_t n = 200;
  const double h = 1.0 / (n + 1);
  const std::vector<double> init = heat_initial(n);
  DeviceBuffer<double> fused, plain;
  fused.assign(init);
  plain.assign(init);
  RungeKuttaMerson<double> a(MersonSettings{1e-7, 1e-6, 0.0, true}),
      b(MersonSettings{1e-7, 1e-6, 0.0, false});
  const auto sa = a.integrate(fused.span(), 0.0, 0.02, Heat{1.0 / (h * h)});
  const auto sb = b.integrate(plain.span(), 0.0, 0.02, Heat{1.0 / (h * h)});
  CHECK(sa.accepted == sb.accepted);
  CHECK(sa.rejected == sb.rejected);
  const auto fa = fused.to_host(), pb = plain.to_host();
  double worst = 0.0, change = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    worst = std::max(worst, std::abs(fa[i] - pb[i]));
    change = std::max(change, std::abs(fa[i] - heat_exact(n, i, 0.02)));
  }
  CHECK(worst < 1e-13);
  CHECK(change < 1e-5);
}

TEST_CASE("Runge-Kutta-Merson in persistent tiled launches equals the launched iterations bit for bit",
          "[integrate]") {
  // ~10^4 iterations (several cooperative launches), a stability-bound step that is rejected often (so
  // the state and candidate buffers swap in every parity), tiles that do not divide n, two calls.
  const std::size_t n = 200, segment = GENERATE(std::size_t(7), std::size_t(64), std::size_t(256));
  const double h = 1.0 / (n + 1);
  const std::vector<double> init = heat_initial(n);
  DeviceBuffer<double> tiled, launched;
  tiled.assign(init);
  launched.assign(init);
  const MersonSettings settings{1e-7, 1e-6, 0.0, true};
  RungeKuttaMerson<double> a(settings), b(settings);
  const std::size_t tiles = (n + segment - 1) / segment;
  std::int64_t accepted = 0, rejected = 0;
  for (const auto& [t0, t1] : {std::pair{0.0, 0.25}, std::pair{0.25, 0.3}}) {
    const auto sa = a.integrate_tiled<64, 1>(tiled.span(), t0, t1, tiles, segment * sizeof(double),
                                             HeatTile{1.0 / (h * h), segment});
    const auto sb = b.integrate(launched.span(), t0, t1, Heat{1.0 / (h * h)});
    CHECK(sa.accepted == sb.accepted);
    CHECK(sa.rejected == sb.rejected);
    CHECK(sa.time == t1);
    CHECK(sa.last_step == sb.last_step);
    accepted += sa.accepted;
    rejected += sa.rejected;
  }
  CHECK(accepted + rejected > 3 * 4096);
  CHECK(rejected > 100);
  const auto ta = tiled.to_host(), lb = launched.to_host();
  std::size_t differ = 0;
  double change = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    differ += ta[i] != lb[i];
    change = std::max(change, std::abs(ta[i] - heat_exact(n, i, 0.3)));
  }
  CHECK(differ == 0);
  CHECK(change < 1e-5);
}

TEST_CASE("Runge-Kutta-Merson refuses bad input and stops on a blow-up", "[integrate]") {
  CHECK_THROWS_AS(RungeKuttaMerson<double>(MersonSettings{0.0}), InputError);
  CHECK_THROWS_AS(RungeKuttaMerson<double>(MersonSettings{-1e-3}), InputError);
  DeviceBuffer<double> y;
  y.assign({1.0});
  RungeKuttaMerson<double> rkm(MersonSettings{1e-6});
  CHECK_THROWS_AS(rkm.integrate(y.span(), 1.0, 0.5, Decay{}), InputError);
  y.assign({std::nan("")});
  CHECK_THROWS_AS(rkm.integrate(y.span(), 0.0, 1.0, Decay{}), NumericalError);
}

namespace {

/// The 1D heat system of HeatKernel as a plain rate dudt = f(u), for the fixed-step integrators.
struct HeatRate {
  Span<const double> u;
  Span<double> dudt;
  double inv_h2;
  TISSUE_HD void operator()(std::size_t i) const {
    const double left = i > 0 ? u[i - 1] : 0.0, right = i + 1 < u.size() ? u[i + 1] : 0.0;
    dudt[i] = (left - 2.0 * u[i] + right) * inv_h2;
  }
};

/// The heat system as odeint sees it: system(x, dxdt, t) on FieldState.
struct OdeintHeat {
  double inv_h2;
  void operator()(const integrate::FieldState<double>& x, integrate::FieldState<double>& dxdt, double) const {
    exec::parallel_for(x.size(), HeatRate{x.span(), dxdt.span(), inv_h2});
  }
};

/// Initial modes 1 and 7 of the heat system on n nodes and its exact semi-discrete solution at t.
struct HeatModes {
  std::size_t n;
  double h() const { return 1.0 / static_cast<double>(n + 1); }
  std::vector<double> at(double t) const {
    std::vector<double> u(n);
    const double l1 = 4 / (h() * h()) * std::pow(std::sin(M_PI * h() / 2), 2),
                 l7 = 4 / (h() * h()) * std::pow(std::sin(7 * M_PI * h() / 2), 2);
    for (std::size_t i = 0; i < n; ++i) {
      const double x = static_cast<double>(i + 1) * h();
      u[i] = std::exp(-l1 * t) * std::sin(M_PI * x) + 0.3 * std::exp(-l7 * t) * std::sin(7 * M_PI * x);
    }
    return u;
  }
};

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

}  // namespace

TEST_CASE("odeint's RK4 over engine field states equals the engine's RK4 step for step",
          "[integrate][odeint]") {
  const HeatModes modes{100};
  const double inv_h2 = 1.0 / (modes.h() * modes.h()), dt = 2e-5, t_end = 0.01;
  integrate::FieldState<double> x(modes.n);
  x.buffer().upload(modes.at(0.0).data(), modes.n);
  DeviceBuffer<double> u;
  u.assign(modes.at(0.0));
  integrate::OdeintRk4<double> odeint_rk4;
  integrate::RungeKutta4<double> engine_rk4;
  const auto rate = [&](Span<const double> v, Span<double> dvdt) {
    exec::parallel_for(v.size(), HeatRate{v, dvdt, inv_h2});
  };
  const int steps = static_cast<int>(std::lround(t_end / dt));
  for (int s = 0; s < steps; ++s) {
    odeint_rk4.do_step(OdeintHeat{inv_h2}, x, s * dt, dt);
    engine_rk4.step(u.span(), dt, rate);
  }
  const std::vector<double> a = x.buffer().to_host(), b = u.to_host(), exact = modes.at(t_end);
  CHECK(max_difference(a, b) < 1e-13);             // the same method, rounding apart
  CHECK(max_difference(a, exact) < 1e-9);          // and both fourth-order accurate
  CHECK(max_difference(a, modes.at(0.0)) > 0.01);  // the state moved
}

TEST_CASE("odeint's controlled Dormand-Prince over engine field states agrees with Runge-Kutta-Merson",
          "[integrate][odeint]") {
  namespace odeint = boost::numeric::odeint;
  const HeatModes modes{60};
  const double inv_h2 = 1.0 / (modes.h() * modes.h()), t_end = 0.02, tolerance = 1e-9;
  integrate::FieldState<double> x(modes.n);
  x.buffer().upload(modes.at(0.0).data(), modes.n);
  auto controlled = odeint::make_controlled(tolerance, tolerance, integrate::OdeintDopri5<double>());
  const std::size_t odeint_steps =
      odeint::integrate_adaptive(controlled, OdeintHeat{inv_h2}, x, 0.0, t_end, 1e-6);
  DeviceBuffer<double> u;
  u.assign(modes.at(0.0));
  RungeKuttaMerson<double> rkm(MersonSettings{tolerance, 1e-6, 0.0, true});
  const auto stats = rkm.integrate(u.span(), 0.0, t_end, Heat{inv_h2});
  const std::vector<double> a = x.buffer().to_host(), b = u.to_host(), exact = modes.at(t_end);
  CHECK(odeint_steps > 10);  // adaptive steps were taken, not one
  CHECK(stats.accepted > 10);
  CHECK(max_difference(a, exact) < 1e-7);
  CHECK(max_difference(b, exact) < 1e-7);
  CHECK(max_difference(a, b) < 2e-7);
}

TEST_CASE("odeint field states copy deeply and the algebra's norm is the largest magnitude",
          "[integrate][odeint]") {
  integrate::FieldState<double> a(5);
  const std::vector<double> values{1.0, -7.5, 3.0, 0.0, 2.0};
  a.buffer().upload(values.data(), values.size());
  integrate::FieldState<double> b = a;
  a.buffer().zero();
  CHECK(b.buffer().to_host() == values);
  CHECK(integrate::FieldAlgebra::norm_inf(b) == 7.5);
  integrate::FieldState<double> c;
  boost::numeric::odeint::resize(c, b);
  CHECK(c.size() == 5);
  CHECK(boost::numeric::odeint::same_size(c, b));
}
