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
  /// The part of the box inside [0, nx) x [0, ny), same stride.
  TISSUE_HD NodeBox clipped(int nx, int ny) const {
    const int a = i0 > 0 ? i0 : 0, b = j0 > 0 ? j0 : 0;
    const int c = i0 + w < nx ? i0 + w : nx, d = j0 + h < ny ? j0 + h : ny;
    return {a, b, c - a, d - b};
  }
};

/// Tile shape of GraphTileRhs: nodes along x and y (a block owns up to one more along each axis, see
/// owned()), threads per block and the launch bound of the persistent loop: two blocks per multiprocessor
/// (256 tiles at 256^2). For Willmore, 32 x 16 tiles of 768 threads, one per multiprocessor (every box of
/// an interior tile in one round of the threads, half the blocks at each grid barrier), were 1-2 % slower
/// on an H100: one block's barriers stall all 24 warps, where two blocks overlap theirs.
template <GraphFlow Flow>
struct TileShape {
  static constexpr int x = 16, y = 16;
  /// Willmore: one round for the w box of a tile
  static constexpr unsigned threads = Flow == GraphFlow::willmore ? 384 : 256, min_blocks = 2;
};

/// One stage of scheme 3.1 or 3.2 as one kernel over shared-memory tiles, the fast path. Each block owns
/// a box of nodes and loads phi around it (halo 1 for MCF, 2 for Willmore). Then one thread per node of
/// the w box (the owned box, grown by one for Willmore) computes the gradients (40)-(47), Q (36)-(39) and
/// 1/Q (one reciprocal square root, no division) of its four co-volume edges and w = Q H (48)-(50) (MCF:
/// that is f); for Willmore it keeps its east and north edges for the next phase, where one thread per
/// owned node computes the flux of (10) on its four edges and f. Each interior edge is so computed by the
/// two nodes beside it, which costs arithmetic but saves the block barriers of separate edge phases: at
/// 256^2 a stage is a chain of such phases on a few hundred nodes per multiprocessor, bound by latency and
/// barriers, not by arithmetic. Both nodes evaluate an edge with the same expression, so it has one value.
/// Same arithmetic as GraphRhs up to rounding (products by 1/Q and 1/h instead of quotients).
template <class Real, GraphFlow Flow, bool Forced>
struct GraphTileRhs {
  static constexpr int kHalo = Flow == GraphFlow::willmore ? 2 : 1;
  static constexpr int kTileX = TileShape<Flow>::x, kTileY = TileShape<Flow>::y;
  /// Rows of the owned, w and phi boxes at most.
  static constexpr int kMaxOwned = kTileY + 1;
  static constexpr int kMaxW = kMaxOwned + 2 * (kHalo - 1), kMaxPhi = kMaxOwned + 2 * kHalo;
  /// One row stride for every box of the tile, the phi box's width: thread l then reads the phi, w and
  /// edge values of slot l at one fixed offset from l in every phase, so a warp's shared-memory accesses
  /// are consecutive (no bank conflicts at row ends) and need no index arithmetic beyond l.
  static constexpr int kStride = kTileX + 1 + 2 * kHalo;
  static constexpr int kWSlots = kStride * kMaxW, kOwnSlots = kStride * kMaxOwned;
  /// Per w-box slot (Willmore): the east and north edges' grad phi and 1/Q, Q at the node, and w.
  static constexpr int kNodeArrays = Flow == GraphFlow::willmore ? 8 : 1;
  using OwnBox = NodeBox<kStride>;
  using WBox = NodeBox<kStride>;
  using PhiBox = NodeBox<kStride>;
  static constexpr unsigned kThreads = TileShape<Flow>::threads;

  /// 1 / h1 and 1 / h2, divided once on the host (inverse_spacing()) rather than in every thread and stage.
  struct InverseSpacing {
    Real ih1, ih2;
  };
  static InverseSpacing inverse_spacing(const GraphView<Real>& g) { return {Real(1) / g.h1, Real(1) / g.h2}; }

  GraphView<Real> g;
  Span<const Real> phi;
  ForcingTable<Real, Flow> forcing;
  integrate::MersonStage<Real> stage;
  InverseSpacing inverse;

