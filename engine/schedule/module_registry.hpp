#pragma once
/// @file module_registry.hpp
/// The modules a scenario can name, and the one place that turns a scenario file into a runnable
/// Simulation.
///
/// A module registers itself from its own folder: a registration function
/// `void tissue::modules::register_<name>(ModuleRegistry&)` in one of its sources, and one line
/// `tissue_register_module(<name>)` in its folder's CMakeLists.txt (the modules library's CMakeLists.txt
/// explains the convention). The build generates the list of registration functions (builtin_modules() of
/// the modules library); the engine knows modules only through this registry: no central dispatch, no
/// test of a model's name anywhere else.
///
/// Today a registered module that builds a whole model (the epidermis, grid reaction-diffusion, ...) is
/// named by a scenario's `[simulation] model = "<name>"`; composing several modules in one scenario is the
/// next step (issue "A composable engine").

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/io/scenario.hpp"
#include "engine/schedule/simulation.hpp"

namespace tissue {

/// What a module registers.
struct ModuleInfo {
  /// Builds the model from the scenario's root table and the shared settings; validates every key of the
  /// tables it owns. Sets the Simulation's world, schedule, writer, summary and checks, and its dt when
  /// `derives_dt` (else the registry sets settings.dt). @throws InputError with file:line:column.
  using Builder = std::function<std::unique_ptr<Simulation>(const io::ScenarioTable& root,
                                                            const ModelSettings& settings)>;

  std::string name;                 ///< unique; the value of `[simulation] model`
  std::string summary;              ///< one line for `tissue check --modules` and the docs
  std::vector<std::string> tables;  ///< scenario tables the module owns (besides [simulation], [output], ...)
  double default_dt = 0.01;         ///< simulation.dt when the scenario gives none [time]
  bool default_model = false;       ///< the model of a scenario that names none (at most one module)
  bool derives_dt = false;          ///< the builder sets Simulation::dt (e.g. from a mesh's edge length)
  Builder build;
};

/// The registered modules, in registration order.
class ModuleRegistry {
 public:
  /// Registers a module. @throws std::invalid_argument for an empty name, a name already registered, a
  /// missing builder or a second default model.
  void add(ModuleInfo info);
  /// The module named `name`, or null.
  const ModuleInfo* find(const std::string& name) const;
  /// Names in registration order.
  std::vector<std::string> names() const;
  const std::vector<ModuleInfo>& modules() const { return modules_; }

  /// Builds the simulation a scenario describes: [simulation] (model, dt, steps, seed, precision,
  /// check_every), [output] every, [checkpoint], the module's own tables, then [schedule] (cadences).
  /// Validates every key (unknown keys included) before anything runs.
  /// @throws InputError with file:line:column on any invalid input (an unknown model lists the registered
  /// ones).
  std::unique_ptr<Simulation> build_simulation(const io::Scenario& scenario) const;

 private:
  std::vector<ModuleInfo> modules_;
};

/// Applies a scenario's [schedule] table: one sub-table per system name, `{ every = k, substeps = m }`
/// (multi-rate: the system runs every k steps, m sub-steps of k dt / m each; Schedule::add()).
/// @throws InputError at the key for an unknown system name or a value below 1.
void apply_schedule_table(const io::ScenarioTable& table, Schedule& schedule);

}  // namespace tissue
