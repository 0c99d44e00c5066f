#pragma once
/// @file sem.hpp
/// Subcellular element mechanics: parameters (Christley et al. 2010, Table 1) and the system that
/// advances element positions with the seed's 2nd-order Runge-Kutta (midpoint) scheme.
/// Equations and the choices made where the seed is silent: modules/sem/README.md.

#include <memory>
#include <string>
#include <vector>

#include "engine/exec/device_buffer.hpp"
#include "engine/io/scenario.hpp"
#include "engine/mesh/triangle_mesh.hpp"
#include "engine/schedule/schedule.hpp"
#include "engine/spatial/cell_list.hpp"
#include "engine/spatial/triangle_index.hpp"
#include "engine/spatial/verlet_list.hpp"
#include "modules/sem/sem_kernels.hpp"

namespace tissue::sem {

/// The elements' type column the SEM adds to a World (World::elements): kAdhesiveElement for the elements
/// that adhere to the basement membrane (the seed's C_i = 1), 0 otherwise.
inline constexpr const char* kTypeColumn = "type";
/// Element type of basement-membrane adhesive elements (the seed's type C_i = 1).
inline constexpr std::int32_t kAdhesiveElement = 1;

/// The cells' type column (int32, index into the scenario's declared cell types), added by the tissue
/// entity set when the scenario declares `[[cell_types]]`; written to the .vtu files as `cell_type`.
inline constexpr const char* kCellTypeColumn = "cell_type";

/// Adds the SEM's columns to a World (the element type, kTypeColumn), once; returns the type column.
Column<std::int32_t>& add_sem_columns(World& world);
/// The element type column. @throws std::out_of_range when add_sem_columns() was not called.
inline Column<std::int32_t>& element_types(World& world) {
  return world.elements.column<std::int32_t>(kTypeColumn);
}
/// Appends one element of cell `c` of type `type` on the host mirror (World::add_element_host, then the
/// type); the World needs the SEM's columns. @return its dense index.
std::int32_t add_element_host(World& world, std::int32_t c, float x, float y, float z, std::int32_t type);

/// The intercellular potential between cells of two types (an entry of the symmetric pair table).
struct InterPair {
  Morse<double> morse{0.3, 0.05, 0.12, 0.24};  ///< [energy, length]
  bool attractive = false;  ///< false: repulsive part only (the seed's positive Morse); true: full Morse
  double cutoff = 0.0;      ///< [length]; 0 = the potential's minimum (repulsive pairs only)
  /// The cutoff with 0 resolved to morse_minimum().
  double effective_cutoff() const;
};

/// SEM parameters. Lengths and energies in the scenario's units (the seed's are dimensionless).
struct SemParams {
  Morse<double> intra{0.3, 0.1, 0.12, 0.36};     ///< Table 1, V_intra (u0, xi1, w0, xi2)
  Morse<double> inter{0.3, 0.05, 0.12, 0.24};    ///< Table 1, V_inter (repulsive part used)
  Morse<double> adhesion{0.3, 0.1, 0.12, 0.36};  ///< Table 1, V_adh (same values as V_intra)
  double friction = 1.0;      ///< eta [force time / length]; the seed's equations have eta = 1
  double intra_cutoff = 0.0;  ///< [length]; 0 = every element of the same cell interacts (the seed)
  double inter_cutoff = 0.0;  ///< [length]; 0 = minimum of V_inter (~0.157), where its force vanishes
  double bin_size = 0.0;      ///< cell-list bin width [length]; 0 = 1.2 x the intercellular cutoff
  double z_extent = 8.0;      ///< expected tissue height [length]; sizes the z bins (not a limit)
  /// The element count the cell list caps its z bins by (CellList::build's cap_points); 0: the world's. Not a
  /// scenario key: a decomposed run (DecomposedSem) sets the whole tissue's.
  std::size_t z_bin_points = 0;
  /// The cell list's windows (BinWindow): the bins a rank of a decomposed run holds elements in. Not a
  /// scenario key: DecomposedSem sets its subdomain's, widened by the halo.
  BinWindow bin_window;
  bool basement_adhesion = true;  ///< V_adh on adhesive elements
  double temperature = 0.0;       ///< kT of Newman's Brownian term [energy]; 0 = none (the seed)
  /// The basement membrane as a triangle mesh (curved substrates); null: the plane z = 0 (the seed).
  std::shared_ptr<const mesh::TriangleMesh> substrate;
  /// Distance from the substrate mesh beyond which V_adh is neglected [length]; 0 = 8 max(xi1, xi2) of V_adh.
  double substrate_reach = 0.0;
  /// Lanes per element of the force stages (exec::group_for: the own cell's and the neighbour search's
  /// terms split over that many threads, summed in a fixed butterfly): 1, 2, 4 or 8; 0: by the element
  /// count (exec::lanes_for). Not a scenario key: the C++ API's, for benchmarks. Forces are summed in an
  /// order that depends on the lanes, so results differ at float rounding between lane counts.
  int lanes = 0;
  /// Steps between cell-list builds (>= 1). In between, the last build's bins are reused with the current
  /// positions (CellList::refresh), and the search widens beyond one bin per side only once some element is
  /// farther than the bins' slack (bin width - cutoff) from where it was binned: forces are exact whatever
  /// the value; it trades sorts against wider searches. After a hook (World::revision) or a resize the list
  /// is always rebuilt. Forces are summed in the bins' order, so results differ at float rounding between
  /// values. Checkpoints keep the build positions of a list in use (save_state()), so restarts continue byte
  /// for byte whatever the value. Default 4 (6 % faster than 1 at 10^6 elements on an H100, BENCHMARKS.md).
  int rebuild_every = 4;
  /// Verlet lists (VerletList) on the cell list's builds: each element keeps the other cells' elements within
  /// the bin width of it, and the force stages visit those (~1 per element) instead of searching 27 bins
  /// (~17 candidates, mostly of the element's own cell or beyond the cutoff), while nothing moved farther
  /// than the bins' slack allows (per element; an element whose list does not hold searches as before). The
  /// same pairs in the same order: the same forces bit for bit. Used where it pays and stays exact: one lane
  /// per element, rebuild_every > 1 and at least 4 bins along every axis. Not a scenario key: the C++ API's,
  /// for benchmarks.
  bool verlet_list = true;
  /// Threads take the elements in the cell list's order (neighbouring threads, neighbouring elements) instead
  /// of the table's; the same forces. Not a scenario key.
  bool by_bins = false;
  /// Cell types (the tissue's `[[cell_types]]`), in declaration order; empty: no types (the seed).
  std::vector<std::string> cell_types;
  /// With cell types: V_intra of each type, #cell_types (defaults to `intra`).
  std::vector<Morse<double>> intra_by_type;
  /// With cell types: the symmetric pair table, entry a * #cell_types + b (defaults: `inter`, repulsive).
  std::vector<InterPair> pairs;

