#pragma once
/// @file aggregation_multigrid.hpp
/// Unsmoothed aggregation multigrid, the preconditioner of conjugate gradients for Laplacian-like
/// operators on meshes (cotangent Laplacians, the quaternionic Dirac operator of conformal Willmore flow),
/// whose Jacobi-preconditioned CG needs thousands of iterations because their condition grows like h^-2.
///
/// Aggregates: the greedy aggregation of Vanek, Mandel & Brezina ("Algebraic multigrid by smoothed
/// aggregation for second and fourth order elliptic problems", Computing 56, 1996, §3: a node whose
/// neighbours are all free roots an aggregate of itself and them; the nodes left over join a neighbouring
/// aggregate), applied to the sparsity graph alone and repeated on the aggregate graph down to a few dozen
/// nodes. The graph is a mesh's, fixed while values change, so the hierarchy is built once on the host
/// (aggregation_hierarchy) and only the coarse values are recomputed (update()).
///
/// Coarse operators: A_{l+1} = P^T A_l P with P the piecewise-constant prolongation of the aggregates
/// (unsmoothed aggregation; Braess, "Towards algebraic multigrid for elliptic problems of second order",
/// Computing 55, 1995), so a coarse entry is the sum of the fine entries between two aggregates: one gather
/// per coarse entry over precomputed source lists, deterministic, as in the seed's precomputed assembly.
///
/// The cycle, a symmetric V(1,1) that is a fixed linear SPD map (so plain CG applies), on every level:
///   x = W b (one Jacobi sweep from zero), r = b - A x, b_c = P^T r;
///   z_c from the next level (the coarsest: kAmgCoarsestSweeps Jacobi sweeps from zero, in one block,
///   on a copy of its operator in shared memory; or, with AmgSettings::direct_coarsest, z_c = A_c^-1 b_c
///   exactly, by a dense product with the inverse that update() computes by dense Cholesky);
///   x += alpha P z_c (alpha = AmgSettings::over_correction, by default 1.5: the over-correction that
///   compensates the piecewise-constant prolongation's too-small coarse correction, Braess 1995),
///   z = x + W (b - A x).
/// W_jj = 1 / max(a_jj / (2/3), sum_k |a_jk| / 1.8): damped Jacobi, bounded by the l1 row sum (Baker,
/// Falgout, Kolev & Yang, SIAM J. Sci. Comput. 33, 2011) so that the smoother contracts in the A-norm for
/// any SPD A (2 W^-1 - A positive definite); with alpha < 2 the cycle is then SPD (an exact coarsest solve
/// is an SPD map too). On the bunny's operators (34 834 vertices) this cuts CG iterations about 15-fold for
/// L and 7-fold for E with the sweeps on 39 nodes, and by a third more with the direct solve on 383 nodes
/// (the curvature-flow module's README).
///
/// The direct coarsest level is for operators whose low modes the aggregates represent poorly, so that the
/// few Jacobi sweeps of a small coarsest level leave them unsolved: the shifted Dirac operator of conformal
/// Willmore flow, whose smallest eigenvalue is 1e-6 of its diagonal while the Galerkin operator on 37
/// aggregates has its smallest 12 times larger. Its kernel is one dense product (D x D doubles, D the
/// coarsest level's nodes times kNodeUnknowns) where the sweeps were 8 dependent passes, and the levels
/// below it are not needed: a few hundred nodes cost one Cholesky factorization and inversion per update.
///
/// Kernels per cycle: 2 per level above the coarsest (residual with restriction, blocks of whole
/// aggregates summing their members' residuals in shared memory; correction with post-smoothing), each an
/// item of the operator per kLanes lanes (solver_blocks.hpp), the smoothed values of the neighbours
/// recomputed where a row needs them and the aggregate of every entry's column precomputed; and one for
/// the coarsest: a single block that copies its operator to shared memory for the sweeps, or, solved
/// directly, a warp per node row of the inverse, which is kept as one entry per pair of nodes (a quaternion
/// for the Dirac operator: the inverse of a quaternionic matrix is quaternionic). The finest correction
/// also sums r . z for the solver.
///
/// The operator type (conjugate_gradient.hpp's Operator) additionally provides, for multigrid:
/// - `static constexpr int kValuesPerEntry`: values per pattern entry (1; 4 for quaternions);
/// - `TISSUE_HD std::size_t nodes() const`: rows of the pattern;
/// - `TISSUE_HD std::size_t node_of(std::size_t j) const`, `slot_of(j)`: the node of unknown j and which
///   of its unknowns j is, and `unknown(node, slot)` back;
/// - `static constexpr int kNodeUnknowns` (K): how many of a node's slots its entries couple (4 for a
///   quaternion; 1 for a CSR operator on several vectors, whose slots are independent systems);
///   `TISSUE_HD static double block_entry(const double* v, int r, int c)`: the coupling of slot r of a row
///   to slot c of a column by an entry whose kValuesPerEntry values are v, r, c < K;
///   `TISSUE_HD double block_value(std::size_t e, int r, int c) const`: the same for the operator's entry
///   e; and `template <class B> TISSUE_HD static double entry_value(const B& block, int k)`: value k of
///   the entry whose K x K block is block(r, c), symmetric under a permutation of the terms it averages
///   (so that the entries of a symmetric matrix's blocks (i, j) and (j, i) stay exactly transposed). The
///   direct coarsest level assembles its dense matrix from the entries, and keeps the inverse, whose
///   blocks have the same form, as one entry per pair of nodes;
/// - `TISSUE_HD double absolute_row_sum(std::size_t j) const`: sum_k |a_jk|;
/// - items and lanes (conjugate_gradient.hpp's Operator): `kItemUnknowns`, `kLanes`, `item_partial`, the
///   unknowns of an item being unknown(node, slot + u) for u < kItemUnknowns;
/// - `TISSUE_HD Operator on_pattern(std::size_t nodes, Span<const std::int32_t> offsets,
///   Span<const std::int32_t> columns, Span<const double> values) const`: the same kind of operator on
///   another pattern, and the spans `offsets`, `columns`, `values` of its own as public members;
///
/// and its pattern (offsets over nodes, ascending columns with the diagonal, symmetric) is the graph that
/// is aggregated. Translation units that instantiate update() or apply() launch kernels: compile them as
/// CUDA in CUDA builds.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/block_for.hpp"
#include "engine/exec/device_buffer.hpp"
#include "engine/exec/math.hpp"
#include "engine/exec/parallel_for.hpp"
#include "engine/linalg/dense_cholesky.hpp"
#include "engine/linalg/solver_blocks.hpp"
#include "engine/linalg/sparse_matrix.hpp"

