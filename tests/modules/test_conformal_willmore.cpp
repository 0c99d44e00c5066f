// Conformal Willmore flow by spin transformations (modules/curvature_flow/conformal_willmore.hpp) against
// independent dense assemblies, the identity transform, the round sphere, and the flow's energy decay.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/exec/error.hpp"
#include "engine/linalg/aggregation_multigrid.hpp"
#include "engine/mesh/triangle_mesh.hpp"
#include "engine/run/runner.hpp"
#include "engine/util/random.hpp"
#include "modules/builtin_modules.hpp"
#include "modules/curvature_flow/conformal_willmore.hpp"

using namespace tissue;
using namespace tissue::curvature_flow;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// Uniform in (0, 1] from the engine's counter-based generator.
double uniform(std::uint64_t seed, std::size_t i) {
  return static_cast<double>(random::uniform4(seed, 0, i, 0).v[0]);
}

mesh::TriangleMesh tetrahedron() {
  mesh::TriangleMesh m;
  m.x = {1, -1, -1, 1};
  m.y = {1, -1, 1, -1};
  m.z = {1, 1, -1, -1};
  m.faces = {0, 1, 3, 0, 2, 1, 0, 3, 2, 1, 2, 3};
  return m;
}

/// The unit cube [0, 1]^3, two triangles per side, counter-clockwise from outside.
mesh::TriangleMesh cube() {
  mesh::TriangleMesh m;
  for (int v = 0; v < 8; ++v) {
    m.x.push_back(v & 1);
    m.y.push_back((v >> 1) & 1);
    m.z.push_back((v >> 2) & 1);
  }
  m.faces = {0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4,
             2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5};
  return m;
}

/// The sphere of radius 1 with every vertex moved along its radius by amplitude * (uniform in [-1, 1]).
mesh::TriangleMesh noisy_sphere(int subdivisions, double amplitude, std::uint64_t seed) {
  mesh::TriangleMesh m = mesh::icosphere(subdivisions, 1.0);
  for (std::size_t v = 0; v < m.vertex_count(); ++v) {
    const double s = 1.0 + amplitude * (2.0 * uniform(seed, v) - 1.0);
    m.x[v] *= s;
    m.y[v] *= s;
    m.z[v] *= s;
  }
  return m;
}

using Quat = std::array<double, 4>;
/// Left multiplication matrix of q (w, x, y, z), written out independently of the kernels.
std::array<std::array<double, 4>, 4> left_matrix(const Quat& q) {
  const double a = q[0], b = q[1], c = q[2], d = q[3];
  return {{{a, -b, -c, -d}, {b, a, -d, c}, {c, d, a, -b}, {d, -c, b, a}}};
}

struct Dense {
  std::size_t n;
  std::vector<double> a;
  double& operator()(std::size_t i, std::size_t j) { return a[i * n + j]; }
};

/// The cotangent Laplacian summed face by face from the corner angles.
Dense dense_laplacian(const mesh::TriangleMesh& m) {
  Dense l{m.vertex_count(), std::vector<double>(m.vertex_count() * m.vertex_count(), 0.0)};
  for (std::size_t f = 0; f < m.face_count(); ++f)
    for (int c = 0; c < 3; ++c) {
      const auto o = static_cast<std::size_t>(m.corner(f, c));
      const auto i = static_cast<std::size_t>(m.corner(f, (c + 1) % 3));
      const auto j = static_cast<std::size_t>(m.corner(f, (c + 2) % 3));
      const double u[3] = {m.x[i] - m.x[o], m.y[i] - m.y[o], m.z[i] - m.z[o]};
      const double v[3] = {m.x[j] - m.x[o], m.y[j] - m.y[o], m.z[j] - m.z[o]};
      const double cr[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
      const double cot = (u[0] * v[0] + u[1] * v[1] + u[2] * v[2]) /
                         std::sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]);
      l(i, j) -= 0.5 * cot;
      l(j, i) -= 0.5 * cot;
      l(i, i) += 0.5 * cot;
      l(j, j) += 0.5 * cot;
    }
  return l;
}

