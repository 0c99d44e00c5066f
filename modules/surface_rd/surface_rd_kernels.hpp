#pragma once
/// @file surface_rd_kernels.hpp
/// Pure TISSUE_HD math of two-species reaction-diffusion on a triangle mesh (seed 000, Descombes, Dhillon,
/// Zwicker): the discrete operators of eqs. 2-4 evaluated from device arrays, the chemotaxis model of
/// eq. 1 and the diffusion + reaction form, and the kernels of the module's paths: the seed's baseline (lap,
/// faceGradients, vertexGradients, update: Fig. 2; the reference), `stencil` (one kernel per step over the
/// assembled one-ring stencils) and `patches` (several steps per launch on mesh patches in shared memory).
/// The benchmark's other paths (fused, ring, ring_weights) are in bench/surface_rd_variants_kernels.hpp.
/// Species a, b are the seed's f_n, f_c for chemotaxis.

#include <cstdint>

#include "engine/exec/block_for.hpp"
#include "engine/exec/config.hpp"
#include "engine/exec/math.hpp"
#include "engine/exec/span.hpp"

namespace tissue::surface_rd {

/// The zero-flux projection of a boundary vertex's gradient g (modules/surface_rd/README.md): with unit
/// boundary edge directions e1, e2, P = ((e2 e2^T)(e1 e1^T) + (e1 e1^T)(e2 e2^T)) / 2, symmetric in e1, e2:
/// the derivative along a straight boundary (e2 = -e1) is kept, a right-angled corner gives 0. Arguments:
/// a = (e1 . e2) / 2 e1, b = e2.
template <class Real>
TISSUE_HD void apply_boundary_projection(const Real* a, const Real* b, Real* g) {
  const Real ag = a[0] * g[0] + a[1] * g[1] + a[2] * g[2];
  const Real bg = b[0] * g[0] + b[1] * g[1] + b[2] * g[2];
  for (int c = 0; c < 3; ++c) g[c] = ag * b[c] + bg * a[c];
}

/// The assembled stencil of one ring slot (the `stencil` and `patches` paths): the Laplacian weight
/// (cot a + cot b) / (2 A_i) of the edge to neighbour k [1/length^2] and its vertex-gradient weight
/// (mesh::VertexGradientOperator, eqs. 3-4, with the zero-flux projection of a boundary vertex applied)
/// [1/length], so that lap f(i) = sum_k laplacian_k (f_k - f_i) and grad f(i) = sum_k g_k (f_k - f_i).
/// One aligned 4-value load per slot.
template <class Real>
struct alignas(4 * sizeof(Real)) StencilWeights {
  Real laplacian, gx, gy, gz;
};

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
  /// Zero-flux condition on the vertex gradients of boundary vertices: g <- (a . g) b + (b . g) a with
  /// a = (e1 . e2) / 2 e1 and b = e2 (3 values each, 6 per vertex; boundary_projection()); b = 0 marks an
  /// interior vertex (no change).
  Span<const Real> boundary_projection;

  // the one-ring layout of the `stencil` path (Fig. 7's padded column-major "device array"): neighbour slot k
  // of vertex i at ring[k * pitch + i], counter-clockwise; ring_degree[i] = neighbour count, negative for a
  // boundary fan (open: its first and last neighbours are the boundary neighbours)
  Span<const std::int32_t> ring, ring_degree;
  std::size_t pitch = 0;
  /// Per ring slot (same layout as `ring`): the assembled stencil of the `stencil` path.
  Span<const StencilWeights<Real>> stencil;

