#pragma once
/// @file grid_coupling_kernels.hpp
/// Cells <-> grid fields, as pure TISSUE_HD code: trilinear (cloud-in-cell) sampling of a grid field and
/// its gradient at a point, conservative deposition of per-cell amounts onto the nodes around a point
/// (gathered node by node in a fixed order, so results do not depend on thread scheduling), and the
/// explicit step of a diffusing, decaying signal with cell sources:
///
///   du/dt = D L(u) - lambda u + S(x),   S(x_n) = sum_c W_c(x_n) (s_c - k_c u(x_c)) / V_node
///
/// (L the 5-/7-point Laplacian of engine/grid/stencils.hpp, W_c the trilinear weights of cell c's centre,
/// s_c the cell's secretion rate [amount/time], k_c its uptake rate [volume/time], V_node = h^dims). Grid
/// nodes sit at ((i + 1/2) h, (j + 1/2) h, (k + 1/2) h) (engine/grid/grid.hpp). Source: the standard
/// particle-in-cell assignment (Hockney & Eastwood, "Computer Simulation Using Particles", ch. 5: the CIC
/// scheme); see modules/coupling/README.md.

#include <cstddef>
#include <cstdint>

#include "engine/exec/config.hpp"
#include "engine/exec/math.hpp"
#include "engine/exec/span.hpp"
#include "engine/grid/grid.hpp"
#include "engine/grid/point_sampling.hpp"
#include "engine/grid/stencils.hpp"
#include "engine/spatial/cell_list.hpp"

namespace tissue::coupling {

// the point stencils, interpolants and deposit weights shared with other modules (engine/grid)
using grid::axis_bracket;
using grid::AxisBracket;
using grid::cic_sample;
using grid::cic_stencil;
using grid::CicStencil;
using grid::deposit_index;
using grid::deposit_weight;

/// Per cell: samples species `species` of a grid field at the cell centre -> value[c], and its gradient
/// -> gradient[d * stride + c] when `gradient` is not empty (3 components, species-major layout).
/// Geometry: GridGeometry<Real>, or the GridWindow of a rank's block of a decomposed field (u in its local
/// layout; the window must hold the nodes around every centre).
template <class Real, class Geometry = GridGeometry<Real>>
struct SampleAtCells {
  Geometry grid;
  double h;
  const Real* u;  ///< current field data (all species)
  int species;
  Span<const float> cx, cy, cz;
  Span<float> value;
  Span<float> gradient;
  std::size_t stride;

  TISSUE_HD void operator()(std::size_t c) const {
    const auto st = cic_stencil(grid, h, cx[c], cy[c], cz[c]);
    double g[3];
    value[c] = static_cast<float>(cic_sample(grid, st, u, species, g));
    if (!gradient.empty())
      for (int d = 0; d < 3; ++d)
        gradient[static_cast<std::size_t>(d) * stride + c] = static_cast<float>(g[d]);
  }
};

/// Position (x, y, z) clamped into the grid's extent [0, n h] on non-periodic axes (z = 0 on a 2D grid).
template <class Real>
TISSUE_HD void clamp_into_grid(const GridGeometry<Real>& grid, double h, float x, float y, float z, float& qx,
                               float& qy, float& qz) {
  const float extent[3] = {static_cast<float>(grid.nx * h), static_cast<float>(grid.ny * h),
                           static_cast<float>(grid.nz * h)};
  const float p[3] = {x, y, grid.nz == 1 ? 0.0f : z};
  float q[3];
  for (int d = 0; d < 3; ++d) {
    const bool periodic = grid.face[2 * d] == GridBoundary::periodic;
    q[d] = periodic ? p[d] : (p[d] < 0.0f ? 0.0f : (p[d] > extent[d] ? extent[d] : p[d]));
  }
  qx = q[0];
  qy = q[1];
  qz = q[2];
}

/// Per cell: its net release rate into the field [amount/time], rate[c] = s - k u(x_c) with the secretion
/// s and uptake k of its state (index 1 when the cell's flags carry `state_bit`, else 0), and its
/// position clamped into the grid's extent on non-periodic axes (px, py, pz), for the deposit gather.
template <class Real>
struct CellRelease {
  GridGeometry<Real> grid;
  double h;
  const Real* u;
  int species;
  Span<const float> cx, cy, cz;
  Span<const std::uint32_t> flags;
  std::uint32_t state_bit;
  double secretion[2];  ///< [amount/time] per state
  double uptake[2];     ///< [volume/time] per state
  Span<double> rate;
  Span<float> px, py, pz;