namespace tissue::linalg {

/// One coarsening step of a graph (host arrays): from n fine nodes to the aggregates.
struct AggregationLevel {
  std::vector<std::int32_t> aggregate;                ///< n: the aggregate of each fine node
  std::vector<std::int32_t> member_offsets, members;  ///< aggregates + 1, n: the fine nodes of each
  std::vector<std::int32_t> offsets, columns;         ///< the aggregate graph in CSR (ascending columns)
  std::vector<std::int32_t> source_offsets, sources;  ///< per coarse entry, the fine entries it sums
};

/// Aggregates one symmetric graph given as a CSR pattern (offsets: nodes + 1; columns ascending, with
/// the diagonal). @throws std::invalid_argument for a malformed pattern.
AggregationLevel aggregate_graph(const std::vector<std::int32_t>& offsets,
                                 const std::vector<std::int32_t>& columns);

/// Aggregates repeatedly until at most `coarsest_nodes` remain or a step would keep more than half of
/// the nodes (a graph of many tiny components); the result may be empty (the graph is already small).
std::vector<AggregationLevel> aggregation_hierarchy(const std::vector<std::int32_t>& offsets,
                                                    const std::vector<std::int32_t>& columns,
                                                    std::size_t coarsest_nodes);

/// Settings of an AggregationMultigrid (setup()).
struct AmgSettings {
  std::size_t coarsest_nodes = 64;  ///< aggregate until at most this many nodes remain
  bool direct_coarsest = false;  ///< solve the coarsest level exactly (dense Cholesky inverse) instead of by
                                 ///< Jacobi sweeps, where it has at most kAmgDirectUnknowns dense unknowns
  bool constant_null_space = false;  ///< the operator annihilates the constants of each slot (a Laplacian):
                                     ///< the direct solve then inverts A_c + s 1 1^T per slot, s = trace(A_c)
                                     ///< / nodes^2, which on the range of A_c is its pseudo-inverse
  double over_correction = 1.5;      ///< alpha of the coarse correction, in (0, 2)
  int coarsest_refresh = 1;  ///< the direct coarsest level is inverted at every this-many-th update() (1:
                             ///< at every one); the updates in between keep the last inverse, still an SPD
                             ///< map and so a valid coarse solve, of an operator that changes slowly
                             ///< (a flow's operators from step to step): one inversion of 1532 unknowns
                             ///< takes 3.2 ms on an H100, where a bunny flow step takes 10-15
};

/// The largest dense coarsest system (nodes times kNodeUnknowns) solved directly: 128 MB of inverse.
constexpr std::size_t kAmgDirectUnknowns = 4096;

namespace detail {

constexpr double kAmgJacobiWeight = 2.0 / 3.0;
constexpr double kAmgL1Weight = 1.8;  ///< below 2: W^-1 >= sum_k |a_jk| / 1.8 keeps 2 W^-1 - A definite
constexpr int kAmgCoarsestSweeps = 8;
constexpr unsigned kAmgCoarsestThreads = 256;

/// w_j = 1 / max(a_jj / (2/3), sum_k |a_jk| / 1.8), 0 for a row without a positive diagonal.
template <class Operator>
struct AmgSmootherWeights {
  Operator a;
  Span<double> w;
  TISSUE_HD void operator()(std::size_t j) const {
    const double d = a.diagonal(j);
    w[j] = d > 0.0 ? 1.0 / math::max(d / kAmgJacobiWeight, a.absolute_row_sum(j) / kAmgL1Weight) : 0.0;
  }
};

/// Coarse values: entry e (V values) is the sum of the fine entries sources[source_offsets[e] ..).
struct AmgCoarseValues {
  int values_per_entry;
  Span<const std::int32_t> source_offsets, sources;
  Span<const double> fine;
  Span<double> coarse;
  TISSUE_HD void operator()(std::size_t e) const {
    const auto v = static_cast<std::size_t>(values_per_entry);
    for (std::size_t c = 0; c < v; ++c) {
      double s = 0.0;
      for (std::int32_t q = source_offsets[e]; q < source_offsets[e + 1]; ++q)
        s += fine[v * static_cast<std::size_t>(sources[static_cast<std::size_t>(q)]) + c];
      coarse[v * e + c] = s;
    }
  }
};

/// x_k = w_k b_k: one Jacobi sweep from zero, recomputed where a row reads it.
struct AmgSmoothedRead {
  const double* w;
  const double* b;
  TISSUE_HD double operator()(std::size_t k) const { return w[k] * b[k]; }
  TISSUE_HD double operator()(std::size_t k, std::int32_t) const { return w[k] * b[k]; }
};

/// The first unknown of a solver block and how many of the operator's unknowns it holds.
template <class Operator>
TISSUE_HD std::size_t amg_block_unknowns(const exec::Block& block, const Operator& a, std::size_t* first) {
  *first = block.index() * kSolverBlockUnknowns;
  return math::min(kSolverBlockUnknowns, a.size() - *first);
}

/// Fine nodes (members of whole aggregates) per block of AmgResidualRestrict, unless one aggregate alone
/// has more.
constexpr std::size_t kAmgRestrictMembers = 32;

/// b_c = P^T (b - A W b) in one kernel: the block takes the whole aggregates [aggregate_blocks[k],
/// aggregate_blocks[k + 1]), whose members (its fine nodes) are contiguous in `members`; their residuals
/// stay in shared memory (members x unknowns per node doubles), and every coarse unknown sums its
/// aggregate's members there in member order. The residual itself is never stored.
template <class Operator>
struct AmgResidualRestrict {
  Operator fine, coarse;
  const std::int32_t* stop;
  Span<const std::int32_t> aggregate_blocks, member_offsets, members;
  Span<const double> b, w;
  Span<double> bc;
  TISSUE_HD void operator()(const exec::Block& block) const {
    if (*stop) return;
    constexpr int U = Operator::kItemUnknowns, G = Operator::kLanes;
    double* shared = static_cast<double*>(block.shared());
    const auto a0 = static_cast<std::size_t>(aggregate_blocks[block.index()]);
    const auto a1 = static_cast<std::size_t>(aggregate_blocks[block.index() + 1]);
    const auto t0 = static_cast<std::uint32_t>(member_offsets[a0]);
    const auto count = static_cast<std::uint32_t>(member_offsets[a1]) - t0;
    // items per node: one for a quaternion, one per vector for a CSR operator on several vectors
    const auto groups = static_cast<std::uint32_t>(fine.size() / (fine.nodes() * U));
    const AmgSmoothedRead x{w.data(), b.data()};
    const auto first_unknown = [&](std::size_t i) {  // of item i of the block: (group, member)
      const auto q = static_cast<std::uint32_t>(i);
      const auto m = static_cast<std::size_t>(members[t0 + q % count]);
      return fine.unknown(m, static_cast<std::size_t>(q / count) * U);
    };
    block.template for_each_group<G, U>(
        static_cast<std::size_t>(groups) * count,
        [&](std::size_t i, int lane, double* s) { fine.item_partial(first_unknown(i) / U, lane, x, s); },
        [&](std::size_t i, int lane, const double* s) {
          const std::size_t j0 = first_unknown(i);
          for_lane_unknowns<G, U>(lane, [&](int u) {
            const std::size_t j = j0 + static_cast<std::size_t>(u);
            shared[i * U + static_cast<std::size_t>(u)] = b[j] - s[u];
          });
        });
    block.sync();
    block.for_each((a1 - a0) * groups * U, [&](std::size_t k) {
      const auto q = static_cast<std::uint32_t>(k);
      const std::uint32_t u = q % U, g = q / U % groups,
                          a = static_cast<std::uint32_t>(a0) + q / (U * groups);
      double sum = 0.0;
      for (auto t = static_cast<std::uint32_t>(member_offsets[a]);
           t < static_cast<std::uint32_t>(member_offsets[a + 1]); ++t)
        sum += shared[(g * count + t - t0) * U + u];
      bc[coarse.unknown(a, g * U + u)] = sum;
    });
  }
};

/// x_k = w_k b_k + alpha (P z_c)_k: the smoothed and corrected iterate, recomputed where a row reads it;
/// x(k, e) takes the aggregate of entry e's column from entry_aggregate (one dependent load fewer).
template <class Operator>
struct AmgCorrectedRead {
  Operator fine, coarse;
  const std::int32_t* aggregate;
  const std::int32_t* entry_aggregate;
  const double* w;
  const double* b;
  const double* zc;
  double alpha;  ///< the over-correction
  TISSUE_HD double operator()(std::size_t k) const {
    const std::size_t jc =
        coarse.unknown(static_cast<std::size_t>(aggregate[fine.node_of(k)]), fine.slot_of(k));
    return w[k] * b[k] + alpha * zc[jc];
  }
  TISSUE_HD double operator()(std::size_t k, std::int32_t e) const {
    const std::size_t jc = coarse.unknown(
        static_cast<std::size_t>(entry_aggregate[static_cast<std::size_t>(e)]), fine.slot_of(k));
    return w[k] * b[k] + alpha * zc[jc];
  }
};

/// z = x + W (b - A x) for the corrected x; with a nonempty `dot`, also the partial sums of b . z per
/// solver block (on the finest level b is the solver's residual r, so they are its r . z).
template <class Operator>
struct AmgCorrect {
  Operator fine, coarse;
  const std::int32_t* stop;
  Span<const std::int32_t> aggregate, entry_aggregate;
  Span<const double> b, w, zc;
  Span<double> z;
  BlockPartials dot;
  double alpha;  ///< the over-correction
  TISSUE_HD void operator()(const exec::Block& block) const {
    if (*stop) return;
    std::size_t first = 0;
    const std::size_t count = amg_block_unknowns(block, fine, &first);
    const bool partials = !dot.out.empty();
    constexpr int U = Operator::kItemUnknowns, G = Operator::kLanes;
    double* shared = static_cast<double*>(block.shared());
    const AmgCorrectedRead<Operator> x{fine,     coarse,   aggregate.data(), entry_aggregate.data(),
                                       w.data(), b.data(), zc.data(),        alpha};
    block.template for_each_group<G, U>(
        count / U, [&](std::size_t i, int lane, double* s) { fine.item_partial(first / U + i, lane, x, s); },
        [&](std::size_t i, int lane, const double* s) {
          for_lane_unknowns<G, U>(lane, [&](int u) {
            const std::size_t l = i * U + static_cast<std::size_t>(u), j = first + l;
            const double zj = x(j) + w[j] * (b[j] - s[u]);
            z[j] = zj;
            if (partials) shared[l] = b[j] * zj;
          });
        });
    if (!partials) return;
    block.for_each(kSolverBlockUnknowns - count, [&](std::size_t l) { shared[count + l] = 0.0; });
    double bz = 0.0;
    block_slot_sums<1>(block, shared, &bz);
    block.for_each(1, [&](std::size_t) { dot.out[dot.stride * block.index() + dot.offset] = bz; });
  }
};

/// The partial sums of r . z per solver block (when the coarsest level is the operator itself).
struct AmgResidualDot {
  const std::int32_t* stop;
  Span<const double> r, z;
  BlockPartials dot;
  TISSUE_HD void operator()(const exec::Block& block) const {
    if (*stop) return;
    double* shared = static_cast<double*>(block.shared());
    block.for_each(kSolverBlockUnknowns, [&](std::size_t l) {
      const std::size_t j = block.index() * kSolverBlockUnknowns + l;
      shared[l] = j < r.size() ? r[j] * z[j] : 0.0;
    });
    double rz = 0.0;
    block_slot_sums<1>(block, shared, &rz);
    block.for_each(1, [&](std::size_t) { dot.out[dot.stride * block.index() + dot.offset] = rz; });
  }
};

/// The coarsest level: kAmgCoarsestSweeps Jacobi sweeps from zero in one block, on a copy of the
/// operator, b and w in the block's shared memory (laid out by amg_coarsest_shared_bytes; in_shared) or
/// from global memory with x, y as scratch vectors (a coarsest level too large for shared memory).
template <class Operator>
struct AmgCoarsest {
  Operator a;
  const std::int32_t* stop;
  Span<const double> b, w;
  Span<double> x, y, z;
  bool in_shared;
  TISSUE_HD void operator()(const exec::Block& block) const {
    if (*stop) return;
    const std::size_t n = a.size(), nodes = a.nodes(), entries = a.columns.size();
    if (!in_shared) {
      sweeps(block, a, b.data(), w.data(), x.data(), y.data());
      return;
    }
    auto* values = static_cast<double*>(block.shared());
    double* sb = values + Operator::kValuesPerEntry * entries;
    double* sw = sb + n;
    double* cur = sw + n;
    double* next = cur + n;
    auto* offsets = reinterpret_cast<std::int32_t*>(next + n);
    std::int32_t* columns = offsets + nodes + 1;
    block.for_each(Operator::kValuesPerEntry * entries, [&](std::size_t k) { values[k] = a.values[k]; });
    block.for_each(nodes + 1, [&](std::size_t k) { offsets[k] = a.offsets[k]; });
    block.for_each(entries, [&](std::size_t k) { columns[k] = a.columns[k]; });
    block.for_each(n, [&](std::size_t j) {
      sb[j] = b[j];
      sw[j] = w[j];
    });
    block.sync();
    const Operator local = a.on_pattern(nodes, Span<const std::int32_t>(offsets, nodes + 1),
                                        Span<const std::int32_t>(columns, entries),
                                        Span<const double>(values, Operator::kValuesPerEntry * entries));
    sweeps(block, local, sb, sw, cur, next);
  }

