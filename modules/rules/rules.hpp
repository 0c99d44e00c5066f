#pragma once
/// @file rules.hpp
/// Behaviour rules per cell type, written in the scenario (`[cell_types.rules]` under each [[cell_types]]):
/// growth, division, apoptosis, stochastic type transitions (differentiation), secretion and uptake into a
/// grid field, and the coefficient of random motility, each an expression of the expression language
/// (modules/gene_network/expression_language.hpp) over the cell's species, their neighbour means, its sampled
/// fields, its element count, age, centre, the time and named parameters. Equations, units and choices:
/// modules/rules/README.md.
///
/// The rules act on host mirrors in a CPU hook every `[rules] interval` steps (on both backends: what they
/// decide, adding and removing elements and cells, are host operations of the engine), so one evaluation
/// covers a round of length Delta = interval * dt [time]:
///   growth        progress += max(0, growth_rate) Delta; one element at the centre per whole unit
///   division      when divide_when != 0 (after this round's growth)
///   apoptosis     starts with probability 1 - exp(-apoptosis_rate Delta); the cell then loses its elements
///                 over apoptosis_duration and is removed with the last one
///   transitions   to type `to` with probability 1 - exp(-rate Delta) (the first that fires, in file order)
///   secretion     rate Delta [amount] into species 0 of a grid field at the cell's centre (cloud-in-cell);
///                 uptake removes the fraction 1 - exp(-uptake Delta) of the field under the cell's stencil
///   motility      the cell's diffusion coefficient, column kMotilityColumn (modules/rules/motility.hpp)
///   chemotaxis    the factor on the chemotaxis module's chi for the cell, column kChemotaxisColumn
/// Random draws are counter-based (random::kTransition, keyed by the seed, the cell's stable id and the
/// step): the same on any thread count and backend, and across restarts.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/io/scenario.hpp"
#include "engine/spatial/triangle_index.hpp"

