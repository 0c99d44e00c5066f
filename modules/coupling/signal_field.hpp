#pragma once
/// @file signal_field.hpp
/// A diffusible signal (TGF-beta, a morphogen, ...) on a 3D grid over the tissue, coupled to the cells:
/// the cells sample it (value and gradient at their centres, into cell columns that gene networks read)
/// and secrete into it or take it up (deposited conservatively onto the nodes around their centres).
/// Equations, boundaries, units and the stability limit: modules/coupling/README.md.

#include <array>
#include <string>

#include "engine/core/box.hpp"
#include "engine/core/world.hpp"
#include "engine/exec/device_buffer.hpp"
#include "engine/grid/grid.hpp"
#include "engine/io/scenario.hpp"
#include "engine/schedule/schedule.hpp"
#include "engine/spatial/cell_list.hpp"

namespace tissue::coupling {

/// The cells' flag that selects the second secretion/uptake rate (World::flag_bit; a gene network sets it,
/// modules/gene_network); cells without it use the first.
inline constexpr const char* kStateFlag = "suprabasal";

/// Parameters of one signal field ([signal.<name>] in a scenario; docs/scenarios.md).
///
///   du/dt = D L(u) - lambda u + sum_c W_c (s_c - k_c u(x_c)) / h^3
///
/// Cell states: 0 = basal (flags without the kStateFlag bit), 1 = suprabasal.
struct SignalFieldParams {
  std::string name = "tgfb";  ///< field name; the cells' sampled columns are `<name>` and `<name>_gradient`
  GridShape shape;            ///< nodes and spacing h [length]; the grid spans [0, n h] on each axis
  std::array<GridBoundary, 6> faces{GridBoundary::periodic, GridBoundary::periodic, GridBoundary::periodic,
                                    GridBoundary::periodic, GridBoundary::neumann,  GridBoundary::dirichlet};
  std::array<double, 6> dirichlet{};  ///< ghost value of each Dirichlet face [concentration]
  double diffusivity = 0.5;           ///< D [length^2/time]
  double decay = 0.1;                 ///< lambda [1/time]
  double initial = 0.0;               ///< initial uniform value [concentration]
  std::array<double, 2> secretion{};  ///< s per cell state [amount/time] (amount = concentration length^3)
  std::array<double, 2> uptake{};     ///< k per cell state [length^3/time]
  /// Cells exclude the field from their volume: u lives in the free fraction alpha of each node
  /// (SignalEulerExcluded; alpha is the field's second species, `<name>_free`).
  bool exclude_cells = false;
  double element_volume = 0.0033;   ///< volume one subcellular element occupies [length^3] (README)
  double min_free_fraction = 0.05;  ///< alpha never falls below this (no node closes completely)
  std::string where;                ///< file:line:column of the table, for messages

  /// Largest stable explicit Euler step [time]: 2 / (D rho + lambda + k_max / (alpha_min h^dims)), rho =
  /// 12 / h^2 in 3D (8 / h^2 in 2D) the spectral radius of the Laplacian, k_max / h^dims the uptake of one
  /// cell sitting on a node, alpha_min = min_free_fraction with cells excluded, else 1.
  double stability_limit() const;
  /// Geometry with the boundaries and Dirichlet values, in precision Real.
  template <class Real>
  GridGeometry<Real> geometry() const;
};

/// Reads [signal.<name>] for a tissue in `box`: `spacing` h, `height` (z extent, rounded to whole nodes),
/// `diffusivity`, `decay`, `initial`, `top`/`bottom` = { boundary = "neumann"|"dirichlet", value }, and
/// `secretion`/`uptake` = { basal, suprabasal }, `exclude_cells` with `element_volume` and
/// `min_free_fraction`. x and y are periodic when the box is (the box's period must be a whole number of
/// nodes), else zero-flux.
/// @throws InputError (file:line:column) on invalid values.
SignalFieldParams read_signal_field_params(const io::ScenarioTable& table, const std::string& name,
                                           const Box& box);

/// Adds the field (one species named after it, initial value everywhere; with exclude_cells a second one,
/// `<name>_free`, the free fraction, initially 1) and its sampled cell columns
/// (`<name>`, and `<name>_gradient` with 3 components) to the world; returns the field.
/// @throws std::logic_error when a column of that name exists.
template <class Real>
GridField<Real>& add_signal_field(World& world, const SignalFieldParams& params);

/// System "sample.<name>": each cell's value and gradient of the field at its centre (trilinear) into the
/// cells' `<name>` and `<name>_gradient` columns. Run after the cell centres and before the readers. It
/// samples the field as the previous step left it (declared AccessMode::read_previous): the epidermis runs
/// it before the SignalFieldSystem that advances the field.
template <class Real>
class FieldSamplingSystem final : public System {
 public:
  explicit FieldSamplingSystem(GridField<Real>& field);
  std::string name() const override { return "sample." + field_.name(); }
  AccessList access() const override;
  void run(World& world, const StepContext& ctx) override;

 private:
  GridField<Real>& field_;
};

/// System "<name>": one explicit Euler step of the signal with the cells' sources (cells, their states and
/// centres as they are when it runs). Sub-cycle it (Schedule substeps) when dt exceeds stability_limit().
template <class Real>
class SignalFieldSystem final : public System {
 public:
  SignalFieldSystem(const SignalFieldParams& params, GridField<Real>& field);
  std::string name() const override { return params_.name; }
  AccessList access() const override;
  void run(World& world, const StepContext& ctx) override;
  /// @throws InputError when h > params.stability_limit(), naming the limit and the sub-steps needed.
  void check_step_length(double h) const override;
  const SignalFieldParams& params() const { return params_; }

 private:
  /// True when some cell state secretes or takes up the signal (the run reads the cells).
  bool has_sources() const;
  SignalFieldParams params_;
  GridField<Real>& field_;
  CellList bins_;
  DeviceBuffer<double> rate_;
  DeviceBuffer<float> px_, py_, pz_;
  DeviceBuffer<Real> source_;
  // cells excluded: element positions clamped into the grid, their cell list, volumes, occupied fraction
  CellList element_bins_;
  DeviceBuffer<float> ex_, ey_, ez_;
  DeviceBuffer<double> element_volume_;
  DeviceBuffer<Real> occupied_;
};

/// Total amount of species 0 in the field, sum u h^dims, or sum alpha u h^dims when the field carries the
/// free fraction alpha as species 1 (cells excluded), on the active backend [amount]. A field whose device
/// state is held elsewhere (GridField::resident() false) is summed from its host mirror.
template <class Real>
double field_amount(GridField<Real>& field);

extern template class FieldSamplingSystem<float>;
extern template class FieldSamplingSystem<double>;
extern template class SignalFieldSystem<float>;
extern template class SignalFieldSystem<double>;

}  // namespace tissue::coupling
