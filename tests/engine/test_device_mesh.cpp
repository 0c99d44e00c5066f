// mesh::DeviceMesh: a quantity is built once and every later require returns the same object; the cached
// quantities equal independent evaluations (cotangent weights and mixed areas of the unit square computed
// by hand, the free functions of mesh_operators.hpp on larger meshes, the topology's device copy); and
// positions_changed() drops the geometry, which is rebuilt from the moved positions, while the
// connectivity stays.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <vector>

#include "engine/mesh/device_mesh.hpp"
#include "engine/mesh/mesh_operators.hpp"
#include "engine/mesh/triangle_mesh.hpp"

using namespace tissue;
using namespace tissue::mesh;

namespace {

/// The unit square split along its diagonal 0-2: faces (0, 1, 2) and (0, 2, 3), right angles at 1 and 3.
TriangleMesh unit_square() {
  TriangleMesh m;
  m.x = {0.0, 1.0, 1.0, 0.0};
  m.y = {0.0, 0.0, 1.0, 1.0};
  m.z = {0.0, 0.0, 0.0, 0.0};
  m.faces = {0, 1, 2, 0, 2, 3};
  return m;
}

/// Cotangent weight of the edge (i, j) in the CSR of L.
double weight(const CotangentLaplacian& L, std::int32_t i, std::int32_t j) {
  for (auto k = L.offsets[static_cast<std::size_t>(i)]; k < L.offsets[static_cast<std::size_t>(i) + 1]; ++k)
    if (L.neighbours[static_cast<std::size_t>(k)] == j) return L.weights[static_cast<std::size_t>(k)];
  FAIL("no edge " << i << "-" << j);
  return 0.0;
}

}  // namespace

TEST_CASE("a DeviceMesh builds each quantity once and returns the same object", "[device_mesh]") {
  DeviceMesh dm(icosphere(2, 1.0), "sphere");
  const std::size_t before = dm.build_count();
  const CotangentLaplacian& L = dm.require_cotangent_laplacian();
  const OneRing& ring = dm.require_one_ring();
  const MeshPatches& patches = dm.require_patches(32, 2);
  const DeviceTopology& device = dm.require_device_topology();
  const auto index = dm.require_closest_point_index(0.5f);
  const std::size_t built = dm.build_count();
  CHECK(built == before + 5);
  CHECK(&dm.require_cotangent_laplacian() == &L);
  CHECK(&dm.require_one_ring() == &ring);
  CHECK(&dm.require_patches(32, 2) == &patches);
  CHECK(&dm.require_device_topology() == &device);
  CHECK(dm.require_closest_point_index(0.5f) == index);
  CHECK(dm.build_count() == built);  // nothing was built again
  // another key is another build
  CHECK(&dm.require_patches(32, 3) != &patches);
  CHECK(dm.require_closest_point_index(1.0f) != index);
  CHECK(dm.build_count() == built + 2);
}

TEST_CASE("cached cotangent weights and areas of the unit square equal the hand computation",
          "[device_mesh]") {
  DeviceMesh dm(unit_square());
  const CotangentLaplacian& L = dm.require_cotangent_laplacian();
  // the diagonal 0-2 faces the right angles at 1 and 3: cot = 0; each side faces a 45-degree angle
  // (cot = 1) in its one face, so w = (cot a + cot b) / 2 = 1/2
  CHECK(weight(L, 0, 2) == Approx(0.0).margin(1e-15));
  for (const auto& [i, j] : {std::pair{0, 1}, {1, 2}, {2, 3}, {3, 0}}) {
    CHECK(weight(L, i, j) == Approx(0.5).epsilon(1e-15));
    CHECK(weight(L, j, i) == Approx(0.5).epsilon(1e-15));
  }
  // mixed Voronoi areas (both triangles right-angled, so Voronoi): 1/8 sum |e|^2 cot per vertex; the right
  // corner gets 1/4 of its triangle, the two 45-degree corners 1/8 each: 1/4 for every vertex
  for (std::size_t v = 0; v < 4; ++v) CHECK(L.area[v] == Approx(0.25).epsilon(1e-15));
  for (const auto& n : dm.require_vertex_normals()) {
    CHECK(n[0] == 0.0);
    CHECK(n[1] == 0.0);
    CHECK(n[2] == 1.0);
  }
  const FaceGradients& g = dm.require_face_gradients();
  CHECK(g.area[0] == Approx(0.5));
  CHECK(g.angle[1] == Approx(M_PI / 2));  // face 0, corner 1
  // the closest point of a point above the square is its vertical projection on face 0 or 1
  const auto hit = dm.require_closest_point_index(1.0f)->host_view().closest(0.75f, 0.25f, 0.5f);
  REQUIRE(hit.triangle == 0);
  CHECK(hit.distance == Approx(0.5f));
  CHECK(hit.normal[2] == Approx(1.0f));
}