  /// x = W b, then kAmgCoarsestSweeps - 1 sweeps x += W (b - A x) (cur, next: scratch), into z.
  TISSUE_HD void sweeps(const exec::Block& block, const Operator& op, const double* sb, const double* sw,
                        double* cur, double* next) const {
    constexpr int U = Operator::kItemUnknowns, G = Operator::kLanes;
    const std::size_t n = op.size();
    block.for_each(n, [&](std::size_t j) { cur[j] = sw[j] * sb[j]; });
    block.sync();
    for (int s = 1; s < kAmgCoarsestSweeps; ++s) {
      block.template for_each_group<G, U>(
          n / U, [&](std::size_t i, int lane, double* t) { op.item_partial(i, lane, VectorRead{cur}, t); },
          [&](std::size_t i, int lane, const double* t) {
            for_lane_unknowns<G, U>(lane, [&](int u) {
              const std::size_t j = i * U + static_cast<std::size_t>(u);
              next[j] = cur[j] + sw[j] * (sb[j] - t[u]);
            });
          });
      block.sync();
      double* swap = cur;
      cur = next;
      next = swap;
    }
    block.for_each(n, [&](std::size_t j) { z[j] = cur[j]; });
  }
};

/// Adds s 1 1^T per slot to the dense matrix of the direct coarsest level (a constant null space): s where
/// row and column are the same slot of any two nodes. One dense entry t = row + column D per index
/// (column-major; row = node K + slot).
template <class Operator>
struct AmgDenseShift {
  std::size_t d;
  double s;
  Span<double> dense;
  TISSUE_HD void operator()(std::size_t t) const {
    constexpr auto K = static_cast<std::size_t>(Operator::kNodeUnknowns);
    if (t % d % K == t / d % K) dense[t] += s;
  }
};

/// Adds the operator's entries to the dense matrix, one node's row of blocks per index.
template <class Operator>
struct AmgDenseEntries {
  Operator a;
  Span<double> dense;
  TISSUE_HD void operator()(std::size_t i) const {
    constexpr int K = Operator::kNodeUnknowns;
    const std::size_t d = a.nodes() * K;
    for (std::int32_t k = a.offsets[i]; k < a.offsets[i + 1]; ++k) {
      const auto j = static_cast<std::size_t>(a.columns[static_cast<std::size_t>(k)]);
      for (int r = 0; r < K; ++r)
        for (int c = 0; c < K; ++c)
          dense[i * K + static_cast<std::size_t>(r) + (j * K + static_cast<std::size_t>(c)) * d] +=
              a.block_value(static_cast<std::size_t>(k), r, c);
    }
  }
};

/// The diagonal of the dense matrix, one per index (for the null-space shift's scale).
struct AmgDenseDiagonal {
  std::size_t d;
  Span<const double> dense;
  Span<double> out;
  TISSUE_HD void operator()(std::size_t i) const { out[i] = dense[i + i * d]; }
};

/// The inverse's entries, one per pair of nodes (i, j) at t = i nodes + j (kValuesPerEntry values each),
/// from the dense D x D inverse: a K x K block has kValuesPerEntry degrees of freedom (a quaternion's
/// left multiplication: 4 of 16), so the product reads a quarter of the bytes.
template <class Operator>
struct AmgDenseCompress {
  std::size_t nodes;
  Span<const double> dense;
  Span<double> entries;
  TISSUE_HD void operator()(std::size_t t) const {
    constexpr int K = Operator::kNodeUnknowns, V = Operator::kValuesPerEntry;
    const std::size_t i = t / nodes, j = t % nodes, d = nodes * K;
    const auto block = [&](int r, int c) {
      return dense[i * K + static_cast<std::size_t>(r) + (j * K + static_cast<std::size_t>(c)) * d];
    };
    for (int k = 0; k < V; ++k)
      entries[V * t + static_cast<std::size_t>(k)] = Operator::entry_value(block, k);
  }
};

/// Node rows per block of AmgCoarsestDirect (one warp each).
constexpr std::size_t kAmgDirectRows = 8;
constexpr unsigned kAmgDirectThreads = 32 * kAmgDirectRows;

/// z = A_c^-1 b on the coarsest level: every node row of every independent system (size() / (nodes K) of
/// them) sums its row of the inverse's entries times b, 32 lanes over the columns.
template <class Operator>
struct AmgCoarsestDirect {
  Operator a;
  const std::int32_t* stop;
  Span<const double> inverse, b;  ///< inverse: AmgDenseCompress's entries
  Span<double> z;
  TISSUE_HD void operator()(const exec::Block& block) const {
    if (*stop) return;
    constexpr int K = Operator::kNodeUnknowns, V = Operator::kValuesPerEntry;
    const std::size_t nodes = a.nodes(), rows = a.size() / K;
    const std::size_t first = block.index() * kAmgDirectRows;
    const std::size_t count = math::min(kAmgDirectRows, rows - first);
    block.template for_each_group<32, K>(
        count,
        [&](std::size_t item, int lane, double* s) {
          const std::size_t i = (first + item) % nodes, system = (first + item) / nodes;
          const double* line = inverse.data() + V * i * nodes;
          for (auto j = static_cast<std::size_t>(lane); j < nodes; j += 32) {
            const double* v = line + V * j;
            double x[K];
            for (int c = 0; c < K; ++c) x[c] = b[a.unknown(j, system * K + static_cast<std::size_t>(c))];
            for (int r = 0; r < K; ++r)
              for (int c = 0; c < K; ++c) s[r] += Operator::block_entry(v, r, c) * x[c];
          }
        },
        [&](std::size_t item, int lane, const double* s) {
          const std::size_t i = (first + item) % nodes, system = (first + item) / nodes;
          if (lane < K) z[a.unknown(i, system * K + static_cast<std::size_t>(lane))] = s[lane];
        });
  }
};

/// Shared memory of AmgCoarsest for an operator held there: its values, b, w and two sweep vectors
/// (doubles), then its offsets and columns.
template <class Operator>
std::size_t amg_coarsest_shared_bytes(const Operator& a) {
  const std::size_t entries = a.columns.size();
  return (Operator::kValuesPerEntry * entries + 4 * a.size()) * sizeof(double) +
         (a.nodes() + 1 + entries) * sizeof(std::int32_t);
}

/// Up to this much shared memory the coarsest level's sweeps read the operator there (the default
/// limit of a block without opting in).
constexpr std::size_t kAmgCoarsestSharedLimit = 48 * 1024;

}  // namespace detail

/// The hierarchy and the work vectors of one operator's multigrid (see the file comment). Build with
/// setup() once per pattern, refresh with update() whenever the operator's values change, and apply.
template <class Operator>
class AggregationMultigrid {
 public:
  /// Aggregates the pattern (offsets over nodes + 1, ascending columns with the diagonal, symmetric) down
  /// to at most settings.coarsest_nodes nodes where the graph allows. @throws std::invalid_argument for a
  /// malformed pattern or an over-correction outside (0, 2).
  void setup(const std::vector<std::int32_t>& offsets, const std::vector<std::int32_t>& columns,
             const AmgSettings& settings = {}) {
    if (!(settings.over_correction > 0.0 && settings.over_correction < 2.0))
      throw std::invalid_argument("AggregationMultigrid: the over-correction must lie in (0, 2)");
    if (settings.coarsest_refresh < 1)
      throw std::invalid_argument("AggregationMultigrid: the coarsest level's refresh must be >= 1 update");
    settings_ = settings;
    const std::vector<AggregationLevel> hierarchy =
        aggregation_hierarchy(offsets, columns, settings.coarsest_nodes);
    levels_.clear();
    levels_.resize(hierarchy.size());
    for (std::size_t l = 0; l < hierarchy.size(); ++l) {
      const AggregationLevel& h = hierarchy[l];
      Level& d = levels_[l];
      d.nodes = h.member_offsets.size() - 1;
      d.aggregate.assign(h.aggregate);
      const std::vector<std::int32_t>& fine_columns = l == 0 ? columns : hierarchy[l - 1].columns;
      std::vector<std::int32_t> entry_aggregate(fine_columns.size());
      for (std::size_t k = 0; k < fine_columns.size(); ++k)
        entry_aggregate[k] = h.aggregate[static_cast<std::size_t>(fine_columns[k])];
      d.entry_aggregate.assign(entry_aggregate);
      d.member_offsets.assign(h.member_offsets);
      d.members.assign(h.members);
      // whole aggregates per residual-restriction block, up to kAmgRestrictMembers members (or one
      // larger aggregate alone)
      const auto members_before = [&](std::size_t a) {
        return static_cast<std::size_t>(h.member_offsets[a]);
      };
      std::vector<std::int32_t> blocks{0};
      for (std::size_t a = 0; a < d.nodes; ++a) {
        const auto open = static_cast<std::size_t>(blocks.back());
        if (open < a && members_before(a + 1) - members_before(open) > detail::kAmgRestrictMembers)
          blocks.push_back(static_cast<std::int32_t>(a));
      }
      blocks.push_back(static_cast<std::int32_t>(d.nodes));
      d.restrict_blocks = blocks.size() - 1;
      d.max_block_members = 0;
      for (std::size_t k = 0; k < d.restrict_blocks; ++k)
        d.max_block_members =
            std::max(d.max_block_members, members_before(static_cast<std::size_t>(blocks[k + 1])) -
                                              members_before(static_cast<std::size_t>(blocks[k])));
      d.aggregate_blocks.assign(blocks);
      d.offsets.assign(h.offsets);
      d.columns.assign(h.columns);
      d.source_offsets.assign(h.source_offsets);
      d.sources.assign(h.sources);
      d.values.resize(static_cast<std::size_t>(Operator::kValuesPerEntry) * h.columns.size());
      d.values.zero();
    }
    fine_nodes_ = offsets.size() - 1;
    fine_entries_ = columns.size();
    const std::size_t coarsest = hierarchy.empty() ? fine_nodes_ : levels_.back().nodes;
    dense_size_ = coarsest * Operator::kNodeUnknowns;
    direct_ = settings.direct_coarsest && dense_size_ <= kAmgDirectUnknowns;
    updates_since_inversion_ = 0;
    restore_pending_ = false;
    inverted_values_.resize(0);
    if (direct_) {
      dense_.ensure(dense_size_ * dense_size_);
      inverse_.prepare(dense_size_, Span<double>(dense_.data(), dense_size_ * dense_size_));
    }
    never_.resize(1);
    never_.zero();
    ++generation_;
  }