/// E = sum_f A_f (D_f - P_f)^T (D_f - P_f) from its definition as a least-squares form (Crane et al.
/// 2011, §5.2): (D lambda)_f = -1 / (2 A_f) sum_c e_c lambda_c, (P lambda)_f = sum_c rho_c lambda_c / 3,
/// as real 4 x 4n blocks per face.
Dense dense_dirac(const mesh::TriangleMesh& m, const std::vector<double>& rho) {
  const std::size_t n = m.vertex_count();
  Dense e{4 * n, std::vector<double>(16 * n * n, 0.0)};
  for (std::size_t f = 0; f < m.face_count(); ++f) {
    std::size_t v[3];
    double p[3][3];
    for (int c = 0; c < 3; ++c) {
      v[c] = static_cast<std::size_t>(m.corner(f, c));
      p[c][0] = m.x[v[c]];
      p[c][1] = m.y[v[c]];
      p[c][2] = m.z[v[c]];
    }
    const double u[3] = {p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]};
    const double w[3] = {p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]};
    const double cr[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    const double area = 0.5 * std::sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]);
    // the face's 4 x 12 block row of D - P
    double b[4][12] = {};
    for (int c = 0; c < 3; ++c) {
      const double* a = p[(c + 1) % 3];
      const double* z = p[(c + 2) % 3];
      const Quat ec{0.0, -(z[0] - a[0]) / (2 * area), -(z[1] - a[1]) / (2 * area),
                    -(z[2] - a[2]) / (2 * area)};
      const auto mat = left_matrix(ec);
      for (int r = 0; r < 4; ++r)
        for (int k = 0; k < 4; ++k) b[r][4 * c + k] = mat[r][k] - (r == k ? rho[v[c]] / 3.0 : 0.0);
    }
    for (int c1 = 0; c1 < 3; ++c1)
      for (int k1 = 0; k1 < 4; ++k1)
        for (int c2 = 0; c2 < 3; ++c2)
          for (int k2 = 0; k2 < 4; ++k2) {
            double s = 0.0;
            for (int r = 0; r < 4; ++r) s += b[r][4 * c1 + k1] * b[r][4 * c2 + k2];
            e(4 * v[c1] + static_cast<std::size_t>(k1), 4 * v[c2] + static_cast<std::size_t>(k2)) += area * s;
          }
  }
  return e;
}

double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

}  // namespace

TEST_CASE("the cotangent Laplacian and the Dirac operator equal independent dense assemblies",
          "[conformal_willmore]") {
  const std::vector<std::pair<const char*, mesh::TriangleMesh>> meshes = {
      {"tetrahedron", tetrahedron()}, {"cube", cube()}, {"icosphere", noisy_sphere(1, 0.1, 3)}};
  for (const auto& [name, m] : meshes) {
    INFO(name);
    ConformalWillmoreSettings settings;
    ConformalWillmoreFlow flow(m, settings);
    flow.assemble_laplacian();
    const Dense l = dense_laplacian(m);
    CHECK(max_abs_difference(flow.laplacian().to_dense(), l.a) < 1e-12);

    std::vector<double> rho(m.vertex_count());
    for (std::size_t v = 0; v < rho.size(); ++v) rho[v] = 2.0 * uniform(7, v) - 1.0;
    flow.set_curvature_change(rho);
    flow.assemble_dirac();
    Dense e = dense_dirac(m, rho);
    double trace = 0.0;
    for (std::size_t v = 0; v < m.vertex_count(); ++v) trace += l.a[v * m.vertex_count() + v];
    const double shift = settings.eigen_shift * trace / static_cast<double>(m.vertex_count());
    for (std::size_t i = 0; i < e.n; ++i) e(i, i) += shift;
    const auto assembled = flow.dirac().to_dense();
    double scale = 0.0;
    for (const double v : e.a) scale = std::max(scale, std::abs(v));
    CHECK(max_abs_difference(assembled, e.a) < 1e-12 * scale);
    // the real 4n x 4n form is symmetric (E is quaternionic Hermitian)
    Dense a{e.n, assembled};
    double asym = 0.0;
    for (std::size_t i = 0; i < e.n; ++i)
      for (std::size_t j = 0; j < e.n; ++j) asym = std::max(asym, std::abs(a(i, j) - a(j, i)));
    CHECK(asym < 1e-12 * scale);
    // the quaternion-matrix product of the conjugate-gradient solver is the same operator
    std::vector<double> x(e.n), ex(e.n, 0.0);
    for (std::size_t i = 0; i < e.n; ++i) x[i] = 2.0 * uniform(11, i) - 1.0;
    for (std::size_t i = 0; i < e.n; ++i)
      for (std::size_t j = 0; j < e.n; ++j) ex[i] += e(i, j) * x[j];
    CHECK(max_abs_difference(flow.dirac_product(x), ex) < 1e-12 * scale * static_cast<double>(e.n));
  }
}

