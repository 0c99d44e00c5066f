#include "modules/models.hpp"

#include <algorithm>

#include "modules/curvature_flow/conformal_willmore_model.hpp"
#include "modules/curvature_flow/graph_flow_model.hpp"
#include "modules/epidermis/epidermis.hpp"
#include "modules/grid_rd/grid_rd_model.hpp"
#include "modules/surface_rd/surface_rd_model.hpp"

namespace tissue {

std::vector<std::string> model_names() {
  return {"epidermis", "grid_rd", "surface_rd", "graph_flow", "conformal_willmore"};
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

std::unique_ptr<Simulation> build_simulation(const io::Scenario& scenario) {
  const auto root = scenario.root();
  const auto sim_table = root.table("simulation");
  const std::string model = sim_table.string("model", "epidermis", model_names());
  ModelSettings settings;
  settings.dt = sim_table.number("dt", model == "grid_rd" ? 1.0 : 0.01, io::Range::positive());
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

  std::unique_ptr<Simulation> sim = model == "grid_rd"      ? grid_rd::build(root, settings)
                                    : model == "surface_rd" ? surface_rd::build(root, settings)
                                    : model == "graph_flow" ? curvature_flow::build(root, settings)
                                    : model == "conformal_willmore"
                                        ? curvature_flow::build_conformal_willmore(root, settings)
                                        : epidermis::build(root, settings);
  apply_schedule_table(root.table("schedule"), sim->schedule);
  sim->schedule.check_access();  // the order against the systems' declared reads and writes
  if (model != "surface_rd") sim->dt = settings.dt;  // surface_rd derives its default from the mesh
  sim->schedule.check_step_lengths(sim->dt);
  sim->steps = settings.steps;
  sim->output_every = settings.output_every;
  sim->check_every = settings.check_every;
  sim->checkpoint = settings.checkpoint;
  scenario.check_unused();
  return sim;
}

}  // namespace tissue
