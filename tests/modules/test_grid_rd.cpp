// Reaction-diffusion on grids against analytic solutions, conservation and independent integrations.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "modules/grid_rd/grid_rd.hpp"
#include "modules/grid_rd/grid_rd_model.hpp"

using namespace tissue;
using namespace tissue::grid_rd;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// A field and its system, outside any Simulation.
template <class Real>
struct Run {
  World world{Box{}};
  GridRdParams params;
  GridField<Real>* field;
  std::unique_ptr<GridRdSystem<Real>> system;
  explicit Run(const GridRdParams& p) : params(p) {
    field = &world.add_field(std::make_unique<GridField<Real>>(
        "rd", p.shape, std::vector<std::string>{"a", "b"}, p.geometry<Real>()));
    system = std::make_unique<GridRdSystem<Real>>(p, *field);
  }
  void step(double dt, int n) {
    for (int i = 0; i < n; ++i) system->run(world, StepContext{i, 0.0, dt});
  }
  std::vector<Real>& host() {
    field->download();
    return field->host();
  }
};

/// Pure diffusion: no reaction terms.
GridRdParams diffusion_only(GridShape shape, Stencil stencil, double d_a, double d_b) {
  GridRdParams p;
  p.shape = shape;
  p.stencil = stencil;
  p.reaction.kind = reactions::ReactionSpec::Kind::polynomial;
  p.reaction.diffusion[0] = d_a;
  p.reaction.diffusion[1] = d_b;
  return p;
}

/// Heat kernel of diffusivity 1 at time t in `dims` dimensions, centred at c.
double heat_kernel(double r2, double t, int dims) {
  return std::exp(-r2 / (4 * t)) / std::pow(4 * kPi * t, dims / 2.0);
}

/// Max-norm error, relative to the peak, of a diffused Gaussian after time T on a periodic box of side L
/// with n nodes per axis (RK4, a quarter of its stability limit).
double gaussian_error(int dims, int n, double length) {
  GridShape shape{n, n, dims == 3 ? n : 1, length / n};
  GridRdParams p = diffusion_only(shape, dims == 3 ? Stencil::seven : Stencil::five, 1.0, 1.0);
  p.integrator = Integrator::rk4;
  Run<double> run(p);
  const double t0 = 0.5, duration = 0.25, c = length / 2;
  auto& u = run.field->host();
  const auto value = [&](int i, int j, int k, double t) {
    const double x = (i + 0.5) * shape.h - c, y = (j + 0.5) * shape.h - c,
                 z = dims == 3 ? (k + 0.5) * shape.h - c : 0.0;
    return heat_kernel(x * x + y * y + z * z, t, dims);
  };
  for (int k = 0; k < shape.nz; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        run.field->host_at(0, i, j, k) = run.field->host_at(1, i, j, k) = value(i, j, k, t0);
  run.field->upload();
  const int steps = static_cast<int>(std::ceil(duration / (0.25 * p.stability_limit())));
  run.step(duration / steps, steps);
  u = run.host();
  double err = 0, peak = 0;
  for (int k = 0; k < shape.nz; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const double exact = value(i, j, k, t0 + duration);
        err = std::max(err, std::abs(run.field->host_at(0, i, j, k) - exact));
        peak = std::max(peak, exact);
      }
  return err / peak;
}

template <class Real>
double total(const std::vector<Real>& v, std::size_t first, std::size_t n) {
  double s = 0;
  for (std::size_t i = first; i < first + n; ++i) s += static_cast<double>(v[i]);
  return s;
}

}  // namespace

TEST_CASE("diffusion of a Gaussian matches the heat kernel at second order in h (2D, 5-point)", "[grid_rd]") {
  const double e32 = gaussian_error(2, 32, 16.0), e64 = gaussian_error(2, 64, 16.0),
               e128 = gaussian_error(2, 128, 16.0);
  INFO("errors " << e32 << " " << e64 << " " << e128);
  CHECK(e128 < 1e-3);
  CHECK(std::log2(e32 / e64) == Approx(2.0).margin(0.15));
  CHECK(std::log2(e64 / e128) == Approx(2.0).margin(0.15));
}

TEST_CASE("diffusion of a Gaussian matches the heat kernel at second order in h (3D, 7-point)", "[grid_rd]") {
  const double e16 = gaussian_error(3, 16, 12.0), e32 = gaussian_error(3, 32, 12.0),
               e64 = gaussian_error(3, 64, 12.0);
  INFO("errors " << e16 << " " << e32 << " " << e64);
  CHECK(e64 < 5e-3);
  CHECK(std::log2(e16 / e32) == Approx(2.0).margin(0.3));
  CHECK(std::log2(e32 / e64) == Approx(2.0).margin(0.15));
}

