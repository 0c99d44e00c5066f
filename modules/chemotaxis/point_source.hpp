#pragma once
/// @file point_source.hpp
/// A point source of a grid field (the attractant of chemotaxis.hpp, or any [signal.<name>]): parameters,
/// their scenario table, and the system. Equations and units: modules/chemotaxis/README.md; the deposit:
/// chemotaxis_kernels.hpp (PointSourceDeposit).

#include <string>

#include "engine/core/world.hpp"
#include "engine/grid/grid.hpp"
#include "engine/grid/point_sampling.hpp"
#include "engine/io/scenario.hpp"
#include "engine/schedule/schedule.hpp"

namespace tissue::chemotaxis {

/// [point_source]: a fixed point releasing into a grid field at a constant rate.
struct PointSourceParams {
  std::string field;               ///< name of a grid field of the World
  double position[3] = {0, 0, 0};  ///< x, y, z [length], inside the grid's extent [0, n h] per axis
  double rate = 0.0;               ///< release [amount/time] (amount = concentration length^3)
};

/// Reads [point_source]: `field`, `x`, `y`, `z` (required), `rate` (required, >= 0).
/// @throws InputError (file:line:column) on a missing or invalid value.
PointSourceParams read_point_source_params(const io::ScenarioTable& table);

/// The first axis (0 = x, 1 = y, 2 = z) on which `position` [length] lies outside the field's grid extent
/// [0, n h], among its non-periodic axes of more than one node; -1 when it lies inside.
template <class Real>
int axis_outside_grid(const GridField<Real>& field, const double position[3]);

/// System "point_source.<field>": adds rate h / V_node, spread over the nodes around the source with the
/// cloud-in-cell weights (PointSourceDeposit), to species 0 of the field each step (amount added: exactly
/// rate h). It adds to the field as the previous step left it (declared read_previous and write), so it
/// runs before every other writer of the field in the step: before the field's transport step.
template <class Real>
class PointSourceSystem final : public System {
 public:
  /// @throws std::invalid_argument when the field has more than one species (a field with cells
  /// excluded keeps its free fraction as species 1, which a point source would have to weigh) or the
  /// position is outside the grid's extent on a non-periodic axis.
  PointSourceSystem(const PointSourceParams& params, GridField<Real>& field);
  std::string name() const override { return "point_source." + field_.name(); }
  AccessList access() const override;
  void run(World& world, const StepContext& ctx) override;
  const PointSourceParams& params() const { return params_; }

 private:
  PointSourceParams params_;
  GridField<Real>& field_;
  grid::CicStencil stencil_;
};

extern template class PointSourceSystem<float>;
extern template class PointSourceSystem<double>;

}  // namespace tissue::chemotaxis
