#pragma once
/// @file motility.hpp
/// System "motility": random motility of cells (Brownian motion of whole cells with a diffusion coefficient,
/// uniform or per cell from a behaviour rule). Equations: modules/rules/README.md; kernel:
/// motility_kernels.hpp.

#include "engine/core/world.hpp"
#include "engine/io/scenario.hpp"
#include "engine/schedule/schedule.hpp"

namespace tissue::rules {

/// Every element of cell c moves by sqrt(2 D_c h) xi_c each step (ElementMotilityStep). D_c is `diffusion`
/// for every cell, or, once per_cell() is set (by the module rules), each cell's kMotilityColumn. It moves
/// the positions the previous step left (declared read_previous), so it runs first in the step, before the
/// SEM (Lie splitting, as the module chemotaxis, which it cannot share a step with for that reason).
class MotilitySystem final : public System {
 public:
  /// @param diffusion  D of every cell [length^2/time], >= 0
  explicit MotilitySystem(double diffusion) : diffusion_(diffusion) {}
  std::string name() const override { return "motility"; }
  AccessList access() const override;
  void run(World& world, const StepContext& ctx) override;
  /// From now on D is each cell's column kMotilityColumn (which the caller adds).
  void set_per_cell() { per_cell_ = true; }
  double diffusion() const { return diffusion_; }

 private:
  double diffusion_;
  bool per_cell_ = false;
};

}  // namespace tissue::rules
