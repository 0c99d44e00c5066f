#pragma once
/// @file chemotaxis_kernels.hpp
/// Chemotaxis of subcellular elements up the gradient of a grid field, and a point source of that field,
/// as pure TISSUE_HD code (equations and units: modules/chemotaxis/README.md).
///
/// Each element e at x_e moves, over a step of length h, by the chemotactic velocity
///
///   v_e = chi(c_e) grad c(x_e),   chi(c) = chi / (1 + max(c, 0) / c_sat)^2   (chi(c) = chi without c_sat)
///
/// with c and grad c the trilinear (cloud-in-cell) interpolant of the field and its gradient at x_e
/// (engine/grid/point_sampling.hpp). chi(c) is the receptor law of Lapidus & Schiller, Biophys. J. 16:779
/// (1976), chi_0 K_d / (K_d + c)^2 with K_d = c_sat and chi_0 = chi c_sat (the flux is chi_0 times the
/// gradient of the receptor occupancy c / (K_d + c)); without saturation it is Keller & Segel's constant
/// sensitivity (J. Theor. Biol. 30:225, 1971). The force on the element is F_e = eta v_e for the SEM's
/// friction eta, so eta cancels in the displacement h F_e / eta = h v_e.
///
/// A point source adds `rate` [amount/time] to the field at a fixed point: rate h W_n / V_node on each node n
/// of its cloud-in-cell stencil (weights W_n, summing to 1; V_node = h_grid^dims), so the total amount
/// sum u V_node grows by exactly rate h per step.

#include <cstddef>
#include <cstdint>

#include "engine/core/box.hpp"
#include "engine/exec/config.hpp"
#include "engine/exec/span.hpp"
#include "engine/grid/grid.hpp"
#include "engine/grid/point_sampling.hpp"

namespace tissue::chemotaxis {

/// The chemotactic sensitivity chi(c) [length^2 / (time concentration)].
struct Sensitivity {
  double chi = 0.0;         ///< chi at c = 0 [length^2 / (time concentration)]; negative: chemorepulsion
  double saturation = 0.0;  ///< c_sat [concentration]; 0: none (chi(c) = chi)

  /// chi(c) = chi / (1 + max(c, 0) / c_sat)^2, or chi when c_sat = 0 (negative c, from a field's
  /// undershoot, counts as 0).
  TISSUE_HD double operator()(double c) const {
    if (saturation <= 0.0) return chi;
    const double q = 1.0 + (c > 0.0 ? c : 0.0) / saturation;
    return chi / (q * q);
  }
};

/// The chemotactic velocity at a point [length/time]: chi(c) grad c, with c and grad c sampled from species
/// 0 of the field (data u) at (x, y, z) [length]. Outside the grid on a non-periodic axis the point is
/// clamped to the face and that axis's gradient is 0 (grid::cic_sample).
template <class Real>
TISSUE_HD void chemotactic_velocity(const GridGeometry<Real>& grid, double h, const Real* u,
                                    const Sensitivity& chi, double x, double y, double z, double v[3]) {
  const grid::CicStencil st = grid::cic_stencil(grid, h, x, y, z);
  double g[3];
  const double c = grid::cic_sample(grid, st, u, 0, g);
  const double s = chi(c);
  for (int d = 0; d < 3; ++d) v[d] = s * g[d];
}

/// Per element: its chemotactic velocity into vx, vy, vz (#elements each) [length/time] (tests,
/// diagnostics).
template <class Real>
struct ElementVelocity {
  GridGeometry<Real> grid;
  double h;       ///< grid spacing [length]
  const Real* u;  ///< field data (species 0 first), grid.cells() values
  Sensitivity chi;
  Span<const float> x, y, z;  ///< element positions [length], #elements
  Span<float> vx, vy, vz;     ///< out [length/time], #elements

  TISSUE_HD void operator()(std::size_t e) const {
    double v[3];
    chemotactic_velocity(grid, h, u, chi, x[e], y[e], z[e], v);
    vx[e] = static_cast<float>(v[0]);
    vy[e] = static_cast<float>(v[1]);
    vz[e] = static_cast<float>(v[2]);
  }
};

/// Per element: one explicit (Euler) step of the chemotactic motion in place, x <- x + dt v(x), wrapped into
/// the box on periodic axes and projected above the floor (as the SEM's stages). Each index reads and
/// writes only its own element, and the field is read only: race-free.
template <class Real>
struct ElementChemotaxisStep {
  GridGeometry<Real> grid;
  double h;       ///< grid spacing [length]
  const Real* u;  ///< field data (species 0 first)
  Sensitivity chi;
  Box box;
  double dt;            ///< step length [time]
  Span<float> x, y, z;  ///< element positions [length], #elements, updated in place
  /// Optional: a factor per cell on chi (a behaviour rule's `chemotaxis`, modules/rules), #cells, with the
  /// elements' owners, #elements; empty: every cell climbs with chi.
  Span<const float> cell_factor;
  Span<const std::int32_t> cell;

  TISSUE_HD void operator()(std::size_t e) const {
    double v[3];
    Sensitivity s = chi;
    if (cell_factor.size() > 0) s.chi *= static_cast<double>(cell_factor[static_cast<std::size_t>(cell[e])]);
    chemotactic_velocity(grid, h, u, s, x[e], y[e], z[e], v);
    x[e] = box.wrap_x(static_cast<float>(static_cast<double>(x[e]) + dt * v[0]));
    y[e] = box.wrap_y(static_cast<float>(static_cast<double>(y[e]) + dt * v[1]));
    z[e] = box.clamp_z(static_cast<float>(static_cast<double>(z[e]) + dt * v[2]));
  }
};

/// One point-source deposit: thread t in [0, 8) handles corner (t & 1, (t >> 1) & 1, t >> 2) of the
/// source's stencil, adding amount W_n / V_node to the node n that corner lands on (grid::deposit_weight:
/// corners folded onto a face node add up there). A corner whose node an earlier corner of the same axis
/// already covers does nothing, so every node is written by one thread.
template <class Real>
struct PointSourceDeposit {
  GridGeometry<Real> grid;
  grid::CicStencil stencil;  ///< the source's stencil (grid::cic_stencil)
  double amount;             ///< rate h / V_node [concentration]: what one step adds, before the weights
  Real* u;                   ///< field data (species 0), updated in place

  TISSUE_HD void operator()(std::size_t t) const {
    const int corner[3] = {static_cast<int>(t & 1u), static_cast<int>((t >> 1) & 1u),
                           static_cast<int>((t >> 2) & 1u)};
    const int n[3] = {grid.nx, grid.ny, grid.nz};
    int node[3];
    for (int d = 0; d < 3; ++d) {
      const bool periodic = grid.face[2 * d] == GridBoundary::periodic;
      const int lo = grid::deposit_index(stencil.axis[d].lo, n[d], periodic);
      node[d] = grid::deposit_index(stencil.axis[d].lo + corner[d], n[d], periodic);
      if (corner[d] == 1 && node[d] == lo) return;  // the same node as corner 0 on this axis
    }
    const double w = grid::deposit_weight(grid, stencil, node[0], node[1], node[2]);
    if (w == 0.0) return;
    Real& target = u[grid.index(node[0], node[1], node[2])];
    target = static_cast<Real>(static_cast<double>(target) + amount * w);
  }
};

}  // namespace tissue::chemotaxis
