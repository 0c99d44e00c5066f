// Conjugate gradients with their iterations on the device (engine/linalg/conjugate_gradient.hpp) and the
// aggregation multigrid that preconditions them (engine/linalg/aggregation_multigrid.hpp), on the backend
// under test, against manufactured solutions of grid Laplacians and independent dense evaluations.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "engine/exec/error.hpp"
#include "engine/linalg/aggregation_multigrid.hpp"
#include "engine/linalg/conjugate_gradient.hpp"
#include "engine/linalg/dense_cholesky.hpp"

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

namespace {

/// A grid Laplacian with every value perturbed symmetrically (an SPD matrix without the grid's symmetry):
/// off-diagonals scaled by 0.5 .. 1.5 and the diagonal kept dominant.
HostCsr perturbed_laplacian(int m, unsigned seed) {
  HostCsr a = grid_laplacian(m, false);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (std::size_t i = 0; i < a.n; ++i)
    for (auto k = static_cast<std::size_t>(a.offsets[i]); k < static_cast<std::size_t>(a.offsets[i + 1]);
         ++k) {
      const auto j = static_cast<std::size_t>(a.columns[k]);
      if (j <= i) continue;
      const double f = u(rng);
      a.values[k] *= f;
      for (auto q = static_cast<std::size_t>(a.offsets[j]); q < static_cast<std::size_t>(a.offsets[j + 1]);
           ++q)
        if (static_cast<std::size_t>(a.columns[q]) == i) a.values[q] *= f;
    }
  for (std::size_t i = 0; i < a.n; ++i) {
    double off = 0.0;
    std::size_t diagonal = 0;
    for (auto k = static_cast<std::size_t>(a.offsets[i]); k < static_cast<std::size_t>(a.offsets[i + 1]); ++k)
      if (static_cast<std::size_t>(a.columns[k]) == i)
        diagonal = k;
      else
        off += std::abs(a.values[k]);
    a.values[diagonal] = off + 0.01;
  }
  return a;
}

}  // namespace