  /// Applies the boundary projection of vertex i to the vertex gradient g[0..2].
  TISSUE_HD void project_boundary(std::size_t i, Real* g) const {
    const Real* p = boundary_projection.data() + 6 * i;
    if (p[3] == Real(0) && p[4] == Real(0) && p[5] == Real(0)) return;
    apply_boundary_projection(p, p + 3, g);
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

/// Compensated (Kahan 1965) addition u + inc: returns the rounded sum and carries the part of inc that
/// rounded away in `c` (one value per state value, of the state's precision), so that increments far below
/// half an ulp of u still accumulate (issue 38, item 3: float states near 1 froze at dt ~ 3e-5). No
/// multiplication is involved, so contraction to FMA cannot change it; needs IEEE addition (no -ffast-math).
template <class Real>
TISSUE_HD Real compensated_add(Real u, Real inc, Real& c) {
  const Real y = inc - c;
  const Real t = u + y;
  c = (t - u) - y;
  return t;
}

/// Murray's chemotactic snakeskin model (seed eq. 1), dimensionless, in the seed's discretisation:
///   df_n/dt = D lap f_n - alpha f_n lap f_c - alpha grad f_n . grad f_c + s r f_n (N - f_n)
///   df_c/dt = lap f_c + s (f_n / (1 + f_n) - f_c)
/// `transport` is grad f_n . grad f_c (eqs. 3-4). Neither conservative nor positive (module README).
template <class Real>
struct Chemotaxis {
  static constexpr bool needs_gradients = true;
  static constexpr bool upwind = false;
  Real D, r, alpha, s, N;
  TISSUE_HD void operator()(Real fn, Real fc, Real lap_n, Real lap_c, Real grad_dot, Real& dn,
                            Real& dc) const {
    dn = D * lap_n - alpha * fn * lap_c - alpha * grad_dot + s * r * fn * (N - fn);
    dc = lap_c + s * (fn / (Real(1) + fn) - fc);
  }
};

/// The chemotaxis model with the chemotactic term -alpha div(f_n grad f_c) as first-order upwind fluxes on
/// the dual (Voronoi) cells (finite-volume Keller-Segel, Chertock & Kurganov 2008):
///   A_i df_n,i/dt = D sum_j w_ij (f_n,j - f_n,i) - alpha sum_j w_ij (f_c,j - f_c,i) f_n,up(ij) + A_i s r
///   f_n,i (N - f_n,i)
/// with w_ij = (cot a + cot b) / 2 and f_n,up(ij) = f_n,i if f_c,j > f_c,i else f_n,j (the density of the
/// cell the flux leaves). The edge fluxes are antisymmetric, so sum_i A_i f_n,i is conserved by the
/// chemotaxis; positivity conditions: module README. `transport` is
/// sum_j (w_ij / A_i) (f_c,j - f_c,i) f_n,up(ij) [1/time per alpha] (upwind_transport).
template <class Real>
struct ChemotaxisUpwind {
  static constexpr bool needs_gradients = false;
  static constexpr bool upwind = true;
  Real D, r, alpha, s, N;
  TISSUE_HD void operator()(Real fn, Real fc, Real lap_n, Real lap_c, Real transport, Real& dn,
                            Real& dc) const {
    dn = D * lap_n - alpha * transport + s * r * fn * (N - fn);
    dc = lap_c + s * (fn / (Real(1) + fn) - fc);
  }
};

/// One edge's term of ChemotaxisUpwind's transport at vertex i: weight (f_c,j - f_c,i) times the upwind
/// density (f_n,i where f_c rises towards j: the flux leaves i; f_n,j otherwise).
template <class Real>
TISSUE_HD Real upwind_transport(Real weight, Real fn_i, Real fn_j, Real dc) {
  return weight * dc * (dc > Real(0) ? fn_i : fn_j);
}

/// da/dt = D_a lap a + f(a, b), db/dt = D_b lap b + g(a, b) with a reaction of engine/reactions.
template <class Real, class Reaction>
struct DiffusionReaction {
  static constexpr bool needs_gradients = false;
  static constexpr bool upwind = false;
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

/// The upwind chemotactic transport per vertex (ChemotaxisUpwind) over the vertex-vertex CSR, the
/// baseline's counterpart of the stencil path's: sum_j (w_ij / A_i) (f_c,j - f_c,i) f_n,up(ij).
template <class Real>
struct UpwindTransportKernel {
  MeshView<Real> m;
  Span<const Real> u;    ///< 2 * n, species-major (f_n, f_c)
  Span<Real> transport;  ///< n
  std::size_t n;
  TISSUE_HD void operator()(std::size_t i) const {
    const Real ni = u[i], ci = u[n + i];
    Real s = 0;
    for (auto k = static_cast<std::size_t>(m.offsets[i]); k < static_cast<std::size_t>(m.offsets[i + 1]);
         ++k) {
      const auto j = static_cast<std::size_t>(m.neighbours[k]);
      s += upwind_transport(m.weights[k], ni, u[j], u[n + j] - ci);
    }
    transport[i] = s * m.inv_area[i];
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

/// The time derivative at vertex i from the stored Laplacians (2 * n) and `grad`: the vertex gradients
/// (6 * n) when the model needs them, the upwind transport (n, UpwindTransportKernel) for an upwind model,
/// empty otherwise.
template <class Real, class Model>
TISSUE_HD void stored_derivative(const Model& model, const Span<const Real>& u, const Span<const Real>& lap,
                                 const Span<const Real>& grad, std::size_t n, std::size_t i, Real& da,
                                 Real& db) {
  Real dot = 0;
  if (Model::needs_gradients)
    dot =
        grad[6 * i] * grad[6 * i + 3] + grad[6 * i + 1] * grad[6 * i + 4] + grad[6 * i + 2] * grad[6 * i + 5];
  if (Model::upwind) dot = grad[i];
  model(u[i], u[n + i], lap[i], lap[n + i], dot, da, db);
}

/// update(): explicit Euler from the stored Laplacians (and vertex gradients or upwind transport when the
/// model needs them), compensated (compensated_add; `comp` 2 * n, read and written in place).
template <class Real, class Model>
struct UpdateKernel {
  Model model;
  Span<const Real> u, lap, grad;  ///< grad: see stored_derivative
  Span<Real> out, comp;
  Real dt;
  std::size_t n;
  TISSUE_HD void operator()(std::size_t i) const {
    Real da, db;
    stored_derivative(model, u, lap, grad, n, i, da, db);
    out[i] = compensated_add(u[i], dt * da, comp[i]);
    out[n + i] = compensated_add(u[n + i], dt * db, comp[n + i]);
  }
};

/// The baseline's time derivative dudt = f(u) from the stored Laplacians and vertex gradients (RK4 stages
/// through the seed's kernels: lap, faceGradients, vertexGradients, then this instead of update).
template <class Real, class Model>
struct StoredDerivativeKernel {
  Model model;
  Span<const Real> u, lap, grad;  ///< grad empty when the model needs no gradients
  Span<Real> dudt;
  std::size_t n;
  TISSUE_HD void operator()(std::size_t i) const {
    Real da, db;
    stored_derivative(model, u, lap, grad, n, i, da, db);
    dudt[i] = da;
    dudt[n + i] = db;
  }
};

// ---- stencil: one kernel per step over the assembled one-ring stencils ----

/// The time derivative at a vertex from its assembled one-ring stencil (StencilWeights): `degree` slots,
/// slots(k, w, a_k, b_k) loads slot k's weights and the neighbour's values of both species. The same
/// arithmetic, in the same order, for the `stencil` path (global arrays) and the `patches` path (a
/// patch's values in shared memory), so that both give the same bits.
template <class Real, class Model, class Slots>
TISSUE_HD void stencil_derivative(const Model& model, Real ai, Real bi, int degree, const Slots& slots,
                                  Real& da, Real& db) {
  Real lap_a = 0, lap_b = 0, ga[3] = {0, 0, 0}, gb[3] = {0, 0, 0}, transport = 0;
  for (int k = 0; k < degree; ++k) {
    StencilWeights<Real> w;
    Real aj, bj;
    slots(k, w, aj, bj);
    const Real dA = aj - ai, dB = bj - bi;
    lap_a += w.laplacian * dA;
    lap_b += w.laplacian * dB;
    if (Model::needs_gradients) {
      ga[0] += w.gx * dA, ga[1] += w.gy * dA, ga[2] += w.gz * dA;
      gb[0] += w.gx * dB, gb[1] += w.gy * dB, gb[2] += w.gz * dB;
    }
    if (Model::upwind) transport += upwind_transport(w.laplacian, ai, aj, dB);
  }
  if (Model::needs_gradients) transport = ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2];
  model(ai, bi, lap_a, lap_b, transport, da, db);
}

/// Slot loader of the `stencil` path: the ring layout over global arrays.
template <class Real>
struct GlobalSlots {
  const MeshView<Real>& m;
  const Real* u;
  std::size_t n, i;
  TISSUE_HD void operator()(int k, StencilWeights<Real>& w, Real& a, Real& b) const {
    const std::size_t slot = static_cast<std::size_t>(k) * m.pitch + i;
    w = m.stencil[slot];
    const auto j = static_cast<std::size_t>(m.ring[slot]);
    a = u[j];
    b = u[n + j];
  }
};

/// How the `stencil` path evaluates the time derivative at a vertex (a tag for OneKernelEuler and
/// DerivativeKernel).
struct StencilDerivative {
  template <class Real, class Model>
  TISSUE_HD static void at(const MeshView<Real>& m, const Model& model, const Real* u, std::size_t n,
                           std::size_t i, Real& da, Real& db) {
    const int d = m.ring_degree[i];
    stencil_derivative(model, u[i], u[n + i], d < 0 ? -d : d, GlobalSlots<Real>{m, u, n, i}, da, db);
  }
};

/// One explicit Euler step in one kernel, the derivative evaluated by Derivative (a tag such as
/// StencilDerivative), compensated (compensated_add; `comp` 2 * n, read and written in place).
template <class Real, class Model, class Derivative>
struct OneKernelEuler {
  MeshView<Real> m;
  Model model;
  Span<const Real> u;
  Span<Real> out, comp;
  Real dt;
  std::size_t n;
  TISSUE_HD void operator()(std::size_t i) const {
    Real da, db;
    Derivative::at(m, model, u.data(), n, i, da, db);
    out[i] = compensated_add(u[i], dt * da, comp[i]);
    out[n + i] = compensated_add(u[n + i], dt * db, comp[n + i]);
  }
};

// ---- patches: several steps per launch, a mesh patch and its halo in shared memory ----

/// The patch layout as kernels see it (mesh::MeshPatches with the assembled stencils of its vertices;
/// built by PatchOperators in surface_rd.hpp). Local vertex l of patch p is global vertex
/// vertices[offsets[p] + l]; the stencil of a local vertex of level < levels is stored per patch in
/// padded column-major order: slot k of local vertex l at slot_offsets[p] + k * pitch(p) + l, its
/// neighbours as local indices.
template <class Real>
struct PatchView {
  Span<const std::int32_t> offsets;       ///< patches + 1
  Span<const std::int32_t> vertices;      ///< global index per local vertex
  Span<const std::int32_t> level_ends;    ///< (levels + 1) per patch: local vertices of level <= l
  Span<const std::int64_t> slot_offsets;  ///< per patch: first slot of its stencils
  Span<const std::uint8_t> degree;        ///< per local vertex: stencil slots (0 at level `levels`)
  Span<const std::uint16_t> neighbours;   ///< per slot: local index of the neighbour
  Span<const StencilWeights<Real>> weights;
  int levels = 0;  ///< halo rings = explicit steps per launch

  TISSUE_HD std::size_t level_end(std::size_t p, int l) const {
    return static_cast<std::size_t>(
        level_ends[p * static_cast<std::size_t>(levels + 1) + static_cast<std::size_t>(l)]);
  }
  /// Stencil rows stored for patch p: its local vertices of level < levels.
  TISSUE_HD std::size_t pitch(std::size_t p) const { return level_end(p, levels - 1); }
};

/// Slot loader of the `patches` path: a patch's stencils and its values in block scratch memory.
template <class Real>
struct PatchSlots {
  const PatchView<Real>& v;
  const Real *a, *b;  ///< local values of both species
  std::size_t first, pitch, l;
  TISSUE_HD void operator()(int k, StencilWeights<Real>& w, Real& aj, Real& bj) const {
    const std::size_t slot = first + static_cast<std::size_t>(k) * pitch + l;
    w = v.weights[slot];
    const std::size_t j = v.neighbours[slot];
    aj = a[j];
    bj = b[j];
  }
};

/// `levels` explicit Euler steps of dt per launch, one patch per block (exec::block_for with
/// shared_bytes(max local count)): the block loads its patch and halo, advances level <= levels - s at
/// step s in scratch memory (each step reads only values the previous step made valid), and writes its
/// own vertices and their compensations. Bit-identical to `levels` launches of the `stencil` path (halo
/// vertices carry their compensation too, so their redundant steps are the owner's).
template <class Real, class Model>
struct PatchEuler {
  PatchView<Real> v;
  Model model;
  Span<const Real> u;  ///< 2 * n, species-major
  Span<Real> out;      ///< 2 * n
  /// 2 * n each: the compensations (compensated_add) before and after the launch; two arrays, since a block
  /// reads its halo's compensations, which the blocks owning those vertices write
  Span<const Real> comp;
  Span<Real> comp_out;
  Real dt;
  std::size_t n, capacity;  ///< capacity: the largest local vertex count of any patch

  /// Scratch bytes per block: two buffers of both species and their compensations.
  static std::size_t shared_bytes(std::size_t capacity) { return 6 * capacity * sizeof(Real); }

  TISSUE_HD void operator()(const exec::Block& block) const {
    const std::size_t p = block.index();
    const std::size_t base = static_cast<std::size_t>(v.offsets[p]);
    const std::size_t count = static_cast<std::size_t>(v.offsets[p + 1]) - base;
    Real* a = static_cast<Real*>(block.shared());
    Real* b = a + capacity;
    Real* a_next = b + capacity;
    Real* b_next = a_next + capacity;
    Real* ca = b_next + capacity;
    Real* cb = ca + capacity;
    block.for_each(count, [&](std::size_t l) {
      const auto g = static_cast<std::size_t>(v.vertices[base + l]);
      a[l] = u[g];
      b[l] = u[n + g];
      ca[l] = comp[g];
      cb[l] = comp[n + g];
    });
    block.sync();
    const std::size_t first = static_cast<std::size_t>(v.slot_offsets[p]), pitch = v.pitch(p);
    for (int s = 1; s <= v.levels; ++s) {
      block.for_each(v.level_end(p, v.levels - s), [&](std::size_t l) {
        Real da, db;
        stencil_derivative(model, a[l], b[l], static_cast<int>(v.degree[base + l]),
                           PatchSlots<Real>{v, a, b, first, pitch, l}, da, db);
        a_next[l] = compensated_add(a[l], dt * da, ca[l]);
        b_next[l] = compensated_add(b[l], dt * db, cb[l]);
      });
      block.sync();
      Real* t = a;
      a = a_next, a_next = t;
      t = b;
      b = b_next, b_next = t;
    }
    block.for_each(v.level_end(p, 0), [&](std::size_t l) {
      const auto g = static_cast<std::size_t>(v.vertices[base + l]);
      out[g] = a[l];
      out[n + g] = b[l];
      comp_out[g] = ca[l];
      comp_out[n + g] = cb[l];
    });
  }
};

/// The time derivative dudt = f(u) by a one-kernel path's Derivative (for RK4 stages of `stencil`).
template <class Real, class Model, class Derivative>
struct DerivativeKernel {
  MeshView<Real> m;
  Model model;
  Span<const Real> u;
  Span<Real> dudt;
  std::size_t n;
  TISSUE_HD void operator()(std::size_t i) const {
    Real da, db;
    Derivative::at(m, model, u.data(), n, i, da, db);
    dudt[i] = da;
    dudt[n + i] = db;
  }
};

/// x <- |x| per value (the true rate |f(u)| a convergence test reduces, from a DerivativeKernel's output).
template <class Real>
struct AbsKernel {
  Span<Real> x;
  TISSUE_HD void operator()(std::size_t i) const { x[i] = x[i] < Real(0) ? -x[i] : x[i]; }
};

// ---- RK4 with a compensated final update (the engine's RungeKutta4 rounds dt/6 k1 into u) ----

/// RK4 stage combination: inc = c1 k (first) or inc += c1 k; tmp = u + c2 k.
template <class Real>
struct Rk4Stage {
  Span<const Real> u, k;
  Span<Real> inc, tmp;
  Real c1, c2;
  bool first;
  TISSUE_HD void operator()(std::size_t i) const {
    inc[i] = first ? c1 * k[i] : inc[i] + c1 * k[i];
    tmp[i] = u[i] + c2 * k[i];
  }
};

/// RK4's last stage: u <- u + (inc + c k), compensated (compensated_add).
template <class Real>
struct Rk4Finish {
  Span<const Real> inc, k;
  Span<Real> u, comp;
  Real c;
  TISSUE_HD void operator()(std::size_t i) const { u[i] = compensated_add(u[i], inc[i] + c * k[i], comp[i]); }
};

}  // namespace tissue::surface_rd
