#include "modules/grid_rd/grid_rd.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "engine/exec/parallel_for.hpp"

#if defined(TISSUE_BACKEND_CUDA)
#include "modules/grid_rd/grid_rd_tuned.hpp"
#endif

namespace tissue::grid_rd {

double GridRdParams::stability_limit() const {
  const double d = std::max(reaction.diffusion[0], reaction.diffusion[1]);
  if (d <= 0.0) return std::numeric_limits<double>::infinity();
  const double lambda = laplacian_spectral_radius(stencil, shape.h);
  return (integrator == Integrator::rk4 ? 2.785 : 2.0) / (d * lambda);
}

template <class Real>
GridGeometry<Real> GridRdParams::geometry() const {
  return make_grid_geometry<Real>(shape, faces, 2, [this](int f, int s) {
    return dirichlet[static_cast<std::size_t>(f)][static_cast<std::size_t>(s)];
  });
}
template GridGeometry<float> GridRdParams::geometry<float>() const;
template GridGeometry<double> GridRdParams::geometry<double>() const;

template <class Real>
RdParams<Real> GridRdParams::kernel_params() const {
  return RdParams<Real>{geometry<Real>(), stencil, static_cast<Real>(1.0 / (shape.h * shape.h)),
                        static_cast<Real>(reaction.diffusion[0]), static_cast<Real>(reaction.diffusion[1])};
}
template RdParams<float> GridRdParams::kernel_params<float>() const;
template RdParams<double> GridRdParams::kernel_params<double>() const;

namespace {
/// Calls f with the scenario's reaction as a kernel functor in precision Real.
template <class Real, class F>
void with_reaction(const reactions::ReactionSpec& spec, F&& f) {
  if (spec.kind == reactions::ReactionSpec::Kind::gray_scott)
    f(reactions::GrayScott<Real>{static_cast<Real>(spec.gray_scott.F), static_cast<Real>(spec.gray_scott.k)});
  else
    f(spec.polynomial.template as<Real>());
}
}  // namespace

template <class Real>
struct GridRdSystem<Real>::Chain {
#if defined(TISSUE_BACKEND_CUDA)
  std::optional<StepChainStorage> storage;  ///< made at the first tuned call
#endif
};

template <class Real>
GridRdSystem<Real>::GridRdSystem(const GridRdParams& params, GridField<Real>& field)
    : params_(params), field_(field), chain_(std::make_unique<Chain>()) {}

template <class Real>
GridRdSystem<Real>::~GridRdSystem() = default;

template <class Real>
void GridRdSystem<Real>::run(World&, const StepContext& ctx) {
  const int steps = params_.steps_per_launch;
  const auto dt = static_cast<Real>(ctx.dt / steps);
  const RdParams<Real> p = params_.template kernel_params<Real>();
  const std::size_t n = field_.cells();
  with_reaction<Real>(params_.reaction, [&](auto reaction) {
    if (params_.integrator == Integrator::rk4) {
      for (int s = 0; s < steps; ++s)
        rk4_.step(field_.current(), dt, [&](Span<const Real> in, Span<Real> out) {
          exec::parallel_for(n, RdDerivative<Real, decltype(reaction)>{p, reaction, in, out});
        });
      return;
    }
#if defined(TISSUE_BACKEND_CUDA)
    if (exec::backend() == exec::Backend::cuda && params_.kernel == Kernel::automatic) {
      if (!chain_->storage) chain_->storage.emplace(p.grid.ny, p.grid.nz);
      if (rd_euler_tuned(p, reaction, dt, field_.current().data(), field_.next().data(), steps, {},
                         &chain_->storage->chain)) {
        field_.swap();
        return;
      }
    }
#endif
    for (int s = 0; s < steps; ++s) {
      exec::parallel_for(
          n, EulerStep<Real, decltype(reaction)>{p, reaction, dt, field_.current(), field_.next()});
      field_.swap();
    }
  });
}

template class GridRdSystem<float>;
template class GridRdSystem<double>;

}  // namespace tissue::grid_rd
