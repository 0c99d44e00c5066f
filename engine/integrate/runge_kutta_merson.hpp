#pragma once
/// @file runge_kutta_merson.hpp
/// Adaptive Runge-Kutta-Merson integration of a field state u (n values on the active backend), du/dt =
/// f(t, u), as Algorithm 4.1 of Oberhuber, Suzuki & Zabka, "The CUDA implementation of the method of lines
/// for the curvature dependent flows", Kybernetika 47 (2011) (after Vitasek 1987):
///
///   k1 = tau f(t, u)                          k4 = tau f(t + tau/2, u + k1/8 + 3 k3/8)
///   k2 = tau f(t + tau/3, u + k1/3)           k5 = tau f(t + tau,   u + k1/2 - 3 k3/2 + 2 k4)
///   k3 = tau f(t + tau/3, u + k1/6 + k2/6)
///   e  = max_i 1/3 |k1/5 - 9 k3/10 + 4 k4/5 - k5/10|                                            (27)
///   if e < eps: u += (k1 + 4 k4 + k5) / 6, t += tau                                              (28)
///   tau = min(tau 4/5 (eps/e)^(1/5), T - t)                                                      (29)
///
/// The step control lives on the device: the error is reduced there (one block for fields up to 256 K
/// values, CUB above), a one-thread kernel accepts or rejects and picks the next tau (the same block,
/// for small fields), and the update reads that decision, so iterations queue up without
/// the host waiting for each. The host looks at the control record only every few iterations (a batch
/// sized from the remaining time over tau); iterations queued after the end time are no-ops.
///
/// For a right-hand side over tiles of nodes, integrate_tiled() runs the whole loop in persistent
/// cooperative launches instead (grid barriers, or waits for the neighbouring tiles, between stages; every
/// block deciding on its own copy of the control record), for fields too small to pay a kernel launch per
/// stage.
///
/// The right-hand side is a callable rhs(Span<const Real> arg, const MersonStage<Real>& stage) that
/// launches its own kernel and, for each node i, calls stage.store(i, f_i) with f_i = f(stage.time(),
/// arg)_i. In the fused mode store() also forms the next stage's argument (and, in the last stage, the
/// error and the candidate solution) at node i, saving four passes over the fields per step; the plain
/// mode stores f only and combines in separate kernels (the reference the fused mode is tested against).
///
/// Include only from translation units compiled as CUDA in CUDA builds (tissue_kernel_sources).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/backend.hpp"
#include "engine/exec/block_for.hpp"
#include "engine/exec/cooperative_for.hpp"
#include "engine/exec/device_buffer.hpp"
#include "engine/exec/error.hpp"
#include "engine/exec/math.hpp"
#include "engine/exec/parallel_for.hpp"
#include "engine/exec/recording.hpp"
#include "engine/integrate/merson_settings.hpp"

namespace tissue::integrate {

/// The step-control record, in the active backend's memory. Times in the caller's time unit.
struct MersonControl {
  double t = 0.0;          ///< current time
  double t_end = 0.0;      ///< end of the current integrate() call
  double tau = 0.0;        ///< step being tried
  double tau_used = 0.0;   ///< step of the last iteration (the update uses it)
  double tau_free = 0.0;   ///< last step proposed by (29) before clipping to t_end (carried to the next call)
  double tolerance = 0.0;  ///< eps of (27)-(29)
  double min_step = 0.0;   ///< a proposed step below this fails the run (unless at t_end)
  double last_error = 0.0;  ///< e of the last iteration
  std::int64_t accepted = 0, rejected = 0;
  int accept_now = 0;  ///< the last iteration's step was accepted (read by the update kernel)
  int done = 0;        ///< t reached t_end, or the run failed
  int failure = 0;     ///< 0 ok, 1 non-finite error estimate, 2 step below min_step
};

/// What the right-hand side of a stage sees: the stage time, and store() for the value f at a node.
template <class Real>
struct MersonStage {
  const MersonControl* control = nullptr;
  int stage = 0;  ///< 0..4 for k1..k5
  bool fused = true;
  Span<const Real> u;         ///< state at the start of the step
  Span<Real> k[5];            ///< stage derivatives f (not multiplied by tau); fused: k1, k3, k4 only
  Span<Real> next;            ///< fused: argument of the next stage
  Span<Real> candidate;       ///< fused, stage 4: u + tau (k1 + 4 k4 + k5) / 6
  Span<Real> error;           ///< fused, stage 4: per-node error term of (27), or per-block maxima
  bool block_errors = false;  ///< fused, stage 4: the right-hand side reduces the error terms per block
  /// integrate_tiled with a right-hand side that declares kTimeConstants (TimeConstantsOf): its
  /// time_constants(time()) for this stage, computed once per block and iteration; nullptr otherwise.
  const double* time_constants = nullptr;
  /// integrate_tiled with a right-hand side that has prefetch() (PrefetchOf): the block's prefetch(tile,
  /// stage) has already run for this stage on this tile's scratch, between arriving at the grid barrier
  /// that ended the previous stage and waiting there.
  bool prefetched = false;

