#pragma once
/// @file conjugate_gradient.hpp
/// Preconditioned conjugate gradients (Saad, "Iterative methods for sparse linear systems", 2nd ed.,
/// Algorithm 9.1) whose iterations stay on the device: two fused block kernels per iteration, the scalars
/// (alpha, beta, the residual) kept in device memory, the stopping rule tested by the kernels themselves,
/// and on the CUDA backend the iterations replayed as a recorded graph (exec::Recording). The host looks at
/// the state once per batch of iterations instead of three times per iteration. The preconditioner is the
/// diagonal (Jacobi, fused into the kernels) or any SPD linear map given to solve(), e.g. a multigrid
/// cycle (aggregation_multigrid.hpp), whose kernels then follow the update kernel, the last of them also
/// writing the partial sums of r.z.
///
/// Per iteration k (p, z, r, x as in Algorithm 9.1, M the diagonal of A or the map given):
///
///   direction kernel: every block reduces the per-block partial sums r.r, r.z and x.x of the last
///     update, stops by CgSettings' rule or at k = max_iterations; else p = z + beta p (beta = r.z / the
///     previous r.z; p is double-buffered, so the product reads the old p at neighbours while writing
///     the new one), q = A p and the partial sums of p.q;
///   update kernel: every block reduces p.q, alpha = r.z / p.q, x += alpha p, r -= alpha q, z = M^-1 r
///     and the partial sums of r.r, r.z and x.x.
///
/// Every block reduces the same partial sums in the same order, so all blocks take the same decision, and
/// results are deterministic for a backend and a size. Two control records alternate between the kernels
/// (each kernel reads the one the other writes), so no block reads a value another block of the same launch
/// writes.
///
/// The matrix is an Operator: a symmetric positive (semi-)definite matrix whose unknowns come in items
/// of kItemUnknowns consecutive unknowns sharing their pattern entries (a vertex's quaternion, or a
/// single unknown), each item's product computed by kLanes lanes (exec::Block::for_each_group):
///
/// - `static constexpr int kItemUnknowns` (U) and `kLanes` (G, a power of two; 128 / U * G threads per
///   block must be whole warps, at most 1024);
/// - `TISSUE_HD std::size_t size() const`: unknowns, a multiple of U;
/// - `template <class X> TISSUE_HD double row(std::size_t j, const X& x) const`: (A x)_j, x(k) reading x_k;
/// - `template <class X> TISSUE_HD void item_partial(std::size_t item, int lane, const X& x, double* y)
///   const`: adds to y[0 .. U) the lane's share of (A x) at the item's unknowns, i.e. of its pattern
///   entries e = first + lane, first + lane + G, ...; x(k, e) reads x_k, e the entry whose column k is;
/// - `TISSUE_HD double diagonal(std::size_t j) const`: A_jj.
///
/// (Several lanes per item rather than one thread per row: a row's gathers (column, then the vector
/// there) are then in flight together instead of one entry after another; the products are
/// latency-bound chains of dependent loads on meshes of tens of thousands of vertices.)
/// Operators must be trivially copyable (spans and scalars): a recording is reused while the operator's
/// bytes and the vectors are the same, so values updated in place need no new recording.
/// CsrOperator below is the plain CSR case. A positive semi-definite A (a Laplacian with its constant
/// null space) converges when b is in its range (Kaasschieter 1988).
///
/// Translation units that instantiate solve() launch kernels: compile them as CUDA in CUDA builds.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/block_for.hpp"
#include "engine/exec/device_buffer.hpp"
#include "engine/exec/error.hpp"
#include "engine/exec/math.hpp"
#include "engine/exec/parallel_for.hpp"
#include "engine/exec/recording.hpp"
#include "engine/linalg/solver_blocks.hpp"
#include "engine/linalg/sparse_matrix.hpp"

