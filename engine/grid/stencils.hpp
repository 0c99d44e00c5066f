#pragma once
/// @file stencils.hpp
/// Discrete Laplacians on the uniform grids of grid.hpp and the node index math of their kernels, as pure
/// TISSUE_HD code shared by the grid modules (grid_rd's reaction-diffusion step, coupling's signal fields).
/// Source: the grid seed (`001_*`: the 3x3 kernel 0.05 / 0.2 / -1 with unit spacing) and the standard
/// second-order 5- and 7-point stencils.
///
/// L is one of
///   seed9   the seed's kernel, unit spacing (h is not used): 0.2 (E+W+N+S) + 0.05 (NE+NW+SE+SW) - C;
///           it equals 0.3 h^2 times the isotropic 9-point Laplacian, so D means 0.3 D h^2 in
///           continuum units;
///   five    (E + W + N + S - 4 C) / h^2          (2D, second order)
///   seven   (E + W + N + S + U + D - 6 C) / h^2  (3D, second order)
/// Boundaries come from GridGeometry::sample (periodic, zero-flux mirror, Dirichlet ghost values).
///
/// Every kernel that applies a stencil, generic or tuned, calls these functions, so that they give
/// bit-identical results.

#include <cstddef>
#include <cstdint>

#include "engine/exec/config.hpp"
#include "engine/grid/grid.hpp"

namespace tissue::grid {

enum class Stencil : std::int32_t { seed9 = 0, five = 1, seven = 2 };

/// Largest eigenvalue magnitude of -L (the explicit stability limits follow from it) [1/length^2]:
/// seed9 1.6 (at wave numbers (pi, pi)), five 8 / h^2, seven 12 / h^2.
inline double laplacian_spectral_radius(Stencil s, double h) {
  switch (s) {
    case Stencil::seed9:
      return 1.6;
    case Stencil::five:
      return 8.0 / (h * h);
    default:
      return 12.0 / (h * h);
  }
}

/// Seed kernel from the nine values (row-major, n = +y). Summation order is part of the definition; on
/// the device the one fused multiply-add is explicit: left to the compiler, which product it fuses
/// depends on the surrounding kernel, and the tuned kernels would differ from the generic one in the last
/// bit. Swapping n with s (and nw, ne with sw, se) gives the same bits.
template <class Real>
TISSUE_HD Real seed9(Real nw, Real n, Real ne, Real w, Real c, Real e, Real sw, Real s, Real se) {
  const Real edges = (n + s) + (w + e), corners = (nw + ne) + (sw + se);
#if defined(__CUDA_ARCH__)
  return fma(Real(0.2), edges, Real(0.05) * corners) - c;
#else
  return Real(0.2) * edges + Real(0.05) * corners - c;
#endif
}
template <class Real>
TISSUE_HD Real five_point(Real n, Real w, Real c, Real e, Real s, Real inv_h2) {
  return ((n + s) + (w + e) - Real(4) * c) * inv_h2;
}
template <class Real>
TISSUE_HD Real seven_point(Real n, Real w, Real c, Real e, Real s, Real up, Real down, Real inv_h2) {
  return (((n + s) + (w + e)) + (up + down) - Real(6) * c) * inv_h2;
}

/// L(u) of species s at node (i, j, k), boundaries applied. Geometry: GridGeometry<Real>, or a GridWindow
/// (grid_window.hpp) for a rank's block of a decomposed grid (index(i, j, k) and sample() of its nodes).
template <class Real, class Geometry>
TISSUE_HD Real laplacian(Stencil stencil, const Geometry& g, const Real* u, int s, int i, int j, int k,
                         Real inv_h2) {
  const Real c = u[g.index(i, j, k)];
  const Real e = g.sample(u, s, i + 1, j, k), w = g.sample(u, s, i - 1, j, k);
  const Real n = g.sample(u, s, i, j + 1, k), so = g.sample(u, s, i, j - 1, k);
  if (stencil == Stencil::five) return five_point(n, w, c, e, so, inv_h2);
  if (stencil == Stencil::seven)
    return seven_point(n, w, c, e, so, g.sample(u, s, i, j, k + 1), g.sample(u, s, i, j, k - 1), inv_h2);
  return seed9(g.sample(u, s, i - 1, j + 1, k), n, g.sample(u, s, i + 1, j + 1, k), w, c, e,
               g.sample(u, s, i - 1, j - 1, k), so, g.sample(u, s, i + 1, j - 1, k));
}

/// Decodes a flat node index into (i, j, k).
template <class Real>
TISSUE_HD void node_of(const GridGeometry<Real>& g, std::size_t idx, int& i, int& j, int& k) {
  const std::size_t plane = static_cast<std::size_t>(g.nx) * static_cast<std::size_t>(g.ny);
  k = static_cast<int>(idx / plane);
  const std::size_t rest = idx - static_cast<std::size_t>(k) * plane;
  j = static_cast<int>(rest / static_cast<std::size_t>(g.nx));
  i = static_cast<int>(rest - static_cast<std::size_t>(j) * static_cast<std::size_t>(g.nx));
}

}  // namespace tissue::grid
