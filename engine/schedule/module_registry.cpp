#include "engine/schedule/module_registry.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace tissue {

namespace {

template <class Info>
void check_new(const std::vector<Info>& list, const Info& info, const char* what) {
  if (info.name.empty()) throw std::invalid_argument(std::string("a ") + what + " needs a name");
  for (const auto& i : list)
    if (i.name == info.name)
      throw std::invalid_argument(std::string(what) + " '" + info.name + "' is registered twice");
}

template <class Info>
std::vector<std::string> names_of(const std::vector<Info>& list) {
  std::vector<std::string> out;
  for (const auto& i : list) out.push_back(i.name);
  return out;
}

std::string join(const std::vector<std::string>& names, const char* separator = ", ") {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : separator) + n;
  return out;
}

}  // namespace

void ModuleRegistry::add(EntitySetInfo info) {
  check_new(entity_sets_, info, "entity set");
  if (!info.create) throw std::invalid_argument("entity set '" + info.name + "' registers no create()");
  entity_sets_.push_back(std::move(info));
}

void ModuleRegistry::add(ModuleInfo info) {
  check_new(modules_, info, "module");
  if (!info.install) throw std::invalid_argument("module '" + info.name + "' registers no install()");
  modules_.push_back(std::move(info));
}

void ModuleRegistry::add(PresetInfo info) {
  check_new(presets_, info, "preset");
  if (info.is_default)
    for (const auto& p : presets_)
      if (p.is_default)
        throw std::invalid_argument("presets '" + p.name + "' and '" + info.name + "' are both the default");
  presets_.push_back(std::move(info));
}

const EntitySetInfo* ModuleRegistry::find_entity_set(const std::string& name) const {
  for (const auto& e : entity_sets_)
    if (e.name == name) return &e;
  return nullptr;
}

const ModuleInfo* ModuleRegistry::find(const std::string& name) const {
  for (const auto& m : modules_)
    if (m.name == name) return &m;
  return nullptr;
}

const PresetInfo* ModuleRegistry::find_preset(const std::string& name) const {
  for (const auto& p : presets_)
    if (p.name == name) return &p;
  return nullptr;
}

std::string ModuleRegistry::describe() const {
  std::ostringstream out;
  out << "entity sets ([simulation] entities):\n";
  for (const auto& e : entity_sets_)
    out << "  " << e.name << "  " << e.summary << "  [tables: " << join(e.tables) << "]\n";
  out << "modules ([simulation] modules, in the order of a step):\n";
  for (const auto& m : modules_) {
    out << "  " << m.name << "  " << m.summary
        << "  [tables: " << (m.tables.empty() ? "none" : join(m.tables))
        << (m.needs.empty() ? "" : "; needs: " + join(m.needs)) << "]\n";
  }
  out << "presets ([simulation] model):\n";
  for (const auto& p : presets_)
    out << "  " << p.name << (p.is_default ? " (default)" : "") << "  " << p.summary << "\n      entities = ["
        << join(p.entities) << "], modules = [" << join(p.modules) << "]\n";
  return out.str();
}

void apply_schedule_table(const io::ScenarioTable& table, Schedule& schedule) {
  const auto names = schedule.system_names();
  for (const auto& key : table.keys()) {
    if (std::find(names.begin(), names.end(), key) == names.end())
      table.fail(key, "no system of that name in this scenario's schedule (systems: " + join(names) + ")");
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

  // the composition: explicit lists, or a preset
  std::vector<std::string> entities, modules;
  std::string model;
  if (sim_table.has("modules")) {
    if (sim_table.has("model"))
      sim_table.fail("model", "a scenario names either a preset (model) or its modules, not both");
    entities = sim_table.strings("entities", {}, names_of(entity_sets_));
    modules = sim_table.strings("modules", {}, names_of(modules_));
    if (modules.empty()) sim_table.fail("modules", "lists no module");
    model = join(modules, "+");
  } else {
    if (sim_table.has("entities"))
      sim_table.fail("entities", "entity sets are declared together with [simulation] modules");
    std::string fallback;
    for (const auto& p : presets_)
      if (p.is_default) fallback = p.name;
    if (fallback.empty() && !sim_table.has("model"))
      sim_table.fail("modules", "missing: list the modules (registered: " + join(names_of(modules_)) +
                                    "), or name a preset in model (" + join(names_of(presets_)) + ")");
    model = sim_table.string("model", fallback, names_of(presets_));
    const PresetInfo& preset = *find_preset(model);
    entities = preset.entities;
    modules = preset.modules;
  }
  for (std::size_t i = 0; i < entities.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (entities[i] == entities[j]) sim_table.fail("entities", "'" + entities[i] + "' is listed twice");
  for (std::size_t i = 0; i < modules.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j)
      if (modules[i] == modules[j]) sim_table.fail("modules", "'" + modules[i] + "' is listed twice");
    for (const auto& need : find(modules[i])->needs)
      if (std::find(entities.begin(), entities.end(), need) == entities.end())
        sim_table.fail(sim_table.has("modules") ? "modules" : "model",
                       "module '" + modules[i] + "' acts on the entity set '" + need +
                           "', which the scenario does not declare (add it to [simulation] entities)");
  }

  double default_dt = 0.01;
  for (const auto& name : modules)
    if (find(name)->default_dt > 0.0) {
      default_dt = find(name)->default_dt;
      break;
    }
  ModelSettings settings;
  settings.dt = sim_table.number("dt", default_dt, io::Range::positive());
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

  Composition composition(root, settings);
  for (const auto& name : entities) {
    composition.add_entity_set(name);
    find_entity_set(name)->create(composition);
  }
  for (const auto& name : modules) find(name)->install(composition);
  std::unique_ptr<Simulation> sim = composition.finish();
  sim->model = model;
  if (!composition.has_derived_dt()) sim->dt = settings.dt;
  apply_schedule_table(root.table("schedule"), sim->schedule);
  try {
    sim->schedule.check_access();  // the order against the systems' declared reads and writes
  } catch (const InputError& e) {
    sim_table.fail(sim_table.has("modules") ? "modules" : "model", e.what());
  }
  sim->schedule.check_step_lengths(sim->dt);
  sim->steps = settings.steps;
  sim->output_every = settings.output_every;
  sim->check_every = settings.check_every;
  sim->checkpoint = settings.checkpoint;
  scenario.check_unused();
  return sim;
}

}  // namespace tissue
