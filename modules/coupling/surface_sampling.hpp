#pragma once
/// @file surface_sampling.hpp
/// Cells reading a surface field (reaction-diffusion on the basement-membrane mesh, modules/surface_rd):
/// each cell samples every species of the field at the closest point of the membrane to its centre, so
/// that gene networks and the lifecycle's proliferation gate can depend on a membrane pattern (the
/// appendage-placode picture; modules/coupling/README.md).

#include <memory>
#include <string>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/mesh/surface_field.hpp"
#include "engine/schedule/schedule.hpp"
#include "engine/spatial/triangle_index.hpp"

namespace tissue::coupling {

/// Most species a sampled surface field may have.
inline constexpr int kMaxSampledSpecies = 4;

/// The cell column holding a cell's sample of `species` of surface field `field`: "<field>_<species>".
std::string surface_sample_column(const std::string& field, const std::string& species);

/// Adds the float cell columns of a surface field's samples (one per species, surface_sample_column) and
/// returns their names. @throws std::logic_error when a column exists; std::invalid_argument for more than
/// kMaxSampledSpecies species.
template <class Real>
std::vector<std::string> add_surface_sample_columns(World& world, const SurfaceField<Real>& field);

/// System "sample_<field>": u_s(c) = sum_k w_k u_s(v_k), where q = sum_k w_k x(v_k) is the closest point
/// of triangle (v_0, v_1, v_2) of the membrane to cell c's centre (barycentric weights: exact for fields
/// linear on each triangle). A cell farther from the membrane than the index's reach reads 0.
template <class Real>
class SurfaceSamplingSystem final : public System {
 public:
  /// @param membrane index over the field's own mesh (same vertices).
  /// @throws std::invalid_argument when the index is null; the columns must have been added.
  SurfaceSamplingSystem(SurfaceField<Real>& field, std::shared_ptr<const TriangleIndex> membrane);
  std::string name() const override { return "sample_" + field_.name(); }
  AccessList access() const override;
  void run(World& world, const StepContext& ctx) override;

 private:
  SurfaceField<Real>& field_;
  std::shared_ptr<const TriangleIndex> membrane_;
  std::vector<std::string> columns_;
};

extern template class SurfaceSamplingSystem<float>;
extern template class SurfaceSamplingSystem<double>;

}  // namespace tissue::coupling
