// Graph flows on the active backend: right-hand-side kernels of schemes 3.1 and 3.2 and the solver that
// drives them with the engine's Runge-Kutta-Merson integrator. Compiled as CUDA in CUDA builds.
#include "modules/curvature_flow/graph_flow.hpp"

#include <cmath>
#include <string>

#include "engine/exec/block_for.hpp"
#include "engine/exec/cooperative_for.hpp"
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
/// forcing, one thread per node: f at every node (0 on boundary nodes), stored through the integrator. The
/// reference for GraphTileRhs. Flow and forcing are template arguments so that each kernel carries only
/// its own arithmetic.
template <class Real, GraphFlow Flow, bool Forced>
struct GraphRhs {
  GraphView<Real> g;
  Span<const Real> phi;
  Span<const Real> w;  ///< Willmore only
  ForcingTable<Real, Flow> forcing;
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
      if constexpr (Forced) f += forcing.at(idx, stage.time());
    }
    stage.store(idx, f);
  }
};

/// A box of nodes [i0, i0 + w) x [j0, j0 + h) in a tile array, row-major with the fixed row stride S >= w:
/// slot l holds node (i0 + l % S, j0 + l / S) if l % S < w. A compile-time stride turns the slot-to-node
/// map into a multiply and a shift instead of an integer division, which at a few hundred nodes per tile
/// is a good part of the instructions; boxes at the grid's edge, narrower than S, skip the surplus slots.
template <int S>
struct NodeBox {
  int i0 = 0, j0 = 0, w = 0, h = 0;
  TISSUE_HD int slots() const { return S * h; }
  TISSUE_HD bool holds(int l) const { return l % S < w; }
  TISSUE_HD int local(int i, int j) const { return (j - j0) * S + (i - i0); }
  TISSUE_HD int i_of(int l) const { return i0 + l % S; }
  TISSUE_HD int j_of(int l) const { return j0 + l / S; }
  /// The box grown by `by` nodes on every side, with stride T.
  template <int T>
  TISSUE_HD NodeBox<T> grown(int by) const {
    return {i0 - by, j0 - by, w + 2 * by, h + 2 * by};
  }
};

/// Nodes per tile side of GraphTileRhs (a block owns up to kTile + 1 along each axis, see owned()).
constexpr int kTile = 16;

/// One stage of scheme 3.1 or 3.2 as one kernel over shared-memory tiles, the fast path. Each block owns
/// a box of nodes and loads phi around it (halo 1 for MCF, 2 for Willmore); every co-volume edge's
/// gradient (40)-(47), Q (36)-(39) and 1/Q are computed once per tile (one reciprocal square root, no
/// division) and shared by the two nodes on either side; then w = Q H (48)-(50) at the owned nodes (MCF:
/// that is f) or, for Willmore, on the box grown by one, then each edge's flux of (10) once, then f at the
/// owned nodes. Same arithmetic as GraphRhs up to rounding (products by 1/Q and 1/h instead of quotients).
template <class Real, GraphFlow Flow, bool Forced>
struct GraphTileRhs {
  static constexpr int kHalo = Flow == GraphFlow::willmore ? 2 : 1;
  static constexpr int kMaxOwned = kTile + 1;
  static constexpr int kMaxW = kMaxOwned + 2 * (kHalo - 1), kMaxPhi = kMaxOwned + 2 * kHalo;
  static constexpr int kMaxEdges = (kMaxW + 1) * kMaxW;  ///< edges of one direction
  using OwnBox = NodeBox<kMaxOwned>;
  using WBox = NodeBox<kMaxW>;
  /// Threads per block: one round for each edge direction and for the w box of a Willmore tile.
  static constexpr unsigned kThreads = Flow == GraphFlow::willmore ? 384 : 256;

  GraphView<Real> g;
  Span<const Real> phi;
  ForcingTable<Real, Flow> forcing;
  integrate::MersonStage<Real> stage;

