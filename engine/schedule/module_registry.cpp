#include "engine/schedule/module_registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace tissue {

void ModuleRegistry::add(ModuleInfo info) {
  if (info.name.empty()) throw std::invalid_argument("a module needs a name");
  if (find(info.name)) throw std::invalid_argument("module '" + info.name + "' is registered twice");
  if (!info.build) throw std::invalid_argument("module '" + info.name + "' registers no builder");
  if (info.default_model)
    for (const auto& m : modules_)
      if (m.default_model)
        throw std::invalid_argument("modules '" + m.name + "' and '" + info.name +
                                    "' are both the default model");
  modules_.push_back(std::move(info));
}

const ModuleInfo* ModuleRegistry::find(const std::string& name) const {
  for (const auto& m : modules_)
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<std::string> ModuleRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& m : modules_) out.push_back(m.name);
  return out;
}

void apply_schedule_table(const io::ScenarioTable& table, Schedule& schedule) {
  const auto names = schedule.system_names();
  for (const auto& key : table.keys()) {
    if (std::find(names.begin(), names.end(), key) == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      table.fail(key, "no system of that name in this model's schedule (systems: " + list + ")");
    }
    const auto entry = table.table(key);
    const auto every = entry.integer("every", 1, io::Range::closed(1, 1e9));
    const auto substeps = entry.integer("substeps", 1, io::Range::closed(1, 1e6));
    schedule.set_cadence(key, static_cast<int>(every), static_cast<int>(substeps));
  }
}

std::unique_ptr<Simulation> ModuleRegistry::build_simulation(const io::Scenario& scenario) const {
  if (modules_.empty()) throw std::logic_error("no module is registered");
  const auto root = scenario.root();
  const auto sim_table = root.table("simulation");
  std::string fallback;
  for (const auto& m : modules_)
    if (m.default_model) fallback = m.name;
  if (fallback.empty() && !sim_table.has("model"))
    sim_table.fail(
        "model", "missing (registered models: " + [&] {
          std::string list;
          for (const auto& n : names()) list += (list.empty() ? "" : ", ") + n;
          return list;
        }() + ")");
  const std::string name = sim_table.string("model", fallback, names());
  const ModuleInfo& module = *find(name);  // string() accepted only registered names
  ModelSettings settings;
  settings.dt = sim_table.number("dt", module.default_dt, io::Range::positive());
  settings.steps = sim_table.integer("steps", 1000, io::Range::non_negative());
  settings.seed = static_cast<std::uint64_t>(sim_table.integer("seed", 1, io::Range::non_negative()));
  settings.precision = sim_table.string("precision", "float", {"float", "double"});
  settings.where_precision = sim_table.where("precision");
  settings.where_dt = sim_table.where("dt");
  settings.dt_given = sim_table.has("dt");
  settings.scenario_path = scenario.path();
  settings.check_every = sim_table.integer("check_every", 100, io::Range::non_negative());
  const auto out = root.table("output");
  settings.output_every = out.integer("every", 1000, io::Range::non_negative());
  const auto ck = root.table("checkpoint");
  settings.checkpoint.every_steps = ck.integer("every", 0, io::Range::non_negative());
  settings.checkpoint.every_minutes = ck.number("minutes", 30.0, io::Range::non_negative());
  settings.checkpoint.at_end = ck.boolean("at_end", true);
  settings.checkpoint.keep = static_cast<int>(ck.integer("keep", 2, io::Range::closed(1, 1000)));

  std::unique_ptr<Simulation> sim = module.build(root, settings);
  sim->model = module.name;
  if (!module.derives_dt) sim->dt = settings.dt;
  apply_schedule_table(root.table("schedule"), sim->schedule);
  sim->schedule.check_access();  // the order against the systems' declared reads and writes
  sim->schedule.check_step_lengths(sim->dt);
  sim->steps = settings.steps;
  sim->output_every = settings.output_every;
  sim->check_every = settings.check_every;
  sim->checkpoint = settings.checkpoint;
  scenario.check_unused();
  return sim;
}

}  // namespace tissue