  /// Coarse operators and smoother weights from a's current values (a on the pattern given to setup()),
  /// and with a direct coarsest level its inverse (synchronous then). @throws std::logic_error before
  /// setup() or for an operator on another pattern; NumericalError when the coarsest operator (shifted by
  /// its null space where AmgSettings says so) is not positive definite.
  void update(const Operator& a) {
    if (fine_nodes_ == 0 || a.nodes() != fine_nodes_)
      throw std::logic_error("AggregationMultigrid::update: set up for another pattern");
    coarse_.clear();
    Operator fine = a;
    weights(0, fine);
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      Level& d = levels_[l];
      exec::parallel_for(d.columns.size(),
                         detail::AmgCoarseValues{Operator::kValuesPerEntry, d.source_offsets.span(),
                                                 d.sources.span(), fine.values, d.values.span()});
      const Operator coarse = a.on_pattern(d.nodes, d.offsets.span(), d.columns.span(), d.values.span());
      coarse_.push_back(coarse);
      weights(l + 1, coarse);
      fine = coarse;
    }
    const Operator& coarsest = levels_.empty() ? a : coarse_.back();
    if (direct_) {
      if (restore_pending_) {  // the inverse a saved run was using: from the values it was computed from
        invert_coarsest(coarsest.on_pattern(coarsest.nodes(), coarsest.offsets, coarsest.columns,
                                            inverted_values_.span()));
        restore_pending_ = false;
      } else if (updates_since_inversion_ == 0) {
        inverted_values_.ensure(coarsest.values.size());
        exec::copy(coarsest.values, inverted_values_.span(), coarsest.values.size());
        invert_coarsest(coarsest);
      }
      updates_since_inversion_ = (updates_since_inversion_ + 1) % settings_.coarsest_refresh;
    } else {
      sweep_[0].ensure(coarsest.size());
      sweep_[1].ensure(coarsest.size());
    }
    updated_ = true;
  }