TEST_CASE("aggregates partition the graph into connected pieces and the coarse graph joins them",
          "[linalg][multigrid]") {
  const HostCsr host = grid_laplacian(23, false);
  const linalg::AggregationLevel level = linalg::aggregate_graph(host.offsets, host.columns);
  const std::size_t n = host.n, coarse = level.member_offsets.size() - 1;
  // a 5-point grid's roots gather up to 5 nodes and the nodes left over join them: 3- to 9-fold fewer
  CHECK(coarse * 3 < n);
  CHECK(coarse * 9 > n);
  REQUIRE(level.aggregate.size() == n);
  REQUIRE(level.members.size() == n);
  std::vector<int> seen(n, 0);
  for (std::size_t c = 0; c < coarse; ++c) {
    const auto first = static_cast<std::size_t>(level.member_offsets[c]);
    const auto last = static_cast<std::size_t>(level.member_offsets[c + 1]);
    REQUIRE(last > first);
    for (std::size_t m = first; m < last; ++m) {
      const auto i = static_cast<std::size_t>(level.members[m]);
      ++seen[i];
      CHECK(level.aggregate[i] == static_cast<std::int32_t>(c));
    }
    // connected: a search from the first member over edges inside the aggregate reaches them all
    std::vector<std::size_t> stack = {static_cast<std::size_t>(level.members[first])}, reached = stack;
    while (!stack.empty()) {
      const std::size_t i = stack.back();
      stack.pop_back();
      for (auto k = static_cast<std::size_t>(host.offsets[i]);
           k < static_cast<std::size_t>(host.offsets[i + 1]); ++k) {
        const auto j = static_cast<std::size_t>(host.columns[k]);
        if (level.aggregate[j] == static_cast<std::int32_t>(c) &&
            std::find(reached.begin(), reached.end(), j) == reached.end()) {
          reached.push_back(j);
          stack.push_back(j);
        }
      }
    }
    CHECK(reached.size() == last - first);
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](int k) { return k == 1; }));
  // the coarse pattern is exactly {(agg i, agg j)} over the fine entries, and every fine entry is summed
  // into that coarse entry once
  std::vector<std::vector<std::int32_t>> expected(coarse);
  for (std::size_t i = 0; i < n; ++i)
    for (auto k = static_cast<std::size_t>(host.offsets[i]);
         k < static_cast<std::size_t>(host.offsets[i + 1]); ++k)
      expected[static_cast<std::size_t>(level.aggregate[i])].push_back(
          level.aggregate[static_cast<std::size_t>(host.columns[k])]);
  std::vector<int> summed(host.columns.size(), 0);
  for (std::size_t c = 0; c < coarse; ++c) {
    auto& e = expected[c];
    std::sort(e.begin(), e.end());
    e.erase(std::unique(e.begin(), e.end()), e.end());
    const std::vector<std::int32_t> row(level.columns.begin() + level.offsets[c],
                                        level.columns.begin() + level.offsets[c + 1]);
    CHECK(row == e);
    for (auto q = static_cast<std::size_t>(level.offsets[c]);
         q < static_cast<std::size_t>(level.offsets[c + 1]); ++q)
      for (auto s = level.source_offsets[q]; s < level.source_offsets[q + 1]; ++s) {
        const auto k = static_cast<std::size_t>(level.sources[static_cast<std::size_t>(s)]);
        ++summed[k];
        const auto i = static_cast<std::size_t>(
            std::upper_bound(host.offsets.begin(), host.offsets.end(), static_cast<std::int32_t>(k)) -
            host.offsets.begin() - 1);
        CHECK(level.aggregate[i] == static_cast<std::int32_t>(c));
        CHECK(level.aggregate[static_cast<std::size_t>(host.columns[k])] == level.columns[q]);
      }
  }
  CHECK(std::all_of(summed.begin(), summed.end(), [](int k) { return k == 1; }));

  SECTION("repeated down to the coarsest size") {
    const auto levels = linalg::aggregation_hierarchy(host.offsets, host.columns, 16);
    REQUIRE(!levels.empty());
    std::size_t nodes = n;
    for (const auto& l : levels) {
      const std::size_t next = l.member_offsets.size() - 1;
      CHECK(2 * next <= nodes);
      nodes = next;
    }
    CHECK(nodes <= 16);
  }
  SECTION("a malformed pattern is refused") {
    auto columns = host.columns;
    std::swap(columns[0], columns[1]);  // not ascending
    CHECK_THROWS_AS(linalg::aggregate_graph(host.offsets, columns), std::invalid_argument);
  }
}

/// A perturbed m x m grid Laplacian on the device as an operator on two vectors, with its aggregation
/// multigrid set up (down to 8 nodes) and updated for its values.
struct TwoVectorMultigrid {
  HostCsr host;
  linalg::CsrMatrix a;
  linalg::CsrOperator<2> op;
  linalg::AggregationMultigrid<linalg::CsrOperator<2>> amg;
  TwoVectorMultigrid(int m, unsigned seed) : host(perturbed_laplacian(m, seed)) {
    host.upload(a);
    op = linalg::CsrOperator<2>(a);
    amg.setup(host.offsets, host.columns, {8});
    amg.update(op);
  }
};

