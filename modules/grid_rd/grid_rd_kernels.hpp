#pragma once
/// @file grid_rd_kernels.hpp
/// Reaction-diffusion on structured grids: the fused explicit step, as pure TISSUE_HD code. Source: the
/// grid seed (`001_*`: Gray-Scott, the 3x3 kernel 0.05 / 0.2 / -1 with unit spacing, explicit Euler with
/// dt = 1).
///
///   dA/dt = D_A L(A) + f(A, B),   dB/dt = D_B L(B) + g(A, B)
///
/// L is one of the engine's grid Laplacians (engine/grid/stencils.hpp: seed9, five, seven), boundaries
/// from GridGeometry::sample (periodic, zero-flux mirror, Dirichlet ghost values).
///
/// The update of one node is written once (rd_update) and used by every kernel, generic and tuned, so
/// that they give bit-identical results.

#include <cstddef>

#include "engine/exec/config.hpp"
#include "engine/exec/span.hpp"
#include "engine/grid/grid.hpp"
#include "engine/grid/stencils.hpp"

namespace tissue::grid_rd {

// The stencils and index math the grid-RD kernels share with the engine's other grid users.
using grid::five_point;
using grid::laplacian;
using grid::laplacian_spectral_radius;
using grid::node_of;
using grid::seed9;
using grid::seven_point;
using grid::Stencil;

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
