#pragma once
/// @file lifecycle.hpp
/// Cell growth and division as a CPU hook (Christley et al. 2010, "Cell Growth and Division").
///
/// Every `growth_interval` steps each cell whose Delta is below `delta_threshold` (the basal state)
/// gains one element at its centre; with a gate, only cells whose gate column (e.g. a membrane field
/// sampled by the cell, modules/coupling) exceeds its threshold grow. A cell that reaches
/// `division_elements` elements divides into two halves: a cell with adhesive elements keeps all of them
/// and its lowest other elements (along z, or along the membrane normal below it on a curved membrane; the
/// mother's id stays with this attached daughter), the rest becomes a new cell without adhesive elements;
/// a cell without them splits across its longest axis. Both daughters get half of every species.

#include <memory>
#include <string>

#include "engine/core/world.hpp"
#include "engine/io/scenario.hpp"
#include "engine/schedule/schedule.hpp"
#include "engine/spatial/triangle_index.hpp"

namespace tissue::lifecycle {

/// The columns the lifecycle reads, by name (the interface between modules is the World's named columns):
/// the SEM's element types (modules/sem: "type", adhesive elements 1) and a gene network's species
/// (modules/gene_network: "species", components named; the growth gate reads the one named "delta").
inline constexpr const char* kElementTypeColumn = "type";
inline constexpr std::int32_t kAdhesiveElementType = 1;
inline constexpr const char* kSpeciesColumn = "species";
inline constexpr const char* kDeltaSpecies = "delta";
/// The cells' flag set on the cells that grew at the last growth event (World::flag_bit).
inline constexpr const char* kGrowingFlag = "growing";

struct LifecycleParams {
  int growth_interval = 2000;      ///< steps between growth events (seed: 2000)
  int division_elements = 40;      ///< elements at which a cell divides (seed: 40)
  double delta_threshold = 140.0;  ///< grow while Delta < threshold [concentration] (seed: unstated; README)
  /// Row of Delta in the cells' species column (the component named kDeltaSpecies, found when the module
  /// is installed); -1, or a world without that row, lets every cell grow.
  int delta_species = -1;
  /// Proliferation gate: the name of a float cell column; a cell grows only while its value exceeds
  /// gate_threshold ("" = no gate; the model checks that the column exists).
  std::string gate;
  double gate_threshold = 0.0;
  /// The membrane mesh (set by the model; null: the plane z = 0): "lowest" means nearest to it.
  std::shared_ptr<const TriangleIndex> membrane;
  /// Stochastic cell cycle (an extension of the seed): the coefficient of variation of each cell's own
  /// growth interval, drawn at its birth from a gamma distribution of mean growth_interval; 0 (default):
  /// every cell grows every growth_interval steps, as in the seed.
  double cycle_cv = 0.0;
  /// With cycle_cv > 0: steps between checks of the cells' growth clocks (default growth_interval / 20).
  int cycle_resolution = 100;
};

/// Cell columns of the stochastic cycle (cycle_cv > 0): each cell's growth interval [steps] and the step of
/// its next growth event.
inline constexpr const char* kGrowthIntervalColumn = "growth_interval";
inline constexpr const char* kNextGrowthColumn = "next_growth";

/// A cell's growth interval [steps]: Gamma with mean `mean` and coefficient of variation `cv` (shape 1/cv^2),
/// drawn from the counter-based RNG keyed by the run's seed, the cell's stable id and the step it was born
/// (random::kCellCycle), so that it does not depend on threads, backend or restarts.
double draw_growth_interval(std::uint64_t seed, std::int64_t cell_id, std::int64_t birth_step, double mean,
                            double cv);

/// Gives cell c a new growth interval and its next growth event (at the world's step + the interval);
/// no-op without the stochastic cycle's columns.
void start_cycle(World& world, std::size_t c, const LifecycleParams& params);

/// Reads [lifecycle] (see docs/scenarios.md). @throws InputError on invalid values.
LifecycleParams read_lifecycle_params(const io::ScenarioTable& table);

/// One growth event followed by divisions, on host mirrors (the hook; the schedule commits after it).
void grow_and_divide(World& world, const LifecycleParams& params);

/// How divide_cell shares a cell's elements.
struct DivisionOptions {
  /// true: the seed's basal rule below; false: every cell splits across its principal axis and each element
  /// keeps its type (a symmetric division, modules/rules).
  bool basal = true;
};

/// Splits cell `c` (contiguous elements after compact_host) into two; returns the new cell's index.
/// A cell with adhesive elements keeps all of them plus its lowest other elements up to half (along z, or
/// along the normal of the closest triangle of `membrane`, a host view, when not null); the new cell gets
/// the rest, as non-adhesive elements. A cell without splits across its principal axis. Both daughters get
/// half of every species; the new one copies the mother's flags, cell type and centre. The daughter is
/// numbered by World::add_daughters_host (collective in a decomposed run: hooks there divide a round at once).
std::int32_t divide_cell(World& world, std::int32_t c, const TriangleIndex::View* membrane = nullptr,
                         DivisionOptions options = {});

/// divide_cell() into an existing row: the daughter `d` was appended before (World::add_cells_host) and is
/// not yet in use. Writes only the rows c and d and the elements of c, so that cells with distinct c and d
/// may be split in parallel.
void split_cell(World& world, std::int32_t c, std::int32_t d, const TriangleIndex::View* membrane = nullptr,
                DivisionOptions options = {});

}  // namespace tissue::lifecycle
