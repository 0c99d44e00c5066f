#pragma once
/// @file field.hpp
/// Fields the World owns besides its entity tables (grids; meshes later): a name, host/device sync, and
/// their state as typed host arrays for checkpoints.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/scalar_type.hpp"

namespace tissue {

/// One host array of a field's state. `dims` are slowest-varying first (C order); `data` holds their
/// product of values of `type` and stays valid until the field is resized or destroyed.
struct HostArray {
  std::string name;
  ScalarType type = ScalarType::f32;
  std::vector<std::size_t> dims;
  void* data = nullptr;
  /// false: state a restart needs but no viewer shows (e.g. the compensations of compensated summation):
  /// left out of the checkpoint's .xdmf, and read as zeros from a checkpoint written before it existed.
  bool viewer = true;

  /// Number of values (product of dims).
  std::size_t count() const {
    std::size_t n = 1;
    for (auto d : dims) n *= d;
    return n;
  }
};

class FieldBase {
 public:
  explicit FieldBase(std::string name) : name_(std::move(name)) {}
  virtual ~FieldBase() = default;
  FieldBase(const FieldBase&) = delete;
  FieldBase& operator=(const FieldBase&) = delete;
  const std::string& name() const { return name_; }
  /// Host mirror <- device.
  virtual void download() = 0;
  /// Host mirror -> device.
  virtual void upload() = 0;
  /// Device memory the field holds [bytes].
  virtual std::size_t bytes() const = 0;
  /// The whole state as host arrays (the host mirror: download() before reading them, upload() after
  /// writing them). A checkpoint stores exactly these; everything else a field holds is rebuilt from the
  /// scenario or overwritten by the next step.
  virtual std::vector<HostArray> host_arrays() = 0;
  /// Node spacing [length] of a uniform grid field whose arrays are (nz, ny, nx) node values, for
  /// viewers of checkpoints (XDMF); 0 for other fields.
  virtual double grid_spacing() const { return 0.0; }
  /// For a field on the vertices of a triangle mesh, its geometry for viewers of checkpoints (XDMF):
  /// positions (3 per vertex, x y z [length]) and triangles (3 vertex indices each); false for other fields.
  virtual bool surface_geometry(std::vector<double>& /*points*/,
                                std::vector<std::int32_t>& /*triangles*/) const {
    return false;
  }

 private:
  std::string name_;
};

}  // namespace tissue