TEST_CASE("the multigrid's direct coarsest level inverts the quaternionic Dirac operator",
          "[conformal_willmore]") {
  const mesh::TriangleMesh m = noisy_sphere(2, 0.1, 4);
  ConformalWillmoreFlow flow(m, ConformalWillmoreSettings{});
  flow.assemble_laplacian();
  std::vector<double> rho(m.vertex_count());
  for (std::size_t v = 0; v < rho.size(); ++v) rho[v] = -0.5 * uniform(9, v);  // D - rho definite
  flow.set_curvature_change(rho);
  flow.assemble_dirac();
  const QuaternionMatrix e = flow.dirac_quaternions();
  linalg::AmgSettings settings;
  settings.coarsest_nodes = m.vertex_count();  // no levels: the cycle is the dense solve of all of E
  settings.direct_coarsest = true;
  linalg::AggregationMultigrid<QuaternionMatrix> amg;
  amg.setup(flow.pattern().offsets, flow.pattern().columns, settings);
  amg.update(e);
  REQUIRE(amg.levels() == 1);
  REQUIRE(amg.direct_coarsest());
  std::vector<double> r(4 * m.vertex_count());
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = 2.0 * uniform(12, i) - 1.0;
  DeviceBuffer<double> rd, z(r.size());
  rd.assign(r);
  amg.apply(e, rd.span(), z.span());
  CHECK(max_abs_difference(flow.dirac_product(z.to_host()), r) < 1e-10);
}

/// Quasi-conformal distortion of the map from mesh positions a to b: per face, the ratio of the singular
/// values of the linear map between the two triangles (1 for a similarity); returns {mean, max}.
std::pair<double, double> distortion(const mesh::TriangleMesh& m, const std::vector<double>& a,
                                     const std::vector<double>& b) {
  double sum = 0.0, worst = 1.0;
  for (std::size_t f = 0; f < m.face_count(); ++f) {
    // 2D frames of both triangles: edge lengths and angle determine the triangle up to rigid motion
    double e[2][2][3];
    const std::vector<double>* p[2] = {&a, &b};
    for (int s = 0; s < 2; ++s)
      for (int k = 0; k < 2; ++k)
        for (int c = 0; c < 3; ++c)
          e[s][k][c] =
              (*p[s])[3 * static_cast<std::size_t>(m.corner(f, k + 1)) + static_cast<std::size_t>(c)] -
              (*p[s])[3 * static_cast<std::size_t>(m.corner(f, 0)) + static_cast<std::size_t>(c)];
    double q[2][2][2];  // q[s] = [u v] in an orthonormal frame of triangle s
    for (int s = 0; s < 2; ++s) {
      const double lu =
          std::sqrt(e[s][0][0] * e[s][0][0] + e[s][0][1] * e[s][0][1] + e[s][0][2] * e[s][0][2]);
      const double dot = (e[s][0][0] * e[s][1][0] + e[s][0][1] * e[s][1][1] + e[s][0][2] * e[s][1][2]) / lu;
      const double lv2 = e[s][1][0] * e[s][1][0] + e[s][1][1] * e[s][1][1] + e[s][1][2] * e[s][1][2];
      q[s][0][0] = lu;
      q[s][1][0] = 0.0;
      q[s][0][1] = dot;
      q[s][1][1] = std::sqrt(std::max(lv2 - dot * dot, 0.0));
    }
    // J = Q1 Q0^-1 (2 x 2), singular value ratio from its Frobenius norm and determinant
    const double det0 = q[0][0][0] * q[0][1][1] - q[0][0][1] * q[0][1][0];
    const double inv[2][2] = {{q[0][1][1] / det0, -q[0][0][1] / det0},
                              {-q[0][1][0] / det0, q[0][0][0] / det0}};
    double j[2][2];
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 2; ++c) j[r][c] = q[1][r][0] * inv[0][c] + q[1][r][1] * inv[1][c];
    const double fro = j[0][0] * j[0][0] + j[0][1] * j[0][1] + j[1][0] * j[1][0] + j[1][1] * j[1][1];
    const double det = std::abs(j[0][0] * j[1][1] - j[0][1] * j[1][0]);
    const double disc = std::sqrt(std::max(fro * fro / 4.0 - det * det, 0.0));
    const double s1 = std::sqrt(fro / 2.0 + disc), s2 = std::sqrt(std::max(fro / 2.0 - disc, 1e-300));
    sum += s1 / s2;
    worst = std::max(worst, s1 / s2);
  }
  return {sum / static_cast<double>(m.face_count()), worst};
}

