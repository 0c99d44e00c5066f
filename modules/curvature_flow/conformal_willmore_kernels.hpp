#pragma once
/// @file conformal_willmore_kernels.hpp
/// Pure TISSUE_HD math of conformal Willmore flow by spin transformations (Crane, Pinkall, Schröder 2011,
/// "Spin transformations of discrete surfaces", §5; 2013, "Robust fairing via conformal curvature flow",
/// §5; seed 002): quaternions, the per-face terms of the cotangent Laplacian and of the quaternionic
/// operator (D - rho)^* A (D - rho) of the eigenvalue problem, and the transformed edges. Positions in
/// [length], faces counter-clockwise seen from outside; one functor per kernel, launched by
/// exec::parallel_for with one thread per sparsity-pattern entry or per vertex (gather, no atomics).

#include <cstdint>

#include "engine/exec/config.hpp"
#include "engine/exec/math.hpp"
#include "engine/exec/span.hpp"

namespace tissue::curvature_flow {

/// A quaternion w + x i + y j + z k.
struct Quaternion {
  double w, x, y, z;
};

/// The Hamilton product a b.
TISSUE_HD inline Quaternion hamilton(const Quaternion& a, const Quaternion& b) {
  return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
          a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}
TISSUE_HD inline Quaternion conjugate(const Quaternion& q) {
  return {q.w, -q.x, -q.y, -q.z};
}
TISSUE_HD inline Quaternion operator+(const Quaternion& a, const Quaternion& b) {
  return {a.w + b.w, a.x + b.x, a.y + b.y, a.z + b.z};
}
TISSUE_HD inline Quaternion operator*(double s, const Quaternion& q) {
  return {s * q.w, s * q.x, s * q.y, s * q.z};
}

/// The sign of entry (r, c) of a left-multiplication matrix (see left_multiplication): the rows are
/// (w -x -y -z), (x w -z y), (y z w -x), (z -y x w), i.e. component r ^ c with the negative entries of row
/// r in bit c of the nibble 0xE, 0x4, 0x8, 0x2 (no lookup table: kernels index it with a run-time row).
TISSUE_HD inline double left_multiplication_sign(int r, int c) {
  return ((0x284E >> (4 * r + c)) & 1) ? -1.0 : 1.0;
}

/// Entry (r, c) of the real 4x4 matrix of left multiplication by q: (q p)_r = sum_c M_rc p_c with the
/// components ordered (w, x, y, z). The quaternionic matrices of the flow are stored this way as real
/// CSR matrices of 4 x 4 blocks.
TISSUE_HD inline double left_multiplication(const Quaternion& q, int r, int c) {
  const double v[4] = {q.w, q.x, q.y, q.z};
  return left_multiplication_sign(r, c) * v[r ^ c];
}

/// Vertex positions and faces as the kernels read them.
struct SurfaceView {
  Span<const double> x, y, z;
  Span<const std::int32_t> faces;  ///< 3 per face

