#pragma once
/// @file grid_rd_kernels.hpp
/// Reaction-diffusion on structured grids: discrete Laplacians and the fused explicit step, as pure
/// TISSUE_HD code. Source: the grid seed (`001_*`: Gray-Scott, the 3x3 kernel 0.05 / 0.2 / -1 with unit
/// spacing, explicit Euler with dt = 1) and the standard second-order 5- and 7-point stencils.
///
///   dA/dt = D_A L(A) + f(A, B),   dB/dt = D_B L(B) + g(A, B)
///
/// L is one of
///   seed9   the seed's kernel, unit spacing (h is not used): 0.2 (E+W+N+S) + 0.05 (NE+NW+SE+SW) - C;
///           it equals 0.3 h^2 times the isotropic 9-point Laplacian, so D means 0.3 D h^2 in
///           continuum units;
///   five    (E + W + N + S - 4 C) / h^2          (2D, second order)
///   seven   (E + W + N + S + U + D - 6 C) / h^2  (3D, second order)
/// Boundaries come from GridGeometry::sample (periodic, zero-flux mirror, Dirichlet ghost values).
///
/// The update of one node is written once (rd_update) and used by every kernel, generic and tuned, so
/// that they give bit-identical results.

#include <cstddef>
#include <cstdint>

#include "engine/exec/config.hpp"
#include "engine/exec/span.hpp"
#include "engine/grid/grid.hpp"

namespace tissue::grid_rd {

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

/// L(u) of species s at node (i, j, k), boundaries applied.
template <class Real>
TISSUE_HD Real laplacian(Stencil stencil, const GridGeometry<Real>& g, const Real* u, int s, int i, int j,
                         int k, Real inv_h2) {
  const Real c = u[g.index(i, j, k)];
  const Real e = g.sample(u, s, i + 1, j, k), w = g.sample(u, s, i - 1, j, k);
  const Real n = g.sample(u, s, i, j + 1, k), so = g.sample(u, s, i, j - 1, k);
  if (stencil == Stencil::five) return five_point(n, w, c, e, so, inv_h2);
  if (stencil == Stencil::seven)
    return seven_point(n, w, c, e, so, g.sample(u, s, i, j, k + 1), g.sample(u, s, i, j, k - 1), inv_h2);
  return seed9(g.sample(u, s, i - 1, j + 1, k), n, g.sample(u, s, i + 1, j + 1, k), w, c, e,
               g.sample(u, s, i - 1, j - 1, k), so, g.sample(u, s, i + 1, j - 1, k));
}

/// Explicit Euler update of one node: u + dt (D L + r).
template <class Real>
TISSUE_HD Real rd_update(Real u, Real lap, Real reaction, Real diffusion, Real dt) {
  return u + dt * (diffusion * lap + reaction);
}

/// Parameters every grid-RD kernel takes.
template <class Real>
struct RdParams {
  GridGeometry<Real> grid;
  Stencil stencil;
  Real inv_h2;
  Real diffusion_a, diffusion_b;
};

/// Explicit Euler update of both species of one node from its values (a, b) and Laplacians (la, lb):
/// the reaction, then rd_update. Every Euler kernel, generic and tuned, goes through it.
template <class Real, class Reaction>
TISSUE_HD void euler_node(const RdParams<Real>& p, const Reaction& reaction, Real dt, Real a, Real b, Real la,
                          Real lb, Real& na, Real& nb) {
  Real fa, fb;
  reaction(a, b, fa, fb);
  na = rd_update(a, la, fa, p.diffusion_a, dt);
  nb = rd_update(b, lb, fb, p.diffusion_b, dt);
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

/// Values, Laplacians and reaction rates of both species at node idx of a species-major state.
template <class Real>
struct NodeTerms {
  Real a, b;    ///< A, B
  Real la, lb;  ///< L(A), L(B)
  Real fa, fb;  ///< f(A, B), g(A, B)
};
template <class Real, class Reaction>
TISSUE_HD NodeTerms<Real> node_terms(const RdParams<Real>& p, const Reaction& reaction, const Real* in,
                                     std::size_t idx) {
  int i, j, k;
  node_of(p.grid, idx, i, j, k);
  const Real* a = in;
  const Real* b = in + p.grid.cells();
  NodeTerms<Real> t;
  t.a = a[idx];
  t.b = b[idx];
  t.la = laplacian(p.stencil, p.grid, a, 0, i, j, k, p.inv_h2);
  t.lb = laplacian(p.stencil, p.grid, b, 1, i, j, k, p.inv_h2);
  reaction(t.a, t.b, t.fa, t.fb);
  return t;
}

/// Generic fused explicit Euler step, one node per index: reads both species (with neighbours) from
/// `in`, writes both to `out` (species-major, another buffer).
template <class Real, class Reaction>
struct EulerStep {
  RdParams<Real> p;
  Reaction reaction;
  Real dt;
  Span<const Real> in;
  Span<Real> out;
  TISSUE_HD void operator()(std::size_t idx) const {
    const NodeTerms<Real> t = node_terms(p, reaction, in.data(), idx);
    out[idx] = rd_update(t.a, t.la, t.fa, p.diffusion_a, dt);
    out[p.grid.cells() + idx] = rd_update(t.b, t.lb, t.fb, p.diffusion_b, dt);
  }
};

/// Right-hand side d(A, B)/dt at every node, for multi-stage integrators: out = D L(in) + R(in).
template <class Real, class Reaction>
struct RdDerivative {
  RdParams<Real> p;
  Reaction reaction;
  Span<const Real> in;
  Span<Real> out;
  TISSUE_HD void operator()(std::size_t idx) const {
    const NodeTerms<Real> t = node_terms(p, reaction, in.data(), idx);
    out[idx] = p.diffusion_a * t.la + t.fa;
    out[p.grid.cells() + idx] = p.diffusion_b * t.lb + t.fb;
  }
};

}  // namespace tissue::grid_rd
