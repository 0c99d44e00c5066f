#pragma once
/// @file device_mesh.hpp
/// One triangle mesh with its derived quantities built once and cached, shared by every module that works
/// on it (geometry-central's `require*()` / `refreshQuantities()`, STYLE.md "Derived quantities are cached
/// and required"). A quantity is built on its first `require_*()` and the same object is returned by every
/// later call, so two modules on one mesh (surface reaction-diffusion and the closest-point adhesion of the
/// epidermis' membrane, say) share one build.
///
/// Two kinds of quantity:
///  - connectivity (topology, one-rings, METIS patches, the operator pattern, their device copies): fixed
///    for the mesh's life;
///  - geometry (cotangent weights and mixed areas, face gradients and angles, vertex-gradient stencils,
///    vertex normals, boundary projections, closest-point indices): dropped by positions_changed() and
///    rebuilt from the new positions on the next require.
/// References returned by `require_*()` stay valid until the DeviceMesh is destroyed (connectivity) or until
/// the next positions_changed() (geometry); the closest-point index is handed out as a shared_ptr, which a
/// holder may keep past positions_changed() (it then keeps the old surface). Not thread-safe.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/exec/device_buffer.hpp"
#include "engine/mesh/mesh_operators.hpp"
#include "engine/mesh/mesh_partition.hpp"
#include "engine/mesh/operator_pattern.hpp"
#include "engine/mesh/triangle_mesh.hpp"
#include "engine/spatial/triangle_index.hpp"

namespace tissue::mesh {

/// The connectivity on the active backend, as TriangleMesh::faces and MeshTopology hold it (int32).
struct DeviceTopology {
  DeviceBuffer<std::int32_t> faces;                              ///< 3 vertex indices per face
  DeviceBuffer<std::int32_t> vertex_offsets, vertex_neighbours;  ///< vertex-vertex CSR (n + 1; 2 per edge)
  DeviceBuffer<std::int32_t> face_offsets, vertex_faces;         ///< vertex-face CSR (n + 1; 3 per face)
};

/// The operator pattern (operator_pattern.hpp) on the active backend; its corner offsets are
/// DeviceTopology::face_offsets (the same array).
struct DeviceOperatorPattern {
  DeviceBuffer<std::int32_t> offsets;         ///< n + 1
  DeviceBuffer<std::int32_t> columns, rows;   ///< per entry
  DeviceBuffer<std::int32_t> diagonal;        ///< n
  DeviceBuffer<std::int32_t> sources;         ///< 2 per entry
  DeviceBuffer<std::int32_t> vertex_corners;  ///< 3 per face
};

/// Vertex positions on the active backend, one array per coordinate (n each) [length].
struct DevicePositions {
  DeviceBuffer<double> x, y, z;
};

/// A mesh, its topology, and its cached derived quantities on the host (double) and on the active backend.
class DeviceMesh {
 public:
  /// Builds the topology of `mesh` (mesh::build_topology; the mesh should be valid, mesh::validate).
  /// @param source  names the mesh in error messages ("mesh", "membrane", ...)
  /// @throws InputError (naming `source`) for a non-manifold or inconsistently oriented mesh.
  explicit DeviceMesh(std::shared_ptr<const TriangleMesh> mesh, std::string source = "mesh");
  /// The same over a mesh taken by value.
  explicit DeviceMesh(TriangleMesh mesh, std::string source = "mesh");
  /// Over a mesh whose topology the caller built already (build_topology(*mesh) must give `topology`).
  DeviceMesh(std::shared_ptr<const TriangleMesh> mesh, MeshTopology topology, std::string source = "mesh");

  /// References into the caches are handed out: neither copied nor moved (hold it by shared_ptr).
  DeviceMesh(const DeviceMesh&) = delete;
  DeviceMesh& operator=(const DeviceMesh&) = delete;

  std::size_t vertex_count() const { return vertex_count_; }
  std::size_t face_count() const { return faces().size() / 3; }
  /// The faces (3 vertex indices per face), never stale.
  const std::vector<std::int32_t>& faces() const { return mesh_->faces; }
  const MeshTopology& topology() const { return topology_; }
  const std::string& source() const { return source_; }