  /// The last stage, whose store() returns the error terms.
  TISSUE_HD bool last() const { return stage == 4; }

  /// Time of this stage: t + c tau with c = 0, 1/3, 1/3, 1/2, 1.
  TISSUE_HD double time() const {
    const double c = stage == 0   ? 0.0
                     : stage < 3  ? 1.0 / 3.0
                     : stage == 3 ? 0.5
                                  : 1.0;  // no table on the stack
    return control->t + c * control->tau;
  }

  /// The values that store() combines with f at node i: u and the earlier stages' k that this stage's
  /// combination reads (fused mode; nothing in the plain mode). Loading them before f is computed hides
  /// their latency behind the computation (store(i, f, operands)).
  struct Operands {
    Real u = Real(0), k1 = Real(0), k3 = Real(0), k4 = Real(0);
  };
  TISSUE_HD Operands operands(std::size_t i) const {
    Operands o;
    if (!fused) return o;
    o.u = u[i];
    if (stage >= 1) o.k1 = k[0][i];
    if (stage >= 3) o.k3 = k[2][i];
    if (stage == 4) o.k4 = k[3][i];
    return o;
  }

  /// Records f(time(), arg) at node i. Returns the node's error term of (27) in the fused last stage (0
  /// otherwise); with block_errors it is not stored per node, the caller reduces it per block instead.
  TISSUE_HD Real store(std::size_t i, Real f) const { return store(i, f, operands(i)); }

  /// store(i, f) with the operands(i) loaded earlier.
  TISSUE_HD Real store(std::size_t i, Real f, const Operands& o) const {
    if (!fused) {
      // k[stage] by constant indices only: a stage built in a persistent kernel lives in registers and
      // local memory, where a dynamic index would put all five spans on the stack
      const Span<Real> ks = stage == 0   ? k[0]
                            : stage == 1 ? k[1]
                            : stage == 2 ? k[2]
                            : stage == 3 ? k[3]
                                         : k[4];
      ks[i] = f;
      return Real(0);
    }
    const Real tau = static_cast<Real>(control->tau);
    switch (stage) {
      case 0:
        k[0][i] = f;
        next[i] = o.u + tau * (f / Real(3));
        break;
      case 1:  // k2 and k5 are not read again in the fused mode: not stored
        next[i] = o.u + tau * ((o.k1 + f) / Real(6));
        break;
      case 2:
        k[2][i] = f;
        next[i] = o.u + tau * ((o.k1 + Real(3) * f) / Real(8));
        break;
      case 3:
        k[3][i] = f;
        next[i] = o.u + tau * (o.k1 / Real(2) - Real(1.5) * o.k3 + Real(2) * f);
        break;
      default: {
        candidate[i] = o.u + tau * ((o.k1 + Real(4) * o.k4 + f) / Real(6));
        const Real e = error_term(tau, o.k1, o.k3, o.k4, f);
        if (!block_errors) error[i] = e;
        return e;
      }
    }
    return Real(0);
  }

  /// With block_errors, in the last stage: the largest error term of block b's nodes (b < the count given
  /// to RungeKuttaMerson::set_error_blocks; every block stores exactly once).
  TISSUE_HD void store_block_error(std::size_t b, Real e) const { error[b] = e; }

