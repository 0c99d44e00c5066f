#pragma once
/// @file point_sampling.hpp
/// A grid field at arbitrary points, as pure TISSUE_HD code shared by the modules that couple particles
/// (cell centres, elements) to grids: the trilinear (cloud-in-cell) stencil of a point, the interpolant of a
/// species and its gradient there, and the conservative deposition weights of a point onto the nodes around
/// it. Grid nodes sit at ((i + 1/2) h, (j + 1/2) h, (k + 1/2) h) (engine/grid/grid.hpp); boundaries as in
/// GridGeometry::sample. Source: the standard particle-in-cell assignment (Hockney & Eastwood, "Computer
/// Simulation Using Particles", ch. 5: the CIC scheme).

#include "engine/exec/config.hpp"
#include "engine/exec/math.hpp"
#include "engine/grid/grid.hpp"
#include "engine/grid/grid_window.hpp"

namespace tissue::grid {

/// The two nodes along one axis that bracket a position, and the linear weight of the upper one.
/// `lo` may be -1 and `lo + 1` may be n on a non-periodic axis (the ghost node beyond a face, resolved by
/// GridGeometry::sample); on a periodic axis lo is in [0, n) and lo + 1 may be n (wrapped by sample).
struct AxisBracket {
  int lo = 0;
  double f = 0.0;       ///< weight of lo + 1, in [0, 1]; lo has 1 - f
  bool inside = true;   ///< the position was inside [0, n h] (false: clamped to the face, gradient 0)
  bool single = false;  ///< the axis has one node (a 2D grid's z): all weight on lo = 0
};

/// Bracket of position x [length] on an axis of n nodes with spacing 1/inv_h [length]. Non-periodic axes
/// clamp x to the grid's extent [0, n h]; periodic axes wrap it.
TISSUE_HD inline AxisBracket axis_bracket(double x, int n, double inv_h, bool periodic) {
  AxisBracket b;
  if (n == 1) {
    b.single = true;
    return b;
  }
  double s = x * inv_h - 0.5;
  if (!periodic) {
    const double lo = -0.5, hi = static_cast<double>(n) - 0.5;
    if (s < lo || s > hi) b.inside = false;
    s = s < lo ? lo : (s > hi ? hi : s);
  }
  const double fl = math::floor(s);
  b.f = s - fl;
  int i = static_cast<int>(fl);
  if (periodic) {
    i %= n;
    if (i < 0) i += n;
  }
  b.lo = i;
  return b;
}

/// Trilinear (CIC) stencil of a point on a grid: per axis the bracketing nodes and weights.
struct CicStencil {
  AxisBracket axis[3];
  double inv_h = 1.0;

  /// Weight of corner (a, b, c) in {0, 1}^3.
  TISSUE_HD double weight(int a, int b, int c) const {
    return axis_weight(0, a) * axis_weight(1, b) * axis_weight(2, c);
  }
  TISSUE_HD double axis_weight(int d, int a) const {
    if (axis[d].single) return a == 0 ? 1.0 : 0.0;
    return a == 0 ? 1.0 - axis[d].f : axis[d].f;
  }
  /// d(weight of the corner's axis-d factor)/dx_d [1/length]: 0 on single or clamped axes.
  TISSUE_HD double axis_slope(int d, int a) const {
    if (axis[d].single || !axis[d].inside) return 0.0;
    return a == 0 ? -inv_h : inv_h;
  }
};

/// Stencil of point (x, y, z) [length] on grid g with spacing h [length].
template <class Real>
TISSUE_HD CicStencil cic_stencil(const GridGeometry<Real>& g, double h, double x, double y, double z) {
  CicStencil st;
  st.inv_h = 1.0 / h;
  st.axis[0] = axis_bracket(x, g.nx, st.inv_h, g.face[0] == GridBoundary::periodic);
  st.axis[1] = axis_bracket(y, g.ny, st.inv_h, g.face[2] == GridBoundary::periodic);
  st.axis[2] = axis_bracket(z, g.nz, st.inv_h, g.face[4] == GridBoundary::periodic);
  return st;
}

/// Stencil of a point on a rank's window of a decomposed grid: the whole grid's stencil.
template <class Real>
TISSUE_HD CicStencil cic_stencil(const GridWindow<Real>& w, double h, double x, double y, double z) {
  return cic_stencil(w.grid, h, x, y, z);
}

/// Trilinear interpolant of species s (data u) and its gradient at a stencil's point; boundaries as in
/// GridGeometry::sample (periodic wrap, Neumann mirror, Dirichlet ghost value). Exact for a field linear
/// in x, y, z between the outermost nodes. `gradient` (3 values, [1/length] x field units) may be null.
/// Geometry: GridGeometry<Real>, or the GridWindow of a decomposed grid (u then in its local layout).
template <class Real, class Geometry>
TISSUE_HD double cic_sample(const Geometry& g, const CicStencil& st, const Real* u, int s, double* gradient) {
  double value = 0.0, gx = 0.0, gy = 0.0, gz = 0.0;
  const int na = st.axis[0].single ? 1 : 2, nb = st.axis[1].single ? 1 : 2, nc = st.axis[2].single ? 1 : 2;
  for (int c = 0; c < nc; ++c)
    for (int b = 0; b < nb; ++b)
      for (int a = 0; a < na; ++a) {
        const double v =
            static_cast<double>(g.sample(u, s, st.axis[0].lo + a, st.axis[1].lo + b, st.axis[2].lo + c));
        const double wx = st.axis_weight(0, a), wy = st.axis_weight(1, b), wz = st.axis_weight(2, c);
        value += wx * wy * wz * v;
        gx += st.axis_slope(0, a) * wy * wz * v;
        gy += wx * st.axis_slope(1, b) * wz * v;
        gz += wx * wy * st.axis_slope(2, c) * v;
      }
  if (gradient != nullptr) {
    gradient[0] = gx;
    gradient[1] = gy;
    gradient[2] = gz;
  }
  return value;
}

/// Node an amount deposited at bracket index i (possibly -1 or n) lands on: wrapped on a periodic axis,
/// folded onto the face node otherwise, so that every deposit stays inside the grid (mass is conserved).
TISSUE_HD inline int deposit_index(int i, int n, bool periodic) {
  if (periodic) return i >= n ? i - n : i;
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

/// Sum of the deposit weights of a stencil's corners that land on node (i, j, k) (0 when none do;
/// several corners may fold onto one face node).
template <class Real>
TISSUE_HD double deposit_weight(const GridGeometry<Real>& g, const CicStencil& st, int i, int j, int k) {
  const bool px = g.face[0] == GridBoundary::periodic, py = g.face[2] == GridBoundary::periodic,
             pz = g.face[4] == GridBoundary::periodic;
  double wx = 0.0, wy = 0.0, wz = 0.0;
  for (int a = 0; a < 2; ++a)
    if (deposit_index(st.axis[0].lo + a, g.nx, px) == i) wx += st.axis_weight(0, a);
  for (int b = 0; b < 2; ++b)
    if (deposit_index(st.axis[1].lo + b, g.ny, py) == j) wy += st.axis_weight(1, b);
  for (int c = 0; c < 2; ++c)
    if (deposit_index(st.axis[2].lo + c, g.nz, pz) == k) wz += st.axis_weight(2, c);
  return wx * wy * wz;
}

}  // namespace tissue::grid