namespace tissue::linalg {

/// Stopping rule: ||r||_2 <= relative_tolerance ||b||_2 (r = b - A x), or max_iterations. With a
/// matrix_norm > 0 (an upper bound of ||A||_2, e.g. the largest absolute row sum of a symmetric A), the
/// rule is the normwise backward error instead (Rigal & Gaches 1967; Barrett et al., "Templates for the
/// solution of linear systems", §4.2.1): ||r|| <= relative_tolerance (matrix_norm ||x|| + ||b||), i.e. x
/// solves a system whose matrix and right-hand side differ from A and b by that relative amount. Unlike the
/// relative residual it stays attainable in floating point when A is nearly singular and ||x|| >> ||b||
/// (inverse iteration), where rounding alone leaves a residual of about 1e-16 ||A|| ||x||.
struct CgSettings {
  double relative_tolerance = 1e-10;
  int max_iterations = 20000;
  double matrix_norm = 0.0;
};

/// What a solve did.
struct CgResult {
  int iterations = 0;
  double relative_residual = 0.0;  ///< ||r|| / ||b|| of the recursively updated residual (0 for b = 0)
  double backward_error = 0.0;     ///< ||r|| / (matrix_norm ||x|| + ||b||) (the relative residual without
                                   ///< a matrix_norm)
  bool converged = false;
};

/// The state of a solve in device memory.
struct CgControl {
  double rz = 0.0;  ///< r . z of the iteration (the direction kernel's record) or of the previous one
  double rr = 0.0;  ///< r . r
  double xx = 0.0;  ///< x . x
  double tolerance = 0.0, matrix_norm = 0.0, b_norm = 0.0;  ///< the stopping rule (CgSettings)
  std::int32_t iterations = 0;
  std::int32_t max_iterations = 0;
  std::int32_t done = 0;
  std::int32_t failure = 0;  ///< 1: p . A p <= 0 or not finite (A not positive definite on the Krylov space)
};

/// A scalar CSR matrix applied to Width vectors at once, stored one after another (vector c at c * rows):
/// the same matrix for several right-hand sides in one solve (a block-diagonal SPD system). The matrix
/// must outlive the operator.
template <int Width>
struct CsrOperator {
  static constexpr int kValuesPerEntry = 1;  ///< (aggregation_multigrid.hpp)
  static constexpr int kItemUnknowns = 1;    ///< every unknown is an item of its own
  static constexpr int kLanes = 2;  ///< lanes per row: faster than 4 or 8 on the bunny's Laplacian (about 7
                                    ///< entries per row; BENCHMARKS.md)
  std::size_t rows = 0;
  Span<const std::int32_t> offsets, columns;
  Span<const double> values;

  CsrOperator() = default;
  explicit CsrOperator(const CsrMatrix& a)
      : rows(static_cast<std::size_t>(a.rows)),
        offsets(a.offsets.span()),
        columns(a.columns.span()),
        values(a.values.span()) {}
  TISSUE_HD std::size_t size() const { return Width * rows; }
  template <class X>
  TISSUE_HD double row(std::size_t j, const X& x) const {
    const std::size_t i = node_of(j), base = j - i;
    double y = 0.0;
    for (std::int32_t k = offsets[i]; k < offsets[i + 1]; ++k)
      y += values[static_cast<std::size_t>(k)] *
           x(base + static_cast<std::size_t>(columns[static_cast<std::size_t>(k)]));
    return y;
  }
  template <class X>
  TISSUE_HD void item_partial(std::size_t j, int lane, const X& x, double* y) const {
    const std::size_t i = node_of(j), base = j - i;
    for (std::int32_t k = offsets[i] + lane; k < offsets[i + 1]; k += kLanes)
      y[0] += values[static_cast<std::size_t>(k)] *
              x(base + static_cast<std::size_t>(columns[static_cast<std::size_t>(k)]), k);
  }
  TISSUE_HD double diagonal(std::size_t j) const {
    const std::size_t i = node_of(j);
    double a = 0.0;
    for (std::int32_t k = offsets[i]; k < offsets[i + 1]; ++k)
      if (static_cast<std::size_t>(columns[static_cast<std::size_t>(k)]) == i)
        a = values[static_cast<std::size_t>(k)];
    return a;
  }