  /// tau/3 |k1/5 - 9 k3/10 + 4 k4/5 - k5/10| (27), with NaN mapped to +infinity so the max sees it.
  TISSUE_HD static Real error_term(Real tau, Real k1, Real k3, Real k4, Real k5) {
    const Real e = tau / Real(3) * (k1 / Real(5) - Real(0.9) * k3 + Real(0.8) * k4 - k5 / Real(10));
    if (!(e == e)) return std::numeric_limits<Real>::infinity();
    return e < Real(0) ? -e : e;
  }
};

/// kTimeConstants of a tile right-hand side, 0 if it declares none. A right-hand side of integrate_tiled
/// whose f depends on time through a few expensive numbers (a forcing's cos(pi t)) declares `static
/// constexpr int kTimeConstants` and `TISSUE_HD void time_constants(double t, double* out) const`; the
/// persistent loop then computes them once per block and iteration for all five stage times (in parallel
/// threads) and hands each stage its own through MersonStage::time_constants, instead of every thread
/// evaluating them at every stage.
template <class T, class = void>
struct TimeConstantsOf {
  static constexpr int value = 0;
};
template <class T>
struct TimeConstantsOf<T, std::void_t<decltype(T::kTimeConstants)>> {
  static constexpr int value = T::kTimeConstants;
};

/// Whether a tile right-hand side of integrate_tiled has `TISSUE_HD void prefetch(const exec::Block& tile,
/// const MersonStage<Real>& stage) const`: work for `stage` that reads only what the tile's own block
/// wrote in earlier stages (or what nobody writes), e.g. the state and earlier stages at its own nodes,
/// and puts it in its scratch. The persistent loop then runs it for stages 2-5 between arriving at the
/// grid barrier of the previous stage and waiting there (exec::Grid::arrive), hiding its latency in the
/// barrier's, when every block has a single tile (its scratch then survives from stage to stage).
template <class T, class Real, class = void>
struct PrefetchOf {
  static constexpr bool value = false;
};
template <class T, class Real>
struct PrefetchOf<T, Real,
                  std::void_t<decltype(std::declval<const T&>().prefetch(
                      std::declval<const exec::Block&>(), std::declval<const MersonStage<Real>&>()))>> {
  static constexpr bool value = true;
};

/// Most tiles a tile of integrate_tiled depends on (NeighboursOf): the eight around it on a 2D grid.
inline constexpr unsigned kMaxTileNeighbours = 8;

/// Whether a tile right-hand side of integrate_tiled has `TISSUE_HD unsigned neighbours(std::size_t tile,
/// unsigned* out) const` that writes the tiles (at most kMaxTileNeighbours) whose nodes the stage of
/// tile `tile` reads, and returns their count; the relation must be symmetric (tile a reads nodes of b
/// exactly when b reads nodes of a), as for a stencil's halo. The persistent loop then orders stages 2-5
/// by waiting for those tiles only (exec::Grid::signal) instead of a barrier across the grid, when every
/// block has a single tile: a tile's next stage waits for its neighbours' stage that it reads (and that
/// read its nodes in the buffer it now overwrites), not for the slowest tile anywhere. The step decision
/// still follows a grid barrier: it needs every tile's error.
template <class T, class = void>
struct NeighboursOf {
  static constexpr bool value = false;
};
template <class T>
struct NeighboursOf<
    T, std::void_t<decltype(std::declval<const T&>().neighbours(std::size_t{}, std::declval<unsigned*>()))>> {
  static constexpr bool value = true;
};

namespace detail {

template <class Real>
struct MersonCombine {  // plain mode: next = u + tau sum_m a_m k_m
  const MersonControl* control;
  Span<const Real> u, k1, k2, k3, k4;
  Span<Real> next;
  int stage;  // the stage just computed (0..3)
  TISSUE_HD void operator()(std::size_t i) const {
    const Real tau = static_cast<Real>(control->tau);
    Real s;
    switch (stage) {
      case 0:
        s = k1[i] / Real(3);
        break;
      case 1:
        s = (k1[i] + k2[i]) / Real(6);
        break;
      case 2:
        s = (k1[i] + Real(3) * k3[i]) / Real(8);
        break;
      default:
        s = k1[i] / Real(2) - Real(1.5) * k3[i] + Real(2) * k4[i];
    }
    next[i] = u[i] + tau * s;
  }
};

template <class Real>
struct MersonError {  // plain mode: per-node error term
  const MersonControl* control;
  Span<const Real> k1, k3, k4, k5;
  Span<Real> error;
  TISSUE_HD void operator()(std::size_t i) const {
    error[i] = MersonStage<Real>::error_term(static_cast<Real>(control->tau), k1[i], k3[i], k4[i], k5[i]);
  }
};

/// (27)-(29) on the reduced error e: accept or reject, advance t, propose the next tau.
TISSUE_HD inline void merson_decide(MersonControl& c, double e) {
  c.accept_now = 0;
  if (c.done) return;
  c.last_error = e;
  if (!(e < std::numeric_limits<double>::infinity())) {
    c.failure = 1;
    c.done = 1;
    return;
  }
  c.tau_used = c.tau;
  if (e < c.tolerance) {
    c.accept_now = 1;
    ++c.accepted;
    c.t = c.tau >= c.t_end - c.t ? c.t_end : c.t + c.tau;  // the clipped last step lands on t_end exactly
  } else {
    ++c.rejected;
  }
  const double proposed =
      e > 0.0 ? c.tau * 0.8 * math::pow(c.tolerance / e, 0.2) : std::numeric_limits<double>::infinity();
  // tau_free carries the step to the next call; a step clipped to t_end says little about it.
  const bool clipped = c.tau_used < c.tau_free;
  if (!(c.accept_now && clipped) || proposed > c.tau_free) c.tau_free = proposed;
  if (c.t >= c.t_end) {
    c.done = 1;
    c.tau = 0.0;
    return;
  }
  c.tau = proposed < c.t_end - c.t ? proposed : c.t_end - c.t;
  if (proposed < c.min_step) {
    c.failure = 2;
    c.done = 1;
  }
}

template <class Real>
struct MersonDecide {  // one thread: (27)-(29) on the error reduced by CUB
  MersonControl* control;
  const Real* error;
  TISSUE_HD void operator()(std::size_t) const { merson_decide(*control, static_cast<double>(*error)); }
};

/// One block: the maximum of the error terms (a tree in shared memory), then (27)-(29). For fields small
/// enough that one block reads them quickly, it replaces the CUB reduction and the one-thread kernel: one
/// launch per iteration instead of three.
template <class Real>
struct MersonReduceDecide {
  static constexpr unsigned kThreads = 1024;
  static constexpr std::size_t kMaxSize = 256 * kThreads;  ///< the largest field it is used for
  Span<const Real> error;
  MersonControl* control;
  TISSUE_HD void operator()(const exec::Block& block) const {
    Real* const m = static_cast<Real*>(block.shared());
    block.for_each(kThreads, [&](std::size_t l) {
      // error terms are >= 0 (NaN became +infinity); four loads in flight per thread
      const std::size_t n = error.size();
      Real v[4] = {Real(0), Real(0), Real(0), Real(0)};
      std::size_t i = l;
      for (; i + 3 * kThreads < n; i += 4 * kThreads)
        for (int u = 0; u < 4; ++u) v[u] = v[u] < error[i + u * kThreads] ? error[i + u * kThreads] : v[u];
      for (; i < n; i += kThreads) v[0] = v[0] < error[i] ? error[i] : v[0];
      const Real a = v[0] < v[1] ? v[1] : v[0], b = v[2] < v[3] ? v[3] : v[2];
      m[l] = a < b ? b : a;
    });
    const Real e = exec::block_max(block, m, kThreads);
    block.for_each(1, [&](std::size_t) { merson_decide(*control, static_cast<double>(e)); });
  }
};

template <class Real>
struct MersonUpdatePlain {  // u += tau (k1 + 4 k4 + k5) / 6 when accepted
  const MersonControl* control;
  Span<const Real> k1, k4, k5;
  Span<Real> u;
  TISSUE_HD void operator()(std::size_t i) const {
    if (!control->accept_now) return;
    const Real tau = static_cast<Real>(control->tau_used);
    u[i] += tau * ((k1[i] + Real(4) * k4[i] + k5[i]) / Real(6));
  }
};

template <class Real>
struct MersonUpdateFused {  // u = candidate when accepted
  const MersonControl* control;
  Span<const Real> candidate;
  Span<Real> u;
  TISSUE_HD void operator()(std::size_t i) const {
    if (control->accept_now) u[i] = candidate[i];
  }
};

/// The whole adaptive loop of RungeKuttaMerson::integrate_tiled in one cooperative launch: per
/// iteration five stage phases over all tiles, each followed by a grid barrier (stages 1-4: or by waits
/// for the neighbouring tiles, NeighboursOf), then every block reduces the per-tile error maxima and
/// takes the same step decision (27)-(29) on its own copy of the control record, so no barrier is needed
/// after it. The state and the candidate of (28) live in two buffers whose roles swap on acceptance
/// instead of copying; the caller's buffer holds the state on return. The per-tile errors alternate
/// between two halves of tile_errors by iteration: with neighbour waits a tile can write the next
/// iteration's error while a block far away still reads this one's.
template <class Real, class TileRhs>
struct MersonResident {
  TileRhs rhs;
  MersonControl* control;  ///< global record: read at the start, written back by block 0 at the end
  Span<Real> state[2];     ///< [0]: the caller's u; [1]: the spare that alternates with it
  Span<Real> k[5], odd, even;
  Span<Real> tile_errors;  ///< one error maximum per tile, twice (even and odd iterations)
  std::size_t tiles = 0;
  std::size_t rhs_bytes = 0;  ///< the tile right-hand side's scratch; the control copy and a reduction follow
  std::int64_t max_iterations = 0;

