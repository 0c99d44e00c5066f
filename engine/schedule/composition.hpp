#pragma once
/// @file composition.hpp
/// The simulation a scenario composes, while its entity sets and modules install themselves into it.
///
/// A scenario lists entity sets (`[simulation] entities`: the tissue of cells and subcellular elements, a
/// membrane mesh, a structured grid, ...) and modules (`[simulation] modules`: the systems of a step, in
/// order). ModuleRegistry::build_simulation() creates the entity sets in the order listed, then installs
/// the modules in the order listed, each through this Composition: it reads its own scenario tables,
/// adds columns to the World's tables, fields, systems, hooks, writers, summary lines and checks, and
/// shares what other modules may use (a mesh, its closest-point index, a field) under a name. finish()
/// turns the result into the Simulation the Runner drives.

#include <any>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/exec/backend.hpp"
#include "engine/io/scenario.hpp"
#include "engine/schedule/simulation.hpp"

namespace tissue {

class Composition {
 public:
  /// Creates a writer for an output directory and this rank's piece of it (io::OutputPiece; a writer of a
  /// model that is never decomposed ignores it); nothing is written before its first write().
  using WriterFactory =
      std::function<std::unique_ptr<SnapshotWriter>(const std::filesystem::path&, const io::OutputPiece&)>;

  /// @param root      the scenario's root table
  /// @param settings  the [simulation]/[output]/[checkpoint] settings every module shares
  Composition(const io::ScenarioTable& root, const ModelSettings& settings);

  const io::ScenarioTable& root() const { return root_; }
  const ModelSettings& settings() const { return settings_; }

  /// The World, created with an empty Box on first use (an entity set sets the box before seeding).
  World& world();
  /// True once an entity set or module created the World.
  bool has_world() const { return sim_->world != nullptr; }

  /// Records that entity set `name` exists (ModuleRegistry does this as it creates each).
  void add_entity_set(const std::string& name) { entity_sets_.push_back(name); }
  /// True when the scenario's entity sets include `name`.
  bool has_entity_set(const std::string& name) const;

  /// Shares `object` under `key` (e.g. "membrane.mesh") for the modules installed later.
  /// @throws std::logic_error when the key is taken.
  template <class T>
  void share(const std::string& key, std::shared_ptr<T> object) {
    if (shared_.count(key)) throw std::logic_error("composition: '" + key + "' is shared twice");
    shared_[key] = std::move(object);
  }
  /// The object shared under `key`, or null when none is or it has another type.
  template <class T>
  std::shared_ptr<T> find(const std::string& key) const {
    const auto it = shared_.find(key);
    if (it == shared_.end()) return nullptr;
    const auto* p = std::any_cast<std::shared_ptr<T>>(&it->second);
    return p ? *p : nullptr;
  }

  /// Float cell columns that modules offer as inputs to later modules (a field sampled at the cells, ...),
  /// in the order offered: what a scenario-defined gene network or a gate may read.
  const std::vector<std::string>& cell_inputs() const { return cell_inputs_; }
  /// Offers the float cell column `name` (which must exist) as an input.
  void offer_cell_input(const std::string& name) { cell_inputs_.push_back(name); }

  /// Appends a system to the step (Schedule::add; cadence from [schedule] afterwards).
  void add_system(std::unique_ptr<System> system, int every = 1, int substeps = 1);
  /// Appends a CPU hook (Schedule::add_hook) with what it reads and writes (printed by `tissue check`).
  void add_hook(std::string name, int every, Hook hook, AccessList access = {});
  /// Adds a writer; a snapshot runs the writers in the order added.
  void add_writer(WriterFactory factory);
  /// Adds lines to the run's summary, in the order added (host mirrors are current when it is called).
  void add_summary(std::function<std::string(World&)> summary);
  /// Adds a cheap device-side check of the state (throws NumericalError), run at the check cadence. After
  /// the modules' checks, finish() adds check_table_values (every float column of the tables is finite).
  void add_check(std::function<void(World&)> check);
  /// Adds a metric (Simulation::metrics): `name` of letters, digits and '_', unique in the model.
  /// @throws std::logic_error for an invalid or repeated name (a module's bug).
  void add_metric(std::string name, std::string description, std::function<double(World&)> measure);
  /// Adds a clause to the run header's one-line description ("; "-separated).
  void add_description(const std::string& text);
  /// Sets the convergence test (Simulation::converged). @throws std::logic_error when one is set.
  void set_converged(std::function<bool(World&)> converged);
  /// Sets the time step a module derives (e.g. surface RD's dt_factor times its mesh's mean edge squared
  /// when [simulation] dt is not given); it replaces settings().dt. @throws std::logic_error when another
  /// module set one.
  void set_derived_dt(double dt);
  bool has_derived_dt() const { return derived_dt_ > 0.0; }

  /// Reserves the memory an entity set or module is about to allocate (`need`, estimated from the sizes it
  /// read), before it allocates anything. Reservations add up; when their total exceeds what was available
  /// when the first was made (host: exec::host_memory_bytes(); device: exec::available_memory_bytes() on
  /// the CUDA backend; on the CPU backend both come out of host memory), the scenario is refused at
  /// `table`.`key` with the numbers. `what` names what needs it ("a 4000 x 4000 grid ...").
  /// @throws InputError (ScenarioTable::fail) when it does not fit.
  void reserve_memory(const io::ScenarioTable& table, const std::string& key, const std::string& what,
                      const exec::MemoryEstimate& need);
  /// The total reserved so far.
  const exec::MemoryEstimate& reserved_memory() const { return reserved_; }

  /// Turns what was installed into the Simulation (dt, cadences and steps are set by the registry).
  std::unique_ptr<Simulation> finish();

  /// The simulation under construction (its schedule, for checks and descriptions).
  Simulation& simulation() { return *sim_; }

 private:
  const io::ScenarioTable& root_;
  const ModelSettings& settings_;
  std::unique_ptr<Simulation> sim_;
  std::vector<std::string> entity_sets_;
  std::map<std::string, std::any> shared_;
  std::vector<std::string> cell_inputs_;
  std::vector<WriterFactory> writers_;
  std::vector<std::function<std::string(World&)>> summaries_;
  std::vector<std::function<void(World&)>> checks_;
  std::vector<Metric> metrics_;
  std::vector<std::string> description_;
  double derived_dt_ = 0.0;
  exec::MemoryEstimate reserved_;
  double host_available_ = -1.0, device_available_ = -1.0;  ///< measured at the first reservation
};

}  // namespace tissue