  // for aggregation multigrid: the nodes are the matrix rows, each with one unknown per vector. 32-bit
  // division (indices are int32): a 64-bit one is a long instruction sequence on the GPU, and the
  // multigrid kernels divide at every neighbour they read
  TISSUE_HD std::size_t nodes() const { return rows; }
  TISSUE_HD std::size_t node_of(std::size_t j) const {
    return static_cast<std::uint32_t>(j) % static_cast<std::uint32_t>(rows);
  }
  TISSUE_HD std::size_t slot_of(std::size_t j) const {
    return static_cast<std::uint32_t>(j) / static_cast<std::uint32_t>(rows);
  }
  TISSUE_HD std::size_t unknown(std::size_t node, std::size_t slot) const { return slot * rows + node; }
  static constexpr int kNodeUnknowns = 1;  ///< the vectors are independent systems
  TISSUE_HD static double block_entry(const double* v, int, int) { return v[0]; }
  TISSUE_HD double block_value(std::size_t e, int, int) const { return values[e]; }
  template <class B>
  TISSUE_HD static double entry_value(const B& block, int) {
    return block(0, 0);
  }
  TISSUE_HD double absolute_row_sum(std::size_t j) const {
    const std::size_t i = node_of(j);
    double s = 0.0;
    for (std::int32_t k = offsets[i]; k < offsets[i + 1]; ++k)
      s += math::abs(values[static_cast<std::size_t>(k)]);
    return s;
  }
  TISSUE_HD CsrOperator on_pattern(std::size_t nodes, Span<const std::int32_t> o, Span<const std::int32_t> c,
                                   Span<const double> v) const {
    CsrOperator a;
    a.rows = nodes;
    a.offsets = o;
    a.columns = c;
    a.values = v;
    return a;
  }
};

namespace detail {

using linalg::VectorRead;
/// Reads z + beta p (the new direction, computed where the product needs it).
struct DirectionRead {
  const double* z;
  const double* p;
  double beta;
  TISSUE_HD double operator()(std::size_t j) const { return beta == 0.0 ? z[j] : z[j] + beta * p[j]; }
  TISSUE_HD double operator()(std::size_t j, std::int32_t) const { return (*this)(j); }
};

/// Sums K values per slot l in [0, kSolverBlockUnknowns) over the block (shared: K kSolverBlockUnknowns
/// doubles); every thread gets the totals. f(l, s) adds slot l's contributions into s[0 .. K).
template <int K, class F>
TISSUE_HD void block_sums(const exec::Block& block, double* shared, const F& f, double* totals) {
  block.for_each(kSolverBlockUnknowns, [&](std::size_t l) {
    double s[K] = {};
    f(l, s);
    for (int k = 0; k < K; ++k) shared[k * kSolverBlockUnknowns + l] = s[k];
  });
  block_slot_sums<K>(block, shared, totals);
}

/// Slot l's share of the per-block partial sums (K per block; blocks b = l, l + kSolverBlockUnknowns, ...)
/// into s[0 .. K). Four blocks' loads are issued before their sums, so that they are in flight together:
/// each slot reads about blocks / kSolverBlockUnknowns partials, and one after another they were a chain
/// of round trips to L2 at the start of every solver kernel.
template <int K>
TISSUE_HD void strided_partial_sums(Span<const double> partials, std::size_t blocks, std::size_t l,
                                    double* s) {
  constexpr std::size_t kWidth = 4;
  for (std::size_t b = l; b < blocks; b += kWidth * kSolverBlockUnknowns) {
    double v[kWidth][K];
    for (std::size_t u = 0; u < kWidth; ++u)
      for (int k = 0; k < K; ++k) {
        const std::size_t c = b + u * kSolverBlockUnknowns;
        v[u][k] = c < blocks ? partials[K * c + static_cast<std::size_t>(k)] : 0.0;
      }
    for (std::size_t u = 0; u < kWidth; ++u)
      for (int k = 0; k < K; ++k) s[k] += v[u][k];
  }
}

/// Whether the stopping rule holds (see CgSettings).
TISSUE_HD inline bool cg_converged(const CgControl& c) {
  const double bound = c.tolerance * (c.matrix_norm * math::sqrt(c.xx) + c.b_norm);
  return c.rr <= bound * bound;
}

/// y = A x, one row per index (the product outside the solver, e.g. a Rayleigh quotient).
template <class Operator>
struct OperatorProduct {
  Operator a;
  Span<const double> x;
  Span<double> y;
  TISSUE_HD void operator()(std::size_t j) const { y[j] = a.row(j, VectorRead{x.data()}); }
};

/// r = b - A x, z = M^-1 r (storing M^-1), partial sums of r.r and r.z per block.
template <class Operator>
struct CgStart {
  Operator a;
  Span<const double> b, x;
  Span<double> r, z, inverse_diagonal, partials;
  TISSUE_HD void operator()(const exec::Block& block) const {
    double t[3];
    block_sums<3>(
        block, static_cast<double*>(block.shared()),
        [&](std::size_t l, double* s) {
          const std::size_t j = block.index() * kSolverBlockUnknowns + l;
          if (j >= a.size()) return;
          const double d = a.diagonal(j);
          const double m = d > 0.0 ? 1.0 / d : 0.0;  // 0: the first p . A p reports the breakdown
          const double rj = b[j] - a.row(j, VectorRead{x.data()});
          inverse_diagonal[j] = m;
          r[j] = rj;
          z[j] = m * rj;
          s[0] += rj * rj;
          s[1] += m * rj * rj;
          s[2] += x[j] * x[j];
        },
        t);
    block.for_each(3, [&](std::size_t k) { partials[3 * block.index() + k] = t[k]; });
  }
};

/// The direction kernel (see the file comment).
template <class Operator>
struct CgDirection {
  Operator a;
  const CgControl* in;                 ///< written by the update kernel
  CgControl* out;                      ///< read by the update kernel
  Span<const double> update_partials;  ///< 3 per block: r.r, r.z, x.x
  Span<const double> z, p_old;
  Span<double> p, q, direction_partials;  ///< direction_partials: p . q per block
  TISSUE_HD void operator()(const exec::Block& block) const {
    double* shared = static_cast<double*>(block.shared());
    CgControl c = *in;
    const std::size_t blocks = update_partials.size() / 3;
    double t[3] = {0.0, 0.0, 0.0};  // r.r, r.z, x.x
    if (!c.done)
      block_sums<3>(
          block, shared,
          [&](std::size_t l, double* s) { strided_partial_sums<3>(update_partials, blocks, l, s); }, t);
    const double beta = c.done || c.iterations == 0 ? 0.0 : t[1] / c.rz;
    if (!c.done) {
      c.rr = t[0];
      c.rz = t[1];
      c.xx = t[2];
      c.done = cg_converged(c) || c.iterations >= c.max_iterations;
    }
    if (block.index() == 0) block.for_each(1, [&](std::size_t) { *out = c; });
    if (c.done) return;
    constexpr int U = Operator::kItemUnknowns;
    const std::size_t first = block.index() * kSolverBlockUnknowns;
    const std::size_t count = math::min(kSolverBlockUnknowns, a.size() - first);
    const DirectionRead direction{z.data(), p_old.data(), beta};
    block.for_each(kSolverBlockUnknowns - count, [&](std::size_t l) { shared[count + l] = 0.0; });
    block.template for_each_group<Operator::kLanes, U>(
        count / U,
        [&](std::size_t i, int lane, double* s) { a.item_partial(first / U + i, lane, direction, s); },
        [&](std::size_t i, int lane, const double* s) {
          if (lane != 0) return;
          for (int u = 0; u < U; ++u) {
            const std::size_t l = i * U + static_cast<std::size_t>(u), j = first + l;
            const double pj = direction(j);
            p[j] = pj;
            q[j] = s[u];
            shared[l] = pj * s[u];
          }
        });
    double pq = 0.0;
    block_slot_sums<1>(block, shared, &pq);
    block.for_each(1, [&](std::size_t) { direction_partials[block.index()] = pq; });
  }
};

/// The update kernel (see the file comment).
template <class Operator>
struct CgUpdate {
  Operator a;
  const CgControl* in;  ///< written by the direction kernel
  CgControl* out;       ///< read by the next direction kernel
  Span<const double> direction_partials, p, q, inverse_diagonal;
  Span<double> x, r, z, update_partials;
  TISSUE_HD void operator()(const exec::Block& block) const {
    double* shared = static_cast<double*>(block.shared());
    CgControl c = *in;
    if (c.done) {
      if (block.index() == 0) block.for_each(1, [&](std::size_t) { *out = c; });
      return;
    }
    double pq = 0.0;
    block_sums<1>(
        block, shared,
        [&](std::size_t l, double* s) {
          strided_partial_sums<1>(direction_partials, direction_partials.size(), l, s);
        },
        &pq);
    if (!(pq > 0.0) || !(pq < 1e300)) {  // also NaN
      c.done = 1;
      c.failure = 1;
      if (block.index() == 0) block.for_each(1, [&](std::size_t) { *out = c; });
      return;
    }
    const double alpha = c.rz / pq;
    double t[3];
    block_sums<3>(
        block, shared,
        [&](std::size_t l, double* s) {
          const std::size_t j = block.index() * kSolverBlockUnknowns + l;
          if (j >= a.size()) return;
          const double xj = x[j] + alpha * p[j];
          const double rj = r[j] - alpha * q[j];
          const double zj = inverse_diagonal[j] * rj;
          x[j] = xj;
          r[j] = rj;
          z[j] = zj;
          s[0] += rj * rj;
          s[1] += rj * zj;
          s[2] += xj * xj;
        },
        t);
    block.for_each(3, [&](std::size_t k) { update_partials[3 * block.index() + k] = t[k]; });
    if (block.index() == 0)
      block.for_each(1, [&](std::size_t) {
        c.iterations += 1;
        *out = c;  // rz: this iteration's, the next beta's denominator
      });
  }
};

/// The preconditioner of a solve without one: Jacobi, fused into the solver's kernels.
struct JacobiOnly {
  template <class Operator>
  void apply(const Operator&, Span<const double>, Span<double>, const std::int32_t*, BlockPartials) {}
  std::size_t generation() const { return 0; }
};

}  // namespace detail

/// y = A x for an Operator (asynchronous on the CUDA backend). x and y must not overlap.
template <class Operator>
void multiply(const Operator& a, Span<const double> x, Span<double> y) {
  exec::parallel_for(a.size(), detail::OperatorProduct<Operator>{a, x, y});
}

/// A solver that keeps its work vectors and its recorded iterations across calls (no allocation and no
/// new recording once warm, while the operator and the vectors stay the same).
template <class Operator>
class ConjugateGradient {
  static_assert(std::is_trivially_copyable<Operator>::value, "operators are spans and scalars");