  static constexpr std::size_t kLanes = 512;  ///< partial maxima of the error reduction
  static constexpr int kTimeConstants = TimeConstantsOf<TileRhs>::value;  ///< per stage
  static constexpr bool kNeighbours = NeighboursOf<TileRhs>::value;
  /// Scratch bytes per block for a right-hand side that needs rhs_shared_bytes: its scratch, the control
  /// record, the reduction lanes, the time constants of the five stages and the neighbouring tiles.
  static std::size_t shared_bytes(std::size_t rhs_shared_bytes) {
    return control_offset(rhs_shared_bytes) + sizeof(MersonControl) + kLanes * sizeof(Real) +
           5 * kTimeConstants * sizeof(double) +
           (kNeighbours ? kMaxTileNeighbours + 1 : 0) * sizeof(unsigned);
  }
  TISSUE_HD static std::size_t control_offset(std::size_t rhs_shared_bytes) {
    constexpr std::size_t a = alignof(MersonControl) > alignof(Real) ? alignof(MersonControl) : alignof(Real);
    return (rhs_shared_bytes + a - 1) / a * a;
  }

  TISSUE_HD void operator()(const exec::Block& block, const exec::Grid& grid) const {
    auto* const scratch = static_cast<unsigned char*>(block.shared());
    auto* const local = reinterpret_cast<MersonControl*>(scratch + control_offset(rhs_bytes));
    Real* const lanes = reinterpret_cast<Real*>(local + 1);
    // after the lanes, whose size is a multiple of 8 bytes
    double* const constants = reinterpret_cast<double*>(lanes + kLanes);
    // the tiles this block's tile waits for, and their count
    unsigned* const neighbours = reinterpret_cast<unsigned*>(constants + 5 * kTimeConstants);
    // one tile per block (cooperative_for launches at most `tiles` blocks)
    const bool one_tile = tiles <= grid.blocks();
    const auto prepare = [&] {  // the time constants of this iteration's five stages
      if constexpr (kTimeConstants > 0) {
        block.for_each(5, [&](std::size_t s) {
          MersonStage<Real> at;
          at.control = local;
          at.stage = static_cast<int>(s);
          rhs.time_constants(at.time(), constants + s * kTimeConstants);
        });
        block.sync();
      }
    };
    block.for_each(1, [&](std::size_t) {
      *local = *control;
      if constexpr (kNeighbours) {
        if (one_tile) neighbours[kMaxTileNeighbours] = rhs.neighbours(block.index(), neighbours);
      }
    });
    block.sync();
    prepare();
    int current = 0;  // which of state[] holds u; every thread of every block takes the same decisions
    for (std::int64_t iteration = 0; iteration < max_iterations && !local->done; ++iteration) {
      MersonStage<Real> stage;
      stage.control = local;
      stage.fused = true;
      stage.block_errors = true;
      stage.u = Span<const Real>(state[current]);
      for (int s = 0; s < 5; ++s) stage.k[s] = k[s];
      stage.candidate = state[1 - current];
      stage.error = tile_errors.subspan(static_cast<std::size_t>(iteration % 2) * tiles, tiles);
      for (int s = 0; s < 5; ++s) {
        stage.stage = s;
        stage.next = (s + 1) % 2 ? odd : even;
        if constexpr (kTimeConstants > 0) stage.time_constants = constants + s * kTimeConstants;
        const Span<const Real> arg = s == 0 ? stage.u : Span<const Real>(s % 2 ? odd : even);
        for (std::size_t tile = block.index(); tile < tiles; tile += grid.blocks()) {
          rhs(exec::Block(tile, scratch), arg, stage);
          // the next tile reuses the scratch (the grid barrier begins with a block barrier)
          if (tile + grid.blocks() < tiles) block.sync();
        }
        stage.prefetched = false;
        if constexpr (kNeighbours || PrefetchOf<TileRhs, Real>::value) {
          // stages 2-5 with one tile per block: wait for the neighbouring tiles only (or at the grid
          // barrier in two halves), loading the next stage's own-node inputs in between; not across
          // iterations: the next step's state waits for the step decision
          if (s < 4 && one_tile) {
            [[maybe_unused]] const auto epoch = static_cast<unsigned>(4 * iteration + s + 1);  // 1, 2, ...
            [[maybe_unused]] unsigned ticket = 0;
            if constexpr (kNeighbours)
              grid.signal(epoch);
            else
              ticket = grid.arrive();
            if constexpr (PrefetchOf<TileRhs, Real>::value) {
              MersonStage<Real> ahead = stage;
              ahead.stage = s + 1;
              if constexpr (kTimeConstants > 0) ahead.time_constants = constants + (s + 1) * kTimeConstants;
              rhs.prefetch(exec::Block(block.index(), scratch), ahead);
              stage.prefetched = true;
            }
            if constexpr (kNeighbours)
              grid.wait_for(neighbours, neighbours[kMaxTileNeighbours], epoch);
            else
              grid.wait(ticket);
            continue;
          }
        }
        grid.sync();
      }
      // every tile's maximum requested at once (a serial loop would wait a load latency per tile)
      const std::size_t width = tiles < kLanes ? tiles : kLanes;
      block.for_each(width, [&](std::size_t l) {  // error terms are >= 0 (NaN became +infinity)
        Real m = Real(0);
        for (std::size_t t = l; t < tiles; t += width) m = m < stage.error[t] ? stage.error[t] : m;
        lanes[l] = m;
      });
      const Real e = exec::block_max(block, lanes, width);
      block.for_each(1, [&](std::size_t) { merson_decide(*local, static_cast<double>(e)); });
      block.sync();
      if (local->accept_now) current = 1 - current;
      prepare();
    }
    if (block.index() == 0) block.for_each(1, [&](std::size_t) { *control = *local; });
    if (current == 1) {  // the caller's buffer holds a stale state: copy, a slice per block
      const std::size_t n = state[0].size(), slice = (n + grid.blocks() - 1) / grid.blocks();
      const std::size_t begin = block.index() * slice, end = begin + slice < n ? begin + slice : n;
      if (begin < end)
        block.for_each(end - begin, [&](std::size_t l) { state[0][begin + l] = state[1][begin + l]; });
    }
  }
};

}  // namespace detail

/// Adaptive Runge-Kutta-Merson integrator (Algorithm 4.1 of Oberhuber et al. 2011) over a field state of
/// n values. Workspace: 7 arrays of n values (k1..k5 and two for the stage arguments and the error
/// terms), kept between calls.
template <class Real>
class RungeKuttaMerson {
 public:
  /// @throws InputError for tolerance <= 0 or a negative initial/min step.
  explicit RungeKuttaMerson(MersonSettings settings = {}) : settings_(settings) {
    if (!(settings_.tolerance > 0.0))
      throw InputError("Runge-Kutta-Merson: tolerance must be > 0 (got " +
                       std::to_string(settings_.tolerance) + ")");
    if (settings_.initial_step < 0.0 || settings_.min_step < 0.0)
      throw InputError("Runge-Kutta-Merson: initial_step and min_step must be >= 0");
    control_.resize(1);
    error_max_.resize(1);
  }

