#pragma once
/// @file module_registry.hpp
/// The entity sets and modules a scenario can compose, and the one place that turns a scenario file into a
/// runnable Simulation.
///
/// A module folder registers what it provides from its own sources: a function
/// `void tissue::modules::register_<folder>(ModuleRegistry&)` and one line `tissue_register_module(<folder>)`
/// in its CMakeLists.txt (modules/CMakeLists.txt explains the convention). The build generates the list of
/// registration functions (builtin_modules()); the engine knows modules only through this registry: no
/// central dispatch, no test of a model's name anywhere.
///
/// A scenario composes them in [simulation]:
///
///     entities = ["tissue"]                                          # created in this order
///     modules = ["sem", "cell_centres", "gene_network", "lifecycle"]  # installed, and run each step, in
///     this order
///
/// or names a preset, `model = "<preset>"`, a registered pair of such lists (docs/scenarios.md).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/io/scenario.hpp"
#include "engine/schedule/composition.hpp"
#include "engine/schedule/simulation.hpp"

namespace tissue {

/// An entity set a scenario can declare: it creates entities (the tissue's cells and elements, a mesh, a
/// grid, ...) from its own scenario tables and shares them with the modules.
struct EntitySetInfo {
  /// Reads the set's tables, validates every key, creates the entities. @throws InputError
  /// (file:line:column).
  using Create = std::function<void(Composition&)>;
  std::string name;                 ///< unique among entity sets; the value in `[simulation] entities`
  std::string summary;              ///< one line for `tissue modules`
  std::vector<std::string> tables;  ///< scenario tables it reads
  Create create;
};

/// A module a scenario can install: systems, hooks, columns, writers, summary lines acting on entity sets.
struct ModuleInfo {
  /// Reads the module's tables, validates every key, installs into the composition.
  /// @throws InputError (file:line:column).
  using Install = std::function<void(Composition&)>;
  std::string name;                 ///< unique among modules; the value in `[simulation] modules`
  std::string summary;              ///< one line for `tissue modules`
  std::vector<std::string> tables;  ///< scenario tables it reads
  std::vector<std::string> needs;   ///< entity sets that must be declared
  double default_dt = 0.0;          ///< simulation.dt when the scenario gives none and this is the first
                                    ///< module with a default (0: no default) [time]
  Install install;
};

/// A named composition: what `[simulation] model = "<name>"` stands for.
struct PresetInfo {
  std::string name;
  std::string summary;
  std::vector<std::string> entities;
  std::vector<std::string> modules;
  bool is_default = false;  ///< the composition of a scenario that names neither model nor modules
};

/// The registered entity sets, modules and presets, in registration order.
class ModuleRegistry {
 public:
  /// Registers an entity set. @throws std::invalid_argument for an empty or taken name or no create().
  void add(EntitySetInfo info);
  /// Registers a module. @throws std::invalid_argument for an empty or taken name or no install().
  void add(ModuleInfo info);
  /// Registers a preset. @throws std::invalid_argument for an empty or taken name or a second default.
  void add(PresetInfo info);

  const EntitySetInfo* find_entity_set(const std::string& name) const;
  const ModuleInfo* find(const std::string& name) const;
  const PresetInfo* find_preset(const std::string& name) const;
  const std::vector<EntitySetInfo>& entity_sets() const { return entity_sets_; }
  const std::vector<ModuleInfo>& modules() const { return modules_; }
  const std::vector<PresetInfo>& presets() const { return presets_; }

  /// Builds the simulation a scenario composes: [simulation] (entities and modules, or model; dt, steps,
  /// seed, precision, check_every), [output] every, [checkpoint]; creates the entity sets and installs the
  /// modules in the order listed; applies [schedule] (cadences); checks the step order against the
  /// systems' declared reads and writes (Schedule::check_access) and their step lengths. Validates every
  /// key (unknown keys included) before anything runs.
  /// @throws InputError with file:line:column on any invalid input (an unknown name lists the registered
  /// ones; a module whose entity set is missing names it).
  std::unique_ptr<Simulation> build_simulation(const io::Scenario& scenario) const;

  /// What `tissue modules` prints: every entity set, module and preset with its summary and tables.
  std::string describe() const;

 private:
  std::vector<EntitySetInfo> entity_sets_;
  std::vector<ModuleInfo> modules_;
  std::vector<PresetInfo> presets_;
};

/// Applies a scenario's [schedule] table: one sub-table per system name, `{ every = k, substeps = m }`
/// (multi-rate: the system runs every k steps, m sub-steps of k dt / m each; Schedule::add()).
/// @throws InputError at the key for an unknown system name or a value below 1.
void apply_schedule_table(const io::ScenarioTable& table, Schedule& schedule);

}  // namespace tissue