  /// z = B r, one V(1,1)-cycle for the operator given to the last update() (a: the same operator; its
  /// values may have been shifted since, B stays an SPD preconditioner). r and z must not overlap.
  /// stop: a device flag read by every kernel, which do nothing while it is nonzero (a conjugate-gradient
  /// solve that has stopped); nullptr for none. rz: where to write the partial sums of r . z per solver
  /// block (solver_blocks.hpp), fused into the last kernel; empty for none. Asynchronous on the CUDA
  /// backend.
  void apply(const Operator& a, Span<const double> r, Span<double> z, const std::int32_t* stop = nullptr,
             BlockPartials rz = {}) {
    if (!updated_) throw std::logic_error("AggregationMultigrid::apply before update()");
    if (stop == nullptr) stop = never_.data();
    const std::size_t levels = levels_.size();
    const auto op = [&](std::size_t l) -> const Operator& { return l == 0 ? a : coarse_[l - 1]; };
    const auto b = [&](std::size_t l) { return l == 0 ? r : Span<const double>(b_[l].span()); };
    const auto zl = [&](std::size_t l) { return l == 0 ? z : z_[l].span(); };
    const auto blocks = [&](std::size_t l) {
      return (op(l).size() + kSolverBlockUnknowns - 1) / kSolverBlockUnknowns;
    };
    constexpr unsigned threads = solver_block_threads<Operator>();
    constexpr std::size_t shared = kSolverBlockUnknowns * sizeof(double);
    const auto correct = [&](std::size_t l, BlockPartials dot) {
      return detail::AmgCorrect<Operator>{op(l),
                                          op(l + 1),
                                          stop,
                                          levels_[l].aggregate.span(),
                                          levels_[l].entry_aggregate.span(),
                                          b(l),
                                          weight_[l].span(),
                                          zl(l + 1),
                                          zl(l),
                                          dot,
                                          settings_.over_correction};
    };
    for (std::size_t l = 0; l < levels; ++l) {
      const Level& d = levels_[l];
      const std::size_t per_node = op(l).size() / op(l).nodes();
      exec::block_for(d.restrict_blocks, threads, d.max_block_members * per_node * sizeof(double),
                      detail::AmgResidualRestrict<Operator>{op(l), op(l + 1), stop, d.aggregate_blocks.span(),
                                                            d.member_offsets.span(), d.members.span(), b(l),
                                                            weight_[l].span(), b_[l + 1].span()});
    }
    if (direct_) {
      exec::block_for(
          (op(levels).size() / Operator::kNodeUnknowns + detail::kAmgDirectRows - 1) / detail::kAmgDirectRows,
          detail::kAmgDirectThreads, 0,
          detail::AmgCoarsestDirect<Operator>{op(levels), stop, entries_.span(), b(levels), zl(levels)});
    } else {
      const std::size_t coarsest_bytes = detail::amg_coarsest_shared_bytes(op(levels));
      const bool in_shared = coarsest_bytes <= detail::kAmgCoarsestSharedLimit;
      exec::block_for(
          1, detail::kAmgCoarsestThreads, in_shared ? coarsest_bytes : 0,
          detail::AmgCoarsest<Operator>{op(levels), stop, b(levels), weight_[levels].span(), sweep_[0].span(),
                                        sweep_[1].span(), zl(levels), in_shared});
    }
    for (std::size_t l = levels; l-- > 0;)
      exec::block_for(blocks(l), threads, shared, correct(l, l == 0 ? rz : BlockPartials{}));
    if (levels == 0 && !rz.out.empty())
      exec::block_for(blocks(0), kSolverBlockUnknowns, shared, detail::AmgResidualDot{stop, r, z, rz});
  }

