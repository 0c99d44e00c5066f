#include "modules/surface_rd/surface_rd.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/parallel_for.hpp"

namespace tissue::surface_rd {

double SurfaceRdParams::max_diffusion() const {
  if (model == ModelKind::chemotaxis) return std::max(chemotaxis.D, 1.0);
  return std::max(reaction.diffusion[0], reaction.diffusion[1]);
}

namespace {
template <class To, class From>
std::vector<To> convert(const std::vector<From>& v) {
  return std::vector<To>(v.begin(), v.end());
}
}  // namespace

template <class Real>
MeshOperators<Real>::MeshOperators(const mesh::TriangleMesh& m, const mesh::MeshTopology& topology) {
  const auto L = mesh::cotangent_laplacian(m, topology);
  const auto g = mesh::face_gradients(m);
  const std::size_t n = m.vertex_count(), nf = m.face_count();
  std::vector<double> inv_area(n), gj(3 * nf), gk(3 * nf), face_weight(topology.vertex_faces.size());
  for (std::size_t i = 0; i < n; ++i) inv_area[i] = 1.0 / L.area[i];
  spectral_radius_ = L.spectral_radius_bound();
  for (std::size_t t = 0; t < nf; ++t)
    for (std::size_t c = 0; c < 3; ++c) {
      gj[3 * t + c] = g.gj[t][c];
      gk[3 * t + c] = g.gk[t][c];
    }
  for (std::size_t v = 0; v < n; ++v) {  // eq. 4: incident angles, normalised per vertex
    double total = 0.0;
    const auto first = static_cast<std::size_t>(topology.face_offsets[v]),
               last = static_cast<std::size_t>(topology.face_offsets[v + 1]);
    for (std::size_t k = first; k < last; ++k) {
      const auto t = static_cast<std::size_t>(topology.vertex_faces[k]);
      int corner = 0;
      while (m.corner(t, corner) != static_cast<std::int32_t>(v)) ++corner;
      face_weight[k] = g.angle[3 * t + static_cast<std::size_t>(corner)];
      total += face_weight[k];
    }
    for (std::size_t k = first; k < last; ++k) face_weight[k] /= total;
  }
  // zero flux for the gradients on the boundary (apply_boundary_projection): a = (e1 . e2) / 2 e1, b = e2
  std::vector<double> projection(6 * n, 0.0);
  for (std::size_t v = 0; v < n; ++v) {
    if (!topology.boundary_vertex[v]) continue;
    std::vector<std::array<double, 3>> dirs;
    for (auto k = static_cast<std::size_t>(topology.vertex_offsets[v]);
         k < static_cast<std::size_t>(topology.vertex_offsets[v + 1]); ++k) {
      const auto w = topology.vertex_neighbours[k];
      int faces_on_edge = 0;  // an edge is on the boundary when one face holds both ends
      for (auto j = static_cast<std::size_t>(topology.face_offsets[v]);
           j < static_cast<std::size_t>(topology.face_offsets[v + 1]); ++j) {
        const auto t = static_cast<std::size_t>(topology.vertex_faces[j]);
        if (m.corner(t, 0) == w || m.corner(t, 1) == w || m.corner(t, 2) == w) ++faces_on_edge;
      }
      if (faces_on_edge != 1) continue;
      const auto wi = static_cast<std::size_t>(w);
      std::array<double, 3> e{m.x[wi] - m.x[v], m.y[wi] - m.y[v], m.z[wi] - m.z[v]};
      const double len = std::sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
      for (auto& c : e) c /= len;
      dirs.push_back(e);
    }
    if (dirs.size() != 2) continue;  // a vertex where several boundary loops touch: left unprojected
    const double cosine = dirs[0][0] * dirs[1][0] + dirs[0][1] * dirs[1][1] + dirs[0][2] * dirs[1][2];
    for (std::size_t c = 0; c < 3; ++c) {
      projection[6 * v + c] = 0.5 * cosine * dirs[0][c];
      projection[6 * v + 3 + c] = dirs[1][c];
    }
  }
  boundary_projection_.assign(convert<Real>(projection));
  // the one-ring in padded column-major order: slot k of vertex v at k * pitch + v, pitch a multiple of 32
  const auto ring = mesh::one_ring(m, topology);
  pitch_ = (n + 31) / 32 * 32;
  int width = 0;
  for (std::size_t v = 0; v < n; ++v) width = std::max(width, ring.offsets[v + 1] - ring.offsets[v]);
  std::vector<std::int32_t> ell(static_cast<std::size_t>(width) * pitch_, 0), degree(n);
  for (std::size_t v = 0; v < n; ++v) {
    const int d = ring.offsets[v + 1] - ring.offsets[v];
    degree[v] = ring.closed[v] ? d : -d;
    for (int k = 0; k < d; ++k)
      ell[static_cast<std::size_t>(k) * pitch_ + v] =
          ring.ring[static_cast<std::size_t>(ring.offsets[v] + k)];
  }
  // per slot: Laplacian weight over the area (from the CSR operator) and the normalised angle at v of the
  // face (v, n_k, n_k+1) (0 for the missing last face of a boundary fan)
  std::vector<double> slot_weight(ell.size(), 0.0), slot_angle(ell.size(), 0.0);
  for (std::size_t v = 0; v < n; ++v) {
    const int d = ring.offsets[v + 1] - ring.offsets[v];
    const int faces = ring.closed[v] ? d : d - 1;
    double total = 0.0;
    for (int k = 0; k < d; ++k) {
      const auto nb = ring.ring[static_cast<std::size_t>(ring.offsets[v] + k)];
      const auto row_first = L.neighbours.begin() + L.offsets[v],
                 row_last = L.neighbours.begin() + L.offsets[v + 1];
      const auto at =
          static_cast<std::size_t>(std::lower_bound(row_first, row_last, nb) - L.neighbours.begin());
      slot_weight[static_cast<std::size_t>(k) * pitch_ + v] = L.weights[at] * inv_area[v];
      if (k >= faces) continue;
      const auto a = static_cast<std::size_t>(nb);
      const auto b =
          static_cast<std::size_t>(ring.ring[static_cast<std::size_t>(ring.offsets[v] + (k + 1) % d)]);
      const std::array<double, 3> ea{m.x[a] - m.x[v], m.y[a] - m.y[v], m.z[a] - m.z[v]};
      const std::array<double, 3> eb{m.x[b] - m.x[v], m.y[b] - m.y[v], m.z[b] - m.z[v]};
      const std::array<double, 3> c{ea[1] * eb[2] - ea[2] * eb[1], ea[2] * eb[0] - ea[0] * eb[2],
                                    ea[0] * eb[1] - ea[1] * eb[0]};
      const double theta = std::atan2(std::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]),
                                      ea[0] * eb[0] + ea[1] * eb[1] + ea[2] * eb[2]);
      slot_angle[static_cast<std::size_t>(k) * pitch_ + v] = theta;
      total += theta;
    }
    for (int k = 0; k < faces; ++k) slot_angle[static_cast<std::size_t>(k) * pitch_ + v] /= total;
  }
  std::vector<SlotWeights<Real>> slots(slot_weight.size());
  for (std::size_t k = 0; k < slots.size(); ++k)
    slots[k] = SlotWeights<Real>{static_cast<Real>(slot_weight[k]), static_cast<Real>(slot_angle[k])};
  ring_weights_.assign(slots);
  ring_.assign(ell);
  ring_degree_.assign(degree);
  std::vector<Point<Real>> points(n);
  for (std::size_t v = 0; v < n; ++v)
    points[v] =
        Point<Real>{static_cast<Real>(m.x[v]), static_cast<Real>(m.y[v]), static_cast<Real>(m.z[v]), Real(0)};
  points_.assign(points);
  offsets_.assign(L.offsets);
  neighbours_.assign(L.neighbours);
  faces_.assign(m.faces);
  face_offsets_.assign(topology.face_offsets);
  vertex_faces_.assign(topology.vertex_faces);
  weights_.assign(convert<Real>(L.weights));
  inv_area_.assign(convert<Real>(inv_area));
  gj_.assign(convert<Real>(gj));
  gk_.assign(convert<Real>(gk));
  face_weight_.assign(convert<Real>(face_weight));
}