TEMPLATE_TEST_CASE("pure diffusion conserves mass with periodic and zero-flux boundaries", "[grid_rd]", float,
                   double) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  struct Case {
    GridShape shape;
    Stencil stencil;
    GridBoundary boundary;
  };
  const std::vector<Case> cases{{{40, 30, 1, 1.0}, Stencil::seed9, GridBoundary::periodic},
                                {{40, 30, 1, 1.0}, Stencil::seed9, GridBoundary::neumann},
                                {{40, 30, 1, 0.5}, Stencil::five, GridBoundary::neumann},
                                {{20, 16, 12, 0.5}, Stencil::seven, GridBoundary::periodic},
                                {{20, 16, 12, 0.5}, Stencil::seven, GridBoundary::neumann}};
  for (const auto& c : cases) {
    GridRdParams p = diffusion_only(c.shape, c.stencil, 1.0, 0.5);
    p.faces.fill(c.boundary);
    Run<TestType> run(p);
    for (auto& v : run.field->host()) v = static_cast<TestType>(u(rng));
    run.field->upload();
    const std::size_t n = c.shape.cells();
    const double a0 = total(run.field->host(), 0, n), b0 = total(run.field->host(), n, n);
    run.step(0.9 * p.stability_limit(), 300);
    const auto& v = run.host();
    const double tolerance = std::is_same_v<TestType, double> ? 1e-12 : 2e-5;
    CHECK(std::abs(total(v, 0, n) - a0) / a0 < tolerance);
    CHECK(std::abs(total(v, n, n) - b0) / b0 < tolerance);
    // and diffusion did act: the field is smoother than the random start
    double sd = 0, mean = total(v, 0, n) / static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) sd += std::pow(static_cast<double>(v[i]) - mean, 2);
    CHECK(std::sqrt(sd / static_cast<double>(n)) < 0.05);
  }
}

TEST_CASE("Dirichlet faces give the linear steady profile of pure diffusion", "[grid_rd]") {
  GridRdParams p = diffusion_only({16, 6, 1, 1.0}, Stencil::five, 1.0, 1.0);
  p.faces[0] = p.faces[1] = GridBoundary::dirichlet;  // x; y stays periodic
  p.dirichlet[0] = {1.0, 0.0};
  p.dirichlet[1] = {0.0, 1.0};
  Run<double> run(p);
  run.step(0.2, 20000);
  const auto& v = run.host();
  // ghost nodes at i = -1 (value 1) and i = 16 (value 0): u_i = 1 - (i + 1) / 17
  for (int j = 0; j < 6; ++j)
    for (int i = 0; i < 16; ++i) {
      CHECK(run.field->host_at(0, i, j, 0) == Approx(1.0 - (i + 1) / 17.0).margin(1e-9));
      CHECK(run.field->host_at(1, i, j, 0) == Approx((i + 1) / 17.0).margin(1e-9));
    }
  (void)v;
}

TEST_CASE("without diffusion every node follows the Gray-Scott ODE", "[grid_rd]") {
  GridRdParams p;
  p.shape = {16, 8, 1, 1.0};
  p.reaction.gray_scott = {0.038, 0.061};  // theta
  p.reaction.diffusion[0] = p.reaction.diffusion[1] = 0.0;
  p.integrator = Integrator::rk4;
  Run<double> run(p);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> ua(0.2, 1.0), ub(0.0, 0.5);
  const std::size_t n = p.shape.cells();
  std::vector<double> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i)
    run.field->host()[i] = a[i] = ua(rng), run.field->host()[n + i] = b[i] = ub(rng);
  run.field->upload();
  run.step(0.1, 300);  // t = 30
  const auto& v = run.host();
  // independent: classic RK4 with a 100 times smaller step, written out here
  const double F = 0.038, k = 0.061, h = 1e-3;
  for (std::size_t i = 0; i < n; ++i) {
    double x = a[i], y = b[i];
    const auto f = [&](double aa, double bb, double& da, double& db) {
      da = -aa * bb * bb + F * (1 - aa);
      db = aa * bb * bb - (k + F) * bb;
    };
    for (int s = 0; s < 30000; ++s) {
      double k1a, k1b, k2a, k2b, k3a, k3b, k4a, k4b;
      f(x, y, k1a, k1b);
      f(x + h / 2 * k1a, y + h / 2 * k1b, k2a, k2b);
      f(x + h / 2 * k2a, y + h / 2 * k2b, k3a, k3b);
      f(x + h * k3a, y + h * k3b, k4a, k4b);
      x += h / 6 * (k1a + 2 * k2a + 2 * k3a + k4a);
      y += h / 6 * (k1b + 2 * k2b + 2 * k3b + k4b);
    }
    REQUIRE(v[i] == Approx(x).margin(1e-8));
    REQUIRE(v[n + i] == Approx(y).margin(1e-8));
  }
}

