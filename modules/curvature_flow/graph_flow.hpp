#pragma once
/// @file graph_flow.hpp
/// Mean-curvature and Willmore flow of graphs z = phi(x, y) by the complementary finite volume method and
/// the method of lines (Oberhuber, Suzuki & Zabka, "The CUDA implementation of the method of lines for
/// the curvature dependent flows", Kybernetika 47 (2011) 251-272: problems 2.1/2.2, schemes 3.1/3.2 with
/// the appendix formulas (36)-(53)), integrated by the engine's adaptive Runge-Kutta-Merson solver.
///
/// Grid (the seed's): nodes (i, j), i = 0..N1, j = 0..N2, at (x0 + i h1, y0 + j h2), x fastest: node
/// (i, j) is index j (N1 + 1) + i. The ODE system has one unknown per node; boundary nodes do not move:
/// Dirichlet nodes keep their initial value g (and w = 0 there), Neumann nodes mirror the first interior
/// node, (19)-(20) and (24)-(25), through the reads (a corner mirrors the diagonal interior node).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/exec/config.hpp"
#include "engine/exec/device_buffer.hpp"
#include "engine/exec/math.hpp"
#include "engine/exec/span.hpp"
#include "engine/integrate/merson_settings.hpp"
#include "modules/curvature_flow/graph_flow_operators.hpp"

namespace tissue::curvature_flow {

enum class GraphFlow : std::uint8_t { mean_curvature, willmore };
enum class GraphBoundary : std::uint8_t { dirichlet, neumann };
enum class GraphForcing : std::uint8_t { none, manufactured };

/// The seed's manufactured solution (30):
///   zeta(t, x, y) = cos(pi t) r^(-2n) (x^n - r^n) (y^n - r^n) exp(-sigma (x^2 + y^2)).
/// With n even and r = 4, zeta = 0 on the boundary of [-4, 4]^2 at every t. The seed does not print its
/// n, r, sigma; ours (n = 2, r = 4, sigma = 1) are chosen in modules/curvature_flow/README.md.
struct ManufacturedSolution {
  int n = 2;
  double r = 4.0;
  double sigma = 1.0;

  /// X(x) = (x^n - r^n) exp(-sigma x^2) / r^n and its derivatives d0..d4 (Leibniz rule, exact).
  template <class Real>
  struct Factor {
    Real d0, d1, d2, d3, d4;
  };
  template <class Real>
  TISSUE_HD Factor<Real> factor(Real x) const {
    // a_k = d^k/dx^k (x^n - r^n) / r^n = n!/(n-k)! x^(n-k) / r^n (0 for k > n), b_k = d^k/dx^k exp(-sigma
    // x^2)
    const Real inv_rn = Real(1) / ipow(Real(r), n), xk = ipow(x, n > 4 ? n - 4 : 0);
    const Real fn = Real(n);
    const Real x4 = n >= 4 ? xk : Real(0);                           // x^(n-4)
    const Real x3 = n >= 4 ? xk * x : (n == 3 ? Real(1) : Real(0));  // x^(n-3)
    const Real x2 = n >= 4 ? xk * x * x : (n == 3 ? x : Real(1));    // x^(n-2), n >= 2
    const Real x1 = x2 * x, x0 = x1 * x;
    const Real a0 = (x0 - ipow(Real(r), n)) * inv_rn, a1 = fn * x1 * inv_rn, a2 = fn * (fn - 1) * x2 * inv_rn,
               a3 = fn * (fn - 1) * (fn - 2) * x3 * inv_rn,
               a4 = fn * (fn - 1) * (fn - 2) * (fn - 3) * x4 * inv_rn;
    const Real s = Real(sigma), e = math::exp(-s * x * x), xx = x * x, s2 = s * s;
    const Real b0 = e, b1 = -Real(2) * s * x * e, b2 = (Real(4) * s2 * xx - Real(2) * s) * e,
               b3 = (-Real(8) * s2 * s * xx * x + Real(12) * s2 * x) * e,
               b4 = (Real(16) * s2 * s2 * xx * xx - Real(48) * s2 * s * xx + Real(12) * s2) * e;
    return {a0 * b0, a1 * b0 + a0 * b1, a2 * b0 + Real(2) * a1 * b1 + a0 * b2,
            a3 * b0 + Real(3) * (a2 * b1 + a1 * b2) + a0 * b3,
            a4 * b0 + Real(4) * (a3 * b1 + a1 * b3) + Real(6) * a2 * b2 + a0 * b4};
  }