  TISSUE_HD Quaternion point(std::int32_t v) const {
    const auto i = static_cast<std::size_t>(v);
    return {0.0, x[i], y[i], z[i]};
  }
  TISSUE_HD std::int32_t corner(std::int32_t f, int c) const {
    return faces[3 * static_cast<std::size_t>(f) + static_cast<std::size_t>(c)];
  }
};

/// The geometry of one face: edges opposite each corner, e[c] = p[c + 2] - p[c + 1] (imaginary
/// quaternions, counter-clockwise), area [length^2] and the cotangent of each corner's angle.
struct FaceGeometry {
  Quaternion e[3];
  double area;
  double cot[3];
};

TISSUE_HD inline FaceGeometry face_geometry(const SurfaceView& s, std::int32_t f) {
  FaceGeometry g{};
  Quaternion p[3];
  for (int c = 0; c < 3; ++c) p[c] = s.point(s.corner(f, c));
  for (int c = 0; c < 3; ++c) {
    const Quaternion& a = p[(c + 1) % 3];
    const Quaternion& b = p[(c + 2) % 3];
    g.e[c] = {0.0, b.x - a.x, b.y - a.y, b.z - a.z};
  }
  // |e1 x e2| = 2 A; the angle at corner c lies between -e[c+1] and e[c+2]
  const Quaternion& u = g.e[1];
  const Quaternion& v = g.e[2];
  const double cx = u.y * v.z - u.z * v.y, cy = u.z * v.x - u.x * v.z, cz = u.x * v.y - u.y * v.x;
  const double twice_area = math::sqrt(cx * cx + cy * cy + cz * cz);
  g.area = 0.5 * twice_area;
  for (int c = 0; c < 3; ++c) {
    const Quaternion& a = g.e[(c + 1) % 3];
    const Quaternion& b = g.e[(c + 2) % 3];
    g.cot[c] = -(a.x * b.x + a.y * b.y + a.z * b.z) / twice_area;
  }
  return g;
}

/// Decodes a pattern-entry source s = 9 f + 3 ci + cj: face f, where the entry's row vertex is corner ci
/// and its column vertex corner cj.
struct EntrySource {
  std::int32_t face;
  int ci, cj;
};
TISSUE_HD inline EntrySource decode_source(std::int32_t s) {
  return {s / 9, (s % 9) / 3, s % 3};
}

/// The shared sparsity pattern of the cotangent Laplacian and the Dirac operator, as kernels read it.
/// Off-diagonal entry k gathers from sources[2k], sources[2k + 1] (the one or two faces holding its edge;
/// -1 for none); diagonal entry k of vertex v gathers from v's corners vertex_corners[corner_offsets[v]
/// .. corner_offsets[v + 1]) (3 f + c).
struct PatternView {
  Span<const std::int32_t> offsets, columns, rows, sources;
  Span<const std::int32_t> corner_offsets, vertex_corners;
};

/// The cotangent Laplacian (positive semi-definite form): L_ij = -(cot a_ij + cot b_ij) / 2 for an edge,
/// L_ii = -sum_j L_ij [dimensionless]; (L f)_i = sum_j w_ij (f_i - f_j). One thread per pattern entry.
struct CotangentLaplacianEntries {
  SurfaceView surface;
  PatternView pattern;
  Span<double> values;

  TISSUE_HD void operator()(std::size_t k) const {
    const std::int32_t i = pattern.rows[k];
    double sum = 0.0;
    if (pattern.columns[k] != i) {
      for (int s = 0; s < 2; ++s) {
        const std::int32_t code = pattern.sources[2 * k + static_cast<std::size_t>(s)];
        if (code < 0) continue;
        const EntrySource src = decode_source(code);
        const FaceGeometry g = face_geometry(surface, src.face);
        sum -= 0.5 * g.cot[3 - src.ci - src.cj];
      }
    } else {
      const auto v = static_cast<std::size_t>(i);
      for (std::int32_t q = pattern.corner_offsets[v]; q < pattern.corner_offsets[v + 1]; ++q) {
        const std::int32_t fc = pattern.vertex_corners[static_cast<std::size_t>(q)];
        const int c = fc % 3;
        const FaceGeometry g = face_geometry(surface, fc / 3);
        sum += 0.5 * (g.cot[(c + 1) % 3] + g.cot[(c + 2) % 3]);
      }
    }
    values[k] = sum;
  }
};

/// The entry (i, j) of the quaternionic matrix E = (D - rho)^* A (D - rho) of Crane et al. 2011, §5.2:
/// per face holding i and j, -e_i e_j / (4 A) + (rho_i e_j - rho_j e_i) / 6 + A rho_i rho_j / 9, with e_c
/// the edge opposite corner c; its smallest eigenvector is the similarity transform lambda. Diagonal
/// entries are real: sum over v's faces of |e_i|^2 / (4 A) + A rho_i^2 / 9. Written as the quaternion
/// (w, x, y, z) of entry k, plus `shift` on the diagonal, which keeps the factorization definite when E is
/// singular (rho = 0 on a round sphere). One thread per pattern entry.
struct DiracEntries {
  SurfaceView surface;
  PatternView pattern;
  Span<const double> rho;  ///< curvature change per vertex [1/length]
  double shift;            ///< added to E's diagonal [dimensionless]
  Span<double> values;     ///< E's quaternions, 4 nnz(pattern) values