  /// Blocks along x and y: every node is owned by one block (the first block of an axis also owns node
  /// 0, so a box is at most kTile + 1 wide).
  TISSUE_HD static int blocks_along(int nodes) { return (nodes - 1 + kTile - 1) / kTile; }
  TISSUE_HD NodeBox<kMaxOwned> owned(std::size_t block) const {
    const int bx = static_cast<int>(block % static_cast<std::size_t>(blocks_along(g.nx)));
    const int by = static_cast<int>(block / static_cast<std::size_t>(blocks_along(g.nx)));
    const int i0 = bx == 0 ? 0 : 1 + kTile * bx, j0 = by == 0 ? 0 : 1 + kTile * by;
    const int i1 = 1 + kTile * (bx + 1) < g.nx ? 1 + kTile * (bx + 1) : g.nx;
    const int j1 = 1 + kTile * (by + 1) < g.ny ? 1 + kTile * (by + 1) : g.ny;
    return {i0, j0, i1 - i0, j1 - j0};
  }
  using Operands = typename integrate::MersonStage<Real>::Operands;
  static std::size_t shared_bytes() {
    return sizeof(Real) * static_cast<std::size_t>(kMaxPhi * kMaxPhi + 10 * kMaxEdges + kMaxW * kMaxW +
                                                   (Forced ? kMaxOwned * kMaxOwned : 0)) +
           sizeof(Operands) * static_cast<std::size_t>(kMaxOwned * kMaxOwned);
  }

  /// In the fused last stage: the maximum of the error terms that the store loop left in red[0, count),
  /// stored as this block's (MersonStage::store_block_error).
  TISSUE_HD void reduce_error(const exec::Block& block, Real* red, int count) const {
    const Real m = exec::block_max(block, red, static_cast<std::size_t>(count));
    block.for_each(1, [&](std::size_t) { stage.store_block_error(block.index(), m); });
  }