TEST_CASE("aggregation multigrid: Galerkin coarse operators and a symmetric positive definite cycle",
          "[linalg][multigrid]") {
  TwoVectorMultigrid mg(30, 4);
  const HostCsr& host = mg.host;
  const linalg::CsrOperator<2>& op = mg.op;
  auto& amg = mg.amg;
  REQUIRE(amg.levels() >= 3);

  // level 1 against P^T A P evaluated densely from the aggregates
  const auto levels = linalg::aggregation_hierarchy(host.offsets, host.columns, 8);
  const std::size_t nc = amg.nodes(1);
  std::vector<double> dense(nc * nc, 0.0);
  for (std::size_t i = 0; i < host.n; ++i)
    for (auto k = static_cast<std::size_t>(host.offsets[i]);
         k < static_cast<std::size_t>(host.offsets[i + 1]); ++k)
      dense[static_cast<std::size_t>(levels[0].aggregate[i]) * nc +
            static_cast<std::size_t>(levels[0].aggregate[static_cast<std::size_t>(host.columns[k])])] +=
          host.values[k];
  const auto& c1 = amg.coarse_operator(1);
  DeviceBuffer<std::int32_t> o_dev, c_dev;
  DeviceBuffer<double> v_dev;
  // the operator's spans are device memory on CUDA: copy them through buffers of the same backend
  o_dev.resize(c1.offsets.size());
  c_dev.resize(c1.columns.size());
  v_dev.resize(c1.values.size());
  exec::copy(c1.offsets, o_dev.span(), c1.offsets.size());
  exec::copy(c1.columns, c_dev.span(), c1.columns.size());
  exec::copy(c1.values, v_dev.span(), c1.values.size());
  const auto ho = o_dev.to_host(), hc = c_dev.to_host();
  const auto hv = v_dev.to_host();
  std::vector<double> assembled(nc * nc, 0.0);
  for (std::size_t i = 0; i < nc; ++i)
    for (auto k = static_cast<std::size_t>(ho[i]); k < static_cast<std::size_t>(ho[i + 1]); ++k)
      assembled[i * nc + static_cast<std::size_t>(hc[k])] = hv[k];
  CHECK(max_difference(assembled, dense) < 1e-12);

  // B symmetric and positive definite: u . B v = v . B u, u . B u > 0
  const std::size_t size = op.size();
  DeviceBuffer<double> u, v, bu(size), bv(size);
  for (unsigned seed = 10; seed < 13; ++seed) {
    const auto hu = random_vector(size, seed), hv2 = random_vector(size, seed + 100);
    u.assign(hu);
    v.assign(hv2);
    amg.apply(op, u.span(), bu.span());
    amg.apply(op, v.span(), bv.span());
    const auto hbu = bu.to_host(), hbv = bv.to_host();
    double ubv = 0.0, vbu = 0.0, ubu = 0.0;
    for (std::size_t i = 0; i < size; ++i) {
      ubv += hu[i] * hbv[i];
      vbu += hv2[i] * hbu[i];
      ubu += hu[i] * hbu[i];
    }
    CHECK(ubv == Approx(vbu).epsilon(1e-12));
    CHECK(ubu > 0.0);
  }
}

/// x = A^-1 b for a dense row-major SPD A, by Gaussian elimination without pivoting.
std::vector<double> solve(std::vector<double> a, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t i = k + 1; i < n; ++i) {
      const double f = a[i * n + k] / a[k * n + k];
      for (std::size_t j = k; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
      b[i] -= f * b[k];
    }
  for (std::size_t k = n; k-- > 0;) {
    for (std::size_t j = k + 1; j < n; ++j) b[k] -= a[k * n + j] * b[j];
    b[k] /= a[k * n + k];
  }
  return b;
}

/// The V(1,1) cycle of aggregation_multigrid.hpp evaluated on the host with dense matrices, one vector
/// (level 0: host's matrix; coarse ones P^T A P from the aggregates).
struct HostCycle {
  std::vector<std::vector<double>> a;          ///< dense, per level
  std::vector<std::vector<std::int32_t>> agg;  ///< aggregate of each node, per level above the coarsest
  std::vector<std::size_t> n;
  bool direct = false;  ///< the coarsest level solved exactly instead of by 8 sweeps
  double alpha = 1.5;   ///< over-correction