  const MersonSettings& settings() const { return settings_; }

  /// Integrates u (n values, in place) from t0 to t1 >= t0, ending exactly at t1. The first step tried
  /// is the last step proposed by the previous call (or settings().initial_step).
  /// @throws InputError for t1 < t0; NumericalError for a non-finite error estimate (NaN/Inf in u or f)
  /// or a step below the floor, naming the time reached.
  template <class Rhs>
  MersonStats integrate(Span<Real> u, double t0, double t1, Rhs&& rhs) {
    MersonControl c;
    if (!begin(u.size(), t0, t1, c)) return finish(c);

    // Batches between looks at the control record: 1 on the CPU (looking is free); on the GPU about half
    // the iterations still expected, so that few no-op iterations are queued past t_end, replayed as a
    // recorded graph of kRecorded iterations (one launch instead of a dozen per iteration).
    const bool device = exec::backend() != exec::Backend::cpu;
    std::int64_t batch = 1;
    exec::Recording recording;
    for (;;) {
      if (device && batch >= kRecorded) {
        if (recording.empty())  // buffers are warm: the first batch ran unrecorded
          recording.record([&] {
            for (int b = 0; b < kRecorded; ++b) iterate(u, rhs);
          });
        for (std::int64_t b = 0; b < batch / kRecorded; ++b) recording.replay();
      } else {
        for (std::int64_t b = 0; b < batch; ++b) iterate(u, rhs);
      }
      control_.download(&c, 1);
      if (c.done) break;
      if (device) {
        const double remaining = (c.t_end - c.t) / std::max(c.tau, 1e-300);
        batch = static_cast<std::int64_t>(std::clamp(0.5 * remaining, 1.0, 256.0));
        if (batch >= kRecorded) batch -= batch % kRecorded;
      }
    }
    return finish(c);
  }

