// Graph flows on the active backend: right-hand-side kernels of schemes 3.1 and 3.2 and the solver that
// drives them with the engine's Runge-Kutta-Merson integrator. Compiled as CUDA in CUDA builds.
#include "modules/curvature_flow/graph_flow.hpp"

#include <cmath>
#include <string>

#include "engine/exec/error.hpp"
#include "engine/exec/parallel_for.hpp"
#include "engine/integrate/runge_kutta_merson.hpp"

namespace tissue::curvature_flow {

void GraphFlowParams::validate() const {
  if (n1 < 4 || n2 < 4)
    throw InputError("graph flow: the grid needs at least 4 intervals per axis (got " + std::to_string(n1) +
                     " x " + std::to_string(n2) + "): h is too coarse for the domain");
  if (!(x1 > x0) || !(y1 > y0))
    throw InputError("graph flow: the domain is empty (need x1 > x0 and y1 > y0)");
  if (forcing == GraphForcing::manufactured) {
    if (manufactured.n < 2 || manufactured.n % 2 != 0)
      throw InputError("graph flow: the manufactured solution needs an even n >= 2 (got " +
                       std::to_string(manufactured.n) + ")");
    if (!(manufactured.r > 0.0) || !(manufactured.sigma >= 0.0))
      throw InputError("graph flow: the manufactured solution needs r > 0 and sigma >= 0");
  }
}

namespace {

/// w = Q H (50) at interior nodes; boundary entries are left as they are (0 for Dirichlet, (13)).
template <class Real>
struct WillmoreW {
  GraphView<Real> g;
  Span<const Real> phi;
  Span<Real> w;
  TISSUE_HD void operator()(std::size_t idx) const {
    const int i = g.column(idx), j = g.row(idx);
    if (!g.interior(i, j)) return;
    const GraphCurvature<Real> c(EdgeGradients<Real>(Stencil3<Real>::load(g, phi.data(), i, j), g.h1, g.h2),
                                 g.h1, g.h2);
    w[idx] = c.q_node * c.h;
  }
};

/// One stage of scheme 3.1 (Flow = mean_curvature) or 3.2 (willmore), with or without the manufactured
/// forcing: f at every node (0 on boundary nodes), stored through the integrator. Flow and forcing are
/// template arguments so that each kernel carries only its own arithmetic (the Willmore forcing alone
/// needs over 200 registers).
template <class Real, GraphFlow Flow, bool Forced>
struct GraphRhs {
  GraphView<Real> g;
  Span<const Real> phi;
  Span<const Real> w;  ///< Willmore only
  ManufacturedSolution solution;
  integrate::MersonStage<Real> stage;
  TISSUE_HD void operator()(std::size_t idx) const {
    const int i = g.column(idx), j = g.row(idx);
    Real f = Real(0);
    if (g.interior(i, j)) {
      const Stencil3<Real> p = Stencil3<Real>::load(g, phi.data(), i, j);
      if constexpr (Flow == GraphFlow::willmore)
        f = willmore_rhs(p, Stencil3<Real>::load(g, w.data(), i, j), g.h1, g.h2);
      else
        f = mean_curvature_rhs(p, g.h1, g.h2);
      if constexpr (Forced)
        f += solution.forcing<Flow>(stage.time(), g.x0 + Real(i) * g.h1, g.y0 + Real(j) * g.h2);
    }
    stage.store(idx, f);
  }
};

/// Fills Neumann boundary nodes with their mirrors (19)-(20), for output.
template <class Real>
struct FillMirrors {
  GraphView<Real> g;
  Span<Real> u;
  TISSUE_HD void operator()(std::size_t idx) const {
    const int i = g.column(idx), j = g.row(idx);
    if (!g.interior(i, j)) u[idx] = g.at(u.data(), i, j);
  }
};

template <class Real>
struct CurvatureFields {
  GraphView<Real> g;
  Span<const Real> phi;
  Span<Real> h, w;
  TISSUE_HD void operator()(std::size_t idx) const {
    const int i = g.column(idx), j = g.row(idx);
    if (!g.interior(i, j)) {
      h[idx] = w[idx] = Real(0);
      return;
    }
    const GraphCurvature<Real> c(EdgeGradients<Real>(Stencil3<Real>::load(g, phi.data(), i, j), g.h1, g.h2),
                                 g.h1, g.h2);
    h[idx] = c.h;
    w[idx] = c.q_node * c.h;
  }
};

}  // namespace

template <class Real>
struct GraphFlowSolver<Real>::Impl {
  integrate::RungeKuttaMerson<Real> rkm;
  explicit Impl(const integrate::MersonSettings& s) : rkm(s) {}
};

template <class Real>
GraphFlowSolver<Real>::GraphFlowSolver(const GraphFlowParams& params) : params_(params) {
  params_.validate();
  impl_ = std::make_unique<Impl>(params_.merson);
  phi_.resize(params_.nodes());
  phi_.zero();
  w_.resize(params_.nodes());
  w_.zero();
}

template <class Real>
GraphFlowSolver<Real>::~GraphFlowSolver() = default;

template <class Real>
GraphView<Real> GraphFlowSolver<Real>::view() const {
  GraphView<Real> g;
  g.nx = params_.n1 + 1;
  g.ny = params_.n2 + 1;
  g.h1 = static_cast<Real>(params_.h1());
  g.h2 = static_cast<Real>(params_.h2());
  g.x0 = static_cast<Real>(params_.x0);
  g.y0 = static_cast<Real>(params_.y0);
  g.neumann = params_.boundary == GraphBoundary::neumann;
  return g;
}

template <class Real>
void GraphFlowSolver<Real>::set_state(const std::vector<Real>& phi) {
  if (phi.size() != params_.nodes())
    throw InputError("graph flow: the initial state has " + std::to_string(phi.size()) +
                     " values, expected " + std::to_string(params_.nodes()));
  phi_.upload(phi.data(), phi.size());
}

template <class Real>
void GraphFlowSolver<Real>::set_manufactured(double t) {
  const GraphView<Real> g = view();
  std::vector<Real> phi(params_.nodes());
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i)
      phi[g.index(i, j)] = params_.manufactured.value(t, g.x0 + Real(i) * g.h1, g.y0 + Real(j) * g.h2);
  set_state(phi);
}