 public:
  /// Solves A x = b starting from the x given (a warm start). b and x have a.size() entries on the
  /// active backend. A must be symmetric positive definite with a positive diagonal, or positive
  /// semi-definite with b in its range. Preconditioner: Jacobi without `m`; with it, z = M^-1 r is
  /// m->apply(a, r, z, stop, rz) (an SPD linear map, e.g. one cycle of AggregationMultigrid updated for
  /// a's values, whose kernels skip their work while the device flag `stop` is set, and which writes the
  /// partial sums of r . z per solver block where rz says). Returns unconverged
  /// results instead of throwing: the caller decides. @throws NumericalError when a breakdown
  /// (p . A p <= 0 or NaN) shows A is not positive definite.
  template <class Preconditioner = detail::JacobiOnly>
  CgResult solve(const Operator& a, Span<const double> b, Span<double> x, const CgSettings& settings,
                 Preconditioner* m = nullptr) {
    const std::size_t n = a.size();
    const std::size_t blocks = (n + kSolverBlockUnknowns - 1) / kSolverBlockUnknowns;
    for (auto* v : {&r_, &z_, &p_[0], &p_[1], &q_, &inverse_diagonal_}) v->ensure(n);
    update_partials_.ensure(3 * blocks);
    direction_partials_.ensure(blocks);
    control_.ensure(2);
    CgResult result;
    const double b_norm = std::sqrt(dot(b, b, q_));
    if (b_norm == 0.0) {
      exec::fill(x, 0.0);
      result.converged = true;
      return result;
    }
    CgControl start;
    start.tolerance = settings.relative_tolerance;
    start.matrix_norm = settings.matrix_norm;
    start.b_norm = b_norm;
    start.max_iterations = settings.max_iterations;
    control_.upload(&start, 1, 1);  // the update kernel's record, which the first direction kernel reads
    exec::block_for(blocks, kThreads, 3 * kSolverBlockUnknowns * sizeof(double),
                    detail::CgStart<Operator>{a, b, x, span(r_, n), span(z_, n), span(inverse_diagonal_, n),
                                              span(update_partials_, 3 * blocks)});
    precondition(a, n, blocks, m);
    const std::size_t generation = m != nullptr ? m->generation() : 0;
    if (!recorded(a, x, m, generation)) {
      recording_.record([this, a, x, n, blocks, m] {
        for (int k = 0; k < kRecordedIterations; ++k) iterate(a, x, n, blocks, k % 2, m);
      });
      std::memcpy(recorded_operator_, &a, sizeof(Operator));
      recorded_x_ = x.data();
      recorded_n_ = n;
      recorded_preconditioner_ = m;
      recorded_generation_ = generation;
    }
    // batches between looks at the state: about half of the iterations still expected from the rate so far
    CgControl c;
    int batch = 1;
    double first_rr = -1.0;
    for (;;) {
      for (int k = 0; k < batch; ++k) recording_.replay();
      control_.download(&c, 1, 1);
      if (c.done) break;
      if (first_rr < 0.0) {
        first_rr = c.rr;
        continue;
      }
      const double rate = std::log(c.rr / first_rr) / std::max(c.iterations - kRecordedIterations, 1);
      const double bound = c.tolerance * (c.matrix_norm * std::sqrt(c.xx) + c.b_norm);
      const double remaining = rate < 0.0 ? std::log(bound * bound / c.rr) / rate : 0.0;
      batch = static_cast<int>(std::clamp(0.5 * remaining / kRecordedIterations, 1.0, 64.0));
    }
    if (c.failure)
      throw NumericalError("conjugate gradients broke down (p . A p <= 0 or not finite at iteration " +
                           std::to_string(c.iterations) + "): the matrix is not positive definite");
    result.iterations = c.iterations;
    result.relative_residual = std::sqrt(c.rr) / b_norm;
    result.backward_error = std::sqrt(c.rr) / (c.matrix_norm * std::sqrt(c.xx) + b_norm);
    result.converged = detail::cg_converged(c);
    return result;
  }

