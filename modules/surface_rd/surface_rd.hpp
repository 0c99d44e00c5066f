#pragma once
/// @file surface_rd.hpp
/// Two-species reaction-diffusion on triangle meshes (module README: equations, operators, kernels). The
/// system advances a SurfaceField<Real> with explicit Euler (the seed) or RK4, through the seed's baseline
/// kernels or the fused kernel (chosen in the scenario; both give the same fields to rounding).

#include <memory>
#include <string>
#include <vector>

#include "engine/exec/device_buffer.hpp"
#include "engine/integrate/runge_kutta.hpp"
#include "engine/mesh/mesh_operators.hpp"
#include "engine/mesh/surface_field.hpp"
#include "engine/schedule/schedule.hpp"
#include "modules/reactions/reactions.hpp"
#include "modules/surface_rd/surface_rd_kernels.hpp"

namespace tissue::surface_rd {

/// Parameters of the chemotaxis model (seed eq. 1; defaults: the seed's D = 0.25, r = 1.522,
/// alpha = 12.02, s = 1, N = 1).
struct ChemotaxisParams {
  double D = 0.25, r = 1.522, alpha = 12.02, s = 1.0, N = 1.0;
};

enum class ModelKind { chemotaxis, reaction };
enum class Integrator { euler, rk4 };
/// baseline: the seed's four kernels (lap, faceGradients, vertexGradients, update); fused: one kernel over
/// the stored operators; ring: one kernel recomputing the geometry from the one-ring positions (least
/// traffic).
enum class KernelPath { baseline, fused, ring, ring_weights };

struct SurfaceRdParams {
  ModelKind model = ModelKind::chemotaxis;
  ChemotaxisParams chemotaxis;
  reactions::ReactionSpec reaction;  ///< for ModelKind::reaction
  Integrator integrator = Integrator::euler;
  KernelPath path = KernelPath::fused;

  /// Largest diffusivity acting on either species (chemotaxis: max(D, 1)).
  double max_diffusion() const;
};

/// The mesh operators (mesh_operators.hpp) in precision Real on the active backend.
template <class Real>
class MeshOperators {
 public:
  /// @throws InputError when the mesh has a vertex whose faces do not form one fan (mesh::one_ring).
  MeshOperators(const mesh::TriangleMesh& mesh, const mesh::MeshTopology& topology);
  MeshView<Real> view() const;
  std::size_t faces() const { return faces_.size() / 3; }
  /// Gershgorin bound on the spectral radius of the Laplacian (mesh::CotangentLaplacian) [1/length^2].
  double spectral_radius_bound() const { return spectral_radius_; }

 private:
  DeviceBuffer<std::int32_t> offsets_, neighbours_, faces_, face_offsets_, vertex_faces_;
  DeviceBuffer<Real> weights_, inv_area_, gj_, gk_, face_weight_, boundary_projection_;
  DeviceBuffer<std::int32_t> ring_, ring_degree_;
  DeviceBuffer<Point<Real>> points_;
  DeviceBuffer<SlotWeights<Real>> ring_weights_;
  std::size_t pitch_ = 0;
  double spectral_radius_ = 0.0;
};

/// System "surface_rd": one explicit step of ctx.dt on the field.
template <class Real>
class SurfaceRdSystem final : public System {
 public:
  SurfaceRdSystem(const SurfaceRdParams& params, SurfaceField<Real>& field,
                  std::shared_ptr<const MeshOperators<Real>> operators);
  std::string name() const override { return "surface_rd"; }
  std::vector<std::string> reads() const override { return {"surface." + field_.name()}; }
  std::vector<std::string> writes() const override { return {"surface." + field_.name()}; }
  void run(World& world, const StepContext& ctx) override;

  /// max over vertices and species of |du/dt| in the last step (the seed's convergence measure); 0 before
  /// the first step. A reduction on the device.
  double max_rate();

 private:
  SurfaceRdParams params_;
  SurfaceField<Real>& field_;
  std::shared_ptr<const MeshOperators<Real>> ops_;
  integrate::RungeKutta4<Real> rk4_;
  DeviceBuffer<Real> lap_, face_grad_, vertex_grad_, rate_;
  double last_dt_ = 0.0;
};

extern template class MeshOperators<float>;
extern template class MeshOperators<double>;
extern template class SurfaceRdSystem<float>;
extern template class SurfaceRdSystem<double>;

}  // namespace tissue::surface_rd