  /// integrate() for a right-hand side that works on tiles of nodes, with the whole adaptive loop in
  /// persistent cooperative launches (exec::cooperative_for) instead of about seven launches per
  /// iteration: for fields of ~10^5 values, whose stages are too short to pay for a launch each. Same
  /// arithmetic as integrate() with the fused mode and set_error_blocks(tiles), so the same results.
  ///
  /// `rhs` has a `TISSUE_HD void operator()(const exec::Block& tile, Span<const Real> arg, const
  /// MersonStage<Real>& stage) const` that computes f on the nodes of tile tile.index() (0 .. tiles - 1),
  /// calls stage.store() once for each of them, and in the last stage (stage.last()) calls
  /// stage.store_block_error(tile.index(), largest error term of the tile). tile.shared() is
  /// rhs_shared_bytes of scratch and for_each spreads over Threads threads; MinBlocksPerSM is the launch
  /// bound of the CUDA kernel (exec::cooperative_for). The tiles must partition the nodes (every node
  /// stored by exactly one tile per stage). Tiles beyond the resident blocks (resident_tiles()) are
  /// worked through one after another in each stage, which is correct but gives up the speed. Optional
  /// hooks of `rhs`: time constants computed once per block and iteration (TimeConstantsOf), a
  /// prefetch of a stage's own-node inputs during the grid barrier before it (PrefetchOf), and the tiles
  /// each tile depends on, so that stages 2-5 wait for those instead of for the whole grid (NeighboursOf;
  /// the tile must then read its argument only at nodes of those tiles and its own).
  /// @throws as integrate(); BackendError if the device cannot launch cooperatively.
  template <unsigned Threads, unsigned MinBlocksPerSM, class TileRhs>
  MersonStats integrate_tiled(Span<Real> u, double t0, double t1, std::size_t tiles,
                              std::size_t rhs_shared_bytes, const TileRhs& rhs) {
    MersonControl c;
    if (!begin(u.size(), t0, t1, c)) return finish(c);
    const std::size_t n = u.size();
    spare_.ensure(n);
    tile_errors_.ensure(2 * tiles);
    using Resident = detail::MersonResident<Real, TileRhs>;
    Resident resident{rhs,
                      control_.data(),
                      {u, spare_.span().subspan(0, n)},
                      {},
                      argument(1, n),
                      argument(2, n),
                      tile_errors_.span().subspan(0, 2 * tiles),
                      tiles,
                      rhs_shared_bytes,
                      kResidentIterations};
    for (int s = 0; s < 5; ++s) resident.k[s] = k_[s].span().subspan(0, n);
    do {  // one launch per kResidentIterations iterations; the host looks at the record in between
      exec::cooperative_for<Threads, MinBlocksPerSM>(tiles, Threads, Resident::shared_bytes(rhs_shared_bytes),
                                                     resident);
      control_.download(&c, 1);
    } while (!c.done);
    return finish(c);
  }