/// Smallest corner angle of the mesh at positions p (3 per vertex) [rad].
double min_angle(const mesh::TriangleMesh& m, const std::vector<double>& p) {
  double lo = kPi;
  for (std::size_t f = 0; f < m.face_count(); ++f)
    for (int c = 0; c < 3; ++c) {
      const auto o = 3 * static_cast<std::size_t>(m.corner(f, c));
      const auto i = 3 * static_cast<std::size_t>(m.corner(f, (c + 1) % 3));
      const auto j = 3 * static_cast<std::size_t>(m.corner(f, (c + 2) % 3));
      double u[3], v[3];
      for (std::size_t k = 0; k < 3; ++k) {
        u[k] = p[i + k] - p[o + k];
        v[k] = p[j + k] - p[o + k];
      }
      const double dot = u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
      const double nu = std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
      const double nv = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
      lo = std::min(lo, std::acos(std::clamp(dot / (nu * nv), -1.0, 1.0)));
    }
  return lo;
}

TEST_CASE("with no curvature change the spin transformation gives back the surface", "[conformal_willmore]") {
  const mesh::TriangleMesh m = noisy_sphere(2, 0.1, 5);
  ConformalWillmoreFlow flow(m, {});
  const auto p0 = flow.positions();
  flow.measures();
  flow.set_curvature_change(std::vector<double>(m.vertex_count(), 0.0));
  flow.assemble_dirac();
  flow.similarity_transform();
  // lambda = 1 spans E's kernel at rho = 0 (the face Dirac operator of a constant is the sum of the edges)
  const auto lambda = flow.similarity_values();
  double off = 0.0;
  for (std::size_t v = 0; v < m.vertex_count(); ++v)
    off = std::max({off, std::abs(std::abs(lambda[4 * v]) - 1.0), std::abs(lambda[4 * v + 1]),
                    std::abs(lambda[4 * v + 2]), std::abs(lambda[4 * v + 3])});
  CHECK(off < 1e-8);
  flow.transformed_edges();
  flow.spin_positions();
  flow.normalize_positions();
  CHECK(max_abs_difference(flow.positions(), p0) < 1e-8);
}

TEST_CASE("a round sphere is a fixed point of the flow", "[conformal_willmore]") {
  SECTION("the icosahedron: every vertex alike, so H is constant and P(H) = 0") {
    const mesh::TriangleMesh m = mesh::icosphere(0, 2.0);
    ConformalWillmoreFlow flow(m, {});
    const auto p0 = flow.positions();
    for (int it = 0; it < 3; ++it) flow.step(0.5);
    // rounding of the shifted inverse iteration grows like 1e-16 / eigen_shift (1e-8)
    CHECK(max_abs_difference(flow.positions(), p0) < 1e-7);
  }
  SECTION("a fine icosphere moves only by its discretisation error, far below tau") {
    const double radius = 1.5, tau = 0.5;
    const mesh::TriangleMesh m = mesh::icosphere(4, radius);
    ConformalWillmoreFlow flow(m, {});
    const auto p0 = flow.positions();
    const SurfaceMeasures before = flow.measures();
    CHECK(before.willmore == Approx(4.0 * kPi).epsilon(2e-3));
    flow.step(tau);
    CHECK(max_abs_difference(flow.positions(), p0) < 1e-3 * tau * radius);
    CHECK(flow.measures().willmore == Approx(before.willmore).epsilon(1e-4));
  }
}