namespace tissue::rules {

/// The cells' columns the rules add (besides the tissue's "cell_type", which they read and write).
inline constexpr const char* kCellTypeColumn = "cell_type";
inline constexpr const char* kBirthStepColumn = "birth_step";            ///< int64: step the cell was born
inline constexpr const char* kGrowthProgressColumn = "growth_progress";  ///< float: elements owed [1]
inline constexpr const char* kApoptosisStartColumn = "apoptosis_start";  ///< int64: step apoptosis began
inline constexpr const char* kApoptosisElementsColumn = "apoptosis_elements";  ///< int32: elements then
/// float: the cell's random-motility diffusion coefficient [length^2/time] (owned by the module motility).
inline constexpr const char* kMotilityColumn = "motility";
/// float: the factor on the module chemotaxis's chi for the cell [1] (a `chemotaxis` rule).
inline constexpr const char* kChemotaxisColumn = "chemotaxis";
/// The cells' flag of cells in apoptosis (World::flag_bit).
inline constexpr const char* kApoptoticFlag = "apoptotic";

/// One expression with where it was written ("file:line:column: cell_types[i].rules.key") and the
/// variables it reads.
struct Rule {
  std::string text;  ///< "" = the rule is absent
  std::string where;
  std::vector<std::string> reads;
  bool empty() const { return text.empty(); }
};

/// A stochastic change of cell type (differentiation) at a rate [1/time].
struct Transition {
  int to = 0;  ///< index of the new type in [[cell_types]]
  Rule rate;
};

/// Release into and uptake from a grid field (species 0).
struct Secretion {
  std::string field;  ///< name of a grid field of the World (a [signal.<name>])
  Rule rate;          ///< [amount/time], >= 0 (negative values count as 0)
  Rule uptake;        ///< [1/time], >= 0: the fraction 1 - exp(-uptake Delta) of the field under the cell
};

/// How a dividing cell's elements and species are shared.
enum class DivisionAxis {
  basal,  ///< the lifecycle's rule: adhesive elements and the lowest others stay (lifecycle::divide_cell)
  longest_axis  ///< across the cell's longest axis (Hertwig's rule); every element keeps its type
};

/// The rules of one cell type.
struct TypeRules {
  Rule growth_rate;                 ///< [elements/time]
  Rule divide_when;                 ///< nonzero: divide
  Rule apoptosis_rate;              ///< [1/time]
  Rule motility;                    ///< diffusion coefficient [length^2/time] (needs the module motility)
  Rule chemotaxis;                  ///< factor on [cell_chemotaxis] chi [1] (needs the module chemotaxis)
  double apoptosis_duration = 0.0;  ///< [time] over which an apoptotic cell's elements are removed
  DivisionAxis division = DivisionAxis::basal;
  bool halve_species =
      true;  ///< species of both daughters: half the mother's (amounts) or copies (concentrations)
  std::vector<Transition> transitions;
  std::vector<Secretion> secretions;
};

/// Everything [rules] and the [cell_types.rules] tables say.
struct RulesSpec {
  std::vector<std::string> types;                          ///< the declared cell types, in order
  std::vector<TypeRules> by_type;                          ///< one per type
  std::vector<std::pair<std::string, double>> parameters;  ///< [rules.parameters], named constants
  std::vector<std::string> species;  ///< component names of the cells' "species" column (may be empty)
  std::vector<std::string> inputs;   ///< sampled fields (float cell columns) the rules read
  std::vector<int> mean_species;     ///< species whose neighbour mean some rule reads
  double neighbour_distance = 0.8;   ///< cells are neighbours when their centres are closer [length]
  int interval = 100;                ///< steps between evaluations
  bool any_motility = false;         ///< some type has a motility rule
  bool any_chemotaxis = false;       ///< some type has a chemotaxis rule
};

/// Reads [rules] and every [[cell_types]] entry's `rules` table. `types` are the declared cell types,
/// `species` the species column's component names, `cell_inputs` the sampled fields offered so far,
/// `grid_fields` the names of the World's grid fields.
/// @throws InputError (file:line:column) for an unknown key value, an unknown type or field name, or any
///         expression error (syntax, an unknown name, as the gene network's: the token and its column).
RulesSpec read_rules(const io::ScenarioTable& root, const std::vector<std::string>& types,
                     const std::vector<std::string>& species, const std::vector<std::string>& cell_inputs,
                     const std::vector<std::string>& grid_fields);

/// Totals of one field's secretion and uptake since the run (or restart) began [amount].
struct FieldBudget {
  std::string field;
  double secreted = 0.0;
  double taken_up = 0.0;
};

/// The rules' hook: evaluates every rule on host mirrors and applies them (the order in the file comment).
/// Holds the compiled expressions; one per simulation.
class RuleEngine {
 public:
  /// @param membrane  closest points on the membrane (null: the plane z = 0) for basal divisions
  RuleEngine(RulesSpec spec, std::shared_ptr<const TriangleIndex> membrane);
  ~RuleEngine();
  RuleEngine(const RuleEngine&) = delete;
  RuleEngine& operator=(const RuleEngine&) = delete;

  /// Adds the columns and the flag the rules use to `world` and starts the cells there now (born at step 0).
  void install(World& world) const;
  /// One round on the host mirrors (the schedule downloaded them; it commits after): dt [time] is the step.
  void apply(World& world, double dt);
  /// Secretion totals per field, in the order of first use.
  const std::vector<FieldBudget>& budgets() const { return budgets_; }
  const RulesSpec& spec() const { return spec_; }

 private:
  struct Impl;
  RulesSpec spec_;
  std::shared_ptr<const TriangleIndex> membrane_;
  std::vector<FieldBudget> budgets_;
  std::unique_ptr<Impl> impl_;
};

/// Neighbour means over cells whose centres (cx, cy, cz, periodic-aware) are closer than `distance`:
/// out[j * n + c] = mean over neighbours of species row `rows[j]` (0 without neighbours), for n cells.
/// Host, a uniform bin grid; summation in ascending neighbour index.
void neighbour_means(World& world, const std::vector<int>& rows, double distance, std::vector<double>& out);

}  // namespace tissue::rules