  TISSUE_HD void operator()(std::size_t c) const {
    const int state = (flags[c] & state_bit) ? 1 : 0;
    const auto st = cic_stencil(grid, h, cx[c], cy[c], cz[c]);
    double r = secretion[state];
    if (uptake[state] != 0.0) r -= uptake[state] * cic_sample(grid, st, u, species, nullptr);
    rate[c] = r;
    clamp_into_grid(grid, h, cx[c], cy[c], cz[c], px[c], py[c], pz[c]);
  }
};

/// Per element: its position clamped into the grid (as CellRelease's), for the occupancy gather.
template <class Real>
struct ElementClamp {
  GridGeometry<Real> grid;
  double h;
  Span<const float> x, y, z;
  Span<float> px, py, pz;
  TISSUE_HD void operator()(std::size_t e) const {
    clamp_into_grid(grid, h, x[e], y[e], z[e], px[e], py[e], pz[e]);
  }
};

/// Per node: the free (extracellular) volume fraction alpha = max(1 - occupied, min_free), from the
/// occupied fraction gathered by DepositGather.
template <class Real>
struct FreeFraction {
  Span<const Real> occupied;
  Real min_free;
  Real* alpha;
  TISSUE_HD void operator()(std::size_t n) const {
    const Real a = Real(1) - occupied[n];
    alpha[n] = a > min_free ? a : min_free;
  }
};

/// Per node: source[n] = sum over cells of W_c(node) rate[c] / V_node [concentration/time], gathered from
/// a cell list of the clamped cell positions (bins >= h wide, tag = cell index) in its fixed order.
template <class Real>
struct DepositGather {
  GridGeometry<Real> grid;
  double h;
  double inv_volume;  ///< 1 / h^dims
  CellList::View bins;
  Span<const double> rate;
  Span<Real> source;

  TISSUE_HD void operator()(std::size_t n) const {
    int i = 0, j = 0, k = 0;
    grid::node_of(grid, n, i, j, k);
    source[n] = at(i, j, k);
  }
  /// The source at node (i, j, k) of the whole grid.
  TISSUE_HD Real at(int i, int j, int k) const {
    const float x = static_cast<float>((i + 0.5) * h), y = static_cast<float>((j + 0.5) * h),
                z = grid.nz == 1 ? 0.0f : static_cast<float>((k + 0.5) * h);
    double sum = 0.0;
    bins.for_each_candidate(x, y, z, [&](int, const PointTag& q) {
      const auto st = cic_stencil(grid, h, q.x, q.y, q.z);
      const double w = deposit_weight(grid, st, i, j, k);
      if (w != 0.0) sum += w * rate[static_cast<std::size_t>(q.tag)];
    });
    return static_cast<Real>(sum * inv_volume);
  }
};

/// Explicit Euler step of du/dt = D L(u) - lambda u + source for species 0 of a one-species field.
/// Geometry: GridGeometry<Real> (operator(), per node of the grid), or the GridWindow of a rank's block of
/// a decomposed field (step(), per node of the block, u and out in the window's local layout).
template <class Real, class Geometry = GridGeometry<Real>>
struct SignalEuler {
  Geometry grid;
  grid::Stencil stencil;
  Real inv_h2, diffusivity, decay, dt;
  const Real* u;
  Span<const Real> source;  ///< empty: no cell sources
  Real* out;

  TISSUE_HD void operator()(std::size_t n) const {
    int i = 0, j = 0, k = 0;
    grid::node_of(grid, n, i, j, k);
    step(n, n, i, j, k);
  }
  /// The step of node (i, j, k) (whole-grid indices), at index n of u and out and `at` of source.
  TISSUE_HD void step(std::size_t n, std::size_t at, int i, int j, int k) const {
    const Real c = u[n];
    const Real lap = grid::laplacian(stencil, grid, u, 0, i, j, k, inv_h2);
    Real du = diffusivity * lap - decay * c;
    if (!source.empty()) du += source[at];
    out[n] = c + dt * du;
  }
};

/// Explicit Euler step with cells excluded from the field's volume (a volume-averaged, porous-medium
/// form; modules/coupling/README.md): u is the extracellular concentration, alpha (species 1, current
/// buffer) the free fraction of each node, and
///   alpha_n du_n/dt = D sum_faces min(alpha_n, alpha_m) (u_m - u_n) / h^2 - lambda alpha_n u_n + source_n,
/// so that sum alpha u h^3 changes only through sources, decay and open faces. Ghost values of u as the
/// boundaries prescribe; alpha beyond a face equals alpha_n. Writes u to out and carries alpha along.
template <class Real>
struct SignalEulerExcluded {
  GridGeometry<Real> grid;    ///< u's boundaries
  GridGeometry<Real> mirror;  ///< the same faces with Dirichlet ones mirrored (alpha's ghosts)
  Real inv_h2, diffusivity, decay, dt;
  const Real* u;  ///< species 0: u, species 1: alpha
  Span<const Real> source;
  Real* out;

  TISSUE_HD void operator()(std::size_t n) const {
    int i = 0, j = 0, k = 0;
    grid::node_of(grid, n, i, j, k);
    const std::size_t cells = grid.cells();
    const Real c = u[n], a = u[cells + n];
    const Real* alpha = u + cells;
    Real flux = 0;
    const int offsets[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    const int faces = grid.nz > 1 ? 6 : 4;
    for (int f = 0; f < faces; ++f) {
      const int di = offsets[f][0], dj = offsets[f][1], dk = offsets[f][2];
      const Real m = grid.sample(u, 0, i + di, j + dj, k + dk);
      const Real am = mirror.sample(alpha, 0, i + di, j + dj, k + dk);
      flux += (am < a ? am : a) * (m - c);
    }
    Real du = (diffusivity * inv_h2 * flux) / a - decay * c;
    if (!source.empty()) du += source[n] / a;
    out[n] = c + dt * du;
    out[cells + n] = a;
  }
};

}  // namespace tissue::coupling
