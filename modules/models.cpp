#include "modules/models.hpp"

#include "modules/epidermis/epidermis.hpp"

namespace tissue {

std::vector<std::string> model_names() {
  return {"epidermis"};
}

std::unique_ptr<Simulation> build_simulation(const io::Scenario& scenario) {
  const auto root = scenario.root();
  const auto sim_table = root.table("simulation");
  const std::string model = sim_table.string("model", "epidermis", model_names());
  const double dt = sim_table.number("dt", 0.01, io::Range::positive());
  const std::int64_t steps = sim_table.integer("steps", 1000, io::Range::non_negative());
  const auto seed = static_cast<std::uint64_t>(sim_table.integer("seed", 1, io::Range::non_negative()));
  const auto out = root.table("output");
  OutputSettings output;
  output.every = out.integer("every", output.every, io::Range::non_negative());
  output.elements = out.boolean("elements", output.elements);
  output.cells = out.boolean("cells", output.cells);

  std::unique_ptr<Simulation> sim = epidermis::build(root, seed);
  sim->dt = dt;
  sim->steps = steps;
  sim->output = output;
  scenario.check_unused();
  return sim;
}

}  // namespace tissue
