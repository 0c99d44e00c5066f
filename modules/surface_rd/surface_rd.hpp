#pragma once
/// @file surface_rd.hpp
/// Two-species reaction-diffusion on triangle meshes (module README: equations, operators, kernels). The
/// system advances a SurfaceField<Real> with explicit Euler (the seed) or RK4, through the seed's baseline
/// kernels (the reference), the assembled one-ring stencils, or several steps per launch on METIS patches
/// (chosen in the scenario; all give the same fields to rounding).

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "engine/exec/device_buffer.hpp"
#include "engine/mesh/device_mesh.hpp"
#include "engine/mesh/mesh_operators.hpp"
#include "engine/mesh/surface_field.hpp"
#include "engine/reactions/reactions.hpp"
#include "engine/schedule/schedule.hpp"
#include "modules/surface_rd/surface_rd_kernels.hpp"

namespace tissue::surface_rd {

/// Discretisation of the chemotactic term -alpha div(f_n grad f_c): upwind edge fluxes on the dual cells
/// (conservative, positive under the README's condition; the default) or the seed's
/// -alpha f_n lap f_c - alpha grad f_n . grad f_c with the vertex gradients of eqs. 3-4.
enum class ChemotaxisScheme { upwind, seed };

/// Parameters of the chemotaxis model (seed eq. 1; defaults: the seed's D = 0.25, r = 1.522,
/// alpha = 12.02, s = 1, N = 1).
struct ChemotaxisParams {
  double D = 0.25, r = 1.522, alpha = 12.02, s = 1.0, N = 1.0;
  ChemotaxisScheme scheme = ChemotaxisScheme::upwind;
};

/// The explicit Euler step below which the upwind chemotaxis scheme keeps f_n >= 0 and 0 <= f_c <= 1
/// (module README, "Positivity"), for a mesh whose cotangent weights are all >= 0: with
/// sigma = max_i sum_j w_ij / A_i [1/length^2],
///   dt_pos = min(1 / ((D + alpha) sigma), 1 / (sigma + s)),
/// and then f_n stays >= 0 at every vertex while f_n <= N + (1 - dt (D + alpha) sigma) / (dt s r)
/// (`density_limit`, infinite for r = 0). negative_weights counts the edges with w_ij < 0 (obtuse
/// opposite angles), for which no step length guarantees positivity.
struct PositivityBound {
  double sigma = 0.0, dt = 0.0;
  std::size_t negative_weights = 0;
  /// The f_n up to which an Euler step of `step` keeps f_n >= 0 (infinite for r = 0; 0 when step > dt).
  double density_limit(const ChemotaxisParams& p, double step) const;
};
/// PositivityBound of the chemotaxis parameters `p` on the cotangent Laplacian `L`.
PositivityBound positivity_bound(const ChemotaxisParams& p, const mesh::CotangentLaplacian& L);

/// The kinetics of the surface field ([surface_rd] model): the seed's chemotaxis model (eq. 1) or a
/// reaction of the reactions module.
enum class Kinetics { chemotaxis, reaction };
enum class Integrator { euler, rk4 };
/// baseline: the seed's four kernels (lap, faceGradients, vertexGradients, update), the reference; stencil:
/// one kernel over the assembled one-ring stencils (Laplacian and vertex-gradient weights per edge), the
/// fastest one-step path; patches: the stencils of METIS patches with halos, steps_per_launch steps per
/// launch in shared memory, the fastest (module README). The benchmark's other paths (fused, ring,
/// ring_weights) are in bench/surface_rd_variants.hpp.
enum class KernelPath { baseline, stencil, patches };

/// The path of a scenario's `surface_rd.kernel` name ("baseline", "stencil", "patches").
/// @throws std::invalid_argument for another name, saying where a path moved to the benchmark went
/// ("fused", "ring", "ring_weights").
KernelPath kernel_path(const std::string& name);
/// The path's name as in scenarios.
const char* kernel_name(KernelPath path);
/// One line for run descriptions ("assembled stencil kernel", ...).
std::string kernel_description(KernelPath path);

/// The patch layout of the `patches` path: about `vertices` own vertices per patch, `levels` halo rings
/// (= explicit steps per launch); levels = 0 builds no patches.
struct PatchSettings {
  int levels = 0;
  std::size_t vertices = 256;
};

struct SurfaceRdParams {
  Kinetics kinetics = Kinetics::chemotaxis;
  ChemotaxisParams chemotaxis;
  reactions::ReactionSpec reaction;  ///< for Kinetics::reaction
  Integrator integrator = Integrator::euler;
  KernelPath path = KernelPath::stencil;
  /// Explicit steps per system call (the schedule runs the system every steps_per_launch steps); the
  /// `patches` path does them in one launch, the others one launch per step.
  int steps_per_launch = 1;
  std::size_t patch_vertices = 256;  ///< `patches`: own vertices per patch (METIS target)
  /// `patches`: threads per block on the GPU (the fastest measured, BENCHMARKS.md); 0: one per local vertex
  /// of the largest patch (at most 1024)
  unsigned patch_threads = 512;