  TISSUE_HD void operator()(const exec::Block& block) const {
    const OwnBox own = owned(block.index());
    // the last stage's error terms per owned node, over the phi tile (not read after the edge phase)
    const bool block_error = stage.block_errors && stage.last();
    const NodeBox<kMaxPhi> pb = own.template grown<kMaxPhi>(kHalo);
    const WBox wb = own.template grown<kMaxW>(kHalo - 1);
    const NodeBox<kMaxW + 1> xb{wb.i0 - 1, wb.j0, wb.w + 1, wb.h};  // x-edges (i + 1/2, j) by their west node
    const NodeBox<kMaxW> yb{wb.i0, wb.j0 - 1, wb.w, wb.h + 1};  // y-edges (i, j + 1/2) by their south node
    // per edge e (x-edges in [0, kMaxEdges), then y-edges): grad phi, Q, 1/Q, and the normal component /
    // Q (later the flux)
    Real* const p = static_cast<Real*>(block.shared());
    Real* const egx = p + kMaxPhi * kMaxPhi;
    Real* const egy = egx + 2 * kMaxEdges;
    Real* const eq = egy + 2 * kMaxEdges;
    Real* const er = eq + 2 * kMaxEdges;
    Real* const en = er + 2 * kMaxEdges;
    Real* const w = en + 2 * kMaxEdges;
    auto* const pre = reinterpret_cast<Operands*>(w + kMaxW * kMaxW);          // per owned node, for store()
    Real* const force = reinterpret_cast<Real*>(pre + kMaxOwned * kMaxOwned);  // per owned node, if Forced
    const auto ex = [&](int i, int j) { return xb.local(i, j); };              // east edge of (i, j)
    const auto ey = [&](int i, int j) { return kMaxEdges + yb.local(i, j); };  // north edge of (i, j)
    const Real ih1 = Real(1) / g.h1, ih2 = Real(1) / g.h2;
    const Real q1 = Real(0.25) * ih1, q2 = Real(0.25) * ih2;
    const auto P = [&](int i, int j) { return p[pb.local(i, j)]; };
    Real c = 0, dc = 0;  // the forcing's time factors, once per thread
    if constexpr (Forced) {
      double cd, dcd;
      ManufacturedSolution::time_factor(stage.time(), cd, dcd);
      c = Real(cd), dc = Real(dcd);
    }

    block.for_each(static_cast<std::size_t>(pb.slots()), [&](std::size_t l) {
      const int i = pb.i_of(static_cast<int>(l)), j = pb.j_of(static_cast<int>(l));
      // outside values (and surplus slots) are never used
      p[l] = pb.holds(static_cast<int>(l)) && g.inside(i, j) ? g.at(phi.data(), i, j) : Real(0);
    });
    // what store() combines with f, and the forcing, requested now so that they arrive during the
    // computation instead of after it
    block.for_each(static_cast<std::size_t>(own.slots()), [&](std::size_t l) {
      if (!own.holds(static_cast<int>(l))) return;
      const std::size_t idx = g.index(own.i_of(static_cast<int>(l)), own.j_of(static_cast<int>(l)));
      pre[l] = stage.operands(idx);
      if constexpr (Forced) force[l] = forcing.at(idx, c, dc);
    });
    block.sync();
    // (40)-(47) and (36)-(39) on every edge around the nodes of wb
    block.for_each(static_cast<std::size_t>(2 * kMaxEdges), [&](std::size_t l) {
      const int e = static_cast<int>(l);
      const bool along_x = e < kMaxEdges;
      const int m = along_x ? e : e - kMaxEdges;
      if (along_x ? m >= xb.slots() || !xb.holds(m) : m >= yb.slots() || !yb.holds(m)) return;
      Real gx, gy;
      if (along_x) {
        const int i = xb.i_of(m), j = xb.j_of(m);
        gx = (P(i + 1, j) - P(i, j)) * ih1;
        gy = (P(i, j + 1) + P(i + 1, j + 1) - P(i, j - 1) - P(i + 1, j - 1)) * q2;
      } else {
        const int i = yb.i_of(m), j = yb.j_of(m);
        gy = (P(i, j + 1) - P(i, j)) * ih2;
        gx = (P(i + 1, j) + P(i + 1, j + 1) - P(i - 1, j) - P(i - 1, j + 1)) * q1;
      }
      const Real q2e = Real(1) + gx * gx + gy * gy, r = math::rsqrt(q2e);
      egx[e] = gx, egy[e] = gy, eq[e] = q2e * r, er[e] = r, en[e] = (along_x ? gx : gy) * r;
    });
    block.sync();
    const auto q_node = [&](int i, int j) {
      return Real(0.25) * (eq[ex(i, j)] + eq[ex(i - 1, j)] + eq[ey(i, j)] + eq[ey(i, j - 1)]);
    };
    const auto divergence = [&](int i, int j) {  // of the per-edge normal quantity en
      return (en[ex(i, j)] - en[ex(i - 1, j)]) * ih1 + (en[ey(i, j)] - en[ey(i, j - 1)]) * ih2;
    };
    const auto forced = [&](std::size_t l, Real f) {  // l: the owned slot
      if constexpr (Forced) f += force[l];
      return f;
    };
    // w = Q H (48)-(50), which is MCF's f (for MCF wb is the owned box, with its stride)
    block.for_each(static_cast<std::size_t>(wb.slots()), [&](std::size_t l) {
      if (!wb.holds(static_cast<int>(l))) {
        if (block_error) p[l] = Real(0);  // a surplus slot in the error reduction
        return;
      }
      const int i = wb.i_of(static_cast<int>(l)), j = wb.j_of(static_cast<int>(l));
      const Real v = g.interior(i, j) ? q_node(i, j) * divergence(i, j) : Real(0);
      if constexpr (Flow == GraphFlow::mean_curvature) {
        const Real e = stage.store(g.index(i, j), g.interior(i, j) ? forced(l, v) : Real(0), pre[l]);
        if (block_error) p[l] = e;
      } else {
        w[l] = v;
      }
    });
    if constexpr (Flow == GraphFlow::mean_curvature)
      if (block_error) reduce_error(block, p, wb.slots());
    if constexpr (Flow == GraphFlow::willmore) {
      block.sync();
      if (g.neumann) {  // w on boundary nodes mirrors the interior (24)-(25); Dirichlet keeps 0 (13)
        block.for_each(static_cast<std::size_t>(wb.slots()), [&](std::size_t l) {
          int i = wb.i_of(static_cast<int>(l)), j = wb.j_of(static_cast<int>(l));
          if (!wb.holds(static_cast<int>(l)) || !g.inside(i, j) || g.interior(i, j)) return;
          g.mirror(i, j);
          w[l] = w[wb.local(i, j)];
        });
        block.sync();
      }
      const auto W = [&](int i, int j) { return w[wb.local(i, j)]; };
      // the flux F of (10) once per edge of the owned nodes, over the storage of the normal component
      const NodeBox<kMaxOwned + 1> fx{own.i0 - 1, own.j0, own.w + 1, own.h};
      const NodeBox<kMaxOwned> fy{own.i0, own.j0 - 1, own.w, own.h + 1};
      block.for_each(static_cast<std::size_t>(fx.slots() + fy.slots()), [&](std::size_t l) {
        const bool along_x = static_cast<int>(l) < fx.slots();
        const int m = along_x ? static_cast<int>(l) : static_cast<int>(l) - fx.slots();
        if (!(along_x ? fx.holds(m) : fy.holds(m))) return;
        const int i = along_x ? fx.i_of(m) : fy.i_of(m), j = along_x ? fx.j_of(m) : fy.j_of(m);
        const int e = along_x ? ex(i, j) : ey(i, j);
        const Real px = egx[e], py = egy[e], r = er[e], r2 = r * r;
        Real gwx, gwy, we;
        if (along_x) {
          gwx = (W(i + 1, j) - W(i, j)) * ih1;
          gwy = (W(i, j + 1) + W(i + 1, j + 1) - W(i, j - 1) - W(i + 1, j - 1)) * q2;
          we = Real(0.5) * (W(i, j) + W(i + 1, j));
        } else {
          gwy = (W(i, j + 1) - W(i, j)) * ih2;
          gwx = (W(i + 1, j) + W(i + 1, j + 1) - W(i - 1, j) - W(i - 1, j + 1)) * q1;
          we = Real(0.5) * (W(i, j) + W(i, j + 1));
        }
        const Real curv = Real(0.5) * we * we * r2 * r;
        en[e] = along_x ? ((Real(1) - px * px * r2) * gwx - px * py * r2 * gwy) * r - curv * px
                        : (-px * py * r2 * gwx + (Real(1) - py * py * r2) * gwy) * r - curv * py;
      });
      block.sync();
      block.for_each(static_cast<std::size_t>(own.slots()), [&](std::size_t l) {
        if (!own.holds(static_cast<int>(l))) {
          if (block_error) p[l] = Real(0);
          return;
        }
        const int i = own.i_of(static_cast<int>(l)), j = own.j_of(static_cast<int>(l));
        const Real f = g.interior(i, j) ? forced(l, -q_node(i, j) * divergence(i, j)) : Real(0);
        const Real e = stage.store(g.index(i, j), f, pre[l]);
        if (block_error) p[l] = e;
      });
      if (block_error) reduce_error(block, p, own.slots());
    }
  }
};