  /// Levels including the finest (1: the coarsest sweeps act on the operator itself).
  std::size_t levels() const { return levels_.size() + 1; }
  /// Nodes of level l (0: the operator's).
  std::size_t nodes(std::size_t level) const { return level == 0 ? fine_nodes_ : levels_[level - 1].nodes; }
  /// The Galerkin operator of level l >= 1 from the last update() (its spans stay valid until setup()).
  const Operator& coarse_operator(std::size_t level) const { return coarse_.at(level - 1); }
  /// Changes with every setup(): a recorded solve that applies this preconditioner is valid while the
  /// generation it recorded is.
  std::size_t generation() const { return generation_; }
  /// The next update() inverts the direct coarsest level again, whatever AmgSettings::coarsest_refresh
  /// says (and starts its count of updates anew).
  void refresh_coarsest() {
    updates_since_inversion_ = 0;
    restore_pending_ = false;
  }
  /// With coarsest_refresh > 1 the inverse in use is state that the operator's current values do not
  /// determine: coarsest_state() is {updates since the inversion, then the coarsest operator's values it
  /// was computed from} (empty without a direct coarsest level or before the first update()), and
  /// restore_coarsest() on a multigrid set up alike makes the next update() continue as the next update()
  /// of the one saved would (so a restarted run continues exactly). @throws std::invalid_argument for a
  /// state of another size.
  std::vector<double> coarsest_state() const {
    if (!direct_ || inverted_values_.size() == 0) return {};
    std::vector<double> state{static_cast<double>(updates_since_inversion_)};
    const std::vector<double> values = inverted_values_.to_host();
    state.insert(state.end(), values.begin(), values.end());
    return state;
  }
  /// Values in coarsest_state() of a multigrid set up for this pattern (0 without a direct coarsest level).
  std::size_t coarsest_state_size() const {
    if (!direct_) return 0;
    const std::size_t entries = levels_.empty() ? fine_entries_ : levels_.back().columns.size();
    return 1 + static_cast<std::size_t>(Operator::kValuesPerEntry) * entries;
  }
  /// Restores a coarsest_state() (empty: invert at the next update()).
  void restore_coarsest(const std::vector<double>& state) {
    if (state.empty()) {
      refresh_coarsest();
      return;
    }
    if (state.size() != coarsest_state_size())
      throw std::invalid_argument("AggregationMultigrid::restore_coarsest: a state of another size");
    updates_since_inversion_ = static_cast<int>(state[0]) % settings_.coarsest_refresh;
    inverted_values_.assign(std::vector<double>(state.begin() + 1, state.end()));
    restore_pending_ = updates_since_inversion_ != 0;
  }
  /// Device memory of the direct coarsest level (its dense matrix and inverse entries) [bytes].
  std::size_t direct_bytes() const { return (dense_.size() + entries_.size()) * sizeof(double); }
  /// Whether the coarsest level is solved directly (AmgSettings::direct_coarsest, within
  /// kAmgDirectUnknowns).
  bool direct_coarsest() const { return direct_; }