namespace {
/// Runs `steps` steps of tau; checks that W decreases at every step, ends within `closeness` of 4 pi, the
/// map stays close to conformal (mean singular-value ratio per face) and no triangle degenerates.
void check_flow_to_sphere(const mesh::TriangleMesh& m, double tau, int steps, double closeness,
                          double max_mean_distortion) {
  ConformalWillmoreFlow flow(m, {});
  const auto p0 = flow.positions();
  double w = flow.measures().willmore;
  const double w0 = w;
  for (int it = 0; it < steps; ++it) {
    flow.step(tau);
    const double next = flow.measures().willmore;
    INFO("step " << it << ": W " << w << " -> " << next);
    REQUIRE(next < w);
    w = next;
  }
  INFO("W " << w0 << " -> " << w);
  CHECK(w < (1.0 + closeness) * 4.0 * kPi);
  CHECK(w > 4.0 * kPi * (1.0 - 1e-2));  // no closed surface has less (Willmore), up to discretisation
  const auto p = flow.positions();
  const auto [mean, worst] = distortion(m, p0, p);
  INFO("singular-value ratio: mean " << mean << ", max " << worst);
  CHECK(mean < max_mean_distortion);
  CHECK(min_angle(m, p) > 0.3 * min_angle(m, p0));
}
}  // namespace

TEST_CASE("Willmore energy decreases monotonically to that of the round sphere, conformally",
          "[conformal_willmore]") {
  SECTION("spot") {
    check_flow_to_sphere(mesh::read_obj(std::string(TISSUE_SOURCE_DIR) + "/scenarios/meshes/spot.obj"), 0.5,
                         30, 0.06, 1.15);
  }
  SECTION("a noisy sphere") {
    check_flow_to_sphere(noisy_sphere(3, 0.02, 1), 2.0, 40, 0.06, 1.15);
  }
}

TEST_CASE("conjugate gradients and the direct solver give the same steps", "[conformal_willmore]") {
  // CG runs the shifted inverse iteration started from the last step's lambda, the direct solver the plain
  // one from lambda = 1: converged tightly, both must reach the same eigenvector, step after step
  const mesh::TriangleMesh m = noisy_sphere(3, 0.05, 2);
  ConformalWillmoreSettings s;
  s.eigen_tolerance = 1e-7;
  s.inverse_iterations = 40;
  ConformalWillmoreFlow direct(m, s);
  s.similarity_solver = s.positions_solver = LinearSolver::conjugate_gradient;
  ConformalWillmoreFlow cg(m, s);
  for (int step = 0; step < 5; ++step) {  // from the fourth step on, CG starts from a quadratic extrapolation
    INFO("step " << step);
    direct.step(0.5);
    cg.step(0.5);
    CHECK(cg.report().similarity_iterations > 0);
    CHECK(cg.report().positions_iterations > 0);
    CHECK(max_abs_difference(direct.positions(), cg.positions()) < 1e-6);
    CHECK(max_abs_difference(direct.similarity_values(), cg.similarity_values()) < 1e-6);
    // the eigen-residual the report states, evaluated here from E's product
    const auto lambda = cg.similarity_values();
    const auto el = cg.dirac_product(lambda);
    double ll = 0.0, le = 0.0;
    for (std::size_t i = 0; i < lambda.size(); ++i) {
      ll += lambda[i] * lambda[i];
      le += lambda[i] * el[i];
    }
    const double mu = le / ll;
    double rr = 0.0;
    for (std::size_t i = 0; i < lambda.size(); ++i) rr += (el[i] - mu * lambda[i]) * (el[i] - mu * lambda[i]);
    const double residual = std::sqrt(rr / ll) / mu;
    CHECK(residual <= s.eigen_tolerance);
    CHECK(cg.report().eigen_residual == Approx(residual).epsilon(1e-3).margin(1e-9));
  }
}

