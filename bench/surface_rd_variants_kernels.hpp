#pragma once
/// @file surface_rd_variants_kernels.hpp
/// Pure TISSUE_HD math of the surface reaction-diffusion paths that left modules/surface_rd for the
/// benchmark (issue 31, item 8: a module keeps its reference path and its fastest): `fused` (one kernel per
/// step over the baseline's stored operators, face gradients recomputed per incident vertex), `ring` (the
/// geometry recomputed from the one-ring positions) and `ring_weights` (ring with the Laplacian weights and
/// incident angles stored per ring slot). The operators are those of modules/surface_rd/README.md (seed
/// 000, eqs. 2-4); bench_surface_rd times these paths next to the module's.
///
/// - `fused`: one thread per vertex; the Laplacians and the vertex gradients evaluated on the fly from the
///   baseline's stored operators, the gradients of the incident faces recomputed rather than stored. The
///   baseline's arithmetic in the baseline's order.
/// - `ring`: one thread per vertex, every geometric quantity (cotangents, mixed area, face gradients,
///   incident angles, boundary directions) recomputed from the positions of the vertex's one-ring, in the
///   module's padded column-major ring layout. It reads 60 bytes per vertex-step in float (fields,
///   positions padded to one 16-byte load, ring indices) instead of about 220 for the stored operators and
///   trades them for arithmetic. In float the position differences carry rounding of order |x| / edge times
///   float epsilon (1e-4 of the change on the scaled bunny); in double the baseline's fields to 1e-11.
/// - `ring_weights`: `ring` with the Laplacian weights (over the areas) and the normalised incident angles
///   stored per ring slot in the same layout; only the face gradients come from the positions.

#include <cstdint>

#include "engine/exec/config.hpp"
#include "engine/exec/math.hpp"
#include "engine/exec/span.hpp"
#include "modules/surface_rd/surface_rd_kernels.hpp"

namespace tissue::surface_rd::variants {

/// A vertex position padded to 4 values, so that a gather of one position is a single aligned load.
template <class Real>
struct alignas(4 * sizeof(Real)) Point {
  Real x, y, z, w;
};

/// The two weights of a ring slot, loaded together.
template <class Real>
struct alignas(2 * sizeof(Real)) SlotWeights {
  Real laplacian, angle;
};

/// The operators as the variants see them: the module's (the baseline's CSR and vertex-face lists, the
/// ring layout, the boundary projections) and the variants' own, in the ring's padded column-major layout.
template <class Real>
struct VariantView {
  MeshView<Real> m;
  Span<const Point<Real>> points;  ///< vertex positions [length], one aligned (x, y, z, 0) per vertex
  /// Per ring slot (slot k of vertex i at k * m.pitch + i), one aligned pair: the Laplacian weight
  /// (cot a + cot b) / (2 A_i) of the edge to neighbour k [1/length^2], and the normalised angle at i of the
  /// face (i, n_k, n_k+1) (eq. 4 weight; 0 for the missing last face of a boundary fan).
  Span<const SlotWeights<Real>> ring_weights;
};

// ---- fused: one kernel per step over the stored operators ----

/// The `fused` path: the time derivative at vertex i with every operator evaluated on the fly (face gradients
/// of the incident faces recomputed rather than stored).
template <class Real, class Model>
TISSUE_HD void fused_derivative_at(const VariantView<Real>& v, const Model& model, const Real* u,
                                   std::size_t n, std::size_t i, Real& da, Real& db) {
  const MeshView<Real>& m = v.m;
  const Real lap_a = m.laplacian(u, i), lap_b = m.laplacian(u + n, i);
  Real dot = 0;
  if (Model::needs_gradients) {
    Real ga[3] = {0, 0, 0}, gb[3] = {0, 0, 0}, fa[3], fb[3];
    for (auto k = static_cast<std::size_t>(m.face_offsets[i]);
         k < static_cast<std::size_t>(m.face_offsets[i + 1]); ++k) {
      const Real w = m.face_weight[k];
      const std::size_t t = static_cast<std::size_t>(m.vertex_faces[k]);
      m.face_gradient(u, t, fa);
      m.face_gradient(u + n, t, fb);
      for (int c = 0; c < 3; ++c) {
        ga[c] += w * fa[c];
        gb[c] += w * fb[c];
      }
    }
    m.project_boundary(i, ga);
    m.project_boundary(i, gb);
    dot = ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2];
  }
  model(u[i], u[n + i], lap_a, lap_b, dot, da, db);
}

