#include "modules/surface_rd/surface_rd.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/block_for.hpp"
#include "engine/exec/error.hpp"
#include "engine/exec/parallel_for.hpp"
#include "engine/mesh/mesh_partition.hpp"

namespace tissue::surface_rd {

PositivityBound positivity_bound(const ChemotaxisParams& p, const mesh::CotangentLaplacian& L) {
  PositivityBound b;
  const std::size_t n = L.area.size();
  for (std::size_t i = 0; i < n; ++i) {
    double row = 0.0;
    for (auto k = static_cast<std::size_t>(L.offsets[i]); k < static_cast<std::size_t>(L.offsets[i + 1]);
         ++k) {
      row += std::abs(L.weights[k]);
      if (L.weights[k] < 0.0 && static_cast<std::size_t>(L.neighbours[k]) > i) ++b.negative_weights;
    }
    b.sigma = std::max(b.sigma, row / L.area[i]);
  }
  b.dt = std::min(1.0 / ((p.D + p.alpha) * b.sigma), 1.0 / (b.sigma + p.s));
  return b;
}

double PositivityBound::density_limit(const ChemotaxisParams& p, double step) const {
  if (step > dt) return 0.0;
  if (p.r <= 0.0) return INFINITY;
  return p.N + (1.0 - step * (p.D + p.alpha) * sigma) / (step * p.s * p.r);
}

double SurfaceRdParams::max_diffusion() const {
  if (kinetics == Kinetics::chemotaxis) return std::max(chemotaxis.D, 1.0);
  return std::max(reaction.diffusion[0], reaction.diffusion[1]);
}

namespace {
/// Every path with its scenario name and its words in run descriptions.
struct PathName {
  KernelPath path;
  const char* name;
  const char* description;
};
constexpr PathName kPaths[] = {
    {KernelPath::baseline, "baseline", "baseline kernels"},
    {KernelPath::stencil, "stencil", "assembled stencil kernel"},
    {KernelPath::patches, "patches", "METIS patches in shared memory"},
};
const PathName& entry(KernelPath path) {
  for (const auto& p : kPaths)
    if (p.path == path) return p;
  throw std::logic_error("surface_rd: a kernel path without a name");
}
}  // namespace

KernelPath kernel_path(const std::string& name) {
  for (const auto& p : kPaths)
    if (name == p.name) return p.path;
  std::string known;
  for (const auto& p : kPaths) known += (known.empty() ? "\"" : ", \"") + std::string(p.name) + "\"";
  // the paths moved out of the module (issue 31, item 8): bench_surface_rd still times them
  for (const char* moved : {"fused", "ring", "ring_weights"})
    if (name == moved)
      throw std::invalid_argument("the \"" + name +
                                  "\" kernel path moved to the benchmark (bench/surface_rd_variants.hpp, "
                                  "bench_surface_rd); scenarios choose one of " +
                                  known + " (\"stencil\" is the fastest one-step path)");
  throw std::invalid_argument("expected one of " + known + ", got \"" + name + "\"");
}

const char* kernel_name(KernelPath path) {
  return entry(path).name;
}

std::string kernel_description(KernelPath path) {
  return entry(path).description;
}

namespace {
template <class To, class From>
std::vector<To> convert(const std::vector<From>& v) {
  return std::vector<To>(v.begin(), v.end());
}

/// The assembled one-ring stencils (StencilWeights, in double) of every vertex in one-ring order: slot k
/// of vertex v (neighbour ring.ring[ring.offsets[v] + k]) at index ring.offsets[v] + k.
std::vector<std::array<double, 4>> assemble_stencils(std::size_t n, const mesh::CotangentLaplacian& L,
                                                     const mesh::VertexGradientOperator& G,
                                                     const mesh::OneRing& ring,
                                                     const std::vector<double>& projection) {
  std::vector<std::array<double, 4>> stencil(ring.ring.size());
  for (std::size_t v = 0; v < n; ++v) {
    const double* a = projection.data() + 6 * v;
    const double* b = a + 3;
    const bool project = b[0] != 0.0 || b[1] != 0.0 || b[2] != 0.0;
    for (auto k = static_cast<std::size_t>(ring.offsets[v]);
         k < static_cast<std::size_t>(ring.offsets[v + 1]); ++k) {
      const auto row_first = L.neighbours.begin() + L.offsets[v],
                 row_last = L.neighbours.begin() + L.offsets[v + 1];
      const auto at = static_cast<std::size_t>(std::lower_bound(row_first, row_last, ring.ring[k]) -
                                               L.neighbours.begin());
      std::array<double, 3> gv = G.weights[at];  // same CSR as L (the topology's)
      if (project) apply_boundary_projection(a, b, gv.data());
      stencil[k] = {L.weights[at] / L.area[v], gv[0], gv[1], gv[2]};
    }
  }
  return stencil;
}

}  // namespace

template <class Real>
MeshOperators<Real>::MeshOperators(const mesh::TriangleMesh& m, const mesh::MeshTopology& topology,
                                   const PatchSettings& patches)
    : MeshOperators(
          std::make_shared<mesh::DeviceMesh>(std::make_shared<const mesh::TriangleMesh>(m), topology),
          patches) {}

template <class Real>
MeshOperators<Real>::MeshOperators(std::shared_ptr<mesh::DeviceMesh> device_mesh,
                                   const PatchSettings& patches)
    : mesh_(std::move(device_mesh)) {
  const mesh::TriangleMesh& m = mesh_->mesh();
  const mesh::MeshTopology& topology = mesh_->topology();
  const auto& L = mesh_->require_cotangent_laplacian();
  const auto& g = mesh_->require_face_gradients();
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
  const std::vector<double>& projection = mesh_->require_boundary_projections();
  boundary_projection_.assign(convert<Real>(projection));
  // the one-ring in padded column-major order: slot k of vertex v at k * pitch + v, pitch a multiple of 32
  const auto& ring = mesh_->require_one_ring();
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
  ring_.assign(ell);
  ring_degree_.assign(degree);
  // the assembled stencils (`stencil` path), in the ring's layout
  const auto stencil = assemble_stencils(n, L, mesh_->require_vertex_gradient_operator(), ring, projection);
  const auto to_weights = [](const std::array<double, 4>& w) {
    return StencilWeights<Real>{static_cast<Real>(w[0]), static_cast<Real>(w[1]), static_cast<Real>(w[2]),
                                static_cast<Real>(w[3])};
  };
  {
    std::vector<StencilWeights<Real>> ell_stencil(ell.size(), StencilWeights<Real>{0, 0, 0, 0});
    for (std::size_t v = 0; v < n; ++v)
      for (int k = 0; k < ring.offsets[v + 1] - ring.offsets[v]; ++k)
        ell_stencil[static_cast<std::size_t>(k) * pitch_ + v] =
            to_weights(stencil[static_cast<std::size_t>(ring.offsets[v] + k)]);
    stencil_.assign(ell_stencil);
  }
  if (patches.levels > 0) build_patches(ring, stencil, patches);
  // the connectivity is the mesh's, shared (L's CSR is the topology's vertex-vertex CSR)
  const mesh::DeviceTopology& device = mesh_->require_device_topology();
  offsets_ = device.vertex_offsets.span();
  neighbours_ = device.vertex_neighbours.span();
  faces_ = device.faces.span();
  face_offsets_ = device.face_offsets.span();
  vertex_faces_ = device.vertex_faces.span();
  weights_.assign(convert<Real>(L.weights));
  inv_area_.assign(convert<Real>(inv_area));
  gj_.assign(convert<Real>(gj));
  gk_.assign(convert<Real>(gk));
  face_weight_.assign(convert<Real>(face_weight));
}

template <class Real>
void MeshOperators<Real>::build_patches(const mesh::OneRing& ring,
                                        const std::vector<std::array<double, 4>>& stencil,
                                        const PatchSettings& settings) {
  const std::size_t n = mesh_->vertex_count();
  const mesh::MeshPatches& patches = mesh_->require_patches(settings.vertices, settings.levels);
  const int levels = settings.levels;
  std::vector<std::int64_t> slot_offsets(patches.patches());
  std::vector<std::uint8_t> degree(patches.vertices.size(), 0);
  std::vector<std::uint16_t> neighbours;
  std::vector<StencilWeights<Real>> weights;
  std::vector<std::int32_t> local_of(n, -1);
  patch_capacity_ = 0;
  for (std::size_t p = 0; p < patches.patches(); ++p) {
    const auto base = static_cast<std::size_t>(patches.offsets[p]);
    const std::size_t count = patches.local_count(p), rows = patches.level_end(p, levels - 1);
    if (count > 65536)
      throw InputError("surface_rd: a mesh patch has " + std::to_string(count) +
                       " vertices with its halo, more than the 65 536 of 16-bit local indices: lower "
                       "patch_vertices or steps_per_launch");
    patch_capacity_ = std::max(patch_capacity_, count);
    patch_counts_.local += count;
    patch_counts_.rows += rows;
    for (std::size_t l = 0; l < count; ++l)
      local_of[static_cast<std::size_t>(patches.vertices[base + l])] = static_cast<std::int32_t>(l);
    std::size_t width = 0;
    for (std::size_t l = 0; l < rows; ++l) {
      const auto v = static_cast<std::size_t>(patches.vertices[base + l]);
      const auto d = static_cast<std::size_t>(ring.offsets[v + 1] - ring.offsets[v]);
      if (d > 255)
        throw InputError("surface_rd: vertex " + std::to_string(v + 1) + " has " + std::to_string(d) +
                         " neighbours; the patches path allows 255");
      degree[base + l] = static_cast<std::uint8_t>(d);
      width = std::max(width, d);
      patch_counts_.slots += d;
    }
    slot_offsets[p] = static_cast<std::int64_t>(neighbours.size());
    neighbours.resize(neighbours.size() + width * rows, 0);
    weights.resize(neighbours.size(), StencilWeights<Real>{0, 0, 0, 0});
    for (std::size_t l = 0; l < rows; ++l) {
      const auto v = static_cast<std::size_t>(patches.vertices[base + l]);
      for (std::size_t k = 0; k < degree[base + l]; ++k) {
        const auto at = static_cast<std::size_t>(ring.offsets[v]) + k;
        const std::int32_t local = local_of[static_cast<std::size_t>(ring.ring[at])];
        // a vertex of level < levels has all its neighbours in the patch (level <= levels)
        if (local < 0 || patches.vertices[base + static_cast<std::size_t>(local)] != ring.ring[at])
          throw std::logic_error("surface_rd patches: a stencil neighbour is outside its patch");
        const std::size_t slot = static_cast<std::size_t>(slot_offsets[p]) + k * rows + l;
        neighbours[slot] = static_cast<std::uint16_t>(local);
        weights[slot] =
            StencilWeights<Real>{static_cast<Real>(stencil[at][0]), static_cast<Real>(stencil[at][1]),
                                 static_cast<Real>(stencil[at][2]), static_cast<Real>(stencil[at][3])};
      }
    }
  }
  patch_levels_ = levels;
  patch_offsets_.assign(patches.offsets);
  patch_vertices_.assign(patches.vertices);
  patch_level_ends_.assign(patches.level_ends);
  patch_slot_offsets_.assign(slot_offsets);
  patch_degree_.assign(degree);
  patch_neighbours_.assign(neighbours);
  patch_weights_.assign(weights);
}

template <class Real>
PatchView<Real> MeshOperators<Real>::patch_view() const {
  PatchView<Real> v;
  v.offsets = patch_offsets_.span();
  v.vertices = patch_vertices_.span();
  v.level_ends = patch_level_ends_.span();
  v.slot_offsets = patch_slot_offsets_.span();
  v.degree = patch_degree_.span();
  v.neighbours = patch_neighbours_.span();
  v.weights = patch_weights_.span();
  v.levels = patch_levels_;
  return v;
}

template <class Real>
MeshView<Real> MeshOperators<Real>::view() const {
  MeshView<Real> v;
  v.offsets = offsets_;
  v.neighbours = neighbours_;
  v.weights = weights_.span();
  v.inv_area = inv_area_.span();
  v.faces = faces_;
  v.gj = gj_.span();
  v.gk = gk_.span();
  v.face_offsets = face_offsets_;
  v.vertex_faces = vertex_faces_;
  v.face_weight = face_weight_.span();
  v.boundary_projection = boundary_projection_.span();
  v.ring = ring_.span();
  v.ring_degree = ring_degree_.span();
  v.pitch = pitch_;
  v.stencil = stencil_.span();
  return v;
}

template <class Real>
SurfaceRdSystem<Real>::SurfaceRdSystem(const SurfaceRdParams& params, SurfaceField<Real>& field,
                                       std::shared_ptr<const MeshOperators<Real>> operators)
    : params_(params), field_(field), ops_(std::move(operators)) {}

template <class Real>
void SurfaceRdSystem<Real>::check_step_length(double h) const {
  const double step = h / params_.steps_per_launch;
  const double limit = (params_.integrator == Integrator::rk4 ? 2.785 : 2.0) /
                       (params_.max_diffusion() * ops_->spectral_radius_bound());
  if (step <= limit) return;
  std::ostringstream msg;
  msg << "surface field " << field_.name() << ": the explicit step " << step
      << " exceeds the stability bound " << limit
      << " of the diffusion on its mesh (D_max = " << params_.max_diffusion()
      << "); sub-cycle it with [schedule] " << name()
      << " = { substeps = " << static_cast<long long>(std::ceil(step / limit)) << " }";
  throw InputError(msg.str());
}

template <class Real>
void SurfaceRdSystem<Real>::derivative(Span<const Real> u, Span<Real> dudt) {
  const std::size_t n = field_.vertices();
  const MeshView<Real> m = ops_->view();
  with_model<Real>(params_, [&](auto model) {
    using Model = decltype(model);
    if (params_.path == KernelPath::baseline) {  // the seed's first three kernels, then the derivative
      const Span<const Real> grad = baseline(u, model);
      exec::parallel_for(n, StoredDerivativeKernel<Real, Model>{model, u, lap_.span(), grad, dudt, n});
    } else {  // stencil, and patches (their operators are the same stencils)
      exec::parallel_for(n, DerivativeKernel<Real, Model, StencilDerivative>{m, model, u, dudt, n});
    }
  });
}

template <class Real>
template <class Model>
Span<const Real> SurfaceRdSystem<Real>::baseline(Span<const Real> u, const Model&) {
  // the seed's lap, faceGradients and vertexGradients on u: the Laplacians into lap_ and, when the model
  // needs them, the vertex gradients into vertex_grad_ (returned), or the upwind transport (returned)
  const std::size_t n = field_.vertices();
  const MeshView<Real> m = ops_->view();
  lap_.ensure(2 * n);
  exec::parallel_for(n, LaplacianKernel<Real>{m, u, lap_.span(), n});
  if (Model::needs_gradients) {
    face_grad_.ensure(6 * ops_->faces());
    vertex_grad_.ensure(6 * n);
    exec::parallel_for(ops_->faces(), FaceGradientKernel<Real>{m, u, face_grad_.span(), n});
    exec::parallel_for(n, VertexGradientKernel<Real>{m, face_grad_.span(), vertex_grad_.span()});
    return vertex_grad_.span();
  }
  if (Model::upwind) {
    vertex_grad_.ensure(n);
    exec::parallel_for(n, UpwindTransportKernel<Real>{m, u, vertex_grad_.span(), n});
    return vertex_grad_.span();
  }
  return {};
}

template <class Real>
void SurfaceRdSystem<Real>::run(World&, const StepContext& ctx) {
  const int steps = params_.steps_per_launch;
  const auto dt = static_cast<Real>(ctx.dt / steps);
  const std::size_t n = field_.vertices();
  const MeshView<Real> m = ops_->view();
  // the compensations are the field's (checkpointed with it): zero at the start, a restart's continue
  const Span<Real> comp = field_.compensation().subspan(0, 2 * n);
  Span<Real> comp_next;
  if (params_.path == KernelPath::patches) {  // blocks read their halo's compensations: double-buffered
    comp_next_.ensure(2 * n);
    comp_next = comp_next_.span().subspan(0, 2 * n);
  }
  if (params_.integrator == Integrator::rk4) {
    // classic RK4 (Kutta 1901), its increment dt/6 (k1 + 2 k2 + 2 k3 + k4) added with compensation
    k_.ensure(2 * n);
    inc_.ensure(2 * n);
    tmp_.ensure(2 * n);
    const Span<Real> k = k_.span().subspan(0, 2 * n), inc = inc_.span().subspan(0, 2 * n),
                     tmp = tmp_.span().subspan(0, 2 * n);
    for (int s = 0; s < steps; ++s) {
      const Span<const Real> u = field_.current();
      derivative(u, k);
      exec::parallel_for(2 * n, Rk4Stage<Real>{u, k, inc, tmp, dt / 6, dt / 2, true});
      derivative(tmp, k);
      exec::parallel_for(2 * n, Rk4Stage<Real>{u, k, inc, tmp, dt / 3, dt / 2, false});
      derivative(tmp, k);
      exec::parallel_for(2 * n, Rk4Stage<Real>{u, k, inc, tmp, dt / 3, dt, false});
      derivative(tmp, k);
      exec::parallel_for(2 * n, Rk4Finish<Real>{inc, k, field_.current(), comp, dt / 6});
    }
    return;
  }
  with_model<Real>(params_, [&](auto model) {
    using Model = decltype(model);
    if (params_.path == KernelPath::patches) {  // all steps in one launch
      const PatchView<Real> v = ops_->patch_view();
      if (v.levels != steps)
        throw std::logic_error("surface_rd: the patches were built for another steps_per_launch");
      const std::size_t capacity = ops_->patch_capacity();
      const unsigned threads =
          params_.patch_threads > 0
              ? params_.patch_threads
              : static_cast<unsigned>(std::min<std::size_t>(1024, (capacity + 31) / 32 * 32));
      exec::block_for(ops_->patch_count(), threads, PatchEuler<Real, Model>::shared_bytes(capacity),
                      PatchEuler<Real, Model>{v, model, field_.current(), field_.next(), comp, comp_next, dt,
                                              n, capacity});
      field_.swap();
      field_.compensation_buffer().swap(comp_next_);
      return;
    }
    for (int s = 0; s < steps; ++s) {
      if (params_.path ==
          KernelPath::baseline) {  // the seed's baseline: lap, faceGradients, vertexGradients, update
        const Span<const Real> grad = baseline(field_.current(), model);
        exec::parallel_for(n, UpdateKernel<Real, Model>{model, field_.current(), lap_.span(), grad,
                                                        field_.next(), comp, dt, n});
      } else {  // stencil: one kernel per step
        exec::parallel_for(n, OneKernelEuler<Real, Model, StencilDerivative>{m, model, field_.current(),
                                                                             field_.next(), comp, dt, n});
      }
      field_.swap();
    }
  });
}

template <class Real>
double SurfaceRdSystem<Real>::max_rate() {
  const std::size_t values = 2 * field_.vertices();
  rate_.ensure(values);
  const Span<Real> rate = rate_.span().subspan(0, values);
  derivative(Span<const Real>(field_.current()), rate);
  exec::parallel_for(values, AbsKernel<Real>{rate});
  return static_cast<double>(exec::max_value(Span<const Real>(rate)));
}

template class MeshOperators<float>;
template class MeshOperators<double>;
template class SurfaceRdSystem<float>;
template class SurfaceRdSystem<double>;

}  // namespace tissue::surface_rd