TEST_CASE("extrapolated starts of the inverse iteration save CG iterations and give the same steps",
          "[conformal_willmore]") {
  const mesh::TriangleMesh m = noisy_sphere(4, 0.02, 3);
  ConformalWillmoreSettings s;
  s.similarity_solver = s.positions_solver = LinearSolver::conjugate_gradient;
  s.start_extrapolation = 0;
  ConformalWillmoreFlow last(m, s);
  s.start_extrapolation = 2;
  ConformalWillmoreFlow extrapolated(m, s);
  int iterations[2] = {0, 0};
  for (int step = 0; step < 8; ++step) {
    INFO("step " << step);
    last.step(0.2);
    extrapolated.step(0.2);
    if (step >= 4) {
      iterations[0] += last.report().similarity_iterations;
      iterations[1] += extrapolated.report().similarity_iterations;
    }
    CHECK(max_abs_difference(last.positions(), extrapolated.positions()) < 1e-6);
  }
  INFO("CG iterations on E in steps 5-8: from the last step's lambda " << iterations[0] << ", extrapolated "
                                                                       << iterations[1]);
  CHECK(5 * iterations[1] < 4 * iterations[0]);

  SECTION("the history is state: set back, the next step is the same") {
    ConformalWillmoreFlow copy(m, s);
    copy.set_positions(extrapolated.positions());
    copy.set_similarity_values(extrapolated.similarity_values(), extrapolated.similarity_history());
    copy.set_preconditioner_state(extrapolated.preconditioner_state());
    extrapolated.step(0.2);
    copy.step(0.2);
    CHECK(copy.positions() == extrapolated.positions());
    CHECK_THROWS_AS(copy.set_similarity_values(copy.similarity_values(), std::vector<double>(5, 1.0)),
                    std::invalid_argument);
    CHECK_THROWS_AS(copy.set_preconditioner_state(std::vector<double>(3, 1.0)), std::invalid_argument);
  }
}

TEST_CASE("multigrid and Jacobi preconditioners give the same steps", "[conformal_willmore]") {
  const mesh::TriangleMesh m = noisy_sphere(3, 0.05, 7);
  ConformalWillmoreSettings s;
  s.similarity_solver = s.positions_solver = LinearSolver::conjugate_gradient;
  s.preconditioner = Preconditioner::jacobi;
  ConformalWillmoreFlow jacobi(m, s);
  s.preconditioner = Preconditioner::multigrid;
  ConformalWillmoreFlow multigrid(m, s);
  for (int step = 0; step < 2; ++step) {
    INFO("step " << step);
    jacobi.step(0.5);
    multigrid.step(0.5);
    CHECK(max_abs_difference(jacobi.positions(), multigrid.positions()) < 1e-6);
    // the V-cycle's whole point: several times fewer iterations than Jacobi, on both problems
    CHECK(3 * multigrid.report().similarity_iterations < jacobi.report().similarity_iterations);
    CHECK(3 * multigrid.report().positions_iterations < jacobi.report().positions_iterations);
  }
}

TEST_CASE("a flat open mesh is a fixed point: H = 0, so rho = 0 and lambda = 1", "[conformal_willmore]") {
  ConformalWillmoreFlow flow(mesh::rectangle_mesh(9, 7, 2.0, 1.5), {});
  const auto p0 = flow.positions();
  CHECK(flow.measures().willmore < 1e-20);
  flow.step(1.0);
  CHECK(max_abs_difference(flow.positions(), p0) < 1e-8);
}

TEST_CASE("conformal Willmore flow refuses bad input", "[conformal_willmore]") {
  mesh::TriangleMesh bad = mesh::icosphere(1, 1.0);
  bad.faces[4] = bad.faces[3];  // a degenerate face
  CHECK_THROWS_AS(ConformalWillmoreFlow(bad, {}), InputError);
  ConformalWillmoreSettings s;
  s.inverse_iterations = 0;
  CHECK_THROWS_AS(ConformalWillmoreFlow(mesh::icosphere(1, 1.0), s), std::invalid_argument);
  s = {};
  s.cg_tolerance = 0.0;
  CHECK_THROWS_AS(ConformalWillmoreFlow(mesh::icosphere(1, 1.0), s), std::invalid_argument);
  s = {};
  s.similarity_tolerance = -1.0;
  CHECK_THROWS_AS(ConformalWillmoreFlow(mesh::icosphere(1, 1.0), s), std::invalid_argument);
  s = {};
  s.eigen_tolerance = 0.0;
  CHECK_THROWS_AS(ConformalWillmoreFlow(mesh::icosphere(1, 1.0), s), std::invalid_argument);
  s = {};
  s.first_solve_tolerance = -1e-10;
  CHECK_THROWS_AS(ConformalWillmoreFlow(mesh::icosphere(1, 1.0), s), std::invalid_argument);
  ConformalWillmoreFlow flow(mesh::icosphere(1, 1.0), {});
  CHECK_THROWS_AS(flow.set_similarity_values(std::vector<double>(3, 1.0)), std::invalid_argument);
  CHECK_THROWS_AS(flow.step(0.0), std::invalid_argument);
  CHECK_THROWS_AS(flow.step(-1.0), std::invalid_argument);
  CHECK_THROWS_AS(linear_solver_from_string("lu"), std::invalid_argument);
  CHECK_THROWS_AS(preconditioner_from_string("ilu"), std::invalid_argument);
}

