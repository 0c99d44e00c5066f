#pragma once
/// @file grid.hpp
/// Uniform structured grids: shape, per-face boundary conditions, and double-buffered species fields.
///
/// Nodes are cell-centred at ((i + 1/2) h, (j + 1/2) h, (k + 1/2) h), x fastest: node (i, j, k) is at
/// index (k * ny + j) * nx + i. A field with S species stores them species-major: species s occupies
/// [s * cells, (s + 1) * cells). Boundaries act through ghost values one node outside a face:
///   periodic   the node on the opposite side;
///   neumann    zero flux: the mirror image of the inside node across the face (u_-1 = u_0);
///   dirichlet  the fixed value given for that face and species.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/core/field.hpp"
#include "engine/exec/config.hpp"
#include "engine/exec/device_buffer.hpp"

namespace tissue {

enum class GridBoundary : std::uint8_t { periodic, neumann, dirichlet };

/// Most species a grid kernel handles (Dirichlet value tables are fixed-size for kernels).
inline constexpr int kMaxGridSpecies = 4;

/// nx x ny x nz nodes (nz = 1 for a 2D grid), spacing h [length].
struct GridShape {
  int nx = 1, ny = 1, nz = 1;
  double h = 1.0;
  int dims() const { return nz > 1 ? 3 : 2; }
  std::size_t cells() const {
    return static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny) * static_cast<std::size_t>(nz);
  }
};

/// Grid geometry and boundaries as kernels see them. Faces: 0 = -x, 1 = +x, 2 = -y, 3 = +y, 4 = -z, 5 = +z.
template <class Real>
struct GridGeometry {
  int nx = 1, ny = 1, nz = 1;
  GridBoundary face[6] = {GridBoundary::periodic, GridBoundary::periodic, GridBoundary::periodic,
                          GridBoundary::periodic, GridBoundary::periodic, GridBoundary::periodic};
  Real dirichlet[6][kMaxGridSpecies] = {};  ///< ghost values of Dirichlet faces, per species

  TISSUE_HD std::size_t cells() const {
    return static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny) * static_cast<std::size_t>(nz);
  }
  TISSUE_HD std::size_t index(int i, int j, int k) const {
    return (static_cast<std::size_t>(k) * static_cast<std::size_t>(ny) + static_cast<std::size_t>(j)) *
               static_cast<std::size_t>(nx) +
           static_cast<std::size_t>(i);
  }

  /// Value of species s (field data u of that species) at node (i, j, k), where each index may lie
  /// outside the grid by at most its size: boundary rules give the ghost value.
  TISSUE_HD Real sample(const Real* u, int s, int i, int j, int k) const {
    return sample(u, s, i, j, k, PlainLoad{});
  }
  /// As sample(), reading the node through load(const Real*) (a device kernel may need a load that
  /// bypasses the L1 cache, for data another kernel is writing while it runs).
  template <class Load>
  TISSUE_HD Real sample(const Real* u, int s, int i, int j, int k, Load load) const {
    if (!resolve(i, nx, 0)) return dirichlet[i < 0 ? 0 : 1][s];
    if (!resolve(j, ny, 2)) return dirichlet[j < 0 ? 2 : 3][s];
    if (!resolve(k, nz, 4)) return dirichlet[k < 0 ? 4 : 5][s];
    return load(u + index(i, j, k));
  }

  /// Maps node (i, j, k), each index outside the grid by at most its size, into the grid as sample() does
  /// (periodic wrap, Neumann mirror). Returns -1 when it did, else the Dirichlet face the node lies beyond
  /// (its value is dirichlet[face][s]; the indices are then left partly unmapped).
  TISSUE_HD int resolve_node(int& i, int& j, int& k) const {
    if (!resolve(i, nx, 0)) return i < 0 ? 0 : 1;
    if (!resolve(j, ny, 2)) return j < 0 ? 2 : 3;
    if (!resolve(k, nz, 4)) return k < 0 ? 4 : 5;
    return -1;
  }

 private:
  struct PlainLoad {
    TISSUE_HD Real operator()(const Real* p) const { return *p; }
  };
  /// Maps an outside index inside for periodic and Neumann faces; false for a Dirichlet face (the index
  /// is left outside to tell which face).
  TISSUE_HD bool resolve(int& i, int n, int low_face) const {
    if (i >= 0 && i < n) return true;
    const GridBoundary b = face[i < 0 ? low_face : low_face + 1];
    if (b == GridBoundary::dirichlet) return false;
    if (b == GridBoundary::periodic) {
      i = i < 0 ? i + n : i - n;
    } else {
      i = i < 0 ? -1 - i : 2 * n - 1 - i;  // mirror across the face
    }
    return true;
  }
};

/// Geometry of a grid of `shape` with boundary faces[f] and Dirichlet ghost values dirichlet(f, s) for
/// face f and species s < species (callable returning a number).
template <class Real, class DirichletValue>
GridGeometry<Real> make_grid_geometry(const GridShape& shape, const std::array<GridBoundary, 6>& faces,
                                      int species, DirichletValue&& dirichlet) {
  GridGeometry<Real> g;
  g.nx = shape.nx;
  g.ny = shape.ny;
  g.nz = shape.nz;
  for (int f = 0; f < 6; ++f) {
    g.face[f] = faces[static_cast<std::size_t>(f)];
    for (int s = 0; s < species && s < kMaxGridSpecies; ++s)
      g.dirichlet[f][s] = static_cast<Real>(dirichlet(f, s));
  }
  return g;
}