/// The `ring` path: the time derivative at vertex i with every geometric quantity recomputed from the
/// positions of its one-ring (cotangents, mixed Voronoi area, face gradients, incident angles, boundary
/// directions): the same operators as mesh_operators.hpp (eqs. 2-4), to rounding, reading only positions,
/// fields and neighbour indices.
template <class Real, class Model>
TISSUE_HD void ring_derivative_at(const VariantView<Real>& v, const Model& model, const Real* u,
                                  std::size_t n, std::size_t i, Real& da, Real& db) {
  const MeshView<Real>& m = v.m;
  const int signed_degree = m.ring_degree[i];
  const bool open = signed_degree < 0;
  const int degree = open ? -signed_degree : signed_degree;
  const int faces = open ? degree - 1 : degree;
  const Point<Real> pi = v.points[i];
  const Real xi = pi.x, yi = pi.y, zi = pi.z;
  const Real ai = u[i], bi = u[n + i];
  Real lap_a = 0, lap_b = 0, area = 0, theta_sum = 0;
  Real ga[3] = {0, 0, 0}, gb[3] = {0, 0, 0};
  // the previous face's far corner is this face's near corner: carry its position and values
  std::size_t j = static_cast<std::size_t>(m.ring[i]);
  const Point<Real> p0 = v.points[j];
  Real ej[3] = {p0.x - xi, p0.y - yi, p0.z - zi};
  Real aj = u[j], bj = u[n + j];
  for (int k = 0; k < faces; ++k) {
    const int next = k + 1 == degree ? 0 : k + 1;
    const std::size_t l = static_cast<std::size_t>(m.ring[static_cast<std::size_t>(next) * m.pitch + i]);
    // face (i, j, l), counter-clockwise
    const Point<Real> pl = v.points[l];
    const Real el[3] = {pl.x - xi, pl.y - yi, pl.z - zi};
    const Real al = u[l], bl = u[n + l];
    const Real nrm[3] = {ej[1] * el[2] - ej[2] * el[1], ej[2] * el[0] - ej[0] * el[2],
                         ej[0] * el[1] - ej[1] * el[0]};
    const Real nn = nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2];
    const Real inv2a = math::rsqrt(nn);  // 1 / (2 A_T)
    const Real two_area = nn * inv2a;
    const Real jj = ej[0] * ej[0] + ej[1] * ej[1] + ej[2] * ej[2];
    const Real ll = el[0] * el[0] + el[1] * el[1] + el[2] * el[2];
    const Real dot_i = ej[0] * el[0] + ej[1] * el[1] + ej[2] * el[2];
    const Real dot_j = jj - dot_i;  // (x_i - x_j) . (x_l - x_j)
    const Real dot_l = ll - dot_i;  // (x_i - x_l) . (x_j - x_l)
    const Real cot_i = dot_i * inv2a, cot_j = dot_j * inv2a, cot_l = dot_l * inv2a;
    // eq. 2: half cotangents of the two edges at i in this face
    lap_a += Real(0.5) * (cot_l * (aj - ai) + cot_j * (al - ai));
    lap_b += Real(0.5) * (cot_l * (bj - bi) + cot_j * (bl - bi));
    // mixed Voronoi area (Meyer et al. 2003, Fig. 4)
    if (cot_i >= Real(0) && cot_j >= Real(0) && cot_l >= Real(0))
      area += Real(0.125) * (ll * cot_j + jj * cot_l);
    else
      area += (cot_i < Real(0) ? Real(0.25) : Real(0.125)) * two_area;
    if (Model::needs_gradients) {
      // eq. 3 with the face's corners ordered (i, j, l): n x e / (2 A_T), n = nrm / |nrm|; with
      // e = x_i - x_l and e = x_j - x_i: r1 = el x nrm, r2 = nrm x ej, both / |nrm|^2
      const Real s2 = inv2a * inv2a;
      const Real r1[3] = {(el[1] * nrm[2] - el[2] * nrm[1]) * s2, (el[2] * nrm[0] - el[0] * nrm[2]) * s2,
                          (el[0] * nrm[1] - el[1] * nrm[0]) * s2};
      const Real r2[3] = {(nrm[1] * ej[2] - nrm[2] * ej[1]) * s2, (nrm[2] * ej[0] - nrm[0] * ej[2]) * s2,
                          (nrm[0] * ej[1] - nrm[1] * ej[0]) * s2};
      // eq. 4: weighted by the angle at i
      const Real theta = math::atan2(two_area, dot_i);
      theta_sum += theta;
      const Real daj = aj - ai, dal = al - ai, dbj = bj - bi, dbl = bl - bi;
      for (int c = 0; c < 3; ++c) {
        ga[c] += theta * (daj * r1[c] + dal * r2[c]);
        gb[c] += theta * (dbj * r1[c] + dbl * r2[c]);
      }
    }
    for (int c = 0; c < 3; ++c) ej[c] = el[c];
    aj = al;
    bj = bl;
  }
  lap_a /= area;
  lap_b /= area;
  Real dot = 0;
  if (Model::needs_gradients) {
    for (int c = 0; c < 3; ++c) {
      ga[c] /= theta_sum;
      gb[c] /= theta_sum;
    }
    if (open) {  // zero flux: the boundary neighbours are the first and the last of the ring
      const std::size_t first = static_cast<std::size_t>(m.ring[i]);
      const std::size_t last =
          static_cast<std::size_t>(m.ring[static_cast<std::size_t>(degree - 1) * m.pitch + i]);
      const Point<Real> pf = v.points[first], pe = v.points[last];
      Real e1[3] = {pf.x - xi, pf.y - yi, pf.z - zi};
      Real e2[3] = {pe.x - xi, pe.y - yi, pe.z - zi};
      const Real n1 = Real(1) / math::sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]);
      const Real n2 = Real(1) / math::sqrt(e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2]);
      for (int c = 0; c < 3; ++c) {
        e1[c] *= n1;
        e2[c] *= n2;
      }
      const Real half_cos = Real(0.5) * (e1[0] * e2[0] + e1[1] * e2[1] + e1[2] * e2[2]);
      const Real a[3] = {half_cos * e1[0], half_cos * e1[1], half_cos * e1[2]};
      apply_boundary_projection(a, e2, ga);
      apply_boundary_projection(a, e2, gb);
    }
    dot = ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2];
  }
  model(ai, bi, lap_a, lap_b, dot, da, db);
}