  /// The effective intercellular cutoff (resolves 0 to the potential minimum); with cell types, the
  /// largest cutoff of the pair table.
  double effective_inter_cutoff() const;
  /// Declares `names` as the cell types with the default potentials (intra, inter) for every type and pair.
  /// @throws std::invalid_argument for more than kMaxCellTypes names.
  void set_cell_types(std::vector<std::string> names);
  /// The effective bin width (resolves 0).
  double effective_bin_size() const;
  /// Kernel parameters; the substrate's index is attached by SemSystem (substrate_on stays false here).
  KernelParams kernel_params() const;
  /// substrate_reach with 0 resolved.
  double effective_substrate_reach() const;
};

/// Reads [sem] (see docs/scenarios.md); `cell_types` are the declared type names (empty: none, and the
/// keys `cell_types` and `inter_pairs` are refused). @throws InputError on invalid values.
SemParams read_sem_params(const io::ScenarioTable& table, const std::vector<std::string>& cell_types = {});

/// What a decomposed run does between the two RK2 stages (modules/sem/sem_decomposed.hpp): the elements a
/// rank does not own (its ghosts) get their midpoints from their owners, and the search of the midpoint
/// stage reaches as far as anything moved in the whole tissue.
class MidpointExchange {
 public:
  virtual ~MidpointExchange() = default;
  /// @param world          the world being stepped
  /// @param xm,ym,zm       midpoint positions of its elements (#elements each, on the backend) [length];
  ///                       the rows this rank does not own are to be overwritten
  /// @param moved          each element's distance from where the cell list was built (#elements, on the
  ///                       backend) [length]
  /// @return the largest of `moved` over the elements of the whole tissue (owned ones on every rank), which
  ///         the midpoint stage's search uses [length]
  virtual float exchange(World& world, Span<float> xm, Span<float> ym, Span<float> zm,
                         Span<const float> moved) = 0;
};

/// System "sem": one RK2 step of the element positions.
class SemSystem final : public System {
 public:
  /// Indexes params.substrate when set. @throws std::invalid_argument for an empty substrate mesh.
  explicit SemSystem(const SemParams& params);
  std::string name() const override { return "sem"; }
  AccessList access() const override;
  /// X_mid = X + dt/2 F(X);  X <- X + dt F(X_mid). The cell list is built for the first stage every
  /// rebuild_every steps (as prepare() decided; always when run() comes without it) and its bins reused,
  /// with the current positions, for the other stages (CellList::refresh, searching as far as the elements
  /// moved since the build: DisplacementSinceBuild). With a temperature, then X <- X + sqrt(2 kT dt / eta)
  /// N(0, 1) (ElementNoise).
  void run(World& world, const StepContext& ctx) override;
  /// Without thermal noise (whose draws depend on the step) a run depends only on the layout, dt and
  /// whether it builds the cell list (prepare()'s variant).
  bool replayable() const override { return !(params_.temperature > 0.0); }
  /// Decides whether this step builds the cell list (variant 1) or reuses the last build (0): a build every
  /// rebuild_every steps, and after any change of the elements' table (a hook's commit, a resize). Variant
  /// 2: the first step after restore_state(), which rebuilds the list on the saved build positions.
  std::uint64_t prepare(World& world, const StepContext& ctx) override;
  /// While the next step would reuse the cell list (rebuild_every > 1): the step it was built at
  /// ("built_step") and the positions it was built on ("x", "y", "z", #elements, in row order), without which
  /// a restart would build at once and sum neighbours in another order (float rounding). Else nothing.
  SystemState save_state(World& world) const override;
  /// Takes save_state()'s list state back: the next step rebuilds the list on those positions and goes on
  /// reusing it as the saving run did. @throws InputError for missing entries, arrays not #elements long, a
  /// non-finite position, or a build step the list could not still be in use at.
  void restore_state(World& world, const SystemState& state) override;