  HostCycle(const HostCsr& host, const std::vector<linalg::AggregationLevel>& levels) {
    n.push_back(host.n);
    a.emplace_back(host.n * host.n, 0.0);
    for (std::size_t i = 0; i < host.n; ++i)
      for (auto k = static_cast<std::size_t>(host.offsets[i]);
           k < static_cast<std::size_t>(host.offsets[i + 1]); ++k)
        a[0][i * host.n + static_cast<std::size_t>(host.columns[k])] = host.values[k];
    for (const auto& level : levels) {
      const std::size_t fine = n.back(), coarse = level.member_offsets.size() - 1;
      std::vector<double> c(coarse * coarse, 0.0);
      for (std::size_t i = 0; i < fine; ++i)
        for (std::size_t j = 0; j < fine; ++j)
          c[static_cast<std::size_t>(level.aggregate[i]) * coarse +
            static_cast<std::size_t>(level.aggregate[j])] += a.back()[i * fine + j];
      agg.push_back(level.aggregate);
      a.push_back(std::move(c));
      n.push_back(coarse);
    }
  }
  std::vector<double> times(std::size_t l, const std::vector<double>& x) const {
    std::vector<double> y(n[l], 0.0);
    for (std::size_t i = 0; i < n[l]; ++i)
      for (std::size_t j = 0; j < n[l]; ++j) y[i] += a[l][i * n[l] + j] * x[j];
    return y;
  }
  std::vector<double> apply(std::size_t l, const std::vector<double>& b) const {
    std::vector<double> w(n[l]), x(n[l]);
    for (std::size_t i = 0; i < n[l]; ++i) {
      double row = 0.0;
      for (std::size_t j = 0; j < n[l]; ++j) row += std::abs(a[l][i * n[l] + j]);
      const double d = a[l][i * n[l] + i];
      w[i] = 1.0 / std::max(d / (2.0 / 3.0), row / 1.8);
      x[i] = w[i] * b[i];
    }
    const auto smooth = [&] {
      const auto ax = times(l, x);
      for (std::size_t i = 0; i < n[l]; ++i) x[i] += w[i] * (b[i] - ax[i]);
    };
    if (l + 1 == n.size()) {  // the coarsest: exactly, or 8 sweeps from zero in all
      if (direct) return solve(a[l], b);
      for (int s = 1; s < 8; ++s) smooth();
      return x;
    }
    const auto ax = times(l, x);
    std::vector<double> bc(n[l + 1], 0.0);
    for (std::size_t i = 0; i < n[l]; ++i) bc[static_cast<std::size_t>(agg[l][i])] += b[i] - ax[i];
    const auto zc = apply(l + 1, bc);
    for (std::size_t i = 0; i < n[l]; ++i) x[i] += alpha * zc[static_cast<std::size_t>(agg[l][i])];
    smooth();
    return x;
  }
  /// The cycle applied to each of `width` vectors stored one after another in r.
  std::vector<double> apply_vectors(const std::vector<double>& r, std::size_t width) const {
    std::vector<double> z;
    for (std::size_t c = 0; c < width; ++c) {
      const auto zc = apply(0, std::vector<double>(r.begin() + static_cast<std::ptrdiff_t>(c * n[0]),
                                                   r.begin() + static_cast<std::ptrdiff_t>((c + 1) * n[0])));
      z.insert(z.end(), zc.begin(), zc.end());
    }
    return z;
  }
};

TEST_CASE("aggregation multigrid: the cycle matches a dense host evaluation and sums r . z for the solver",
          "[linalg][multigrid]") {
  TwoVectorMultigrid mg(40, 8);  // two vectors, so slots are exercised
  const HostCsr& host = mg.host;
  const linalg::CsrOperator<2>& op = mg.op;
  auto& amg = mg.amg;
  REQUIRE(amg.levels() >= 4);
  const HostCycle reference(host, linalg::aggregation_hierarchy(host.offsets, host.columns, 8));
  REQUIRE(reference.n.size() == amg.levels());

  const std::size_t size = op.size();
  const auto hr = random_vector(size, 21);
  const std::vector<double> expected = reference.apply_vectors(hr, 2);
  DeviceBuffer<double> r, z(size), partials(2 * ((size + 127) / 128) + 1);
  r.assign(hr);
  partials.zero();
  amg.apply(op, r.span(), z.span(), nullptr, linalg::BlockPartials{partials.span(), 2, 1});
  const auto got = z.to_host();
  CHECK(max_difference(got, expected) < 1e-12 * (1.0 + norm(expected)));
  // the partial sums of r . z fused into the last kernel: one per block of kSolverBlockUnknowns, at 2 b + 1
  const auto hp = partials.to_host();
  double rz = 0.0, fused = 0.0;
  for (std::size_t i = 0; i < size; ++i) rz += hr[i] * got[i];
  for (std::size_t b = 0; 2 * b + 1 < hp.size(); ++b) {
    fused += hp[2 * b + 1];
    CHECK(hp[2 * b] == 0.0);
  }
  CHECK(fused == Approx(rz).epsilon(1e-12));
}