/// The `ring_weights` path: as ring_derivative_at, with the Laplacian weights (over the areas) and the
/// normalised incident angles read per ring slot instead of recomputed (no square root, arc tangent or area
/// logic per face); face gradients still from the positions.
template <class Real, class Model>
TISSUE_HD void ring_weights_derivative_at(const VariantView<Real>& v, const Model& model, const Real* u,
                                          std::size_t n, std::size_t i, Real& da, Real& db) {
  const MeshView<Real>& m = v.m;
  const int signed_degree = m.ring_degree[i];
  const bool open = signed_degree < 0;
  const int degree = open ? -signed_degree : signed_degree;
  const Point<Real> pi = v.points[i];
  const Real ai = u[i], bi = u[n + i];
  Real lap_a = 0, lap_b = 0;
  Real ga[3] = {0, 0, 0}, gb[3] = {0, 0, 0};
  std::size_t j = static_cast<std::size_t>(m.ring[i]);
  const Point<Real> p0 = v.points[j];
  Real ej[3] = {p0.x - pi.x, p0.y - pi.y, p0.z - pi.z};
  Real aj = u[j], bj = u[n + j];
  for (int k = 0; k < degree; ++k) {
    const std::size_t slot = static_cast<std::size_t>(k) * m.pitch + i;
    const SlotWeights<Real> sw = v.ring_weights[slot];
    const Real w = sw.laplacian;
    lap_a += w * (aj - ai);
    lap_b += w * (bj - bi);
    const int next = k + 1 == degree ? 0 : k + 1;
    const std::size_t l = static_cast<std::size_t>(m.ring[static_cast<std::size_t>(next) * m.pitch + i]);
    const Point<Real> pl = v.points[l];
    const Real el[3] = {pl.x - pi.x, pl.y - pi.y, pl.z - pi.z};
    const Real al = u[l], bl = u[n + l];
    if (Model::needs_gradients && (k + 1 < degree || !open)) {
      const Real nrm[3] = {ej[1] * el[2] - ej[2] * el[1], ej[2] * el[0] - ej[0] * el[2],
                           ej[0] * el[1] - ej[1] * el[0]};
      const Real s2 = Real(1) / (nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
      const Real r1[3] = {(el[1] * nrm[2] - el[2] * nrm[1]) * s2, (el[2] * nrm[0] - el[0] * nrm[2]) * s2,
                          (el[0] * nrm[1] - el[1] * nrm[0]) * s2};
      const Real r2[3] = {(nrm[1] * ej[2] - nrm[2] * ej[1]) * s2, (nrm[2] * ej[0] - nrm[0] * ej[2]) * s2,
                          (nrm[0] * ej[1] - nrm[1] * ej[0]) * s2};
      const Real theta = sw.angle;
      const Real daj = aj - ai, dal = al - ai, dbj = bj - bi, dbl = bl - bi;
      for (int c = 0; c < 3; ++c) {
        ga[c] += theta * (daj * r1[c] + dal * r2[c]);
        gb[c] += theta * (dbj * r1[c] + dbl * r2[c]);
      }
    }
    for (int c = 0; c < 3; ++c) ej[c] = el[c];
    aj = al;
    bj = bl;
  }
  Real dot = 0;
  if (Model::needs_gradients) {
    if (open) m.project_boundary(i, ga), m.project_boundary(i, gb);
    dot = ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2];
  }
  model(ai, bi, lap_a, lap_b, dot, da, db);
}