  /// The tiles that integrate_tiled<Threads, MinBlocksPerSM>(.., rhs_shared_bytes, TileRhs) keeps
  /// resident at once, one per block (exec::cooperative_capacity).
  template <unsigned Threads, unsigned MinBlocksPerSM, class TileRhs>
  static std::size_t resident_tiles(std::size_t rhs_shared_bytes) {
    using Resident = detail::MersonResident<Real, TileRhs>;
    return exec::cooperative_capacity<Threads, MinBlocksPerSM, Resident>(
        Threads, Resident::shared_bytes(rhs_shared_bytes));
  }

  /// Declares that the right-hand side reduces the last stage's error terms itself, into `blocks` values
  /// through MersonStage::store_block_error (fused mode only; 0: per node, the default). The step
  /// control then reduces `blocks` values instead of n.
  void set_error_blocks(std::size_t blocks) { error_blocks_ = blocks; }

  /// The step the next integrate() call starts with (0 before the first call).
  double next_step() const { return next_step_; }
  /// Sets the step the next integrate() call starts with (> 0), e.g. when restarting.
  void set_next_step(double tau) { next_step_ = tau; }

 private:
  /// Iterations per recorded graph on the GPU.
  static constexpr int kRecorded = 8;
  /// Iterations per cooperative launch of integrate_tiled (a fraction of a second at 256^2).
  static constexpr std::int64_t kResidentIterations = 4096;

  /// Checks t0 <= t1, sizes the workspace for n values and uploads the control record for a call from
  /// t0 to t1 (also left in c). @returns false if there is nothing to integrate (t1 == t0).
  /// @throws InputError for t1 < t0.
  bool begin(std::size_t n, double t0, double t1, MersonControl& c) {
    if (!(t1 >= t0))
      throw InputError("Runge-Kutta-Merson: end time " + std::to_string(t1) + " is before the start time " +
                       std::to_string(t0));
    c = MersonControl{};
    c.t = t0;
    c.t_end = t1;
    c.tau_free = next_step_;
    if (t1 == t0) return false;
    for (auto& b : k_) b.ensure(n);
    odd_.ensure(n);
    even_.ensure(n);
    const double first = next_step_ > 0.0               ? next_step_
                         : settings_.initial_step > 0.0 ? settings_.initial_step
                                                        : (t1 - t0) / 100.0;
    c.tau = std::min(first, t1 - t0);
    c.tau_free = first;
    c.tolerance = settings_.tolerance;
    c.min_step = settings_.min_step > 0.0 ? settings_.min_step : 1e-14 * (t1 - t0);
    control_.upload(&c, 1);
    return true;
  }