namespace {
/// Runs the conformal Willmore scenario `text` (written to a temporary folder) with the engine's Runner to
/// its end and returns the final surface it wrote (surface_final.obj) and its summary lines (run.json).
struct ControlledRun {
  mesh::TriangleMesh surface;
  std::string log;
};
ControlledRun run_conformal(const std::string& name, const std::string& text) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("tissue_test_cw_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "scenario.toml") << text;
  RunRequest r;
  r.scenario = (dir / "scenario.toml").string();
  r.out = dir / "out";
  r.handle_signals = false;
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* log = open_memstream(&buffer, &size);
  r.log = log;
  Runner runner(builtin_modules(), r);
  const int code = runner.run();
  std::fclose(log);
  ControlledRun result{{}, std::string(buffer, size)};
  std::free(buffer);
  REQUIRE(code == kExitOk);
  result.surface = mesh::read_obj(dir / "out" / "surface_final.obj");
  return result;
}

std::string noisy_icosphere_scenario(double tau, bool control) {
  return "[simulation]\nmodel = \"conformal_willmore\"\ndt = " + std::to_string(tau) +
         "\nsteps = 10\n[mesh]\ngenerate = \"icosphere\"\nsubdivisions = 2\n[initial]\nnoise = 0.3\n"
         "[conformal_willmore]\nstep_control = " +
         std::string(control ? "true" : "false") + "\n[output]\nevery = 10\n";
}
}  // namespace

TEST_CASE(
    "step control: steps that raise the Willmore energy are retried with half the tau, and the flow "
    "reaches the round sphere in steps too large without it",
    "[conformal_willmore]") {
  // a noisy icosphere of 162 vertices in 10 steps of tau = 20: without control the first step already
  // raises W from 27.2 to 61 (measured); with it, every engine step is covered by flow steps of 1.25 to 20
  const auto with = run_conformal("control", noisy_icosphere_scenario(20.0, true));
  INFO(with.log);
  CHECK_THAT(with.log,
             Catch::Contains("step control: ") && Catch::Contains("flow steps undone and retried with half "
                                                                  "the tau (the first in step 0: the "
                                                                  "Willmore energy rose from"));
  // an independent evaluation of the final surface: its energy and how round it is
  const double w = ConformalWillmoreFlow(with.surface, {}).measures().willmore;
  CHECK(w < 1.05 * 4.0 * kPi);
  CHECK(w > 0.99 * 4.0 * kPi);
  // (not asserted: the issue's "fitted radius spread below 2 %". On this coarse noisy mesh the final
  // surface's vertices lie 0.988 to 1.127 from the least-squares sphere's centre (radius 1.041): the flow is
  // conformal, so the noise's triangle shapes stay, and the discrete W does not see vertex-scale bumps.)
  // the same steps without control end far from the sphere (or fail)
  std::string without_log;
  double w_without = 1e300;
  try {
    const auto without = run_conformal("no_control", noisy_icosphere_scenario(20.0, false));
    w_without = ConformalWillmoreFlow(without.surface, {}).measures().willmore;
  } catch (...) {
  }
  INFO("without control: W " << w_without);
  CHECK(!(w_without < 1.05 * 4.0 * kPi));
}

TEST_CASE("step control changes nothing where no step is retried", "[conformal_willmore]") {
  const std::string spot =
      "[simulation]\nmodel = \"conformal_willmore\"\ndt = 0.5\nsteps = 3\n[mesh]\nfile = \"" +
      std::string(TISSUE_SOURCE_DIR) + "/scenarios/meshes/spot.obj\"\n[output]\nevery = 3\n";
  const auto on = run_conformal("spot_on", spot + "[conformal_willmore]\nstep_control = true\n");
  const auto off = run_conformal("spot_off", spot + "[conformal_willmore]\nstep_control = false\n");
  CHECK_THAT(on.log, Catch::Contains("step control: every step took the full tau"));
  CHECK(on.surface.x == off.surface.x);
  CHECK(on.surface.y == off.surface.y);
  CHECK(on.surface.z == off.surface.z);
}
