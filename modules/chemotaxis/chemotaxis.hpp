#pragma once
/// @file chemotaxis.hpp
/// Chemotaxis of the tissue's elements up a grid field's gradient: parameters, their scenario table, and the
/// system. Equations and units:
/// modules/chemotaxis/README.md; the pointwise math: chemotaxis_kernels.hpp.

#include <functional>
#include <string>

#include "engine/core/world.hpp"
#include "engine/exec/span.hpp"
#include "engine/grid/grid.hpp"
#include "engine/io/scenario.hpp"
#include "engine/schedule/schedule.hpp"
#include "modules/chemotaxis/chemotaxis_kernels.hpp"

namespace tissue::chemotaxis {

/// [cell_chemotaxis]: which field the elements climb and how strongly.
struct ChemotaxisParams {
  std::string field;  ///< name of a grid field of the World (a [signal.<name>]), species 0 is climbed
  Sensitivity chi;    ///< chi [length^2 / (time concentration)] and c_sat [concentration]
};

/// Reads [cell_chemotaxis] (the table [chemotaxis] is surface_rd's): `field` (required), `chi` (required;
/// negative: chemorepulsion), `saturation` (c_sat >= 0, default 0 = none). @throws InputError
/// (file:line:column) on a missing or invalid value.
ChemotaxisParams read_chemotaxis_params(const io::ScenarioTable& table);

/// The grid field of `world` named `name`, of precision Real, or null when there is none of that name
/// and precision (found by name among World::fields).
template <class Real>
GridField<Real>* find_grid_field(World& world, const std::string& name) {
  for (auto& f : world.fields)
    if (f->name() == name)
      if (auto* grid = dynamic_cast<GridField<Real>*>(f.get())) return grid;
  return nullptr;
}

/// System "chemotaxis": one explicit step of every element's chemotactic motion, x <- x + h chi(c) grad c
/// (c and grad c sampled trilinearly at the element; ElementChemotaxisStep), wrapped into the box and above
/// the floor. Run it first in the step, before the SEM: Lie splitting of eta dx/dt = F_sem + F_chem with
/// F_chem = eta chi(c) grad c (README: first-order splitting error). It reads the positions and the field
/// as the previous step left them (declared AccessMode::read_previous), so the schedule refuses an order
/// that would put a writer of either before it.
template <class Real>
class ChemotaxisSystem final : public System {
 public:
  /// @param field  the field climbed (species 0); must outlive the system
  ChemotaxisSystem(const ChemotaxisParams& params, GridField<Real>& field);
  std::string name() const override { return "chemotaxis"; }
  AccessList access() const override;
  void run(World& world, const StepContext& ctx) override;

  /// Every element's chemotactic velocity chi(c) grad c [length/time] at its current position into
  /// vx, vy, vz (device spans, each >= elements.size() long); the force is friction times this.
  void velocities(World& world, Span<float> vx, Span<float> vy, Span<float> vz) const;
  const ChemotaxisParams& params() const { return params_; }
  /// From now on each cell's chi is multiplied by its float cell column `column` (which the caller adds;
  /// modules/rules sets it per cell type).
  void set_cell_factor(std::string column) { cell_factor_ = std::move(column); }

 private:
  ChemotaxisParams params_;
  GridField<Real>& field_;
  std::string cell_factor_;
};

/// What the module chemotaxis shares as "chemotaxis.system" for modules listed after it (modules/rules).
struct ChemotaxisHandle {
  std::function<void(std::string)> set_cell_factor;  ///< ChemotaxisSystem::set_cell_factor
};

extern template class ChemotaxisSystem<float>;
extern template class ChemotaxisSystem<double>;

}  // namespace tissue::chemotaxis