  /// zeta(t, x, y).
  template <class Real>
  TISSUE_HD Real value(double t, Real x, Real y) const {
    return Real(math::cos(kPi * t)) * factor(x).d0 * factor(y).d0;
  }

  /// The 4-jet of Z(x, y) = X(x) Y(y) (zeta = cos(pi t) Z).
  template <class Real>
  TISSUE_HD GraphJet<Real> jet(Real x, Real y) const {
    const Factor<Real> fx = factor(x), fy = factor(y);
    GraphJet<Real> j;
    j.d10 = fx.d1 * fy.d0;
    j.d01 = fx.d0 * fy.d1;
    j.d20 = fx.d2 * fy.d0;
    j.d11 = fx.d1 * fy.d1;
    j.d02 = fx.d0 * fy.d2;
    j.d30 = fx.d3 * fy.d0;
    j.d21 = fx.d2 * fy.d1;
    j.d12 = fx.d1 * fy.d2;
    j.d03 = fx.d0 * fy.d3;
    j.d40 = fx.d4 * fy.d0;
    j.d31 = fx.d3 * fy.d1;
    j.d22 = fx.d2 * fy.d2;
    j.d13 = fx.d1 * fy.d3;
    j.d04 = fx.d0 * fy.d4;
    return j;
  }

  /// The forcing F that makes zeta an exact solution of flow Flow: d_t zeta - (right-hand side at zeta),
  /// i.e. F_MC and F_W of the seed's section 5, from the exact 4-jet of zeta (the reference evaluation;
  /// grids use the tabulated ForcingTable).
  template <GraphFlow Flow, class Real>
  TISSUE_HD Real forcing(double t, Real x, Real y) const {
    const GraphJet<Real> j = jet(x, y);
    const Real c = Real(math::cos(kPi * t)), dc = Real(-kPi * math::sin(kPi * t));
    const GraphJet<Real> z = j.scaled(c);
    if constexpr (Flow == GraphFlow::willmore)
      return dc * factor(x).d0 * factor(y).d0 - willmore_operator(z);
    else
      return dc * factor(x).d0 * factor(y).d0 - mean_curvature_operator(z);
  }

  /// c(t) = cos(pi t) and c'(t).
  TISSUE_HD static void time_factor(double t, double& c, double& dc) {
    c = math::cos(kPi * t);
    dc = -kPi * math::sin(kPi * t);
  }

 private:
  static constexpr double kPi = 3.14159265358979323846;
  template <class Real>
  TISSUE_HD static Real ipow(Real x, int k) {
    Real p = Real(1);
    for (int m = 0; m < k; ++m) p *= x;
    return p;
  }
};

/// The manufactured forcing of flow Flow tabulated on a grid of n nodes: F(t) = c'(t) Z - op(c(t) J) with
/// c = cos(pi t), where Z, g and the coefficients a_k of op (ScaledOperator, generated) are fixed per node,
/// so a stage evaluates a Horner sum of kTerms terms instead of the operator at a new 4-jet. Equal to
/// ManufacturedSolution::forcing to rounding.
template <class Real, GraphFlow Flow>
struct ForcingTable {
  static constexpr int kTerms = Flow == GraphFlow::willmore ? 5 : 2;
  static constexpr int kRows = kTerms + 2;  ///< Z, g, a_0 .. a_(kTerms-1)
  Span<const Real> data;                    ///< kRows x n values, one row after the other
  std::size_t n = 0;

  /// F at node idx and time t.
  TISSUE_HD Real at(std::size_t idx, double t) const {
    double c, dc;
    ManufacturedSolution::time_factor(t, c, dc);
    return at(idx, Real(c), Real(dc));
  }
  /// F at node idx given c(t) and c'(t) (ManufacturedSolution::time_factor), which a kernel can compute
  /// once for all its nodes: c' Z - c sum_k a_k rho^k, rho = c^2 / (1 + c^2 g) (ScaledOperator::at).
  TISSUE_HD Real at(std::size_t idx, Real c, Real dc) const { return combine(load(idx), c, dc); }