/// How a variant evaluates the time derivative at a vertex: the stored operators (fused), the geometry
/// recomputed from the one-ring (ring), or per-slot weights (ring_weights).
struct FusedDerivative {
  template <class Real, class Model>
  TISSUE_HD static void at(const VariantView<Real>& v, const Model& model, const Real* u, std::size_t n,
                           std::size_t i, Real& da, Real& db) {
    fused_derivative_at(v, model, u, n, i, da, db);
  }
};
struct RingDerivative {
  template <class Real, class Model>
  TISSUE_HD static void at(const VariantView<Real>& v, const Model& model, const Real* u, std::size_t n,
                           std::size_t i, Real& da, Real& db) {
    ring_derivative_at(v, model, u, n, i, da, db);
  }
};
struct RingWeightsDerivative {
  template <class Real, class Model>
  TISSUE_HD static void at(const VariantView<Real>& v, const Model& model, const Real* u, std::size_t n,
                           std::size_t i, Real& da, Real& db) {
    ring_weights_derivative_at(v, model, u, n, i, da, db);
  }
};

/// One explicit Euler step in one kernel, the derivative evaluated by Derivative (a tag above).
template <class Real, class Model, class Derivative>
struct VariantEuler {
  VariantView<Real> v;
  Model model;
  Span<const Real> u;  ///< 2 * n, species-major
  Span<Real> out;      ///< 2 * n
  Real dt;
  std::size_t n;
  TISSUE_HD void operator()(std::size_t i) const {
    Real da, db;
    Derivative::at(v, model, u.data(), n, i, da, db);
    out[i] = u[i] + dt * da;
    out[n + i] = u[n + i] + dt * db;
  }
};

}  // namespace tissue::surface_rd::variants
