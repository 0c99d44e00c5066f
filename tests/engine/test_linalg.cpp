// Conjugate gradients with their iterations on the device (engine/linalg/conjugate_gradient.hpp), on the
// backend under test, against manufactured solutions of grid Laplacians.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "engine/exec/error.hpp"
#include "engine/linalg/conjugate_gradient.hpp"

using namespace tissue;

namespace {

/// The 5-point Laplacian of an m x m grid (positive form, unit spacing): Dirichlet (value 0 outside, so
/// SPD) or periodic (singular: constants). Host CSR, columns ascending.
struct HostCsr {
  std::size_t n = 0;
  std::vector<std::int32_t> offsets, columns;
  std::vector<double> values;

  std::vector<double> times(const std::vector<double>& x, std::size_t width) const {
    std::vector<double> y(x.size(), 0.0);
    for (std::size_t c = 0; c < width; ++c)
      for (std::size_t i = 0; i < n; ++i)
        for (auto k = static_cast<std::size_t>(offsets[i]); k < static_cast<std::size_t>(offsets[i + 1]); ++k)
          y[c * n + i] += values[k] * x[c * n + static_cast<std::size_t>(columns[k])];
    return y;
  }
  void upload(linalg::CsrMatrix& a) const {
    a.set_pattern(static_cast<std::int32_t>(n), offsets, columns);
    a.values.assign(values);
  }
};

HostCsr grid_laplacian(int m, bool periodic) {
  HostCsr a;
  a.n = static_cast<std::size_t>(m * m);
  a.offsets.push_back(0);
  for (int y = 0; y < m; ++y)
    for (int x = 0; x < m; ++x) {
      std::vector<std::pair<std::int32_t, double>> row = {{y * m + x, 4.0}};
      const int dx[4] = {-1, 1, 0, 0}, dy[4] = {0, 0, -1, 1};
      for (int d = 0; d < 4; ++d) {
        int nx = x + dx[d], ny = y + dy[d];
        if (periodic) {
          nx = (nx + m) % m;
          ny = (ny + m) % m;
        } else if (nx < 0 || ny < 0 || nx >= m || ny >= m) {
          continue;
        }
        row.push_back({ny * m + nx, -1.0});
      }
      std::sort(row.begin(), row.end());
      for (const auto& [c, v] : row) {
        a.columns.push_back(c);
        a.values.push_back(v);
      }
      a.offsets.push_back(static_cast<std::int32_t>(a.columns.size()));
    }
  return a;
}

std::vector<double> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

double norm(const std::vector<double>& v) {
  double s = 0.0;
  for (const double x : v) s += x * x;
  return std::sqrt(s);
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

}  // namespace

TEST_CASE("conjugate gradients solve an SPD grid Laplacian for two right-hand sides at once", "[linalg]") {
  const HostCsr host = grid_laplacian(40, false);
  linalg::CsrMatrix a;
  host.upload(a);
  const auto exact = random_vector(2 * host.n, 1);
  const auto b_host = host.times(exact, 2);
  DeviceBuffer<double> b, x(2 * host.n);
  b.assign(b_host);
  x.zero();
  linalg::ConjugateGradient<linalg::CsrOperator<2>> cg;
  const double tol = 1e-12;
  const linalg::CgResult r = cg.solve(linalg::CsrOperator<2>(a), b.span(), x.span(), {tol, 5000});
  CHECK(r.converged);
  CHECK(r.relative_residual <= tol);
  // exact arithmetic needs at most one iteration per distinct eigenvalue (< n); Jacobi CG on a 40^2
  // Laplacian needs O(m) = a few hundred
  CHECK(r.iterations > 10);
  CHECK(r.iterations < 400);
  const auto solution = x.to_host();
  // the true residual (not the recursively updated one) meets the tolerance too
  auto residual = host.times(solution, 2);
  for (std::size_t i = 0; i < residual.size(); ++i) residual[i] -= b_host[i];
  CHECK(norm(residual) <= 10 * tol * norm(b_host));
  // error <= ||A^-1|| ||r||, with ||A^-1|| = 1 / lambda_min ~ (m + 1)^2 / (2 pi^2)
  CHECK(max_difference(solution, exact) < 1e-8);

  SECTION("a warm start at the solution needs no iteration") {
    const auto again = cg.solve(linalg::CsrOperator<2>(a), b.span(), x.span(), {1e-9, 5000});
    CHECK(again.iterations == 0);
    CHECK(again.converged);
  }
  SECTION("values changed in place are used by the next solve (the recorded iterations read them)") {
    auto doubled = host;
    for (auto& v : doubled.values) v *= 2.0;
    a.values.assign(doubled.values);
    x.zero();
    const auto r2 = cg.solve(linalg::CsrOperator<2>(a), b.span(), x.span(), {tol, 5000});
    CHECK(r2.converged);
    auto half = exact;
    for (auto& v : half) v *= 0.5;
    CHECK(max_difference(x.to_host(), half) < 1e-8);
  }
  SECTION("the normwise backward error rule stops at ||r|| <= tol (||A|| ||x|| + ||b||)") {
    x.zero();
    const double a_norm = 8.0;  // the largest absolute row sum of the 5-point Laplacian
    const auto be = cg.solve(linalg::CsrOperator<2>(a), b.span(), x.span(), {tol, 5000, a_norm});
    CHECK(be.converged);
    CHECK(be.backward_error <= tol);
    const auto xb = x.to_host();
    auto rb = host.times(xb, 2);
    for (std::size_t i = 0; i < rb.size(); ++i) rb[i] -= b_host[i];
    CHECK(norm(rb) <= 10 * tol * (a_norm * norm(xb) + norm(b_host)));
    // a weaker rule than the relative residual at the same tolerance: fewer iterations
    CHECK(be.iterations < r.iterations);
    CHECK(be.relative_residual > be.backward_error);
  }
  SECTION("the iteration cap is honoured and reported") {
    x.zero();
    const auto capped = cg.solve(linalg::CsrOperator<2>(a), b.span(), x.span(), {tol, 7});
    CHECK_FALSE(capped.converged);
    CHECK(capped.iterations == 7);
    CHECK(capped.relative_residual > tol);
  }
}

TEST_CASE("conjugate gradients solve a singular periodic Laplacian for a right-hand side in its range",
          "[linalg]") {
  const HostCsr host = grid_laplacian(32, true);
  linalg::CsrMatrix a;
  host.upload(a);
  auto exact = random_vector(host.n, 2);
  const auto b_host = host.times(exact, 1);  // sums to zero: in the range
  DeviceBuffer<double> b, x(host.n);
  b.assign(b_host);
  x.zero();
  linalg::ConjugateGradient<linalg::CsrOperator<1>> cg;
  const auto r = cg.solve(linalg::CsrOperator<1>(a), b.span(), x.span(), {1e-11, 5000});
  CHECK(r.converged);
  // the solution is exact up to a constant: compare after removing the means
  auto solution = x.to_host();
  double shift = 0.0;
  for (std::size_t i = 0; i < host.n; ++i) shift += (solution[i] - exact[i]) / static_cast<double>(host.n);
  for (std::size_t i = 0; i < host.n; ++i) solution[i] -= shift;
  CHECK(max_difference(solution, exact) < 1e-7);
}

TEST_CASE("conjugate gradients report a matrix that is not positive definite", "[linalg]") {
  HostCsr host = grid_laplacian(8, false);
  for (auto& v : host.values) v = -v;  // negative definite, negative diagonal
  linalg::CsrMatrix a;
  host.upload(a);
  DeviceBuffer<double> b, x(host.n);
  b.assign(random_vector(host.n, 3));
  x.zero();
  linalg::ConjugateGradient<linalg::CsrOperator<1>> cg;
  CHECK_THROWS_AS(cg.solve(linalg::CsrOperator<1>(a), b.span(), x.span(), {1e-10, 100}), NumericalError);
  SECTION("a zero right-hand side gives x = 0 without iterating") {
    b.zero();
    const auto r = cg.solve(linalg::CsrOperator<1>(a), b.span(), x.span(), {1e-10, 100});
    CHECK(r.converged);
    CHECK(r.iterations == 0);
    CHECK(max_difference(x.to_host(), std::vector<double>(host.n, 0.0)) == 0.0);
  }
}