template <class Real>
MeshView<Real> MeshOperators<Real>::view() const {
  MeshView<Real> v;
  v.offsets = offsets_.span();
  v.neighbours = neighbours_.span();
  v.weights = weights_.span();
  v.inv_area = inv_area_.span();
  v.faces = faces_.span();
  v.gj = gj_.span();
  v.gk = gk_.span();
  v.face_offsets = face_offsets_.span();
  v.vertex_faces = vertex_faces_.span();
  v.face_weight = face_weight_.span();
  v.boundary_projection = boundary_projection_.span();
  v.ring = ring_.span();
  v.ring_degree = ring_degree_.span();
  v.pitch = pitch_;
  v.points = points_.span();
  v.ring_weights = ring_weights_.span();
  return v;
}

namespace {
/// Calls f with the scenario's model as a kernel functor in precision Real.
template <class Real, class F>
void with_model(const SurfaceRdParams& p, F&& f) {
  if (p.model == ModelKind::chemotaxis) {
    const auto& c = p.chemotaxis;
    f(Chemotaxis<Real>{static_cast<Real>(c.D), static_cast<Real>(c.r), static_cast<Real>(c.alpha),
                       static_cast<Real>(c.s), static_cast<Real>(c.N)});
    return;
  }
  const auto da = static_cast<Real>(p.reaction.diffusion[0]), db = static_cast<Real>(p.reaction.diffusion[1]);
  if (p.reaction.kind == reactions::ReactionSpec::Kind::gray_scott)
    f(DiffusionReaction<Real, reactions::GrayScott<Real>>{
        da, db,
        reactions::GrayScott<Real>{static_cast<Real>(p.reaction.gray_scott.F),
                                   static_cast<Real>(p.reaction.gray_scott.k)}});
  else
    f(DiffusionReaction<Real, reactions::Polynomial<Real>>{da, db,
                                                           p.reaction.polynomial.template as<Real>()});
}
}  // namespace