TEST_CASE("the dense Cholesky inverse of an SPD matrix, and a matrix that is not positive definite refused",
          "[linalg][multigrid]") {
  const std::size_t n = 37;
  // A = G G^T + n I from a random G: SPD and well conditioned
  const auto g = random_vector(n * n, 31);
  std::vector<double> a(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      for (std::size_t k = 0; k < n; ++k) a[i + j * n] += g[i * n + k] * g[j * n + k];
      if (i == j) a[i + j * n] += static_cast<double>(n);
    }
  DeviceBuffer<double> dense(n * n);
  linalg::DenseCholeskyInverse inverse;
  inverse.prepare(n, dense.span());
  dense.assign(a);
  inverse.invert(n, dense.span());
  const auto inv = dense.to_host();
  double worst = 0.0, asymmetry = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double p = 0.0;
      for (std::size_t k = 0; k < n; ++k) p += a[i + k * n] * inv[k + j * n];
      worst = std::max(worst, std::abs(p - (i == j ? 1.0 : 0.0)));
      asymmetry = std::max(asymmetry, std::abs(inv[i + j * n] - inv[j + i * n]));
    }
  CHECK(worst < 1e-12);
  CHECK(asymmetry == 0.0);  // both triangles hold the same values

  a[5 + 5 * n] = -1e3;  // an indefinite matrix
  dense.assign(a);
  CHECK_THROWS_AS(inverse.invert(n, dense.span()), NumericalError);
}