 private:
  struct Level {
    std::size_t nodes = 0;  ///< coarse nodes
    DeviceBuffer<std::int32_t> aggregate, member_offsets, members, offsets, columns, source_offsets, sources;
    DeviceBuffer<std::int32_t> entry_aggregate;   ///< per entry of the finer pattern: its column's aggregate
    DeviceBuffer<std::int32_t> aggregate_blocks;  ///< first aggregate of each residual-restriction block
    std::size_t restrict_blocks = 0, max_block_members = 0;
    DeviceBuffer<double> values;  ///< of the coarse operator
  };

  /// The dense matrix of the coarsest operator (plus s 1 1^T per slot for a constant null space), inverted.
  void invert_coarsest(const Operator& c) {
    const std::size_t d = dense_size_;
    dense_.ensure(d * d);
    const Span<double> dense(dense_.data(), d * d);
    exec::fill(dense, 0.0);
    exec::parallel_for(c.nodes(), detail::AmgDenseEntries<Operator>{c, dense});
    if (settings_.constant_null_space) {  // s = trace / nodes^2
      diagonal_.ensure(d);
      exec::parallel_for(d, detail::AmgDenseDiagonal{d, dense, diagonal_.span()});
      const auto nodes = static_cast<double>(c.nodes());
      const double s = exec::sum(Span<const double>(diagonal_.data(), d)) / (nodes * nodes);
      exec::parallel_for(d * d, detail::AmgDenseShift<Operator>{d, s, dense});
    }
    inverse_.invert(d, dense);
    const std::size_t pairs = c.nodes() * c.nodes();
    entries_.ensure(static_cast<std::size_t>(Operator::kValuesPerEntry) * pairs);
    exec::parallel_for(pairs, detail::AmgDenseCompress<Operator>{c.nodes(), dense, entries_.span()});
  }