template <class Real>
std::vector<Real> GraphFlowSolver<Real>::state() const {
  std::vector<Real> phi = phi_.to_host();
  const GraphView<Real> g = view();
  if (g.neumann) exec::host_for(phi.size(), FillMirrors<Real>{g, Span<Real>(phi.data(), phi.size())});
  return phi;
}

namespace {
template <class Real, GraphFlow Flow, bool Forced>
integrate::MersonStats run_flow(integrate::RungeKuttaMerson<Real>& rkm, const GraphView<Real>& g,
                                const GraphFlowParams& params, Span<Real> phi, Span<Real> w, double t0,
                                double t1) {
  const std::size_t n = phi.size();
  auto rhs = [&](Span<const Real> arg, const integrate::MersonStage<Real>& stage) {
    if constexpr (Flow == GraphFlow::willmore) exec::parallel_for(n, WillmoreW<Real>{g, arg, w});
    exec::parallel_for(n,
                       GraphRhs<Real, Flow, Forced>{g, arg, Span<const Real>(w), params.manufactured, stage});
  };
  return rkm.integrate(phi, t0, t1, rhs);
}
}  // namespace

template <class Real>
integrate::MersonStats GraphFlowSolver<Real>::advance(double t0, double t1) {
  const GraphView<Real> g = view();
  auto& rkm = impl_->rkm;
  const bool forced = params_.forcing == GraphForcing::manufactured;
  if (params_.flow == GraphFlow::willmore)
    return forced
               ? run_flow<Real, GraphFlow::willmore, true>(rkm, g, params_, phi_.span(), w_.span(), t0, t1)
               : run_flow<Real, GraphFlow::willmore, false>(rkm, g, params_, phi_.span(), w_.span(), t0, t1);
  return forced ? run_flow<Real, GraphFlow::mean_curvature, true>(rkm, g, params_, phi_.span(), w_.span(), t0,
                                                                  t1)
                : run_flow<Real, GraphFlow::mean_curvature, false>(rkm, g, params_, phi_.span(), w_.span(),
                                                                   t0, t1);
}

template <class Real>
double GraphFlowSolver<Real>::next_step() const {
  return impl_->rkm.next_step();
}

template <class Real>
void GraphFlowSolver<Real>::set_next_step(double tau) {
  impl_->rkm.set_next_step(tau);
}

template <class Real>
void GraphFlowSolver<Real>::curvature(std::vector<Real>& h, std::vector<Real>& w) const {
  const std::size_t n = params_.nodes();
  DeviceBuffer<Real> hd(n), wd(n);
  exec::parallel_for(n, CurvatureFields<Real>{view(), Span<const Real>(phi_.span()), hd.span(), wd.span()});
  h = hd.to_host();
  w = wd.to_host();
}

template <class Real>
GraphMeasures GraphFlowSolver<Real>::measures() const {
  const std::vector<Real> phi = state();
  std::vector<Real> hv, wv;
  curvature(hv, wv);
  const GraphView<Real> g = view();
  const double h1 = params_.h1(), h2 = params_.h2();
  GraphMeasures m;
  auto z = [&](int i, int j) { return static_cast<double>(phi[g.index(i, j)]); };
  auto triangle = [](double ax, double ay, double az, double bx, double by, double bz) {
    const double cx = ay * bz - az * by, cy = az * bx - ax * bz, cz = ax * by - ay * bx;
    return 0.5 * std::sqrt(cx * cx + cy * cy + cz * cz);
  };
  for (int j = 0; j + 1 < g.ny; ++j)
    for (int i = 0; i + 1 < g.nx; ++i) {
      const double z00 = z(i, j), z10 = z(i + 1, j), z01 = z(i, j + 1), z11 = z(i + 1, j + 1);
      m.area += triangle(h1, 0, z10 - z00, h1, h2, z11 - z00) + triangle(h1, h2, z11 - z00, 0, h2, z01 - z00);
    }
  for (int j = 1; j + 1 < g.ny; ++j)
    for (int i = 1; i + 1 < g.nx; ++i) {
      const double hh = static_cast<double>(hv[g.index(i, j)]), q = static_cast<double>(wv[g.index(i, j)]);
      // Q = w / H where H != 0; H^2 Q = H w
      m.willmore += hh * q * h1 * h2;
    }
  return m;
}

template class GraphFlowSolver<float>;
template class GraphFlowSolver<double>;

}  // namespace tissue::curvature_flow