  /// Blocks along an axis of `nodes` nodes with tiles of `tile`: every node is owned by one block (the
  /// first block of an axis also owns node 0, so a box is at most tile + 1 wide).
  TISSUE_HD static int blocks_along(int nodes, int tile) { return (nodes - 1 + tile - 1) / tile; }
  /// Blocks of a grid.
  static std::size_t blocks(const GraphView<Real>& g) {
    return static_cast<std::size_t>(blocks_along(g.nx, kTileX)) *
           static_cast<std::size_t>(blocks_along(g.ny, kTileY));
  }
  TISSUE_HD OwnBox owned(std::size_t block) const {
    const auto across = static_cast<std::size_t>(blocks_along(g.nx, kTileX));
    const int bx = static_cast<int>(block % across), by = static_cast<int>(block / across);
    const int i0 = bx == 0 ? 0 : 1 + kTileX * bx, j0 = by == 0 ? 0 : 1 + kTileY * by;
    const int i1 = 1 + kTileX * (bx + 1) < g.nx ? 1 + kTileX * (bx + 1) : g.nx;
    const int j1 = 1 + kTileY * (by + 1) < g.ny ? 1 + kTileY * (by + 1) : g.ny;
    return {i0, j0, i1 - i0, j1 - j0};
  }
  using Operands = typename integrate::MersonStage<Real>::Operands;
  /// Shared memory: phi, the per-node arrays, the four store() operands (one array each: a warp storing
  /// a struct of four per slot would hit every bank four times) and the forcing.
  static std::size_t shared_bytes() {
    return sizeof(Real) * static_cast<std::size_t>(kStride * kMaxPhi + kNodeArrays * kWSlots +
                                                   (4 + (Forced ? 1 : 0)) * kOwnSlots);
  }

  /// The block's scratch (shared_bytes()), carved in one place: phi on the phi box, kNodeArrays arrays
  /// per w-box slot, the four store() operands and the forcing per owned slot.
  struct Scratch {
    Real* p;  ///< phi on the phi box; the other arrays at constant offsets (one base register)
    TISSUE_HD explicit Scratch(void* shared) : p(static_cast<Real*>(shared)) {}
    TISSUE_HD Real* node() const { return p + kStride * kMaxPhi; }
    TISSUE_HD Real* pre() const { return node() + kNodeArrays * kWSlots; }
    TISSUE_HD Real* force() const { return pre() + 4 * kOwnSlots; }
    /// Keeps the operands of owned slot l that stage `s` reads (MersonStage::operands).
    TISSUE_HD void put(int l, const Operands& o, int s) const {
      Real* const q = pre();
      q[l] = o.u;
      if (s >= 1) q[kOwnSlots + l] = o.k1;
      if (s >= 3) q[2 * kOwnSlots + l] = o.k3;
      if (s == 4) q[3 * kOwnSlots + l] = o.k4;
    }
    /// The operands put() kept for owned slot l and stage `s`.
    TISSUE_HD Operands get(int l, int s) const {
      const Real* const q = pre();
      Operands o;
      o.u = q[l];
      if (s >= 1) o.k1 = q[kOwnSlots + l];
      if (s >= 3) o.k3 = q[2 * kOwnSlots + l];
      if (s == 4) o.k4 = q[3 * kOwnSlots + l];
      return o;
    }
  };

  /// Gradient, Q, 1/Q and the normal component / Q of one co-volume edge.
  struct Edge {
    Real gx, gy, q, r, normal;
  };

  /// c(t) and c'(t) of the manufactured forcing at this stage's time (0 without forcing): once per block
  /// and iteration in the persistent loop (MersonStage::time_constants), else here.
  TISSUE_HD void time_factors(Real& c, Real& dc) const {
    c = dc = Real(0);
    if constexpr (Forced) {
      double cd, dcd;
      if (stage.time_constants) {
        cd = stage.time_constants[0], dcd = stage.time_constants[1];
      } else {
        ManufacturedSolution::time_factor(stage.time(), cd, dcd);
      }
      c = Real(cd), dc = Real(dcd);
    }
  }