  TISSUE_HD void operator()(std::size_t k) const {
    const std::int32_t i = pattern.rows[k];
    const std::int32_t j = pattern.columns[k];
    Quaternion q{0.0, 0.0, 0.0, 0.0};
    const double rho_i = rho[static_cast<std::size_t>(i)];
    if (j != i) {
      const double rho_j = rho[static_cast<std::size_t>(j)];
      for (int s = 0; s < 2; ++s) {
        const std::int32_t code = pattern.sources[2 * k + static_cast<std::size_t>(s)];
        if (code < 0) continue;
        const EntrySource src = decode_source(code);
        const FaceGeometry g = face_geometry(surface, src.face);
        const Quaternion& ei = g.e[src.ci];
        const Quaternion& ej = g.e[src.cj];
        q = q + (-1.0 / (4.0 * g.area)) * hamilton(ei, ej) + (1.0 / 6.0) * (rho_i * ej + (-rho_j) * ei);
        q.w += g.area * rho_i * rho_j / 9.0;
      }
    } else {
      const auto v = static_cast<std::size_t>(i);
      for (std::int32_t c = pattern.corner_offsets[v]; c < pattern.corner_offsets[v + 1]; ++c) {
        const std::int32_t fc = pattern.vertex_corners[static_cast<std::size_t>(c)];
        const FaceGeometry g = face_geometry(surface, fc / 3);
        const Quaternion& e = g.e[fc % 3];
        q.w += (e.x * e.x + e.y * e.y + e.z * e.z) / (4.0 * g.area) + g.area * rho_i * rho_i / 9.0;
      }
      q.w += shift;
    }
    values[4 * k] = q.w;
    values[4 * k + 1] = q.x;
    values[4 * k + 2] = q.y;
    values[4 * k + 3] = q.z;
  }
};

/// The real 4n x 4n CSR form of a quaternion matrix on the pattern (for the direct solvers): entry k's
/// quaternion becomes the 4 x 4 block of left multiplication at row block i = rows[k], block column
/// k - offsets[i]; row 4 i + r of the real matrix holds its blocks' row r in order, so the real value
/// (r, c) of entry k sits at 16 offsets[i] + 4 r degree(i) + 4 (k - offsets[i]) + c. One thread per entry.
struct QuaternionBlocks {
  Span<const std::int32_t> offsets, rows;
  Span<const double> quaternions;  ///< 4 per entry
  Span<double> values;             ///< 16 per entry

  TISSUE_HD void operator()(std::size_t k) const {
    const auto row = static_cast<std::size_t>(rows[k]);
    const auto first = static_cast<std::size_t>(offsets[row]);
    const auto degree = static_cast<std::size_t>(offsets[row + 1]) - first;
    const Quaternion q{quaternions[4 * k], quaternions[4 * k + 1], quaternions[4 * k + 2],
                       quaternions[4 * k + 3]};
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c)
        values[16 * first + static_cast<std::size_t>(r) * 4 * degree + 4 * (k - first) +
               static_cast<std::size_t>(c)] = left_multiplication(q, r, c);
  }
};

/// A quaternion matrix on the pattern as an operator of linalg::ConjugateGradient: (A x)_i = sum_j
/// a_ij x_j with Hamilton products, unknowns (w, x, y, z) of vertex i at 4 i .. 4 i + 3, one real row per
/// call (the four rows of a vertex read the same entries). Stores 4 values per entry instead of the 16 of
/// the real block form. The diagonal entries must be real (E's are).
struct QuaternionMatrix {
  static constexpr int kValuesPerEntry = 4;  ///< (engine/linalg/aggregation_multigrid.hpp)
  static constexpr int kItemUnknowns = 4;    ///< a vertex's quaternion (engine/linalg/conjugate_gradient.hpp)
  static constexpr int kLanes = 4;           ///< lanes per vertex (about 7 entries: two per lane)
  Span<const std::int32_t> offsets, columns;
  Span<const double> values;  ///< 4 per entry