TEST_CASE("aggregation multigrid with a direct coarsest level matches a dense host evaluation",
          "[linalg][multigrid]") {
  const HostCsr host = perturbed_laplacian(40, 9);
  linalg::CsrMatrix a;
  host.upload(a);
  const linalg::CsrOperator<2> op(a);
  linalg::AmgSettings settings;
  settings.coarsest_nodes = 60;
  settings.direct_coarsest = true;
  settings.over_correction = 1.85;
  linalg::AggregationMultigrid<linalg::CsrOperator<2>> amg;
  amg.setup(host.offsets, host.columns, settings);
  amg.update(op);
  REQUIRE(amg.direct_coarsest());
  REQUIRE(amg.levels() >= 3);
  HostCycle reference(host, linalg::aggregation_hierarchy(host.offsets, host.columns, 60));
  reference.direct = true;
  reference.alpha = 1.85;
  REQUIRE(reference.n.size() == amg.levels());

  const std::size_t size = op.size();
  const auto hr = random_vector(size, 22);
  const std::vector<double> expected = reference.apply_vectors(hr, 2);
  DeviceBuffer<double> r, z(size);
  r.assign(hr);
  amg.apply(op, r.span(), z.span());
  CHECK(max_difference(z.to_host(), expected) < 1e-11 * (1.0 + norm(expected)));

  // the host's sweeps instead of its exact solve, or its alpha of 1.5, give another z: the comparison sees
  // both
  HostCycle sweeps = reference;
  sweeps.direct = false;
  HostCycle plain = reference;
  plain.alpha = 1.5;
  const std::vector<double> r0(hr.begin(), hr.begin() + static_cast<std::ptrdiff_t>(host.n));
  const auto z0 = z.to_host();
  const std::vector<double> got0(z0.begin(), z0.begin() + static_cast<std::ptrdiff_t>(host.n));
  CHECK(max_difference(got0, sweeps.apply(0, r0)) > 1e-6);
  CHECK(max_difference(got0, plain.apply(0, r0)) > 1e-6);

  SECTION("without levels the cycle is the exact solve") {
    linalg::AmgSettings whole = settings;
    whole.coarsest_nodes = host.n;
    linalg::AggregationMultigrid<linalg::CsrOperator<2>> exact;
    exact.setup(host.offsets, host.columns, whole);
    exact.update(op);
    REQUIRE(exact.levels() == 1);
    REQUIRE(exact.direct_coarsest());
    exact.apply(op, r.span(), z.span());
    const auto got = z.to_host();
    CHECK(max_difference(host.times(got, 2), hr) < 1e-11);
  }
  SECTION("between refreshes the last inverse is kept, and refresh_coarsest() renews it") {
    linalg::AmgSettings lagged = settings;
    lagged.coarsest_refresh = 3;
    linalg::AggregationMultigrid<linalg::CsrOperator<2>> kept;
    kept.setup(host.offsets, host.columns, lagged);
    kept.update(op);
    HostCsr doubled = host;
    for (auto& v : doubled.values) v *= 2.0;
    a.values.assign(doubled.values);
    HostCycle fresh(doubled, linalg::aggregation_hierarchy(host.offsets, host.columns, 60));
    fresh.direct = true;
    fresh.alpha = 1.85;
    HostCycle stale = fresh;
    stale.a.back() = reference.a.back();  // the coarsest solve of the values before
    const auto apply_both = [&](linalg::AggregationMultigrid<linalg::CsrOperator<2>>& mg) {
      mg.apply(op, r.span(), z.span());
      const auto all = z.to_host();
      return std::vector<double>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(host.n));
    };
    const auto expect_stale = stale.apply(0, r0), expect_fresh = fresh.apply(0, r0);
    REQUIRE(max_difference(expect_stale, expect_fresh) > 1e-6);
    // saved after the first update: restored into another multigrid, the next update is the same
    const std::vector<double> saved = kept.coarsest_state();
    REQUIRE(saved.size() == kept.coarsest_state_size());
    CHECK(saved[0] == 1.0);
    linalg::AggregationMultigrid<linalg::CsrOperator<2>> restored;
    restored.setup(host.offsets, host.columns, lagged);
    restored.restore_coarsest(saved);
    restored.update(op);
    kept.update(op);  // the second update of three: the inverse of the first is kept
    const auto kept_z = apply_both(kept);
    CHECK(max_difference(kept_z, expect_stale) < 1e-11 * (1.0 + norm(expect_stale)));
    CHECK(apply_both(restored) == kept_z);
    CHECK_THROWS_AS(restored.restore_coarsest(std::vector<double>(3, 1.0)), std::invalid_argument);
    kept.refresh_coarsest();
    kept.update(op);
    CHECK(max_difference(apply_both(kept), expect_fresh) < 1e-11 * (1.0 + norm(expect_fresh)));
    a.values.assign(host.values);
  }
  SECTION("an over-correction outside (0, 2) is refused") {
    linalg::AmgSettings bad = settings;
    bad.over_correction = 2.0;
    linalg::AggregationMultigrid<linalg::CsrOperator<2>> refused;
    CHECK_THROWS_AS(refused.setup(host.offsets, host.columns, bad), std::invalid_argument);
  }
}

