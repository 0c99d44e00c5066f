#pragma once
/// @file grid_window.hpp
/// One rank's window of a grid field decomposed over ranks: the block of nodes it owns, [i0, i0 + bx) x
/// [j0, j0 + by) x every k, framed by wx ghost nodes on each x side and wy on each y side ((bx + 2 wx) x
/// (by + 2 wy) x nz nodes, x fastest; a frame of 0 along an axis whose block spans the grid). Kernels address
/// it with the whole grid's node indices: sample() first resolves a node by the whole grid's boundary rules
/// (GridGeometry::resolve_node: periodic wrap, Neumann mirror, Dirichlet value), then finds it in the
/// window, on a periodic axis at the image nearest the block. A stencil or a trilinear sample applied
/// through a window therefore reads the same values, in the same order, as on the whole grid wherever the
/// window holds the nodes it reads (engine/grid/stencils.hpp, point_sampling.hpp).

#include <cstddef>

#include "engine/exec/config.hpp"
#include "engine/grid/grid.hpp"

namespace tissue {

/// A block of a grid with its ghost frame, addressed by whole-grid node indices (see the file comment).
template <class Real>
struct GridWindow {
  GridGeometry<Real> grid;  ///< the whole grid: shape and boundaries
  int i0 = 0, j0 = 0;       ///< the block's first node
  int bx = 1, by = 1;       ///< the block's nodes along x and y
  int wx = 1, wy = 1;       ///< ghost layers on each x side and on each y side

  TISSUE_HD int local_nx() const { return bx + 2 * wx; }
  TISSUE_HD int local_ny() const { return by + 2 * wy; }
  /// Nodes per species of the local array.
  TISSUE_HD std::size_t cells() const {
    return static_cast<std::size_t>(local_nx()) * static_cast<std::size_t>(local_ny()) *
           static_cast<std::size_t>(grid.nz);
  }
  /// Local index of node (i, j, k) given relative to the block, li = i - i0 in [-wx, bx + wx), lj = j - j0
  /// in [-wy, by + wy) (no check).
  TISSUE_HD std::size_t local_index(int li, int lj, int k) const {
    return (static_cast<std::size_t>(k) * static_cast<std::size_t>(local_ny()) +
            static_cast<std::size_t>(lj + wy)) *
               static_cast<std::size_t>(local_nx()) +
           static_cast<std::size_t>(li + wx);
  }
  /// Local index of a node of the block or its frame, whole-grid indices not wrapped (no check).
  TISSUE_HD std::size_t index(int i, int j, int k) const { return local_index(i - i0, j - j0, k); }

  /// Local index of node (i, j, k) of the whole grid (each index in [0, n)): on a periodic axis the image
  /// nearest the block. False when the window does not hold it.
  TISSUE_HD bool find(int i, int j, int k, std::size_t& at) const {
    int li = i - i0, lj = j - j0;
    if (grid.face[0] == GridBoundary::periodic) li = unwrap(li, bx, wx, grid.nx);
    if (grid.face[2] == GridBoundary::periodic) lj = unwrap(lj, by, wy, grid.ny);
    if (li < -wx || li >= bx + wx || lj < -wy || lj >= by + wy) return false;
    at = local_index(li, lj, k);
    return true;
  }

  /// As GridGeometry::sample: species s (data u of that species, the local layout) at whole-grid node
  /// (i, j, k), each index outside the grid by at most its size; 0 for a node the window does not hold.
  template <class Load>
  TISSUE_HD Real sample(const Real* u, int s, int i, int j, int k, Load load) const {
    const int face = grid.resolve_node(i, j, k);
    if (face >= 0) return grid.dirichlet[face][s];
    std::size_t at = 0;
    if (!find(i, j, k, at)) return Real(0);
    return load(u + at);
  }
  TISSUE_HD Real sample(const Real* u, int s, int i, int j, int k) const {
    return sample(u, s, i, j, k, PlainLoad{});
  }

 private:
  struct PlainLoad {
    TISSUE_HD Real operator()(const Real* p) const { return *p; }
  };
  /// A block-relative index on a periodic axis of n nodes (block b, frame w) moved by n toward the window.
  TISSUE_HD static int unwrap(int l, int b, int w, int n) {
    if (l < -w) return l + n;
    if (l >= b + w) return l - n;
    return l;
  }
};

}  // namespace tissue