TEST_CASE("float and double runs of a preset agree to float rounding over 1000 steps", "[grid_rd]") {
  GridRdParams p;
  p.shape = {96, 96, 1, 1.0};
  p.reaction.gray_scott = {0.038, 0.061};
  InitialState init;
  init.patch_size = 30;
  init.noise = 0.02;
  Run<float> single(p);
  Run<double> twice(p);
  apply_initial_state(*single.field, init, 1);
  apply_initial_state(*twice.field, init, 1);
  single.step(1.0, 1000);
  twice.step(1.0, 1000);
  const auto& s = single.host();
  const auto& d = twice.host();
  double worst = 0, peak = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(s[i]) - d[i]));
    peak = std::max(peak, std::abs(d[i]));
  }
  INFO("largest float - double difference " << worst);
  CHECK(worst < 1e-4 * peak);
}

TEST_CASE("Gray-Scott presets form bounded patterns, F = k = 0 without B stays uniform", "[grid_rd]") {
  for (const char* name : {"theta", "mu"}) {
    GridRdParams p;
    p.shape = {128, 128, 1, 1.0};
    const auto* preset = reactions::find_preset(name);
    REQUIRE(preset != nullptr);
    p.reaction.gray_scott = {preset->F, preset->k};
    InitialState init;
    init.patch_size = 40;
    init.noise = 0.02;
    Run<float> run(p);
    apply_initial_state(*run.field, init, 2);
    run.step(1.0, 8000);
    const auto& v = run.host();
    const std::size_t n = p.shape.cells();
    double mean = 0, sd = 0;
    for (std::size_t i = 0; i < n; ++i) mean += v[n + i];
    mean /= static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) sd += std::pow(v[n + i] - mean, 2);
    sd = std::sqrt(sd / static_cast<double>(n));
    INFO(name << ": B mean " << mean << ", spatial standard deviation " << sd);
    CHECK(sd > 0.05);  // a pattern, not a uniform state
    CHECK(*std::min_element(v.begin(), v.end()) >= -1e-6f);
    CHECK(*std::max_element(v.begin(), v.end()) <= 1.0f + 1e-5f);  // [0, 1] is invariant for the ODE
  }
  GridRdParams p;
  p.shape = {64, 64, 1, 1.0};
  p.reaction.gray_scott = {0.0, 0.0};
  InitialState init;
  init.type = "uniform";
  Run<float> run(p);
  apply_initial_state(*run.field, init, 3);
  run.step(1.0, 2000);
  const auto& v = run.host();
  for (std::size_t i = 0; i < 4096; ++i) {
    REQUIRE(v[i] == 1.0f);
    REQUIRE(v[4096 + i] == 0.0f);
  }
}

TEST_CASE("stability limits follow the stencil's spectral radius", "[grid_rd]") {
  GridRdParams p;
  p.reaction.diffusion[0] = 1.0;
  p.reaction.diffusion[1] = 0.5;
  p.stencil = Stencil::seed9;
  CHECK(p.stability_limit() == Approx(1.25));  // the seed's dt = 1 is stable
  p.stencil = Stencil::five;
  p.shape.h = 0.5;
  CHECK(p.stability_limit() == Approx(2.0 / (8.0 / 0.25)));
  p.integrator = Integrator::rk4;
  p.stencil = Stencil::seven;
  CHECK(p.stability_limit() == Approx(2.785 / (12.0 / 0.25)));
  // Euler just above the limit grows the highest mode; just below it decays
  for (double factor : {0.98, 1.02}) {
    GridRdParams q = diffusion_only({16, 16, 1, 1.0}, Stencil::seed9, 1.0, 1.0);
    Run<double> run(q);
    for (int j = 0; j < 16; ++j)
      for (int i = 0; i < 16; ++i)
        run.field->host_at(0, i, j, 0) = ((i + j) % 2 ? 1.0 : -1.0);  // the (pi, pi) mode
    run.field->upload();
    run.step(factor * q.stability_limit(), 200);
    const double amplitude = std::abs(run.host()[0]);
    if (factor < 1)
      CHECK(amplitude < 1.0);
    else
      CHECK(amplitude > 1.0);
  }
}

TEST_CASE("a periodic face without a periodic opposite face is refused", "[grid_rd]") {
  GridGeometry<float> g;
  g.face[2] = GridBoundary::neumann;  // ymin; ymax stays periodic
  CHECK_THROWS_AS(GridField<float>("rd", GridShape{8, 8, 1, 1.0}, {"a", "b"}, g), std::invalid_argument);
  g.face[3] = GridBoundary::dirichlet;
  CHECK_NOTHROW(GridField<float>("rd", GridShape{8, 8, 1, 1.0}, {"a", "b"}, g));
}