TEST_CASE("cached quantities equal the free functions on the same mesh", "[device_mesh]") {
  const TriangleMesh m = uv_sphere(8, 12, 2.0);
  DeviceMesh dm(m);
  const MeshTopology t = build_topology(m);
  CHECK(dm.topology().vertex_neighbours == t.vertex_neighbours);
  const CotangentLaplacian L = cotangent_laplacian(m, t);
  CHECK(dm.require_cotangent_laplacian().weights == L.weights);
  CHECK(dm.require_cotangent_laplacian().area == L.area);
  const FaceGradients g = face_gradients(m);
  CHECK(dm.require_face_gradients().angle == g.angle);
  CHECK(dm.require_vertex_gradient_operator().weights == vertex_gradient_operator(m, t, g).weights);
  CHECK(dm.require_vertex_normals() == vertex_normals(m));
  CHECK(dm.require_boundary_projections() == boundary_projections(m, t));
  CHECK(dm.require_one_ring().ring == one_ring(m, t).ring);
  CHECK(dm.require_operator_pattern().sources == operator_pattern(m, t).sources);
  const DeviceTopology& d = dm.require_device_topology();
  CHECK(d.faces.to_host() == m.faces);
  CHECK(d.vertex_offsets.to_host() == t.vertex_offsets);
  CHECK(d.vertex_faces.to_host() == t.vertex_faces);
  CHECK(dm.require_device_operator_pattern().diagonal.to_host() == operator_pattern(m, t).diagonal);
}

TEST_CASE("positions_changed drops the geometry, which is rebuilt from the moved positions",
          "[device_mesh]") {
  DeviceMesh dm(unit_square());
  const OneRing& ring = dm.require_one_ring();
  const auto old_index = dm.require_closest_point_index(1.0f);
  (void)dm.require_cotangent_laplacian();
  // stretch the square to 2 x 1 on the device, as a flow moving the vertices would
  DevicePositions& p = dm.require_device_positions();
  p.x.assign(std::vector<double>{0.0, 2.0, 2.0, 0.0});
  dm.positions_changed();
  const std::size_t built = dm.build_count();
  CHECK(dm.mesh().x == std::vector<double>{0.0, 2.0, 2.0, 0.0});  // the host mesh follows the device
  TriangleMesh stretched = unit_square();
  stretched.x = {0.0, 2.0, 2.0, 0.0};
  const CotangentLaplacian expected = cotangent_laplacian(stretched, build_topology(stretched));
  CHECK(dm.require_cotangent_laplacian().weights == expected.weights);
  CHECK(dm.require_cotangent_laplacian().area == expected.area);
  // cot of the angle opposite the side 1-2 (length 1, at vertex 0, atan(1/2)) is 2: w = 1
  CHECK(weight(dm.require_cotangent_laplacian(), 1, 2) == Approx(1.0));
  const auto index = dm.require_closest_point_index(1.0f);
  CHECK(index != old_index);  // a new index; the old one lives on with its holder
  // (2.5, 0.5, 0) is 0.5 from the stretched square and 1.5 from the old one, beyond the reach
  CHECK(index->host_view().closest(2.5f, 0.5f, 0.0f).distance == Approx(0.5f));
  CHECK(old_index->host_view().closest(2.5f, 0.5f, 0.0f).triangle < 0);
  CHECK(dm.build_count() == built + 2);
  CHECK(&dm.require_one_ring() == &ring);  // connectivity is kept
  CHECK(dm.build_count() == built + 2);
}