  /// The kRows table values of one node.
  struct Values {
    Real v[kRows];
  };
  /// The table values of node idx, all requested before any is used (a kernel can issue them with its
  /// other loads and combine them later, instead of waiting for one load before issuing the next).
  TISSUE_HD Values load(std::size_t idx) const {
    Values r;
    for (int k = 0; k < kRows; ++k) r.v[k] = data[static_cast<std::size_t>(k) * n + idx];
    return r;
  }
  /// F from a node's table values: at(idx, c, dc) == combine(load(idx), c, dc).
  TISSUE_HD static Real combine(const Values& r, Real c, Real dc) {
    const Real s = c * c, rho = s / (Real(1) + s * r.v[1]);
    Real p = r.v[kRows - 1];
    for (int k = kTerms - 2; k >= 0; --k) p = r.v[2 + k] + rho * p;
    return dc * r.v[0] - c * p;
  }

  /// The table's rows for node (x, y) of `solution`, in the layout of `data`.
  static void fill(const ManufacturedSolution& solution, double x, double y, Real* rows, std::size_t idx,
                   std::size_t n) {
    const GraphJet<double> j = solution.jet(x, y);
    ScaledOperator<double, kTerms> op;
    if constexpr (Flow == GraphFlow::willmore)
      op = willmore_scaled(j);
    else
      op = mean_curvature_scaled(j);
    rows[idx] = static_cast<Real>(solution.factor(x).d0 * solution.factor(y).d0);
    rows[n + idx] = static_cast<Real>(op.g);
    for (int k = 0; k < kTerms; ++k) rows[(2 + k) * n + idx] = static_cast<Real>(op.a[k]);
  }
};

/// Problem setup: grid, flow, boundary, forcing, integrator.
struct GraphFlowParams {
  GraphFlow flow = GraphFlow::mean_curvature;
  GraphBoundary boundary = GraphBoundary::dirichlet;
  GraphForcing forcing = GraphForcing::none;
  ManufacturedSolution manufactured;
  /// true: one kernel per stage over shared-memory tiles, each co-volume edge's Q, w and flux computed
  /// once (the fast path); false: one thread per node recomputing its 3 x 3 stencil, Willmore's w in a
  /// kernel of its own (the reference).
  bool tiled = true;
  /// With tiled and merson.fused: the whole adaptive loop in persistent cooperative launches, a grid
  /// barrier between stages (RungeKuttaMerson::integrate_tiled), where the device keeps one block per
  /// tile resident (up to about 256^2 on an H100; on the CPU backend always); false, or larger grids:
  /// about seven launches per Runge-Kutta-Merson iteration. Same results either way.
  bool persistent = true;
  int n1 = 64, n2 = 64;                     ///< N1, N2: intervals per axis (N + 1 nodes)
  double x0 = -4, x1 = 4, y0 = -4, y1 = 4;  ///< the domain [x0, x1] x [y0, y1]
  integrate::MersonSettings merson;

  double h1() const { return (x1 - x0) / n1; }
  double h2() const { return (y1 - y0) / n2; }
  std::size_t nodes() const { return static_cast<std::size_t>(n1 + 1) * static_cast<std::size_t>(n2 + 1); }
  /// @throws InputError for fewer than 4 intervals per axis, an empty domain, or bad manufactured-solution
  /// parameters.
  void validate() const;
};

/// What kernels see of the grid: sizes, spacings, origin, the boundary rule for reads.
template <class Real>
struct GraphView {
  int nx = 0, ny = 0;  ///< nodes per axis (N1 + 1, N2 + 1)
  Real h1 = 1, h2 = 1, x0 = 0, y0 = 0;
  bool neumann = false;