  TISSUE_HD std::size_t size() const { return 4 * (offsets.size() - 1); }
  template <class X>
  TISSUE_HD double row(std::size_t r, const X& x) const {
    const std::size_t i = r / 4;
    const int c = static_cast<int>(r % 4);
    double sum = 0.0;
    for (std::int32_t k = offsets[i]; k < offsets[i + 1]; ++k) {
      const auto e = 4 * static_cast<std::size_t>(k);
      const auto j = 4 * static_cast<std::size_t>(columns[static_cast<std::size_t>(k)]);
      for (int d = 0; d < 4; ++d)
        sum += left_multiplication_sign(c, d) * values[e + static_cast<std::size_t>(c ^ d)] *
               x(j + static_cast<std::size_t>(d));
    }
    return sum;
  }
  /// y[c] += sum over the lane's entries k of vertex i of (a_k x_col(k))_c, a Hamilton product.
  template <class X>
  TISSUE_HD void item_partial(std::size_t i, int lane, const X& x, double* y) const {
    for (std::int32_t k = offsets[i] + lane; k < offsets[i + 1]; k += kLanes) {
      const auto e = 4 * static_cast<std::size_t>(k);
      const auto j = 4 * static_cast<std::size_t>(columns[static_cast<std::size_t>(k)]);
      const double a[4] = {values[e], values[e + 1], values[e + 2], values[e + 3]};
      const double v[4] = {x(j, k), x(j + 1, k), x(j + 2, k), x(j + 3, k)};
      for (int c = 0; c < 4; ++c)
        for (int d = 0; d < 4; ++d) y[c] += left_multiplication_sign(c, d) * a[c ^ d] * v[d];
    }
  }
  TISSUE_HD double diagonal(std::size_t r) const {
    const std::size_t i = r / 4;
    double a = 0.0;
    for (std::int32_t k = offsets[i]; k < offsets[i + 1]; ++k)
      if (static_cast<std::size_t>(columns[static_cast<std::size_t>(k)]) == i)
        a = values[4 * static_cast<std::size_t>(k)];
    return a;
  }

  // for aggregation multigrid: a node is a vertex, its unknowns the quaternion's w x y z; sums of
  // left-multiplication blocks are left-multiplication blocks, so the coarse operators are quaternion
  // matrices too
  TISSUE_HD std::size_t nodes() const { return offsets.size() - 1; }
  TISSUE_HD std::size_t node_of(std::size_t r) const { return r / 4; }
  TISSUE_HD std::size_t slot_of(std::size_t r) const { return r % 4; }
  TISSUE_HD std::size_t unknown(std::size_t node, std::size_t slot) const { return 4 * node + slot; }
  static constexpr int kNodeUnknowns = 4;  ///< an entry couples all four components
  TISSUE_HD static double block_entry(const double* v, int r, int c) {
    return left_multiplication_sign(r, c) * v[r ^ c];
  }
  TISSUE_HD double block_value(std::size_t e, int r, int c) const {
    return block_entry(values.data() + 4 * e, r, c);
  }
  /// Component k of the quaternion whose left multiplication is nearest the 4 x 4 block: the mean of its
  /// four occurrences, summed in pairs ((r = 0, 1), (2, 3)), a grouping every r -> r ^ k keeps, so that
  /// the entries of a block and of its transpose are exact conjugates.
  template <class B>
  TISSUE_HD static double entry_value(const B& block, int k) {
    const auto f = [&](int r) { return left_multiplication_sign(r, r ^ k) * block(r, r ^ k); };
    return 0.25 * ((f(0) + f(1)) + (f(2) + f(3)));
  }
  /// Every real row of a left-multiplication block holds |w|, |x|, |y|, |z| once.
  TISSUE_HD double absolute_row_sum(std::size_t r) const {
    const std::size_t i = r / 4;
    double s = 0.0;
    for (std::int32_t k = offsets[i]; k < offsets[i + 1]; ++k)
      for (std::size_t c = 0; c < 4; ++c) s += math::abs(values[4 * static_cast<std::size_t>(k) + c]);
    return s;
  }
  TISSUE_HD QuaternionMatrix on_pattern(std::size_t, Span<const std::int32_t> o, Span<const std::int32_t> c,
                                        Span<const double> v) const {
    return {o, c, v};
  }
};

/// The image of edge vector e under the similarity transforms lambda_a, lambda_b of its end points
/// (Crane et al. 2011, §5.3): conj(la) e la / 3 + conj(la) e lb / 6 + conj(lb) e la / 6 + conj(lb) e lb / 3.
TISSUE_HD inline Quaternion transformed_edge(const Quaternion& la, const Quaternion& lb,
                                             const Quaternion& e) {
  const Quaternion ca = conjugate(la), cb = conjugate(lb);
  return (1.0 / 3.0) * hamilton(hamilton(ca, e), la) + (1.0 / 6.0) * hamilton(hamilton(ca, e), lb) +
         (1.0 / 6.0) * hamilton(hamilton(cb, e), la) + (1.0 / 3.0) * hamilton(hamilton(cb, e), lb);
}

}  // namespace tissue::curvature_flow