  /// The mesh with its current positions: after positions_changed() with device positions, they are
  /// downloaded once into a new host mesh (earlier shared_mesh() holders keep the old one).
  const TriangleMesh& mesh();
  /// The same as a shared pointer (e.g. for SurfaceField, which keeps the mesh it was made with).
  std::shared_ptr<const TriangleMesh> shared_mesh();

  // ---- connectivity (kept for the mesh's life) ----
  /// The counter-clockwise one-ring of every vertex (mesh::one_ring).
  /// @throws InputError (naming source()) for a vertex whose faces do not form one fan.
  const OneRing& require_one_ring();
  /// The pattern of the Laplacian and Dirac operators with their gather sources (mesh::operator_pattern).
  const OperatorPattern& require_operator_pattern();
  /// METIS patches of about `target_vertices` own vertices each (partition_vertices into
  /// max(1, round(n / target_vertices)) parts) grown by `levels` halo rings (mesh_patches); one build per
  /// (target_vertices, levels). @throws std::invalid_argument for levels < 0; std::runtime_error (METIS).
  const MeshPatches& require_patches(std::size_t target_vertices, int levels);
  /// faces and topology on the active backend.
  const DeviceTopology& require_device_topology();
  /// The operator pattern on the active backend.
  const DeviceOperatorPattern& require_device_operator_pattern();

  // ---- geometry (dropped by positions_changed()) ----
  /// Cotangent weights (cot a + cot b) / 2 and mixed Voronoi areas (Meyer et al. 2003; seed 000 eq. 2).
  const CotangentLaplacian& require_cotangent_laplacian();
  /// Face areas, hat-function gradients and corner angles (seed 000 eqs. 3-4).
  const FaceGradients& require_face_gradients();
  /// The vertex gradient of eq. 4 as one stencil per vertex (from require_face_gradients()).
  const VertexGradientOperator& require_vertex_gradient_operator();
  /// Area-weighted unit vertex normals (mesh::vertex_normals), one per vertex.
  const std::vector<std::array<double, 3>>& require_vertex_normals();
  /// Zero-flux projections of the boundary vertices' gradients (mesh::boundary_projections), 6 per vertex.
  const std::vector<double>& require_boundary_projections();
  /// The closest-point index of the mesh for queries within `reach` [length] (TriangleIndex::build), on the
  /// active backend and the host; one build per reach value.
  /// @throws std::invalid_argument when reach <= 0.
  std::shared_ptr<const TriangleIndex> require_closest_point_index(float reach);

  // ---- positions on the device ----
  /// The positions on the active backend, uploaded from the mesh on the first call. A caller that moves
  /// the vertices writes here and then calls positions_changed().
  DevicePositions& require_device_positions();
  /// Declares that the positions changed (on the device, through require_device_positions()): drops every
  /// geometric quantity; the host mesh is refreshed from the device on its next use. O(1) when nothing
  /// geometric is cached: no device work.
  void positions_changed();

  /// How many quantities were built so far (topology excluded): a second require of a cached quantity
  /// leaves it unchanged. For tests and setup reports.
  std::size_t build_count() const { return builds_; }

 private:
  std::shared_ptr<const TriangleMesh> mesh_;
  std::string source_;
  std::size_t vertex_count_ = 0;
  MeshTopology topology_;
  bool host_stale_ = false;  ///< the device positions changed since mesh_ was made
  std::size_t builds_ = 0;
  // connectivity
  std::optional<OneRing> one_ring_;
  std::optional<OperatorPattern> pattern_;
  std::map<std::pair<std::size_t, int>, MeshPatches> patches_;
  std::unique_ptr<DeviceTopology> device_topology_;
  std::unique_ptr<DeviceOperatorPattern> device_pattern_;
  std::unique_ptr<DevicePositions> device_positions_;
  // geometry
  std::optional<CotangentLaplacian> laplacian_;
  std::optional<FaceGradients> face_gradients_;
  std::optional<VertexGradientOperator> gradient_operator_;
  std::optional<std::vector<std::array<double, 3>>> normals_;
  std::optional<std::vector<double>> boundary_projections_;
  std::map<float, std::shared_ptr<const TriangleIndex>> indices_;
};

}  // namespace tissue::mesh
