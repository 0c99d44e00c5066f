#pragma once
/// @file surface_rd_kernels.hpp
/// Pure TISSUE_HD math of two-species reaction-diffusion on a triangle mesh (seed 000, Descombes, Dhillon,
/// Zwicker): the discrete operators of eqs. 2-4 evaluated from device arrays, the chemotaxis model of
/// eq. 1 and the diffusion + reaction form, and the kernels of the seed's baseline (lap, faceGradients,
/// vertexGradients, update: Fig. 2) and of the fused path (one kernel per step, face gradients recomputed
/// per incident vertex instead of stored). Species a, b are the seed's f_n, f_c for chemotaxis.

#include <cstdint>

#include "engine/exec/config.hpp"
#include "engine/exec/span.hpp"

namespace tissue::surface_rd {

/// The mesh operators as kernels see them (precision Real; built by MeshOperators in surface_rd.hpp).
template <class Real>
struct MeshView {
  Span<const std::int32_t> offsets, neighbours;         ///< vertex-vertex CSR
  Span<const Real> weights;                             ///< (cot a + cot b) / 2 per CSR entry
  Span<const Real> inv_area;                            ///< 1 / mixed Voronoi area per vertex [1/length^2]
  Span<const std::int32_t> faces;                       ///< 3 vertex indices per face
  Span<const Real> gj, gk;                              ///< eq. 3 vectors, 3 per face (x, y, z) [1/length]
  Span<const std::int32_t> face_offsets, vertex_faces;  ///< vertex-face CSR
  Span<const Real> face_weight;  ///< normalised incident angle per vertex-face entry (eq. 4)
  /// Zero-flux condition on the vertex gradients of boundary vertices: g <- (a . g) b with a, b (3 values
  /// each, 6 per vertex) from the vertex's boundary edges; b = 0 marks an interior vertex (no change).
  Span<const Real> boundary_projection;

  /// Applies the boundary projection of vertex i to the vertex gradient g[0..2].
  TISSUE_HD void project_boundary(std::size_t i, Real* g) const {
    const Real* p = boundary_projection.data() + 6 * i;
    if (p[3] == Real(0) && p[4] == Real(0) && p[5] == Real(0)) return;
    const Real ag = p[0] * g[0] + p[1] * g[1] + p[2] * g[2];
    for (int c = 0; c < 3; ++c) g[c] = ag * p[3 + c];
  }

