#pragma once
/// @file gene_network.hpp
/// Per-cell gene network system (Christley et al. 2010, Table 2 defaults). Equations and the reading
/// of the seed where it is ambiguous: modules/gene_network/README.md.

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "engine/exec/device_buffer.hpp"
#include "engine/io/scenario.hpp"
#include "engine/schedule/schedule.hpp"
#include "engine/spatial/cell_list.hpp"
#include "modules/gene_network/gene_network_kernels.hpp"

namespace tissue::grn {

/// The cells' column the network adds: one component per species (then the adhesion input), named by
/// Column::component_names() [concentration].
inline constexpr const char* kSpeciesColumn = "species";
/// The cells' flag the network sets in the suprabasal state (World::flag_bit).
inline constexpr const char* kSuprabasalFlag = "suprabasal";
/// The adhesion input reads the SEM's element types (modules/sem: column "type", adhesive elements 1).
inline constexpr const char* kElementTypeColumn = "type";
inline constexpr std::int32_t kAdhesiveElementType = 1;

/// Adds the network's columns to a World: kSpeciesColumn with one component per name, and the suprabasal
/// flag bit (taken now, so that bits are numbered in module order). @returns the species column.
/// @throws std::logic_error when the World already has a species column.
Column<float>& add_species_column(World& world, const std::vector<std::string>& names);
/// The species column. @throws std::out_of_range when the World has none.
inline Column<float>& species_column(World& world) {
  return world.cells.column<float>(kSpeciesColumn);
}

/// Optional noise in the network's equations ([gene_network] noise, noise_kind; README "Noise").
struct NoiseParams {
  /// sigma: additive [concentration / sqrt(time)], langevin [sqrt(concentration / time)], multiplicative
  /// [1 / sqrt(time)]; 0 = no noise (the
  /// deterministic network, bit for bit).
  double sigma = 0.0;
  NoiseKind kind = NoiseKind::additive;
  bool enabled() const { return sigma > 0.0; }
};

/// Reads `noise` (>= 0, default 0) and `noise_kind` ("additive", "langevin" or "multiplicative", default
/// "additive") from
/// [gene_network]. @throws InputError (file:line:column) for a negative or non-finite sigma, another kind,
/// or noise_kind without noise > 0.
NoiseParams read_noise_params(const io::ScenarioTable& table);

/// One Euler-Maruyama step of length ctx.dt of the noise on species rows [0, rows) of every cell
/// (GeneNoise, keyed by the run's seed, ctx.step, ctx.substep and the cells' stable ids). Nothing when
/// !noise.enabled(). @throws std::length_error for rows > kMaxNoiseSpecies or a sub-step outside
/// [0, kMaxNoiseSubsteps) (the scenario reader refuses such networks and cadences first).
void add_gene_noise(World& world, std::size_t rows, const NoiseParams& noise, const StepContext& ctx);
/// Declares in `access` what add_gene_noise() reads besides the species column (which the caller reads
/// and writes): the cells' stable ids ("cells.id") when the noise is on.
void declare_gene_noise_access(AccessList& access, const NoiseParams& noise);

struct GeneNetworkParams {
  /// Table 2, with h_on = -2 (see README: the printed +2 contradicts the seed's own statement that
  /// basal, high-Ovol2 cells have low Delta).
  Rates<double> rates{0.0003,
                      0.12,
                      0.19,
                      0.03,
                      0.006,
                      1.0,
                      1.0,
                      1.0,
                      /*bn*/ {0.01, 1.0, 1.0, -2.0},
                      /*on*/ {0.0, 1.0, 0.5, -2.0},
                      /*nd*/ {0.01, 1.0, 10.0, 2.0},
                      /*vo*/ {0.1, 2.0, 1.0, 2.0},
                      /*go*/ {0.0, 1.0, 1.0, 1.0},
                      /*ov*/ {0.0, 2.0, 1.0, 2.0},
                      /*av*/ {0.0, 1.0, 1.0, 1.0},
                      /*om*/ {0.1, 1.0, 1.0, 1.0},
                      /*G*/ 0.4};
  /// When not empty: G is read per cell from the cells' float column of this name (the sample of a signal
  /// field, modules/coupling), and rates.tgf_beta is not used.
  std::string tgf_beta_field;
  double neighbour_distance = 0.8;  ///< cells are neighbours when their centres are closer [length]
  std::array<double, kSpeciesCount> initial{};  ///< initial concentrations of new cells (A is computed)
  NoiseParams noise;                            ///< off by default
  /// The cell count the neighbour search's cell list caps its z bins by (CellList::build's cap_points); 0:
  /// the world's. Not a scenario key: a decomposed run (DecomposedGeneNetwork) sets the whole tissue's.
  std::size_t z_bin_points = 0;
  /// Lanes per cell of the stages (exec::group_for): 1, 2, 4 or 8; 0: by the cell count (exec::lanes_for).
  /// Not a scenario key: a decomposed run sets the whole tissue's, so that sums come in the same order.
  int lanes = 0;
};

/// Reads [gene_network] (see docs/scenarios.md). @throws InputError on invalid values.
GeneNetworkParams read_gene_network_params(const io::ScenarioTable& table);

/// Sets species row `row` of every cell to its adhesion input A (AdhesionInput): heights above the plane
/// z = 0, or above `membrane` when not null (a membrane mesh's index, e.g. a curved substrate; the
/// elements' heights go to `scratch`, grown as needed).
void compute_adhesion_input(World& world, std::size_t row, const TriangleIndex* membrane,
                            DeviceBuffer<float>& scratch);
/// What compute_adhesion_input() reads (the species row it writes is the caller's to declare): element
/// heights and types and the cells' element ranges, the elements' x and y too with a membrane.
AccessList adhesion_input_access(bool membrane);

/// What a decomposed run does between the two RK2 stages (gene_network_decomposed.hpp): the cells a rank does
/// not own (its ghosts) get their midpoint species from their owners.
class SpeciesMidpointExchange {
 public:
  virtual ~SpeciesMidpointExchange() = default;
  /// @param world   the world being stepped
  /// @param mid     midpoint species, species-major (component c of row i at c * stride + i), on the backend;
  ///                the rows this rank does not own are to be overwritten
  /// @param stride  the cells' capacity
  virtual void exchange(World& world, Span<float> mid, std::size_t stride) = 0;
};

/// System "gene_network": A from geometry, the noise step when params.noise is on (add_gene_noise), then one
/// RK2 (midpoint) step of every cell's network, with the neighbour means evaluated at each stage. Needs
/// current cell centres (run after cell_centres).
class GeneNetworkSystem final : public System {
 public:
  explicit GeneNetworkSystem(const GeneNetworkParams& params);
  std::string name() const override { return "gene_network"; }
  AccessList access() const override;
  void run(World& world, const StepContext& ctx) override;
  /// run()'s first part: the adhesion input A from the elements, then the noise step.
  void prepare_inputs(World& world, const StepContext& ctx);
  /// run()'s second part: the two RK2 stages with the neighbour means, on the cells' current species and
  /// centres (a decomposed run calls it on its merged world of owned and ghost cells).
  void stages(World& world, const StepContext& ctx);
  /// Calls `exchange` (kept by pointer; null: none) between the two stages (a decomposed run).
  void set_midpoint_exchange(SpeciesMidpointExchange* exchange) { midpoint_exchange_ = exchange; }
  /// Without noise (whose draws depend on the step) a run depends only on the layout and dt.
  bool replayable() const override { return !params_.noise.enabled(); }
  const GeneNetworkParams& params() const { return params_; }
  /// Measures the adhesion input from a membrane mesh instead of the plane z = 0 (null: the plane).
  void set_membrane(std::shared_ptr<const TriangleIndex> membrane) { membrane_ = std::move(membrane); }

 private:
  GeneNetworkParams params_;
  std::shared_ptr<const TriangleIndex> membrane_;
  Rates<float> rates_;
  CellList bins_;
  DeviceBuffer<float> mid_, heights_;
  SpeciesMidpointExchange* midpoint_exchange_ = nullptr;
};

}  // namespace tissue::grn
