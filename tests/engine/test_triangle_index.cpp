// The triangle index (closest point on a mesh within a reach) against a brute-force search over every
// triangle with an independent closest-point construction (projection onto the plane, else the nearest of
// the three edges), on a generated sphere and on Crane's spot; queries run on the active backend.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <random>
#include <vector>

#include "engine/exec/parallel_for.hpp"
#include "engine/mesh/vec3.hpp"
#include "engine/spatial/triangle_index.hpp"

using namespace tissue;

namespace {

struct ClosestQuery {
  TriangleIndex::View index;
  Span<const float> x, y, z;
  Span<float> distance, qx, qy, qz, nz;
  Span<std::int32_t> triangle;
  TISSUE_HD void operator()(std::size_t i) const {
    const SurfaceHit h = index.closest(x[i], y[i], z[i]);
    triangle[i] = h.triangle;
    distance[i] = h.distance;
    qx[i] = h.point[0];
    qy[i] = h.point[1];
    qz[i] = h.point[2];
    nz[i] = h.normal[2];
  }
};

/// closest_anywhere() for every point: the distance and the triangle, however far.
struct AnywhereQuery {
  TriangleIndex::View index;
  Span<const float> x, y, z;
  Span<float> distance;
  Span<std::int32_t> triangle;
  TISSUE_HD void operator()(std::size_t i) const {
    const SurfaceHit h = index.closest_anywhere(x[i], y[i], z[i]);
    triangle[i] = h.triangle;
    distance[i] = h.distance;
  }
};

using mesh::Vec3;

Vec3 lerp(const Vec3& a, const Vec3& b, double t) {
  return {a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2])};
}

/// Independent: the projection onto the triangle's plane when its barycentric coordinates are all
/// non-negative, else the closest of the three edge points (segment parameter clamped to [0, 1]).
double brute_distance(const mesh::TriangleMesh& m, const Vec3& p) {
  double best = 1e300;
  for (std::size_t f = 0; f < m.face_count(); ++f) {
    const Vec3 a = mesh::position(m, m.corner(f, 0)), b = mesh::position(m, m.corner(f, 1)),
               c = mesh::position(m, m.corner(f, 2));
    const Vec3 n = mesh::cross(mesh::sub(b, a), mesh::sub(c, a));
    const double area2 = mesh::dot(n, n);
    const double s = mesh::dot(mesh::sub(p, a), n) / area2;
    const Vec3 proj{p[0] - s * n[0], p[1] - s * n[1], p[2] - s * n[2]};
    const double u = mesh::dot(mesh::cross(mesh::sub(b, proj), mesh::sub(c, proj)), n) / area2;
    const double v = mesh::dot(mesh::cross(mesh::sub(c, proj), mesh::sub(a, proj)), n) / area2;
    const double w = 1.0 - u - v;
    if (u >= 0 && v >= 0 && w >= 0) {
      best = std::min(best, mesh::norm(mesh::sub(p, proj)));
      continue;
    }
    const Vec3 ends[3][2] = {{a, b}, {b, c}, {c, a}};
    for (const auto& e : ends) {
      const Vec3 d = mesh::sub(e[1], e[0]);
      const double t = std::clamp(mesh::dot(mesh::sub(p, e[0]), d) / mesh::dot(d, d), 0.0, 1.0);
      best = std::min(best, mesh::norm(mesh::sub(p, lerp(e[0], e[1], t))));
    }
  }
  return best;
}