  /// Laplace-Beltrami of species data f at vertex i (eq. 2).
  TISSUE_HD Real laplacian(const Real* f, std::size_t i) const {
    const Real fi = f[i];
    Real s = 0;
    for (auto k = static_cast<std::size_t>(offsets[i]); k < static_cast<std::size_t>(offsets[i + 1]); ++k)
      s += weights[k] * (f[neighbours[k]] - fi);
    return s * inv_area[i];
  }
  /// Gradient of f on face t (eq. 3), into g[0..2].
  TISSUE_HD void face_gradient(const Real* f, std::size_t t, Real* g) const {
    const Real fi = f[faces[3 * t]];
    const Real dj = f[faces[3 * t + 1]] - fi, dk = f[faces[3 * t + 2]] - fi;
    for (int c = 0; c < 3; ++c) g[c] = dj * gj[3 * t + c] + dk * gk[3 * t + c];
  }
};

/// Murray's chemotactic snakeskin model (seed eq. 1), dimensionless:
///   df_n/dt = D lap f_n - alpha f_n lap f_c - alpha grad f_n . grad f_c + s r f_n (N - f_n)
///   df_c/dt = lap f_c + s (f_n / (1 + f_n) - f_c)
template <class Real>
struct Chemotaxis {
  static constexpr bool needs_gradients = true;
  Real D, r, alpha, s, N;
  TISSUE_HD void operator()(Real fn, Real fc, Real lap_n, Real lap_c, Real grad_dot, Real& dn,
                            Real& dc) const {
    dn = D * lap_n - alpha * fn * lap_c - alpha * grad_dot + s * r * fn * (N - fn);
    dc = lap_c + s * (fn / (Real(1) + fn) - fc);
  }
};

/// da/dt = D_a lap a + f(a, b), db/dt = D_b lap b + g(a, b) with a reaction of modules/reactions.
template <class Real, class Reaction>
struct DiffusionReaction {
  static constexpr bool needs_gradients = false;
  Real da, db;
  Reaction reaction;
  TISSUE_HD void operator()(Real a, Real b, Real lap_a, Real lap_b, Real, Real& dadt, Real& dbdt) const {
    Real fa, fb;
    reaction(a, b, fa, fb);
    dadt = da * lap_a + fa;
    dbdt = db * lap_b + fb;
  }
};

// ---- the seed's baseline: four kernels, intermediates in global memory ----

/// lap(): Laplacians of both species per vertex.
template <class Real>
struct LaplacianKernel {
  MeshView<Real> m;
  Span<const Real> u;  ///< 2 * n, species-major
  Span<Real> lap;      ///< 2 * n
  std::size_t n;
  TISSUE_HD void operator()(std::size_t i) const {
    lap[i] = m.laplacian(u.data(), i);
    lap[n + i] = m.laplacian(u.data() + n, i);
  }
};

/// faceGradients(): gradients of both species per face (6 values per face: a xyz, b xyz).
template <class Real>
struct FaceGradientKernel {
  MeshView<Real> m;
  Span<const Real> u;
  Span<Real> grad;  ///< 6 * faces
  std::size_t n;
  TISSUE_HD void operator()(std::size_t t) const {
    m.face_gradient(u.data(), t, grad.data() + 6 * t);
    m.face_gradient(u.data() + n, t, grad.data() + 6 * t + 3);
  }
};

/// vertexGradients(): angle-weighted average of the incident face gradients (6 values per vertex).
template <class Real>
struct VertexGradientKernel {
  MeshView<Real> m;
  Span<const Real> face_grad;
  Span<Real> grad;  ///< 6 * n
  TISSUE_HD void operator()(std::size_t i) const {
    Real g[6] = {0, 0, 0, 0, 0, 0};
    for (auto k = static_cast<std::size_t>(m.face_offsets[i]);
         k < static_cast<std::size_t>(m.face_offsets[i + 1]); ++k) {
      const Real w = m.face_weight[k];
      const std::size_t t = static_cast<std::size_t>(m.vertex_faces[k]);
      for (int c = 0; c < 6; ++c) g[c] += w * face_grad[6 * t + c];
    }
    m.project_boundary(i, g);
    m.project_boundary(i, g + 3);
    for (int c = 0; c < 6; ++c) grad[6 * i + c] = g[c];
  }
};

/// update(): explicit Euler from the stored Laplacians (and vertex gradients when the model needs them).
template <class Real, class Model>
struct UpdateKernel {
  Model model;
  Span<const Real> u, lap, grad;  ///< grad empty when the model needs no gradients
  Span<Real> out;
  Real dt;
  std::size_t n;
  TISSUE_HD void operator()(std::size_t i) const {
    Real dot = 0;
    if (Model::needs_gradients)
      dot = grad[6 * i] * grad[6 * i + 3] + grad[6 * i + 1] * grad[6 * i + 4] +
            grad[6 * i + 2] * grad[6 * i + 5];
    Real da, db;
    model(u[i], u[n + i], lap[i], lap[n + i], dot, da, db);
    out[i] = u[i] + dt * da;
    out[n + i] = u[n + i] + dt * db;
  }
};

// ---- fused: one kernel per step ----

/// Time derivative at vertex i with every operator evaluated on the fly (face gradients of the incident
/// faces recomputed rather than stored).
template <class Real, class Model>
TISSUE_HD void derivative_at(const MeshView<Real>& m, const Model& model, const Real* u, std::size_t n,
                             std::size_t i, Real& da, Real& db) {
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

/// Fused explicit Euler step.
template <class Real, class Model>
struct FusedEulerKernel {
  MeshView<Real> m;
  Model model;
  Span<const Real> u;
  Span<Real> out;
  Real dt;
  std::size_t n;
  TISSUE_HD void operator()(std::size_t i) const {
    Real da, db;
    derivative_at(m, model, u.data(), n, i, da, db);
    out[i] = u[i] + dt * da;
    out[n + i] = u[n + i] + dt * db;
  }
};

/// Fused time derivative (for RK4): dudt = f(u).
template <class Real, class Model>
struct FusedDerivativeKernel {
  MeshView<Real> m;
  Model model;
  Span<const Real> u;
  Span<Real> dudt;
  std::size_t n;
  TISSUE_HD void operator()(std::size_t i) const {
    Real da, db;
    derivative_at(m, model, u.data(), n, i, da, db);
    dudt[i] = da;
    dudt[n + i] = db;
  }
};

/// |u - previous| / dt per value (the rate a convergence test reduces).
template <class Real>
struct RateKernel {
  Span<const Real> u, previous;
  Span<Real> rate;
  Real inv_dt;
  TISSUE_HD void operator()(std::size_t i) const {
    const Real d = u[i] - previous[i];
    rate[i] = (d < Real(0) ? -d : d) * inv_dt;
  }
};

}  // namespace tissue::surface_rd