  TISSUE_HD std::size_t index(int i, int j) const {
    return static_cast<std::size_t>(j) * static_cast<std::size_t>(nx) + static_cast<std::size_t>(i);
  }
  /// i and j of node index idx.
  TISSUE_HD int column(std::size_t idx) const { return static_cast<int>(idx % static_cast<std::size_t>(nx)); }
  TISSUE_HD int row(std::size_t idx) const { return static_cast<int>(idx / static_cast<std::size_t>(nx)); }
  TISSUE_HD bool interior(int i, int j) const { return i > 0 && j > 0 && i < nx - 1 && j < ny - 1; }
  /// Value at node (i, j), 0 <= i < nx, 0 <= j < ny: Neumann boundary nodes read their interior mirror.
  TISSUE_HD Real at(const Real* u, int i, int j) const {
    if (neumann) mirror(i, j);
    return u[index(i, j)];
  }
  /// Moves a boundary node (i, j) to the interior node it mirrors under Neumann conditions (19)-(20); a
  /// corner moves diagonally. Interior nodes stay.
  TISSUE_HD void mirror(int& i, int& j) const {
    i = i == 0 ? 1 : (i == nx - 1 ? nx - 2 : i);
    j = j == 0 ? 1 : (j == ny - 1 ? ny - 2 : j);
  }
  TISSUE_HD bool inside(int i, int j) const { return i >= 0 && j >= 0 && i < nx && j < ny; }
};

/// The 3 x 3 values around a node: v[dj + 1][di + 1] is the value at (i + di, j + dj).
template <class Real>
struct Stencil3 {
  Real v[3][3];
  TISSUE_HD static Stencil3 load(const GraphView<Real>& g, const Real* u, int i, int j) {
    Stencil3 s;
    for (int dj = -1; dj <= 1; ++dj)
      for (int di = -1; di <= 1; ++di) s.v[dj + 1][di + 1] = g.at(u, i + di, j + dj);
    return s;
  }
};

/// Gradients at the four edge midpoints of a node's co-volume, edges e = 0 east (i+1/2), 1 west (i-1/2),
/// 2 north (j+1/2), 3 south (j-1/2): the normal component by (40)-(41), the tangential one from the
/// averages (42)-(47).
template <class Real>
struct EdgeGradients {
  Real gx[4], gy[4];
  TISSUE_HD EdgeGradients(const Stencil3<Real>& s, Real h1, Real h2) {
    const auto& v = s.v;
    const Real q1 = Real(1) / (Real(4) * h1), q2 = Real(1) / (Real(4) * h2);
    gx[0] = (v[1][2] - v[1][1]) / h1;
    gy[0] = (v[2][1] + v[2][2] - v[0][1] - v[0][2]) * q2;
    gx[1] = (v[1][1] - v[1][0]) / h1;
    gy[1] = (v[2][1] + v[2][0] - v[0][1] - v[0][0]) * q2;
    gy[2] = (v[2][1] - v[1][1]) / h2;
    gx[2] = (v[1][2] + v[2][2] - v[1][0] - v[2][0]) * q1;
    gy[3] = (v[1][1] - v[0][1]) / h2;
    gx[3] = (v[1][2] + v[0][2] - v[1][0] - v[0][0]) * q1;
  }
};

/// Q at the four edges (36)-(39) and at the node (49), and H (48) with Q H = w (50).
template <class Real>
struct GraphCurvature {
  Real q[4];
  Real q_node;
  Real h;  ///< H of (48): the divergence of grad phi / Q
  TISSUE_HD GraphCurvature(const EdgeGradients<Real>& g, Real h1, Real h2) {
    for (int e = 0; e < 4; ++e) q[e] = math::sqrt(Real(1) + g.gx[e] * g.gx[e] + g.gy[e] * g.gy[e]);
    q_node = Real(0.25) * (q[0] + q[1] + q[2] + q[3]);
    h = (g.gx[0] / q[0] - g.gx[1] / q[1]) / h1 + (g.gy[2] / q[2] - g.gy[3] / q[3]) / h2;
  }
};

/// Right-hand side of scheme 3.1 (17) at an interior node: Q H (without forcing).
template <class Real>
TISSUE_HD Real mean_curvature_rhs(const Stencil3<Real>& phi, Real h1, Real h2) {
  const GraphCurvature<Real> c(EdgeGradients<Real>(phi, h1, h2), h1, h2);
  return c.q_node * c.h;
}

/// Right-hand side of scheme 3.2 at an interior node (without forcing), discretising (10):
///   -Q [ (F1(east) - F1(west)) / h1 + (F2(north) - F2(south)) / h2 ],
///   F = (1/Q_e) P_e grad w_e - w_e^2 / (2 Q_e^3) grad phi_e,  P_e = I - grad phi_e (x) grad phi_e / Q_e^2,
/// with w_e the edge average (51)-(52) and grad w_e formed like grad phi_e ((40)-(47) applied to w).
template <class Real>
TISSUE_HD Real willmore_rhs(const Stencil3<Real>& phi, const Stencil3<Real>& w, Real h1, Real h2) {
  const EdgeGradients<Real> gp(phi, h1, h2), gw(w, h1, h2);
  const GraphCurvature<Real> c(gp, h1, h2);
  const Real wc = w.v[1][1];
  const Real we[4] = {Real(0.5) * (wc + w.v[1][2]), Real(0.5) * (wc + w.v[1][0]),
                      Real(0.5) * (wc + w.v[2][1]), Real(0.5) * (wc + w.v[0][1])};
  Real flux[4];
  for (int e = 0; e < 4; ++e) {
    const Real px = gp.gx[e], py = gp.gy[e], qe = c.q[e], iq2 = Real(1) / (qe * qe);
    const Real curv = Real(0.5) * we[e] * we[e] * iq2 / qe;
    if (e < 2)  // x component at the east/west edges
      flux[e] = ((Real(1) - px * px * iq2) * gw.gx[e] - px * py * iq2 * gw.gy[e]) / qe - curv * px;
    else  // y component at the north/south edges
      flux[e] = (-px * py * iq2 * gw.gx[e] + (Real(1) - py * py * iq2) * gw.gy[e]) / qe - curv * py;
  }
  return -c.q_node * ((flux[0] - flux[1]) / h1 + (flux[2] - flux[3]) / h2);
}

/// Diagnostics of a graph state (host, double).
struct GraphMeasures {
  double area = 0.0;      ///< surface area of the piecewise-linear graph (two triangles per grid cell)
  double willmore = 0.0;  ///< sum over interior nodes of H^2 Q h1 h2: the discrete Willmore energy (3)
};

/// A graph flow on the active backend: the state phi, Willmore's w, the integrator.
template <class Real>
class GraphFlowSolver {
 public:
  /// @throws InputError from GraphFlowParams::validate() or the integrator settings.
  explicit GraphFlowSolver(const GraphFlowParams& params);
  ~GraphFlowSolver();
  GraphFlowSolver(const GraphFlowSolver&) = delete;
  GraphFlowSolver& operator=(const GraphFlowSolver&) = delete;