  /// Largest diffusivity acting on either species (chemotaxis: max(D, 1)).
  double max_diffusion() const;
};

/// Calls f with the parameters' model as a kernel functor in precision Real: ChemotaxisUpwind<Real>,
/// Chemotaxis<Real> (scheme "seed") or DiffusionReaction<Real, R> with R the reaction's functor
/// (surface_rd_kernels.hpp).
template <class Real, class F>
void with_model(const SurfaceRdParams& p, F&& f) {
  if (p.kinetics == Kinetics::chemotaxis) {
    const auto& c = p.chemotaxis;
    if (c.scheme == ChemotaxisScheme::upwind)
      f(ChemotaxisUpwind<Real>{static_cast<Real>(c.D), static_cast<Real>(c.r), static_cast<Real>(c.alpha),
                               static_cast<Real>(c.s), static_cast<Real>(c.N)});
    else
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

/// The mesh operators (mesh_operators.hpp) in precision Real on the active backend, in the layouts of the
/// `baseline` and `stencil` paths; with patch settings also the METIS patches of the `patches` path. The
/// double-precision quantities (cotangent weights and areas, face gradients and angles, vertex-gradient
/// stencils, boundary projections, one-rings, patches) and the device connectivity (faces, vertex-vertex
/// and vertex-face CSR) are taken from a mesh::DeviceMesh, built there once and shared with every other
/// module on that mesh; only the Real-precision weights in this path's layouts are built here.
template <class Real>
class MeshOperators {
 public:
  /// Operators on `mesh` (kept alive by this object: its device connectivity is read by the kernels).
  /// @throws InputError when the mesh has a vertex whose faces do not form one fan (mesh::one_ring), or
  /// (patches) a vertex of more than 255 neighbours or a patch of more than 65 536 local vertices.
  explicit MeshOperators(std::shared_ptr<mesh::DeviceMesh> mesh, const PatchSettings& patches = {});
  /// The same on a private mesh::DeviceMesh over a copy of `mesh` with its `topology` (nothing shared).
  MeshOperators(const mesh::TriangleMesh& mesh, const mesh::MeshTopology& topology,
                const PatchSettings& patches = {});
  MeshView<Real> view() const;
  /// The patches (PatchView::levels = 0 when none were built).
  PatchView<Real> patch_view() const;
  std::size_t patch_count() const { return patch_offsets_.size() > 0 ? patch_offsets_.size() - 1 : 0; }
  /// The largest local vertex count (own and halo) of a patch.
  std::size_t patch_capacity() const { return patch_capacity_; }
  /// Sizes of the patch layout, summed over patches: local vertices (own and halo), stencil rows (local
  /// vertices below the outermost level) and stencil slots (neighbours of those rows, padding excluded).
  struct PatchCounts {
    std::size_t local = 0, rows = 0, slots = 0;
  };
  PatchCounts patch_counts() const { return patch_counts_; }
  std::size_t faces() const { return faces_.size() / 3; }
  /// Gershgorin bound on the spectral radius of the Laplacian (mesh::CotangentLaplacian) [1/length^2].
  double spectral_radius_bound() const { return spectral_radius_; }

 private:
  void build_patches(const mesh::OneRing& ring, const std::vector<std::array<double, 4>>& stencil,
                     const PatchSettings& settings);

  std::shared_ptr<mesh::DeviceMesh> mesh_;
  Span<const std::int32_t> offsets_, neighbours_, faces_, face_offsets_, vertex_faces_;  ///< mesh_'s
  DeviceBuffer<Real> weights_, inv_area_, gj_, gk_, face_weight_, boundary_projection_;
  DeviceBuffer<std::int32_t> ring_, ring_degree_;
  DeviceBuffer<StencilWeights<Real>> stencil_;
  std::size_t pitch_ = 0;
  // patches
  DeviceBuffer<std::int32_t> patch_offsets_, patch_vertices_, patch_level_ends_;
  DeviceBuffer<std::int64_t> patch_slot_offsets_;
  DeviceBuffer<std::uint8_t> patch_degree_;
  DeviceBuffer<std::uint16_t> patch_neighbours_;
  DeviceBuffer<StencilWeights<Real>> patch_weights_;
  int patch_levels_ = 0;
  std::size_t patch_capacity_ = 0;
  PatchCounts patch_counts_;
  double spectral_radius_ = 0.0;
};

/// System "surface_rd": one explicit step of ctx.dt on the field. Every path adds the increment to the
/// state with compensated summation (compensated_add, one compensation value per state value, kept by the
/// field and its checkpoints: SurfaceField::compensation), so float states keep moving when rate * dt is
/// below half an ulp, and a restart continues bit for bit.
template <class Real>
class SurfaceRdSystem final : public System {
 public:
  SurfaceRdSystem(const SurfaceRdParams& params, SurfaceField<Real>& field,
                  std::shared_ptr<const MeshOperators<Real>> operators);
  std::string name() const override { return "surface_rd"; }
  AccessList access() const override { return AccessList().read_write("surface", field_.name()); }
  void run(World& world, const StepContext& ctx) override;
  /// Refuses explicit steps (h / steps_per_launch) above the stability bound of the diffusion on the mesh,
  /// 2 / (D_max rho) for Euler and 2.785 / (D_max rho) for RK4 (rho: MeshOperators::spectral_radius_bound).
  /// @throws InputError naming the bound and the sub-cycling that meets it.
  void check_step_length(double h) const override;

  /// max over vertices and species of |f(u)| = |du/dt| at the current state, the model's right-hand side
  /// evaluated by the run's path (the seed's convergence measure, taken from the true rate rather than
  /// from rounded state differences, which vanish when a float state stalls), also before the first step.
  /// A kernel and a reduction on the device.
  double max_rate();

 private:
  SurfaceRdParams params_;
  SurfaceField<Real>& field_;
  std::shared_ptr<const MeshOperators<Real>> ops_;
  /// The time derivative of the path at state u into dudt (both 2 * n).
  void derivative(Span<const Real> u, Span<Real> dudt);
  /// The baseline's operator kernels on u (Laplacians into lap_); returns the vertex gradients (6 * n),
  /// the upwind transport (n) or nothing, as the model needs (stored_derivative).
  template <class Model>
  Span<const Real> baseline(Span<const Real> u, const Model& model);
  DeviceBuffer<Real> lap_, face_grad_, vertex_grad_, rate_;
  DeviceBuffer<Real>
      comp_next_;  ///< `patches`: the compensations after the launch (swapped with the field's)
  DeviceBuffer<Real> k_, inc_, tmp_;  ///< RK4 stages
};

extern template class MeshOperators<float>;
extern template class MeshOperators<double>;
extern template class SurfaceRdSystem<float>;
extern template class SurfaceRdSystem<double>;

}  // namespace tissue::surface_rd