/// GraphTileRhs as the per-tile right-hand side of RungeKuttaMerson::integrate_tiled (tile.index() is the
/// tile, as the block index is in a block_for launch).
template <class Real, GraphFlow Flow, bool Forced>
struct GraphTileStage {
  GraphView<Real> g;
  ForcingTable<Real, Flow> forcing;
  TISSUE_HD void operator()(const exec::Block& tile, Span<const Real> arg,
                            const integrate::MersonStage<Real>& stage) const {
    GraphTileRhs<Real, Flow, Forced>{g, arg, forcing, stage}(tile);
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

/// The ForcingTable rows of a grid, on the host.
template <class Real, GraphFlow Flow>
std::vector<Real> forcing_rows(const GraphFlowParams& params, const GraphView<Real>& g) {
  using Table = ForcingTable<Real, Flow>;
  const std::size_t n = params.nodes();
  std::vector<Real> rows(Table::kRows * n);
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i)
      Table::fill(params.manufactured, params.x0 + i * params.h1(), params.y0 + j * params.h2(), rows.data(),
                  g.index(i, j), n);
  return rows;
}

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
  if (params_.forcing == GraphForcing::manufactured) {
    const GraphView<Real> g = view();
    forcing_.assign(params_.flow == GraphFlow::willmore
                        ? forcing_rows<Real, GraphFlow::willmore>(params_, g)
                        : forcing_rows<Real, GraphFlow::mean_curvature>(params_, g));
  }
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
                                const GraphFlowParams& params, const DeviceBuffer<Real>& forcing_table,
                                Span<Real> phi, Span<Real> w, double t0, double t1) {
  const std::size_t n = phi.size();
  const ForcingTable<Real, Flow> forcing{Span<const Real>(forcing_table.data(), forcing_table.size()), n};
  using Tile = GraphTileRhs<Real, Flow, Forced>;
  const std::size_t blocks =
      static_cast<std::size_t>(Tile::blocks_along(g.nx)) * static_cast<std::size_t>(Tile::blocks_along(g.ny));
  if (params.tiled && params.persistent && params.merson.fused) {
    using Stage = GraphTileStage<Real, Flow, Forced>;
    constexpr unsigned kMinBlocks = 2;  // launch bound: two tiles per multiprocessor (256 tiles at 256^2)
    // Only with one resident block per tile: a block working through several tiles in turn at every
    // stage is slower than one launch per stage.
    const bool resident =
        exec::backend() == exec::Backend::cpu ||
        integrate::RungeKuttaMerson<Real>::template resident_tiles<Tile::kThreads, kMinBlocks, Stage>(
            Tile::shared_bytes()) >= blocks;
    if (resident)
      return rkm.template integrate_tiled<Tile::kThreads, kMinBlocks>(
          phi, t0, t1, blocks, Tile::shared_bytes(), Stage{g, forcing});
  }
  rkm.set_error_blocks(params.tiled ? blocks : 0);
  auto rhs = [&](Span<const Real> arg, const integrate::MersonStage<Real>& stage) {
    if (params.tiled) {
      exec::block_for(blocks, Tile::kThreads, Tile::shared_bytes(), Tile{g, arg, forcing, stage});
      return;
    }
    if constexpr (Flow == GraphFlow::willmore) exec::parallel_for(n, WillmoreW<Real>{g, arg, w});
    exec::parallel_for(n, GraphRhs<Real, Flow, Forced>{g, arg, Span<const Real>(w), forcing, stage});
  };
  return rkm.integrate(phi, t0, t1, rhs);
}

}  // namespace

template <class Real>
integrate::MersonStats GraphFlowSolver<Real>::advance(double t0, double t1) {
  const GraphView<Real> g = view();
  auto& rkm = impl_->rkm;
  const bool forced = params_.forcing == GraphForcing::manufactured;
  const Span<Real> phi = phi_.span(), w = w_.span();
  if (params_.flow == GraphFlow::willmore)
    return forced ? run_flow<Real, GraphFlow::willmore, true>(rkm, g, params_, forcing_, phi, w, t0, t1)
                  : run_flow<Real, GraphFlow::willmore, false>(rkm, g, params_, forcing_, phi, w, t0, t1);
  return forced ? run_flow<Real, GraphFlow::mean_curvature, true>(rkm, g, params_, forcing_, phi, w, t0, t1)
                : run_flow<Real, GraphFlow::mean_curvature, false>(rkm, g, params_, forcing_, phi, w, t0, t1);
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