  /// Forces at the current positions into fx, fy, fz (each >= elements.size() long) [force].
  void compute_forces(World& world, Span<float> fx, Span<float> fy, Span<float> fz);
  /// Calls `exchange` (kept by pointer; null: none) between the two stages of every step, after the midpoint
  /// positions and the stage's moves are known and before the midpoint stage uses them (a decomposed run).
  void set_midpoint_exchange(MidpointExchange* exchange) { midpoint_exchange_ = exchange; }
  const SemParams& params() const { return params_; }
  /// The Verlet lists of the last cell-list build (empty where SemParams::verlet_list does not apply).
  const VerletList& verlet_list() const { return near_; }

 private:
  /// The force functor at positions x, y, z: on a fresh cell list, or with `refresh` on the last build's
  /// bins moved to x, y, z (the midpoint stage; moved_max_ holds how far anything moved since).
  ElementForce make_force(World& world, Span<const float> x, Span<const float> y, Span<const float> z,
                          bool refresh);
  /// The two stages of the midpoint (RK2) step; kTyped: with cell types (their pair table) or the seed's.
  template <bool kTyped>
  void rk2_stages(World& world, float dt, bool build);
  SemParams params_;
  KernelParams kernel_;
  CellList bins_;
  VerletList near_;  ///< lists on bins_'s build, when SemParams::verlet_list applies (else cleared)
  TriangleIndex substrate_;
  DeviceBuffer<float> xm_, ym_, zm_;
  DeviceBuffer<float> xb_, yb_, zb_;  ///< positions at the last cell-list build
  DeviceBuffer<float> moved_;         ///< per element: distance from the build, at stage 1's end [length]
  DeviceBuffer<float> moved_max_;     ///< one entry: the largest of moved_
  DeviceBuffer<unsigned char> reduce_temp_;
  DeviceBuffer<MorseForce> intra_by_type_;
  DeviceBuffer<PairForce> pairs_;
  /// Records that the cell list is (being) built for `world` at `step`.
  void note_build(const World& world, std::int64_t step);
  /// True when the step `step` of `world` may reuse the last build (else prepare() decides to build).
  bool reuses_list_at(const World& world, std::int64_t step) const;
  /// Lanes per element of the force stages for n elements (SemParams::lanes, 0 resolved by exec::lanes_for).
  int lanes_for(std::size_t n) const;
  /// Builds the cell list on positions x, y, z of the elements of `world`.
  void build_list(World& world, Span<const float> x, Span<const float> y, Span<const float> z);
  // prepare()'s decision for the next run(), and what the last build was made on
  bool build_next_ = true;
  bool built_ = false;
  std::uint64_t built_revision_ = 0;
  std::size_t built_rows_ = 0, built_capacity_ = 0;
  std::int64_t built_step_ = 0;
  bool restored_ = false;  ///< restore_state() put the build positions in xb_, yb_, zb_; no list built yet
  MidpointExchange* midpoint_exchange_ = nullptr;
};

}  // namespace tissue::sem