 private:
  /// Iterations per recorded sequence (even: the two direction buffers alternate).
  static constexpr int kRecordedIterations = 16;
  static constexpr unsigned kThreads = solver_block_threads<Operator>();

  static Span<double> span(DeviceBuffer<double>& v, std::size_t n) { return Span<double>(v.data(), n); }

  bool recorded(const Operator& a, Span<double> x, const void* m, std::size_t generation) const {
    return !recording_.empty() && recorded_x_ == x.data() && recorded_n_ == x.size() &&
           recorded_preconditioner_ == m && recorded_generation_ == generation &&
           std::memcmp(recorded_operator_, &a, sizeof(Operator)) == 0;
  }

  /// With a preconditioner: z = M^-1 r and the partial sums of r . z (written by the preconditioner's
  /// last kernel into update_partials_[3 b + 1]), after the start or update kernel (whose record,
  /// control_[1], says whether the solve has stopped).
  template <class Preconditioner>
  void precondition(const Operator& a, std::size_t n, std::size_t blocks, Preconditioner* m) {
    if (m == nullptr) return;
    const std::int32_t* stop = &control_.data()[1].done;
    m->apply(a, span(r_, n), span(z_, n), stop, BlockPartials{span(update_partials_, 3 * blocks), 3, 1});
  }

