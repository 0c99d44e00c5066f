#pragma once
/// @file grid_rd.hpp
/// Two-species reaction-diffusion on a 2D/3D structured grid (module README: equations, stencils,
/// stability, kernels). The system advances a GridField<Real> with explicit Euler (the seed) or RK4.

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "engine/grid/grid.hpp"
#include "engine/integrate/runge_kutta.hpp"
#include "engine/reactions/reactions.hpp"
#include "engine/schedule/schedule.hpp"
#include "modules/grid_rd/grid_rd_kernels.hpp"

namespace tissue::grid_rd {

enum class Integrator { euler, rk4 };

/// How the Euler step runs on the CUDA backend: `automatic` takes the tuned kernels of cuda/ where they
/// support the configuration (results are bit-identical to the generic functor), `generic` always runs
/// the functor through parallel_for.
enum class Kernel { automatic, generic };

struct GridRdParams {
  GridShape shape;
  std::array<GridBoundary, 6> faces{GridBoundary::periodic, GridBoundary::periodic, GridBoundary::periodic,
                                    GridBoundary::periodic, GridBoundary::periodic, GridBoundary::periodic};
  std::array<std::array<double, 2>, 6> dirichlet{};  ///< ghost values per face and species
  Stencil stencil = Stencil::seed9;
  Integrator integrator = Integrator::euler;
  Kernel kernel = Kernel::automatic;
  int steps_per_launch = 1;  ///< Euler steps per system call; > 1 allows temporal blocking on the GPU
  reactions::ReactionSpec reaction;

  /// Largest stable dt of the diffusion part for the stencil, diffusivities and integrator:
  /// 2 / (D_max lambda) for Euler, 2.785 / (D_max lambda) for RK4 (lambda: laplacian_spectral_radius).
  double stability_limit() const;
  /// Geometry with the boundaries and Dirichlet values, in precision Real.
  template <class Real>
  GridGeometry<Real> geometry() const;
  /// What the kernels take: geometry, stencil, 1/h^2 and the diffusivities, in precision Real.
  template <class Real>
  RdParams<Real> kernel_params() const;
};

/// System "grid_rd": steps_per_launch explicit steps of ctx.dt / steps_per_launch on the field. On the
/// CUDA backend, one-step launches of consecutive calls overlap when nothing else runs between them
/// (StepChain in step_chain.hpp, kept by the system across calls).
template <class Real>
class GridRdSystem final : public System {
 public:
  GridRdSystem(const GridRdParams& params, GridField<Real>& field);
  ~GridRdSystem() override;
  std::string name() const override { return "grid_rd"; }
  AccessList access() const override { return AccessList().read_write("grid", field_.name()); }
  void run(World& world, const StepContext& ctx) override;

 private:
  GridRdParams params_;
  GridField<Real>& field_;
  integrate::RungeKutta4<Real> rk4_;
  struct Chain;  ///< the CUDA backend's launch chain and its counters (grid_rd.cpp)
  std::unique_ptr<Chain> chain_;
};

extern template class GridRdSystem<float>;
extern template class GridRdSystem<double>;

}  // namespace tissue::grid_rd