TEST_CASE("a direct coarsest level of a singular Laplacian: its pseudo-inverse on the range",
          "[linalg][multigrid]") {
  const HostCsr host = grid_laplacian(24, true);  // periodic: the constants are its null space
  linalg::CsrMatrix a;
  host.upload(a);
  const linalg::CsrOperator<1> op(a);
  linalg::AmgSettings settings;
  settings.coarsest_nodes = host.n;  // no levels: the cycle is the coarsest solve itself
  settings.direct_coarsest = true;
  settings.constant_null_space = true;
  linalg::AggregationMultigrid<linalg::CsrOperator<1>> amg;
  amg.setup(host.offsets, host.columns, settings);
  amg.update(op);
  REQUIRE(amg.direct_coarsest());
  auto hr = random_vector(host.n, 23);
  double mean = 0.0;
  for (const double v : hr) mean += v / static_cast<double>(host.n);
  for (double& v : hr) v -= mean;  // in the range
  DeviceBuffer<double> r, z(host.n);
  r.assign(hr);
  amg.apply(op, r.span(), z.span());
  const auto got = z.to_host();
  CHECK(max_difference(host.times(got, 1), hr) < 1e-11);
  double sum = 0.0;
  for (const double v : got) sum += v;
  CHECK(std::abs(sum) < 1e-9);  // the pseudo-inverse: no constant added

  SECTION("with aggregates, CG solves the consistent system") {
    linalg::AmgSettings levels = settings;
    levels.coarsest_nodes = 40;
    linalg::AggregationMultigrid<linalg::CsrOperator<1>> mg;
    mg.setup(host.offsets, host.columns, levels);
    mg.update(op);
    REQUIRE(mg.levels() >= 2);
    DeviceBuffer<double> x(host.n);
    x.zero();
    linalg::ConjugateGradient<linalg::CsrOperator<1>> cg;
    const auto result = cg.solve(op, r.span(), x.span(), {1e-10, 500}, &mg);
    CHECK(result.converged);
    CHECK(max_difference(host.times(x.to_host(), 1), hr) < 1e-8);
  }
}

TEST_CASE("multigrid-preconditioned conjugate gradients solve a perturbed Laplacian in few iterations",
          "[linalg][multigrid]") {
  const HostCsr host = perturbed_laplacian(96, 5);
  linalg::CsrMatrix a;
  host.upload(a);
  const linalg::CsrOperator<1> op(a);
  const auto exact = random_vector(host.n, 6);
  const auto b_host = host.times(exact, 1);
  DeviceBuffer<double> b, x(host.n), xj(host.n);
  b.assign(b_host);
  x.zero();
  xj.zero();
  linalg::AggregationMultigrid<linalg::CsrOperator<1>> amg;
  amg.setup(host.offsets, host.columns);
  amg.update(op);
  linalg::ConjugateGradient<linalg::CsrOperator<1>> cg, jacobi;
  const double tol = 1e-11;
  const auto r = cg.solve(op, b.span(), x.span(), {tol, 5000}, &amg);
  const auto rj = jacobi.solve(op, b.span(), xj.span(), {tol, 5000});
  CHECK(r.converged);
  CHECK(rj.converged);
  INFO("iterations: multigrid " << r.iterations << ", Jacobi " << rj.iterations);
  CHECK(5 * r.iterations < rj.iterations);
  auto residual = host.times(x.to_host(), 1);
  for (std::size_t i = 0; i < residual.size(); ++i) residual[i] -= b_host[i];
  CHECK(norm(residual) <= 10 * tol * norm(b_host));
  CHECK(max_difference(x.to_host(), exact) < 1e-6);
  CHECK(max_difference(x.to_host(), xj.to_host()) < 1e-6);

  SECTION("values changed in place and updated are used by the next solve") {
    auto doubled = host;
    for (auto& v : doubled.values) v *= 2.0;
    a.values.assign(doubled.values);
    amg.update(op);
    x.zero();
    const auto r2 = cg.solve(op, b.span(), x.span(), {tol, 5000}, &amg);
    CHECK(r2.converged);
    CHECK(r2.iterations <= r.iterations + 2);
    auto half = exact;
    for (auto& v : half) v *= 0.5;
    CHECK(max_difference(x.to_host(), half) < 1e-6);
  }
  SECTION("apply before update is refused") {
    linalg::AggregationMultigrid<linalg::CsrOperator<1>> fresh;
    fresh.setup(host.offsets, host.columns);
    CHECK_THROWS_AS(fresh.apply(op, b.span(), x.span()), std::logic_error);
  }
}