  /// The load phase: phi on pb into p (kPhi; outside values and surplus slots are never used), and what
  /// store() combines with f and the forcing at the owned nodes into pre and force (kOwn). A thread
  /// issues all its loads before its first store to shared memory: the compiler does not move a global
  /// load above a store through the generic scratch pointer, so a loop over slots would wait one L2
  /// round trip per slot it handles. The caller synchronises the block.
  template <bool kPhi, bool kOwn>
  TISSUE_HD void load(const exec::Block& block, const OwnBox& own, const PhiBox& pb) const {
    const Scratch scratch(block.shared());
    constexpr int kPhiRounds =
        (kStride * kMaxPhi + static_cast<int>(kThreads) - 1) / static_cast<int>(kThreads);
    constexpr int kOwnRounds = (kOwnSlots + static_cast<int>(kThreads) - 1) / static_cast<int>(kThreads);
    Real c, dc;
    time_factors(c, dc);
    block.for_each(kThreads, [&](std::size_t t) {
      Real v[kPhiRounds];
      if constexpr (kPhi) {
        for (int r = 0; r < kPhiRounds; ++r) {
          const int l = static_cast<int>(t) + r * static_cast<int>(kThreads);
          const int i = pb.i_of(l), j = pb.j_of(l);
          v[r] = l < pb.slots() && pb.holds(l) && g.inside(i, j) ? g.at(phi.data(), i, j) : Real(0);
        }
      }
      Operands o[kOwnRounds];
      typename ForcingTable<Real, Flow>::Values fo[kOwnRounds] = {};
      if constexpr (kOwn) {
        for (int r = 0; r < kOwnRounds; ++r) {
          const int l = static_cast<int>(t) + r * static_cast<int>(kThreads);
          if (l >= own.slots() || !own.holds(l)) continue;
          const std::size_t idx = g.index(own.i_of(l), own.j_of(l));
          o[r] = stage.operands(idx);
          if constexpr (Forced) fo[r] = forcing.load(idx);
        }
      }
      if constexpr (kPhi) {
        for (int r = 0; r < kPhiRounds; ++r) {
          const int l = static_cast<int>(t) + r * static_cast<int>(kThreads);
          if (l < pb.slots()) scratch.p[l] = v[r];
        }
      }
      if constexpr (kOwn) {
        for (int r = 0; r < kOwnRounds; ++r) {
          const int l = static_cast<int>(t) + r * static_cast<int>(kThreads);
          if (l >= own.slots()) continue;
          scratch.put(l, o[r], stage.stage);
          if constexpr (Forced) scratch.force()[l] = ForcingTable<Real, Flow>::combine(fo[r], c, dc);
        }
      }
    });
  }

  /// The owned nodes' part of the load phase ahead of the stage (integrate::MersonStage::prefetched):
  /// the persistent loop calls it between arriving at a grid barrier and waiting there, since those values
  /// are this block's own (the state and its earlier stages) and the forcing table.
  TISSUE_HD void prefetch(const exec::Block& block) const {
    const OwnBox own = owned(block.index());
    load<false, true>(block, own, own.template grown<kStride>(kHalo));
  }

