#pragma once
/// @file surface_field.hpp
/// Species living on the vertices of a triangle mesh: double-buffered arrays on the active backend with a
/// host mirror, species-major (species s of vertex v at [s * vertices + v]). The field keeps its mesh (for
/// output and checkpoints); the mesh does not change while the field lives.

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/core/field.hpp"
#include "engine/exec/device_buffer.hpp"
#include "engine/mesh/triangle_mesh.hpp"

namespace tissue {

template <class Real>
class SurfaceField final : public FieldBase {
 public:
  /// @throws std::invalid_argument for an empty mesh or no species.
  SurfaceField(std::string name, std::shared_ptr<const mesh::TriangleMesh> mesh,
               std::vector<std::string> species)
      : FieldBase(std::move(name)), mesh_(std::move(mesh)), species_(std::move(species)) {
    if (!mesh_ || mesh_->vertex_count() == 0) throw std::invalid_argument("a surface field needs a mesh");
    if (species_.empty()) throw std::invalid_argument("a surface field needs at least one species");
    const std::size_t n = mesh_->vertex_count() * species_.size();
    current_.resize(n);
    next_.resize(n);
    compensation_.resize(n);
    current_.zero();
    next_.zero();
    compensation_.zero();
    host_.assign(n, Real(0));
    compensation_host_.assign(n, Real(0));
  }

  const mesh::TriangleMesh& mesh() const { return *mesh_; }
  std::size_t vertices() const { return mesh_->vertex_count(); }
  int species_count() const { return static_cast<int>(species_.size()); }
  const std::vector<std::string>& species_names() const { return species_; }

  /// Current state (species-major) and one species of it.
  Span<Real> current() { return current_.span(); }
  Span<Real> current(int s) {
    return current_.span().subspan(static_cast<std::size_t>(s) * vertices(), vertices());
  }
  /// The buffer a step writes; swap() makes it current (and leaves the previous state in next()).
  Span<Real> next() { return next_.span(); }
  Span<Real> next(int s) {
    return next_.span().subspan(static_cast<std::size_t>(s) * vertices(), vertices());
  }
  void swap() { current_.swap(next_); }

  /// The rounding error of compensated (Kahan) summation carried for each value of the state (species-major,
  /// as current()): what the last updates lost to rounding, added back by the next. Zero until a stepper
  /// that compensates writes it; part of the state in checkpoints (not shown to viewers), so that a restart
  /// continues bit for bit.
  Span<Real> compensation() { return compensation_.span(); }
  /// The buffer behind compensation(), for steppers that double-buffer it (swap with their own).
  DeviceBuffer<Real>& compensation_buffer() { return compensation_; }

  /// Host mirror of the current state (species-major).
  std::vector<Real>& host() { return host_; }
  Real& host_at(int s, std::size_t v) { return host_[static_cast<std::size_t>(s) * vertices() + v]; }
  void download() override {
    current_.download(host_.data(), host_.size());
    compensation_.download(compensation_host_.data(), compensation_host_.size());
  }
  void upload() override {
    current_.upload(host_.data(), host_.size());
    compensation_.upload(compensation_host_.data(), compensation_host_.size());
  }
  std::size_t bytes() const override { return 3 * host_.size() * sizeof(Real); }
  bool surface_geometry(std::vector<double>& points, std::vector<std::int32_t>& triangles) const override {
    points.resize(3 * vertices());
    for (std::size_t v = 0; v < vertices(); ++v) {
      points[3 * v] = mesh_->x[v];
      points[3 * v + 1] = mesh_->y[v];
      points[3 * v + 2] = mesh_->z[v];
    }
    triangles = mesh_->faces;
    return true;
  }
  /// One (vertices) array per species, named after it; then, for restarts only (HostArray::viewer false),
  /// the compensations of each species as "<species>_compensation".
  std::vector<HostArray> host_arrays() override {
    std::vector<HostArray> out;
    for (std::size_t s = 0; s < species_.size(); ++s)
      out.push_back({species_[s], scalar_type_of<Real>(), {vertices()}, host_.data() + s * vertices()});
    for (std::size_t s = 0; s < species_.size(); ++s)
      out.push_back({species_[s] + "_compensation",
                     scalar_type_of<Real>(),
                     {vertices()},
                     compensation_host_.data() + s * vertices(),
                     false});
    return out;
  }

 private:
  std::shared_ptr<const mesh::TriangleMesh> mesh_;
  std::vector<std::string> species_;
  DeviceBuffer<Real> current_, next_, compensation_;
  std::vector<Real> host_, compensation_host_;
};

}  // namespace tissue
