#include "engine/mesh/device_mesh.hpp"

#include <algorithm>
#include <stdexcept>

namespace tissue::mesh {

DeviceMesh::DeviceMesh(std::shared_ptr<const TriangleMesh> mesh, std::string source)
    : mesh_(std::move(mesh)), source_(std::move(source)) {
  if (!mesh_) throw std::invalid_argument("DeviceMesh: no mesh");
  vertex_count_ = mesh_->vertex_count();
  topology_ = build_topology(*mesh_, source_);
}

DeviceMesh::DeviceMesh(TriangleMesh mesh, std::string source)
    : DeviceMesh(std::make_shared<const TriangleMesh>(std::move(mesh)), std::move(source)) {}

DeviceMesh::DeviceMesh(std::shared_ptr<const TriangleMesh> mesh, MeshTopology topology, std::string source)
    : mesh_(std::move(mesh)), source_(std::move(source)), topology_(std::move(topology)) {
  if (!mesh_) throw std::invalid_argument("DeviceMesh: no mesh");
  vertex_count_ = mesh_->vertex_count();
  if (topology_.vertex_offsets.size() != vertex_count_ + 1)
    throw std::invalid_argument("DeviceMesh: the topology is not the mesh's");
}

const TriangleMesh& DeviceMesh::mesh() {
  return *shared_mesh();
}

std::shared_ptr<const TriangleMesh> DeviceMesh::shared_mesh() {
  if (host_stale_ && device_positions_) {
    auto fresh = std::make_shared<TriangleMesh>();
    fresh->faces = mesh_->faces;
    fresh->x = device_positions_->x.to_host();
    fresh->y = device_positions_->y.to_host();
    fresh->z = device_positions_->z.to_host();
    mesh_ = std::move(fresh);
  }
  host_stale_ = false;
  return mesh_;
}

const OneRing& DeviceMesh::require_one_ring() {
  if (!one_ring_) {
    one_ring_ = one_ring(*mesh_, topology_, source_);  // connectivity only: stale positions do not matter
    ++builds_;
  }
  return *one_ring_;
}

const OperatorPattern& DeviceMesh::require_operator_pattern() {
  if (!pattern_) {
    pattern_ = operator_pattern(*mesh_, topology_);
    ++builds_;
  }
  return *pattern_;
}

const MeshPatches& DeviceMesh::require_patches(std::size_t target_vertices, int levels) {
  const auto key = std::make_pair(target_vertices, levels);
  auto it = patches_.find(key);
  if (it == patches_.end()) {
    const std::size_t parts = std::max<std::size_t>(
        1, (vertex_count_ + target_vertices / 2) / std::max<std::size_t>(1, target_vertices));
    it = patches_.emplace(key, mesh_patches(topology_, partition_vertices(topology_, parts), levels)).first;
    ++builds_;
  }
  return it->second;
}

const DeviceTopology& DeviceMesh::require_device_topology() {
  if (!device_topology_) {
    auto d = std::make_unique<DeviceTopology>();
    d->faces.assign(mesh_->faces);
    d->vertex_offsets.assign(topology_.vertex_offsets);
    d->vertex_neighbours.assign(topology_.vertex_neighbours);
    d->face_offsets.assign(topology_.face_offsets);
    d->vertex_faces.assign(topology_.vertex_faces);
    device_topology_ = std::move(d);
    ++builds_;
  }
  return *device_topology_;
}

const DeviceOperatorPattern& DeviceMesh::require_device_operator_pattern() {
  if (!device_pattern_) {
    const OperatorPattern& p = require_operator_pattern();
    auto d = std::make_unique<DeviceOperatorPattern>();
    d->offsets.assign(p.offsets);
    d->columns.assign(p.columns);
    d->rows.assign(p.rows);
    d->sources.assign(p.sources);
    d->vertex_corners.assign(p.vertex_corners);
    d->diagonal.assign(p.diagonal);
    device_pattern_ = std::move(d);
    ++builds_;
  }
  return *device_pattern_;
}

const CotangentLaplacian& DeviceMesh::require_cotangent_laplacian() {
  if (!laplacian_) {
    laplacian_ = cotangent_laplacian(mesh(), topology_);
    ++builds_;
  }
  return *laplacian_;
}

const FaceGradients& DeviceMesh::require_face_gradients() {
  if (!face_gradients_) {
    face_gradients_ = face_gradients(mesh());
    ++builds_;
  }
  return *face_gradients_;
}

const VertexGradientOperator& DeviceMesh::require_vertex_gradient_operator() {
  if (!gradient_operator_) {
    const FaceGradients& g = require_face_gradients();
    gradient_operator_ = vertex_gradient_operator(mesh(), topology_, g);
    ++builds_;
  }
  return *gradient_operator_;
}

const std::vector<std::array<double, 3>>& DeviceMesh::require_vertex_normals() {
  if (!normals_) {
    normals_ = vertex_normals(mesh());
    ++builds_;
  }
  return *normals_;
}

const std::vector<double>& DeviceMesh::require_boundary_projections() {
  if (!boundary_projections_) {
    boundary_projections_ = boundary_projections(mesh(), topology_);
    ++builds_;
  }
  return *boundary_projections_;
}

std::shared_ptr<const TriangleIndex> DeviceMesh::require_closest_point_index(float reach) {
  auto it = indices_.find(reach);
  if (it == indices_.end()) {
    auto index = std::make_shared<TriangleIndex>();
    index->build(mesh(), reach);
    it = indices_.emplace(reach, std::move(index)).first;
    ++builds_;
  }
  return it->second;
}

DevicePositions& DeviceMesh::require_device_positions() {
  if (!device_positions_) {
    auto d = std::make_unique<DevicePositions>();
    d->x.assign(mesh_->x);
    d->y.assign(mesh_->y);
    d->z.assign(mesh_->z);
    device_positions_ = std::move(d);
    ++builds_;
  }
  return *device_positions_;
}

void DeviceMesh::positions_changed() {
  if (device_positions_) host_stale_ = true;
  laplacian_.reset();
  face_gradients_.reset();
  gradient_operator_.reset();
  normals_.reset();
  boundary_projections_.reset();
  indices_.clear();
}

}  // namespace tissue::mesh