  TISSUE_HD void operator()(const exec::Block& block) const {
    const OwnBox own = owned(block.index());
    // the last stage reduces its error terms per block (MersonStage::store_block_error)
    const bool block_error = stage.block_errors && stage.last();
    const PhiBox pb = own.template grown<kStride>(kHalo);
    // clipped to the grid: nothing reads w or the edges of nodes outside it, and the first row of tiles,
    // which owns one row more than the others, then still fits the block's threads in one round
    const WBox wb = own.template grown<kStride>(kHalo - 1).clipped(g.nx, g.ny);
    const Scratch scratch(block.shared());
    Real* const p = scratch.p;
    Real* const node = scratch.node();
    Real* const force = scratch.force();
    // Willmore: per w-box slot, the east edge (gx, gy, 1/Q), the north edge (gx, gy, 1/Q), Q at the node, w
    Real* const east_gx = node;
    Real* const east_gy = node + (kNodeArrays > 1 ? 1 : 0) * kWSlots;
    Real* const east_r = node + (kNodeArrays > 1 ? 2 : 0) * kWSlots;
    Real* const north_gx = node + (kNodeArrays > 1 ? 3 : 0) * kWSlots;
    Real* const north_gy = node + (kNodeArrays > 1 ? 4 : 0) * kWSlots;
    Real* const north_r = node + (kNodeArrays > 1 ? 5 : 0) * kWSlots;
    Real* const qn = node + (kNodeArrays > 1 ? 6 : 0) * kWSlots;
    Real* const w = node + (kNodeArrays > 1 ? 7 : 0) * kWSlots;
    // error terms of the last stage: MCF writes them while the block still reads phi, Willmore after
    Real* const errors = Flow == GraphFlow::willmore ? p : node;
    const Real ih1 = inverse.ih1, ih2 = inverse.ih2;
    const Real q1 = Real(0.25) * ih1, q2 = Real(0.25) * ih2;
    const auto P = [&](int i, int j) { return p[pb.local(i, j)]; };
    const auto operands = [&](int l) { return scratch.get(l, stage.stage); };  // for store() at owned slot l
    if (stage.prefetched)
      load<true, false>(block, own, pb);
    else
      load<true, true>(block, own, pb);
    block.sync();
    const auto finish = [](Edge& e, Real along) {
      const Real q2e = Real(1) + e.gx * e.gx + e.gy * e.gy;
      e.r = math::rsqrt(q2e);
      e.q = q2e * e.r;
      e.normal = along * e.r;
    };
    const auto x_edge = [&](int i, int j) {  // (i + 1/2, j), by its west node
      Edge e;
      e.gx = (P(i + 1, j) - P(i, j)) * ih1;
      e.gy = (P(i, j + 1) + P(i + 1, j + 1) - P(i, j - 1) - P(i + 1, j - 1)) * q2;
      finish(e, e.gx);
      return e;
    };
    const auto y_edge = [&](int i, int j) {  // (i, j + 1/2), by its south node
      Edge e;
      e.gy = (P(i, j + 1) - P(i, j)) * ih2;
      e.gx = (P(i + 1, j) + P(i + 1, j + 1) - P(i - 1, j) - P(i - 1, j + 1)) * q1;
      finish(e, e.gy);
      return e;
    };
    const auto forced = [&](std::size_t l, Real f) {  // l: the owned slot
      if constexpr (Forced) f += force[l];
      return f;
    };
    // w = Q H (48)-(50) at the nodes of wb, which is MCF's f (for MCF wb is the owned box, with its stride)
    block.for_each(static_cast<std::size_t>(wb.slots()), [&](std::size_t l) {
      if (!wb.holds(static_cast<int>(l))) {
        if (block_error && Flow == GraphFlow::mean_curvature) errors[l] = Real(0);  // a surplus slot
        return;
      }
      const int i = wb.i_of(static_cast<int>(l)), j = wb.j_of(static_cast<int>(l));
      const Edge east = x_edge(i, j), north = y_edge(i, j);
      Real q = Real(0), v = Real(0);
      if (g.interior(i, j)) {
        const Edge west = x_edge(i - 1, j), south = y_edge(i, j - 1);
        q = Real(0.25) * (east.q + west.q + north.q + south.q);
        v = q * ((east.normal - west.normal) * ih1 + (north.normal - south.normal) * ih2);
      }
      if constexpr (Flow == GraphFlow::mean_curvature) {
        const Real e = stage.store(g.index(i, j), g.interior(i, j) ? forced(l, v) : Real(0), operands(l));
        if (block_error) errors[l] = e;
      } else {
        east_gx[l] = east.gx, east_gy[l] = east.gy, east_r[l] = east.r;
        north_gx[l] = north.gx, north_gy[l] = north.gy, north_r[l] = north.r;
        qn[l] = q, w[l] = v;
      }
    });
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
      // the flux F of (10) on edge (i + 1/2, j) and (i, j + 1/2)
      const auto x_flux = [&](int i, int j) {
        const int k = wb.local(i, j);
        const Real px = east_gx[k], py = east_gy[k], r = east_r[k], r2 = r * r;
        const Real gwx = (W(i + 1, j) - W(i, j)) * ih1;
        const Real gwy = (W(i, j + 1) + W(i + 1, j + 1) - W(i, j - 1) - W(i + 1, j - 1)) * q2;
        const Real we = Real(0.5) * (W(i, j) + W(i + 1, j));
        const Real curv = Real(0.5) * we * we * r2 * r;
        return ((Real(1) - px * px * r2) * gwx - px * py * r2 * gwy) * r - curv * px;
      };
      const auto y_flux = [&](int i, int j) {
        const int k = wb.local(i, j);
        const Real px = north_gx[k], py = north_gy[k], r = north_r[k], r2 = r * r;
        const Real gwy = (W(i, j + 1) - W(i, j)) * ih2;
        const Real gwx = (W(i + 1, j) + W(i + 1, j + 1) - W(i - 1, j) - W(i - 1, j + 1)) * q1;
        const Real we = Real(0.5) * (W(i, j) + W(i, j + 1));
        const Real curv = Real(0.5) * we * we * r2 * r;
        return (-px * py * r2 * gwx + (Real(1) - py * py * r2) * gwy) * r - curv * py;
      };
      block.for_each(static_cast<std::size_t>(own.slots()), [&](std::size_t l) {
        if (!own.holds(static_cast<int>(l))) {
          if (block_error) errors[l] = Real(0);
          return;
        }
        const int i = own.i_of(static_cast<int>(l)), j = own.j_of(static_cast<int>(l));
        Real f = Real(0);
        if (g.interior(i, j)) {
          const Real div = (x_flux(i, j) - x_flux(i - 1, j)) * ih1 + (y_flux(i, j) - y_flux(i, j - 1)) * ih2;
          f = forced(l, -qn[wb.local(i, j)] * div);
        }
        const Real e = stage.store(g.index(i, j), f, operands(l));
        if (block_error) errors[l] = e;
      });
    }
    if (block_error) {
      const Real m = exec::block_max(block, errors, static_cast<std::size_t>(own.slots()));
      block.for_each(1, [&](std::size_t) { stage.store_block_error(block.index(), m); });
    }
  }
};