void check_against_brute_force(const mesh::TriangleMesh& m, float reach, std::size_t n, unsigned seed) {
  TriangleIndex index;
  index.build(m, reach);
  double lo[3], hi[3];
  const std::vector<double>* axes[3] = {&m.x, &m.y, &m.z};
  for (int k = 0; k < 3; ++k) {
    lo[k] = *std::min_element(axes[k]->begin(), axes[k]->end()) - 2 * reach;
    hi[k] = *std::max_element(axes[k]->begin(), axes[k]->end()) + 2 * reach;
  }
  std::mt19937 rng(seed);
  std::vector<float> x(n), y(n), z(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 2 == 0) {  // uniform in the grown box: most points far from the surface
      x[i] = static_cast<float>(std::uniform_real_distribution<double>(lo[0], hi[0])(rng));
      y[i] = static_cast<float>(std::uniform_real_distribution<double>(lo[1], hi[1])(rng));
      z[i] = static_cast<float>(std::uniform_real_distribution<double>(lo[2], hi[2])(rng));
    } else {  // near a random vertex: most within the reach
      const auto v = std::uniform_int_distribution<std::size_t>(0, m.vertex_count() - 1)(rng);
      std::normal_distribution<double> g(0.0, 0.5 * reach);
      x[i] = static_cast<float>(m.x[v] + g(rng));
      y[i] = static_cast<float>(m.y[v] + g(rng));
      z[i] = static_cast<float>(m.z[v] + g(rng));
    }
  }
  DeviceBuffer<float> dx, dy, dz, dist, qx, qy, qz, nz;
  DeviceBuffer<std::int32_t> tri;
  dx.assign(x);
  dy.assign(y);
  dz.assign(z);
  for (auto* b : {&dist, &qx, &qy, &qz, &nz}) b->resize(n);
  tri.resize(n);
  exec::parallel_for(n, ClosestQuery{index.view(), dx.span(), dy.span(), dz.span(), dist.span(), qx.span(),
                                     qy.span(), qz.span(), nz.span(), tri.span()});
  const auto d = dist.to_host(), px = qx.to_host(), py = qy.to_host(), pz = qz.to_host();
  const auto t = tri.to_host();
  std::size_t hits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 p{x[i], y[i], z[i]};
    const double expected = brute_distance(m, p);
    INFO("point " << i << " (" << x[i] << ", " << y[i] << ", " << z[i] << "), brute distance " << expected);
    if (std::fabs(expected - reach) < 1e-5) continue;  // on the reach: either answer is right
    REQUIRE((t[i] >= 0) == (expected < reach));
    if (t[i] < 0) continue;
    ++hits;
    const double tol = 2e-6 * (1.0 + std::fabs(p[0]) + std::fabs(p[1]) + std::fabs(p[2]));
    REQUIRE(d[i] == Approx(expected).margin(tol));
    // the reported point is on the reported triangle's plane and at the reported distance
    const Vec3 q{px[i], py[i], pz[i]};
    REQUIRE(mesh::norm(mesh::sub(p, q)) == Approx(d[i]).margin(tol));
  }
  INFO("bins " << index.bin_count() << ", triangles per bin " << index.mean_triangles_per_bin());
  REQUIRE(hits > n / 4);
}

}  // namespace

TEST_CASE("closest points on a mesh equal a brute-force search over every triangle", "[triangle_index]") {
  SECTION("icosphere of radius 1, 1280 triangles") {
    check_against_brute_force(mesh::icosphere(3, 1.0), 0.3f, 2000, 3);
  }
  SECTION("Crane's spot (5856 triangles)") {
    const auto spot =
        mesh::read_obj(std::filesystem::path(TISSUE_SOURCE_DIR) / "scenarios" / "meshes" / "spot.obj");
    check_against_brute_force(spot, 0.1f, 1000, 5);
  }
}