  void weights(std::size_t l, const Operator& a) {
    for (auto* v : {&weight_, &b_, &z_})
      if (v->size() <= l) v->resize(l + 1);
    for (auto* v : {&weight_[l], &b_[l], &z_[l]}) v->ensure(a.size());
    exec::parallel_for(a.size(), detail::AmgSmootherWeights<Operator>{a, weight_[l].span()});
  }

  std::vector<Level> levels_;
  std::vector<Operator> coarse_;  ///< operators of levels 1 .. levels_.size()
  std::vector<DeviceBuffer<double>> weight_, b_, z_;
  DeviceBuffer<double> sweep_[2];
  DeviceBuffer<double> dense_,
      diagonal_;                          ///< the direct coarsest level's dense matrix and inverse, a scratch
  DeviceBuffer<double> entries_;          ///< the inverse as entries per pair of nodes (AmgDenseCompress)
  DeviceBuffer<double> inverted_values_;  ///< the coarsest operator's values dense_ was computed from
  DenseCholeskyInverse inverse_;
  DeviceBuffer<std::int32_t> never_;
  AmgSettings settings_;
  std::size_t fine_nodes_ = 0, fine_entries_ = 0, generation_ = 0, dense_size_ = 0;
  int updates_since_inversion_ = 0;  ///< modulo coarsest_refresh: 0 inverts at the next update()
  bool updated_ = false, direct_ = false, restore_pending_ = false;
};

}  // namespace tissue::linalg