  /// The counts of a finished call from its control record; carries its last proposed step to the next.
  /// @throws NumericalError if the record says the run failed.
  MersonStats finish(const MersonControl& c) {
    MersonStats stats;
    stats.accepted = c.accepted;
    stats.rejected = c.rejected;
    stats.iterations = c.accepted + c.rejected;
    stats.last_step = c.tau_free;
    stats.time = c.t;
    if (c.tau_free > 0.0) next_step_ = c.tau_free;
    if (c.failure == 1)
      throw NumericalError(
          "Runge-Kutta-Merson: the error estimate is NaN or infinite at t = " + std::to_string(c.t) +
          " (step " + std::to_string(c.tau_used) + "): the state or its right-hand side is no longer finite");
    if (c.failure == 2)
      throw NumericalError("Runge-Kutta-Merson: the adaptive step fell to " + std::to_string(c.tau_free) +
                           " at t = " + std::to_string(c.t) + ", below its floor " +
                           std::to_string(c.min_step) + " (tolerance " + std::to_string(c.tolerance) +
                           " too tight, or the problem blows up)");
    return stats;
  }

  template <class Rhs>
  void iterate(Span<Real> u, Rhs& rhs) {
    const std::size_t n = u.size();
    const MersonControl* control = control_.data();
    MersonStage<Real> stage;
    stage.control = control;
    stage.fused = settings_.fused;
    stage.u = Span<const Real>(u);
    for (int s = 0; s < 5; ++s) stage.k[s] = k_[s].span().subspan(0, n);
    stage.candidate = stage.k[1];  // k2 is not read after stage 2
    stage.error = argument(5, n);  // free during stage 4, which reads argument(4)
    stage.block_errors = settings_.fused && error_blocks_ > 0 && error_blocks_ <= n;
    const std::size_t errors = stage.block_errors ? error_blocks_ : n;
    const Span<const Real> uc = u, k1 = stage.k[0], k2 = stage.k[1], k3 = stage.k[2], k4 = stage.k[3],
                           k5 = stage.k[4];
    for (int s = 0; s < 5; ++s) {
      stage.stage = s;
      stage.next = argument(s + 1, n);
      rhs(s == 0 ? uc : Span<const Real>(argument(s, n)), stage);
      if (!settings_.fused && s < 4)
        exec::parallel_for(n, detail::MersonCombine<Real>{control, uc, k1, k2, k3, k4, stage.next, s});
    }
    if (!settings_.fused)
      exec::parallel_for(n, detail::MersonError<Real>{control, k1, k3, k4, k5, stage.error});
    using ReduceDecide = detail::MersonReduceDecide<Real>;
    const Span<const Real> error_terms = Span<const Real>(stage.error).subspan(0, errors);
    if (errors <= ReduceDecide::kMaxSize) {
      exec::block_for(1, ReduceDecide::kThreads, ReduceDecide::kThreads * sizeof(Real),
                      ReduceDecide{error_terms, control_.data()});
    } else {
      exec::max_into(error_terms, error_max_.span(), temp_);
      exec::parallel_for(1, detail::MersonDecide<Real>{control_.data(), error_max_.data()});
    }
    if (settings_.fused)
      exec::parallel_for(n, detail::MersonUpdateFused<Real>{control, Span<const Real>(stage.candidate), u});
    else
      exec::parallel_for(n, detail::MersonUpdatePlain<Real>{control, k1, k4, k5, u});
  }

  /// Argument of stage s (1..4) and, as s = 5, the error terms: two buffers used alternately, since a
  /// right-hand side reads its argument at neighbouring nodes while storing the next one.
  Span<Real> argument(int s, std::size_t n) { return (s % 2 ? odd_ : even_).span().subspan(0, n); }

  MersonSettings settings_;
  DeviceBuffer<Real> k_[5], odd_, even_;
  DeviceBuffer<Real> spare_, tile_errors_;  ///< integrate_tiled: the state's alternate, per-tile errors
  DeviceBuffer<MersonControl> control_;
  DeviceBuffer<Real> error_max_;
  DeviceBuffer<unsigned char> temp_;
  std::size_t error_blocks_ = 0;
  double next_step_ = 0.0;
};

}  // namespace tissue::integrate