  template <class Preconditioner>
  void iterate(const Operator& a, Span<double> x, std::size_t n, std::size_t blocks, int parity,
               Preconditioner* m) {
    CgControl* control = control_.data();
    const std::size_t shared = 3 * kSolverBlockUnknowns * sizeof(double);
    const Span<double> p_new = span(p_[1 - parity], n), p_old = span(p_[parity], n);
    exec::block_for(blocks, kThreads, shared,
                    detail::CgDirection<Operator>{a, control + 1, control, span(update_partials_, 3 * blocks),
                                                  span(z_, n), p_old, p_new, span(q_, n),
                                                  span(direction_partials_, blocks)});
    exec::block_for(blocks, kThreads, shared,
                    detail::CgUpdate<Operator>{a, control, control + 1, span(direction_partials_, blocks),
                                               p_new, span(q_, n), span(inverse_diagonal_, n), x, span(r_, n),
                                               span(z_, n), span(update_partials_, 3 * blocks)});
    precondition(a, n, blocks, m);
  }

  DeviceBuffer<double> r_, z_, p_[2], q_, inverse_diagonal_, update_partials_, direction_partials_;
  DeviceBuffer<CgControl> control_;
  exec::Recording recording_;
  alignas(Operator) unsigned char recorded_operator_[sizeof(Operator)] = {};
  const double* recorded_x_ = nullptr;
  std::size_t recorded_n_ = 0;
  const void* recorded_preconditioner_ = nullptr;
  std::size_t recorded_generation_ = 0;
};

}  // namespace tissue::linalg
