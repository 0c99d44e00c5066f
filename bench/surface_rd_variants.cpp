#include "bench/surface_rd_variants.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "engine/exec/parallel_for.hpp"
#include "engine/mesh/mesh_operators.hpp"

namespace tissue::surface_rd::variants {

const char* variant_name(Variant variant) {
  switch (variant) {
    case Variant::fused:
      return "fused";
    case Variant::ring:
      return "ring";
    case Variant::ring_weights:
      return "ring_weights";
  }
  throw std::logic_error("surface_rd variants: a variant without a name");
}

template <class Real>
VariantOperators<Real>::VariantOperators(const mesh::TriangleMesh& m, const mesh::MeshTopology& topology,
                                         std::shared_ptr<const MeshOperators<Real>> operators)
    : ops_(std::move(operators)) {
  const auto L = mesh::cotangent_laplacian(m, topology);
  const auto ring = mesh::one_ring(m, topology);
  const std::size_t n = m.vertex_count(), pitch = ops_->view().pitch;  // the module's ring layout
  int width = 0;
  for (std::size_t v = 0; v < n; ++v) width = std::max(width, ring.offsets[v + 1] - ring.offsets[v]);
  // per slot k of vertex v (at k * pitch + v): the Laplacian weight over the area (from the CSR operator)
  // and the normalised angle at v of the face (v, n_k, n_k+1) (0 for the missing last face of a boundary fan)
  std::vector<double> slot_weight(static_cast<std::size_t>(width) * pitch, 0.0),
      slot_angle(slot_weight.size(), 0.0);
  for (std::size_t v = 0; v < n; ++v) {
    const int d = ring.offsets[v + 1] - ring.offsets[v];
    const int faces = ring.closed[v] ? d : d - 1;
    const double inv_area = 1.0 / L.area[v];
    double total = 0.0;
    for (int k = 0; k < d; ++k) {
      const auto nb = ring.ring[static_cast<std::size_t>(ring.offsets[v] + k)];
      const auto row_first = L.neighbours.begin() + L.offsets[v],
                 row_last = L.neighbours.begin() + L.offsets[v + 1];
      const auto at =
          static_cast<std::size_t>(std::lower_bound(row_first, row_last, nb) - L.neighbours.begin());
      slot_weight[static_cast<std::size_t>(k) * pitch + v] = L.weights[at] * inv_area;
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
      slot_angle[static_cast<std::size_t>(k) * pitch + v] = theta;
      total += theta;
    }
    for (int k = 0; k < faces; ++k) slot_angle[static_cast<std::size_t>(k) * pitch + v] /= total;
  }
  std::vector<SlotWeights<Real>> slots(slot_weight.size());
  for (std::size_t k = 0; k < slots.size(); ++k)
    slots[k] = SlotWeights<Real>{static_cast<Real>(slot_weight[k]), static_cast<Real>(slot_angle[k])};
  ring_weights_.assign(slots);
  std::vector<Point<Real>> points(n);
  for (std::size_t v = 0; v < n; ++v)
    points[v] =
        Point<Real>{static_cast<Real>(m.x[v]), static_cast<Real>(m.y[v]), static_cast<Real>(m.z[v]), Real(0)};
  points_.assign(points);
}

template <class Real>
VariantView<Real> VariantOperators<Real>::view() const {
  return VariantView<Real>{ops_->view(), points_.span(), ring_weights_.span()};
}

template <class Real>
VariantSystem<Real>::VariantSystem(Variant variant, const SurfaceRdParams& params, SurfaceField<Real>& field,
                                   std::shared_ptr<const VariantOperators<Real>> operators)
    : variant_(variant), params_(params), field_(field), ops_(std::move(operators)) {
  if (params_.integrator != Integrator::euler)
    throw std::invalid_argument(std::string("surface_rd variant ") + variant_name(variant) +
                                ": explicit Euler steps only");
  if (params_.kinetics == Kinetics::chemotaxis && params_.chemotaxis.scheme != ChemotaxisScheme::seed)
    throw std::invalid_argument(
        std::string("surface_rd variant ") + variant_name(variant) +
        ": evaluates the seed's chemotaxis scheme only (chemotaxis.scheme = \"seed\")");
}

template <class Real>
void VariantSystem<Real>::run(World&, const StepContext& ctx) {
  const int steps = params_.steps_per_launch;
  const auto dt = static_cast<Real>(ctx.dt / steps);
  const std::size_t n = field_.vertices();
  const VariantView<Real> v = ops_->view();
  with_model<Real>(params_, [&](auto model) {
    using Model = decltype(model);
    const auto step = [&](auto derivative) {
      using Derivative = decltype(derivative);
      for (int s = 0; s < steps; ++s) {
        exec::parallel_for(
            n, VariantEuler<Real, Model, Derivative>{v, model, field_.current(), field_.next(), dt, n});
        field_.swap();
      }
    };
    switch (variant_) {
      case Variant::fused:
        return step(FusedDerivative{});
      case Variant::ring:
        return step(RingDerivative{});
      case Variant::ring_weights:
        return step(RingWeightsDerivative{});
    }
  });
}

template class VariantOperators<float>;
template class VariantOperators<double>;
template class VariantSystem<float>;
template class VariantSystem<double>;

}  // namespace tissue::surface_rd::variants