/// GraphTileRhs as the per-tile right-hand side of RungeKuttaMerson::integrate_tiled (tile.index() is the
/// tile, as the block index is in a block_for launch).
template <class Real, GraphFlow Flow, bool Forced>
struct GraphTileStage {
  /// The manufactured forcing's c(t) and c'(t) (ManufacturedSolution::time_factor), once per block and
  /// iteration for all five stages (integrate::TimeConstantsOf).
  static constexpr int kTimeConstants = Forced ? 2 : 0;
  GraphView<Real> g;
  ForcingTable<Real, Flow> forcing;
  typename GraphTileRhs<Real, Flow, Forced>::InverseSpacing inverse;
  TISSUE_HD void time_constants(double t, double* out) const {
    ManufacturedSolution::time_factor(t, out[0], out[1]);
  }
  TISSUE_HD void operator()(const exec::Block& tile, Span<const Real> arg,
                            const integrate::MersonStage<Real>& stage) const {
    GraphTileRhs<Real, Flow, Forced>{g, arg, forcing, stage, inverse}(tile);
  }
  /// GraphTileRhs::prefetch for the stage `stage` (integrate::MersonStage::prefetched).
  TISSUE_HD void prefetch(const exec::Block& tile, const integrate::MersonStage<Real>& stage) const {
    GraphTileRhs<Real, Flow, Forced>{g, {}, forcing, stage, inverse}.prefetch(tile);
  }
  /// The tiles around tile `tile` (up to 8, written to out; returns the count): a stage reads the halo
  /// of its tile (and Neumann mirrors) within kHalo nodes, so in those tiles only, as long as no tile
  /// is narrower than the halo: only the last tile of a row or column can be narrower than kTileX or
  /// kTileY, and the tile before it is not (integrate::NeighboursOf).
  TISSUE_HD unsigned neighbours(std::size_t tile, unsigned* out) const {
    using Tile = GraphTileRhs<Real, Flow, Forced>;
    static_assert(Tile::kTileX >= Tile::kHalo && Tile::kTileY >= Tile::kHalo, "a halo beyond the next tile");
    const int across = Tile::blocks_along(g.nx, Tile::kTileX), down = Tile::blocks_along(g.ny, Tile::kTileY);
    const int bx = static_cast<int>(tile % static_cast<std::size_t>(across));
    const int by = static_cast<int>(tile / static_cast<std::size_t>(across));
    unsigned count = 0;
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        const int x = bx + dx, y = by + dy;
        if ((dx != 0 || dy != 0) && x >= 0 && x < across && y >= 0 && y < down)
          out[count++] = static_cast<unsigned>(y * across + x);
      }
    }
    return count;
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
  const std::size_t blocks = Tile::blocks(g);
  if (params.tiled && params.persistent && params.merson.fused) {
    using Stage = GraphTileStage<Real, Flow, Forced>;
    constexpr unsigned kMinBlocks = TileShape<Flow>::min_blocks;  // the launch bound
    // Only with one resident block per tile: a block working through several tiles in turn at every
    // stage is slower than one launch per stage.
    const bool resident =
        exec::backend() == exec::Backend::cpu ||
        integrate::RungeKuttaMerson<Real>::template resident_tiles<Tile::kThreads, kMinBlocks, Stage>(
            Tile::shared_bytes()) >= blocks;
    if (resident)
      return rkm.template integrate_tiled<Tile::kThreads, kMinBlocks>(
          phi, t0, t1, blocks, Tile::shared_bytes(), Stage{g, forcing, Tile::inverse_spacing(g)});
  }
  rkm.set_error_blocks(params.tiled ? blocks : 0);
  auto rhs = [&](Span<const Real> arg, const integrate::MersonStage<Real>& stage) {
    if (params.tiled) {
      exec::block_for(blocks, Tile::kThreads, Tile::shared_bytes(),
                      Tile{g, arg, forcing, stage, Tile::inverse_spacing(g)});
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