/// The device state of a GridField held by another object: one rank's block and ghost frame of a field
/// decomposed over the ranks (coupling::DecomposedSignalField). GridField::download() and upload() go
/// through it (GridField::hold_elsewhere()).
template <class Real>
class GridStorage {
 public:
  virtual ~GridStorage() = default;
  /// Writes the nodes it holds into `host`, the whole grid's mirror (species-major, the field's layout);
  /// leaves the other nodes as they are.
  virtual void download(std::vector<Real>& host) = 0;
  /// Sets the nodes it holds from `host` (whose values at those nodes must be current).
  virtual void upload(const std::vector<Real>& host) = 0;
  /// Device memory it holds [bytes].
  virtual std::size_t bytes() const = 0;
};

/// S species on a grid, double-buffered on the active backend, with a host mirror of the current state.
/// A field decomposed over ranks hands its device state to a GridStorage (hold_elsewhere()).
template <class Real>
class GridField final : public FieldBase {
 public:
  /// @throws std::invalid_argument for an empty shape, more than kMaxGridSpecies species, or a periodic
  /// face whose opposite face is not periodic.
  GridField(std::string name, GridShape shape, std::vector<std::string> species, GridGeometry<Real> geometry)
      : FieldBase(std::move(name)), shape_(shape), species_(std::move(species)), geometry_(geometry) {
    if (shape_.nx < 1 || shape_.ny < 1 || shape_.nz < 1)
      throw std::invalid_argument("grid size must be >= 1");
    if (species_.empty() || species_.size() > static_cast<std::size_t>(kMaxGridSpecies))
      throw std::invalid_argument("a grid field holds 1 to " + std::to_string(kMaxGridSpecies) + " species");
    for (int axis = 0; axis < 3; ++axis)
      if ((geometry_.face[2 * axis] == GridBoundary::periodic) !=
          (geometry_.face[2 * axis + 1] == GridBoundary::periodic))
        throw std::invalid_argument("a periodic boundary pairs opposite faces (axis " + std::to_string(axis) +
                                    ")");
    geometry_.nx = shape_.nx;
    geometry_.ny = shape_.ny;
    geometry_.nz = shape_.nz;
    const std::size_t n = shape_.cells() * species_.size();
    current_.resize(n);
    next_.resize(n);
    host_.assign(n, Real(0));
    current_.zero();
    next_.zero();
  }

  const GridShape& shape() const { return shape_; }
  const GridGeometry<Real>& geometry() const { return geometry_; }
  int species_count() const { return static_cast<int>(species_.size()); }
  const std::vector<std::string>& species_names() const { return species_; }
  std::size_t cells() const { return shape_.cells(); }

  /// Current state, species-major (cells() values per species).
  /// @throws std::logic_error when the state is held elsewhere (resident() false), as next() and swap().
  Span<Real> current() { return resident_buffer(current_).span(); }
  Span<Real> current(int s) { return current().subspan(static_cast<std::size_t>(s) * cells(), cells()); }
  /// The buffer a step writes; swap() makes it current.
  Span<Real> next() { return resident_buffer(next_).span(); }
  Span<Real> next(int s) { return next().subspan(static_cast<std::size_t>(s) * cells(), cells()); }
  void swap() { resident_buffer(current_).swap(next_); }

  /// Hands the device state to `storage` (not null) and frees this field's device buffers: from then on
  /// download() and upload() go through it, and current(), next() and swap() throw. The host mirror stays
  /// at the whole grid's shape.
  void hold_elsewhere(std::shared_ptr<GridStorage<Real>> storage) {
    if (!storage) throw std::invalid_argument("grid field '" + name() + "': no storage to hold it");
    storage_ = std::move(storage);
    current_ = DeviceBuffer<Real>();
    next_ = DeviceBuffer<Real>();
  }
  /// False once hold_elsewhere() handed the device state over.
  bool resident() const { return storage_ == nullptr; }

  /// Host mirror of the current state (species-major).
  std::vector<Real>& host() { return host_; }
  Real& host_at(int s, int i, int j, int k) {
    return host_[static_cast<std::size_t>(s) * cells() + geometry_.index(i, j, k)];
  }
  void download() override {
    if (storage_)
      storage_->download(host_);
    else
      current_.download(host_.data(), host_.size());
  }
  void upload() override {
    if (storage_)
      storage_->upload(host_);
    else
      current_.upload(host_.data(), host_.size());
  }
  /// Device bytes of the two buffers, or of the GridStorage that holds the state.
  std::size_t bytes() const override {
    return storage_ ? storage_->bytes() : 2 * host_.size() * sizeof(Real);
  }
  /// One (nz, ny, nx) array per species, named after it.
  std::vector<HostArray> host_arrays() override {
    std::vector<HostArray> out;
    for (std::size_t s = 0; s < species_.size(); ++s)
      out.push_back({species_[s],
                     scalar_type_of<Real>(),
                     {static_cast<std::size_t>(shape_.nz), static_cast<std::size_t>(shape_.ny),
                      static_cast<std::size_t>(shape_.nx)},
                     host_.data() + s * cells()});
    return out;
  }
  double grid_spacing() const override { return shape_.h; }

 private:
  DeviceBuffer<Real>& resident_buffer(DeviceBuffer<Real>& b) {
    if (storage_)
      throw std::logic_error("grid field '" + name() +
                             "': its device state is held by its decomposed blocks (GridStorage)");
    return b;
  }

  GridShape shape_;
  std::vector<std::string> species_;
  GridGeometry<Real> geometry_;
  DeviceBuffer<Real> current_, next_;
  std::vector<Real> host_;
  std::shared_ptr<GridStorage<Real>> storage_;  ///< the device state when held elsewhere
};

}  // namespace tissue