template <class Real>
SurfaceRdSystem<Real>::SurfaceRdSystem(const SurfaceRdParams& params, SurfaceField<Real>& field,
                                       std::shared_ptr<const MeshOperators<Real>> operators)
    : params_(params), field_(field), ops_(std::move(operators)) {}

template <class Real>
void SurfaceRdSystem<Real>::run(World&, const StepContext& ctx) {
  const auto dt = static_cast<Real>(ctx.dt);
  const std::size_t n = field_.vertices();
  const MeshView<Real> m = ops_->view();
  with_model<Real>(params_, [&](auto model) {
    using Model = decltype(model);
    if (params_.integrator == Integrator::rk4) {
      // RK4 stages need the previous state for the rate: keep it in next()
      exec::copy(Span<const Real>(field_.current()), field_.next(), 2 * n);
      rk4_.step(field_.current(), dt, [&](Span<const Real> in, Span<Real> out) {
        exec::parallel_for(n, FusedDerivativeKernel<Real, Model>{m, model, in, out, n});
      });
    } else if (params_.path != KernelPath::baseline) {  // one kernel per step
      const auto step = [&](auto derivative) {
        using Derivative = decltype(derivative);
        exec::parallel_for(
            n, OneKernelEuler<Real, Model, Derivative>{m, model, field_.current(), field_.next(), dt, n});
      };
      if (params_.path == KernelPath::ring_weights)
        step(RingWeightsDerivative{});
      else if (params_.path == KernelPath::ring)
        step(RingDerivative{});
      else
        step(FusedDerivative{});
      field_.swap();
    } else {  // the seed's baseline: lap, faceGradients, vertexGradients, update
      lap_.ensure(2 * n);
      exec::parallel_for(n, LaplacianKernel<Real>{m, field_.current(), lap_.span(), n});
      Span<const Real> grad;
      if (Model::needs_gradients) {
        face_grad_.ensure(6 * ops_->faces());
        vertex_grad_.ensure(6 * n);
        exec::parallel_for(ops_->faces(),
                           FaceGradientKernel<Real>{m, field_.current(), face_grad_.span(), n});
        exec::parallel_for(n, VertexGradientKernel<Real>{m, face_grad_.span(), vertex_grad_.span()});
        grad = vertex_grad_.span();
      }
      exec::parallel_for(
          n, UpdateKernel<Real, Model>{model, field_.current(), lap_.span(), grad, field_.next(), dt, n});
      field_.swap();
    }
  });
  last_dt_ = ctx.dt;
}

template <class Real>
double SurfaceRdSystem<Real>::max_rate() {
  if (last_dt_ <= 0.0) return 0.0;
  const std::size_t values = 2 * field_.vertices();
  rate_.ensure(values);
  // next() holds the state before the last step (Euler swaps; RK4 copied it there)
  exec::parallel_for(values, RateKernel<Real>{field_.current(), field_.next(), rate_.span(),
                                              static_cast<Real>(1.0 / last_dt_)});
  return static_cast<double>(exec::max_value(Span<const Real>(rate_.span().data(), values)));
}

template class MeshOperators<float>;
template class MeshOperators<double>;
template class SurfaceRdSystem<float>;
template class SurfaceRdSystem<double>;

}  // namespace tissue::surface_rd