TEST_CASE("closest point on a plane mesh: the vertical projection and the +z normal", "[triangle_index]") {
  const auto plane = mesh::rectangle_mesh(9, 7, 4.0, 3.0);
  TriangleIndex index;
  index.build(plane, 0.5f);
  const std::vector<float> x{0.3f, 2.05f, 3.9f, 1.0f, 5.0f}, y{0.2f, 1.5f, 2.95f, 1.0f, 1.0f},
      z{0.1f, 0.45f, 0.01f, 0.6f, 0.1f};
  DeviceBuffer<float> dx, dy, dz, dist, qx, qy, qz, nz;
  DeviceBuffer<std::int32_t> tri;
  dx.assign(x);
  dy.assign(y);
  dz.assign(z);
  for (auto* b : {&dist, &qx, &qy, &qz, &nz}) b->resize(x.size());
  tri.resize(x.size());
  exec::parallel_for(x.size(), ClosestQuery{index.view(), dx.span(), dy.span(), dz.span(), dist.span(),
                                            qx.span(), qy.span(), qz.span(), nz.span(), tri.span()});
  const auto d = dist.to_host(), px = qx.to_host(), py = qy.to_host(), pz = qz.to_host(), n = nz.to_host();
  const auto t = tri.to_host();
  for (std::size_t i = 0; i < 3; ++i) {
    INFO("point " << i);
    REQUIRE(t[i] >= 0);
    CHECK(d[i] == Approx(z[i]).margin(1e-6));
    CHECK(px[i] == Approx(x[i]).margin(1e-6));
    CHECK(py[i] == Approx(y[i]).margin(1e-6));
    CHECK(pz[i] == Approx(0.0).margin(1e-6));
    CHECK(n[i] == Approx(1.0));
  }
  CHECK(t[3] == -1);  // 0.6 above: beyond the reach
  CHECK(t[4] == -1);  // 1 beyond the edge x = 4 (distance 1.005)
}

TEST_CASE("the triangle index refuses a non-positive reach and an empty mesh", "[triangle_index]") {
  TriangleIndex index;
  REQUIRE_THROWS_AS(index.build(mesh::icosphere(1, 1.0), 0.0f), std::invalid_argument);
  REQUIRE_THROWS_AS(index.build(mesh::TriangleMesh{}, 1.0f), std::invalid_argument);
}

TEST_CASE("closest_anywhere finds the closest point however far, without testing every triangle",
          "[triangle_index]") {
  // points up to 30 reaches away, inside and outside the index's grid, against the brute force; the old
  // fallback scanned every triangle for each point beyond the reach (O(points x triangles) in summaries)
  const auto m = mesh::icosphere(3, 1.0);
  TriangleIndex index;
  index.build(m, 0.1f);
  std::mt19937 rng(17);
  const std::size_t n = 600;
  std::vector<float> x(n), y(n), z(n);
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(u(rng));
    y[i] = static_cast<float>(u(rng));
    z[i] = static_cast<float>(i % 3 == 0 ? 0.1 * u(rng) : u(rng));
  }
  DeviceBuffer<float> dx, dy, dz, dist(n);
  DeviceBuffer<std::int32_t> tri(n);
  dx.assign(x);
  dy.assign(y);
  dz.assign(z);
  exec::parallel_for(n,
                     AnywhereQuery{index.view(), dx.span(), dy.span(), dz.span(), dist.span(), tri.span()});
  const auto d = dist.to_host();
  const auto t = tri.to_host();
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 p{x[i], y[i], z[i]};
    const double expected = brute_distance(m, p);
    INFO("point " << i << " (" << x[i] << ", " << y[i] << ", " << z[i] << ")");
    REQUIRE(t[i] >= 0);
    REQUIRE(d[i] == Approx(expected).margin(2e-6 * (1.0 + std::fabs(expected))));
  }
  // the host view gives the same distances (summaries and division hooks query it), to float rounding: the
  // two compilations contract multiply-adds differently, and where the closest point is a vertex or an
  // edge, triangles sharing it tie and either may be reported
  const TriangleIndex::View host = index.host_view();
  for (std::size_t i = 0; i < n; i += 7) {
    const SurfaceHit h = host.closest_anywhere(x[i], y[i], z[i]);
    REQUIRE(h.triangle >= 0);
    REQUIRE(h.distance == Approx(d[i]).epsilon(1e-6));
  }
  CHECK(index.view().closest_anywhere(std::nanf(""), 0.0f, 0.0f).triangle < 0);
}
