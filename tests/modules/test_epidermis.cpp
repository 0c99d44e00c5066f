// The epidermis model's assembly and its stratification summary.
#include <catch2/catch.hpp>
#include <vector>

#include "engine/io/scenario.hpp"
#include "modules/epidermis/epidermis.hpp"
#include "modules/builtin_modules.hpp"

using namespace tissue;

TEST_CASE("layers count cells stacked on cells, across the periodic boundary too", "[epidermis]") {
  Box box;
  box.lx = box.ly = 6.0f;
  const double width = 0.5, height = 0.5;
  // a stack of three at (1, 1); two cells beside its base; a cell at x = 0.05 resting on one at x = 5.95
  const std::vector<float> cx{1.0f, 1.0f, 1.0f, 1.45f, 0.55f, 5.95f, 0.05f, 3.0f};
  const std::vector<float> cy{1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 3.0f, 3.0f, 5.0f};
  const std::vector<float> cz{0.45f, 0.95f, 1.45f, 0.44f, 0.46f, 0.45f, 0.9f, 0.6f};
  std::vector<epidermis::CellFrame> frames(cz.size());
  for (std::size_t c = 0; c < cz.size(); ++c) frames[c].height = cz[c];
  const auto layers = epidermis::stacking_layers(cx, cy, cz, frames, box, width, height);
  CHECK(layers == std::vector<int>{0, 1, 2, 0, 0, 0, 1, 0});  // the lone cell at z 0.6 rests on nothing
}

TEST_CASE("the epidermis scenario builds a confluent adherent monolayer", "[epidermis]") {
  const auto scenario = io::Scenario::from_string(
      "[simulation]\nsteps = 10\n[initial]\ncells_x = 5\ncells_y = 4\nspacing = 0.6\n", "mono.toml");
  auto sim = build_simulation(scenario);
  World& w = *sim->world;
  w.download();
  REQUIRE(w.check_consistency().empty());
  CHECK(w.box.lx == Approx(3.0));
  CHECK(w.box.ly == Approx(2.4));
  const auto s = epidermis::summarize(w);
  CHECK(s.cells == 20);
  CHECK(s.elements == 400);
  CHECK(s.adherent == 20);
  CHECK(s.layers == 1);
  CHECK(s.cells_per_layer == std::vector<std::size_t>{20});
  CHECK(sim->schedule.describe().find("hook lifecycle.grow_and_divide (every 2000 steps)") !=
        std::string::npos);
}
