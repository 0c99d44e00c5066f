#pragma once
/// @file grid_halo.hpp
/// A grid field (engine/grid/grid.hpp) decomposed over the ranks of a Decomposition, with ghost layers of
/// a stencil's width: each rank holds the nodes whose centres its subdomain owns (a block of x and y index
/// ranges, every z), in a local array framed by `width` ghost nodes on each x and y side, which exchange()
/// fills from the neighbouring ranks (periodic images across the box included) and, on the faces of the
/// grid that are not periodic, by the field's boundary rule (mirror for zero flux, the face's value for
/// Dirichlet). A stencil then reads only the local array, with no boundary logic, and gives to the bit
/// what it gives on the whole grid: a ghost holds the value GridGeometry::sample() resolves for that index.
///
/// The frame is filled in two phases, x then y, the y messages spanning the x ghosts too, so that the
/// corners a 9-point stencil reads arrive without diagonal messages; both resolve the x and the y index
/// independently, as sample() does. Messages are tagged by phase and direction, never merged (a periodic axis
/// split in two has one neighbour rank on both sides; an axis not split sends to its own rank).
///
/// Local layout: (nx_local + 2 width) x (ny_local + 2 width) x nz nodes per species, x fastest, species-
/// major, local node (li, lj, k) with li in [-width, nx_local + width) at
/// ((k (ny_local + 2 width) + lj + width) (nx_local + 2 width) + li + width) (local_index()).

#include <array>
#include <cstddef>
#include <vector>

#include "engine/domain/communicator.hpp"
#include "engine/domain/decomposition.hpp"
#include "engine/grid/grid.hpp"

namespace tissue {
class World;
}

namespace tissue::domain {

/// The nodes of a grid a rank owns: [i0, i1) x [j0, j1), every k (global node indices).
struct GridBlock {
  int i0 = 0, i1 = 0, j0 = 0, j1 = 0;
  int nx() const { return i1 - i0; }
  int ny() const { return j1 - j0; }
};

/// The block of `rank`: the nodes whose centres ((i + 1/2) h, (j + 1/2) h) Decomposition::owner() gives to
/// it (along each axis a contiguous range, since owners are monotone in x and in y).
/// @throws InputError if the grid does not span the box on a periodic axis (nx h != lx to 1e-6 relative),
///         or some rank would own no column or no row of nodes.
GridBlock grid_block(const Decomposition& decomposition, const GridShape& shape, int rank);

/// The ghost-layer exchange of one rank's block of a grid field (see the file comment).
template <class Real>
class GridHalo {
 public:
  /// @param decomposition  the decomposition of the tissue's box (kept by reference)
  /// @param comm           one rank per subdomain (kept by reference)
  /// @param shape          the whole grid: nx x ny x nz nodes, spacing h
  /// @param geometry       the whole grid's boundaries: faces and Dirichlet values (the faces of x and y
  ///                       must be periodic exactly where the box is)
  /// @param species        species per node (>= 1, <= kMaxGridSpecies)
  /// @param width          ghost layers (>= 1): the stencil's reach, 1 for every stencil of stencils.hpp
  /// @throws InputError as grid_block(), if a rank owns fewer than `width` nodes along x or y (its ghosts
  ///         would come from beyond its neighbour), or the grid's periodicity differs from the box's;
  ///         std::invalid_argument if comm.size() differs from decomposition.ranks() or species or width is
  ///         out of range.
  GridHalo(const Decomposition& decomposition, Communicator& comm, const GridShape& shape,
           const GridGeometry<Real>& geometry, int species, int width);

  const GridBlock& block() const { return block_; }
  int width() const { return width_; }
  /// Local extents, ghost frame included.
  int local_nx() const { return block_.nx() + 2 * width_; }
  int local_ny() const { return block_.ny() + 2 * width_; }
  int nz() const { return nz_; }
  /// Nodes per species of the local array.
  std::size_t local_cells() const {
    return static_cast<std::size_t>(local_nx()) * static_cast<std::size_t>(local_ny()) *
           static_cast<std::size_t>(nz_);
  }
  /// Index of local node (li, lj, k) within one species, li in [-width, block().nx() + width), likewise lj.
  std::size_t local_index(int li, int lj, int k) const {
    return (static_cast<std::size_t>(k) * static_cast<std::size_t>(local_ny()) +
            static_cast<std::size_t>(lj + width_)) *
               static_cast<std::size_t>(local_nx()) +
           static_cast<std::size_t>(li + width_);
  }
  /// The geometry of the local array (for GridGeometry::index and the stencils of stencils.hpp, with the
  /// node (li + width, lj + width, k)): the whole grid's z faces; its x and y faces are never consulted by a
  /// stencil of reach <= width at an owned node.
  GridGeometry<Real> local_geometry() const;

  /// Copies the owned block of a whole-grid field `global` (species-major, shape.cells() per species) into
  /// the interior of `local` (resized to species x local_cells(); the frame is zeroed).
  void scatter(const std::vector<Real>& global, std::vector<Real>& local) const;

  /// Fills the ghost frame of `local` (species x local_cells() values): from the neighbours' interiors,
  /// and by the boundary rule on the grid's non-periodic faces. Collective over all ranks.
  /// @throws std::invalid_argument if `local` has not species x local_cells() values.
  void exchange(std::vector<Real>& local);

 private:
  /// Packs the nodes li in [a0, a1), lj in [b0, b1) (every k and species) of `local`, or unpacks into them.
  void pack(const std::vector<Real>& local, int a0, int a1, int b0, int b1, Bytes& out) const;
  void unpack(std::vector<Real>& local, int a0, int a1, int b0, int b1, const Bytes& in) const;
  /// The boundary rule of face `face` (0..3) on the ghost layers of that side.
  void apply_boundary(std::vector<Real>& local, int face) const;

  const Decomposition& decomposition_;
  Communicator& comm_;
  GridShape shape_;
  GridGeometry<Real> geometry_;
  GridBlock block_;
  int species_ = 1, width_ = 1, nz_ = 1;
};

/// Gathers the blocks of a grid field decomposed over the ranks (each rank's block current in its host
/// mirror, the field at its whole shape on every rank) into rank 0's field: host mirror and device, every
/// species. The other ranks' fields are left as they are. Collective over all ranks.
/// @throws InputError as grid_block().
template <class Real>
void gather_blocks_to_root(const Decomposition& decomposition, Communicator& comm, GridField<Real>& field);

/// gather_blocks_to_root() for every grid field of `world` (host mirrors current): after it rank 0's fields
/// hold the whole grids, as the tissue gathered by gather_to_root() holds the whole tissue. Collective.
/// @throws std::invalid_argument for a field that is not a GridField<float> or GridField<double> (on every
///         rank alike: the fields are the same on every rank).
void gather_grid_fields_to_root(const Decomposition& decomposition, Communicator& comm, World& world);

extern template class GridHalo<float>;
extern template class GridHalo<double>;

}  // namespace tissue::domain