  const GraphFlowParams& params() const { return params_; }
  GraphView<Real> view() const;

  /// Sets phi from host values (nodes() values, x fastest).
  void set_state(const std::vector<Real>& phi);
  /// Sets phi to the manufactured solution at time t.
  void set_manufactured(double t);
  /// phi as host values, with Neumann boundary nodes filled by their mirrors (download).
  std::vector<Real> state() const;
  /// The device state (boundary nodes of a Neumann run are stale; reads mirror them).
  Span<Real> device_state() { return phi_.span(); }

  /// Integrates from t0 to t1 (adaptive; ends exactly at t1).
  /// @throws InputError for t1 < t0; NumericalError if the flow blows up.
  integrate::MersonStats advance(double t0, double t1);

  /// The step the integrator tries first in the next advance() (0 before the first), and its setter
  /// (checkpoint restarts).
  double next_step() const;
  void set_next_step(double tau);

  /// H (48) and w = Q H (50) at every node (0 on boundary nodes), from the current state.
  void curvature(std::vector<Real>& h, std::vector<Real>& w) const;
  /// Surface area and Willmore energy of the current state.
  GraphMeasures measures() const;

 private:
  struct Impl;
  GraphFlowParams params_;
  DeviceBuffer<Real> phi_, w_;
  DeviceBuffer<Real> forcing_;  ///< ForcingTable rows, filled by the first advance() of a forced run
  std::unique_ptr<Impl> impl_;
};

extern template class GraphFlowSolver<float>;
extern template class GraphFlowSolver<double>;

}  // namespace tissue::curvature_flow
