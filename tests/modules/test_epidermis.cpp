// The epidermis model's assembly and its stratification summary.
#include <catch2/catch.hpp>
#include <vector>

#include "engine/io/scenario.hpp"
#include "modules/builtin_modules.hpp"
#include "modules/epidermis/epidermis.hpp"

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

TEST_CASE("the epidermis preset is the composition scenarios/epidermis.toml spells out",
          "[epidermis][composition]") {
  const std::string tables = "steps = 10\n[initial]\ncells_x = 4\ncells_y = 4\n";
  auto preset =
      build_simulation(io::Scenario::from_string("[simulation]\nmodel = \"epidermis\"\n" + tables, "a.toml"));
  auto listed = build_simulation(io::Scenario::from_string(
      "[simulation]\nentities = [\"tissue\"]\n"
      "modules = [\"sem\", \"cell_centres\", \"gene_network\", \"lifecycle\", \"stratification\"]\n" +
          tables,
      "b.toml"));
  CHECK(preset->schedule.describe() == listed->schedule.describe());
  CHECK(preset->schedule.system_names() == std::vector<std::string>{"sem", "cell_centres", "gene_network"});
  CHECK(preset->model == "epidermis");
  CHECK(listed->model == "sem+cell_centres+gene_network+lifecycle+stratification");
  // the composed World: the engine's columns plus what the modules added, and the flags they took
  World& w = *listed->world;
  CHECK(w.elements.find("type") != nullptr);  // sem
  CHECK(w.cells.find("species") != nullptr);  // gene_network
  CHECK(w.cells.find("species")->component_index("delta") == 1);
  CHECK(w.flag_names() == std::vector<std::string>{"suprabasal", "growing"});  // gene_network, lifecycle
  // the hook's declared reads and writes are printed with it
  const std::string schedule = listed->schedule.describe();
  CHECK(schedule.find("hook lifecycle.grow_and_divide (every 2000 steps)\n    reads:  elements.x") !=
        std::string::npos);
  CHECK(schedule.find("writes: elements.x, elements.y, elements.z, elements.cell, elements.type") !=
        std::string::npos);
}

TEST_CASE("a composition without the gene network runs cells that grow without a Delta gate",
          "[epidermis][composition]") {
  // no species column: the lifecycle lets every cell grow; the stratification summary still runs
  auto sim = build_simulation(io::Scenario::from_string(
      "[simulation]\nentities = [\"tissue\"]\nmodules = [\"sem\", \"cell_centres\", \"lifecycle\", "
      "\"stratification\"]\n"
      "steps = 10\n[initial]\ncells_x = 4\ncells_y = 4\n[lifecycle]\ngrowth_interval = 5\n",
      "no_network.toml"));
  World& w = *sim->world;
  CHECK(w.cells.find("species") == nullptr);
  const std::size_t elements = w.elements.size();
  sim->advance(10);
  CHECK(w.elements.size() == elements + 2 * w.cells.size());  // two growth events, one element per cell each
  w.download();
  CHECK(sim->summary(w).find("cells 16") != std::string::npos);
}

TEST_CASE("cells born together divide in lockstep: the count jumps by whole generations with the threshold",
          "[epidermis][lockstep]") {
  // A 3 x 3 periodic sheet with growth every 100 steps (the seed: 2000), so that a division cycle of 20
  // growth events is 2000 steps and two cycles fit a short test. Cells born together stay within 0.01 in
  // Delta, so each generation grows or stops as one: a count between whole generations cannot occur.
  // Independent prediction: from a run in which every cell grows, a generation divides at step 4000 iff
  // its Delta stays below the threshold at every growth check, i.e. iff its Delta at the last check is.
  auto scenario = [](double threshold) {
    return io::Scenario::from_string(
        "[simulation]\nsteps = 4100\n[initial]\ncells_x = 3\ncells_y = 3\nspacing = 0.6\n"
        "[lifecycle]\ngrowth_interval = 100\ndelta_threshold = " +
            std::to_string(threshold) + "\n",
        "lockstep.toml");
  };
  auto free_run = build_simulation(scenario(1e6));
  World& w = *free_run->world;
  free_run->advance(3999);  // just before the check at step 4000 that takes every 39-element cell to 40
  w.download();
  const std::uint32_t supra = w.flag_bit("suprabasal");
  const int delta = w.cells.find("species")->component_index("delta");
  auto& species = w.cells.column<float>("species");
  REQUIRE(w.cells.size() == 18);
  float basal_lo = 1e9f, basal_hi = 0, supra_lo = 1e9f, supra_hi = 0;
  for (std::size_t c = 0; c < w.cells.size(); ++c) {
    const float d = species.host(c, delta);
    if (w.flags.host(c) & supra)
      supra_lo = std::min(supra_lo, d), supra_hi = std::max(supra_hi, d);
    else
      basal_lo = std::min(basal_lo, d), basal_hi = std::max(basal_hi, d);
  }
  INFO("basal Delta " << basal_lo << ".." << basal_hi << ", suprabasal " << supra_lo << ".." << supra_hi);
  CHECK(basal_hi - basal_lo < 0.05f);  // born together, the same Delta
  CHECK(supra_hi - supra_lo < 0.05f);
  REQUIRE(supra_lo > basal_hi + 1.0f);  // the suprabasal generation, born at the same Delta, is ahead
  free_run->advance(101);
  CHECK(w.cells.size() == 36);  // every cell divided at step 4000
  // thresholds between and around the two generations' Delta at the last check
  const std::vector<std::pair<double, std::size_t>> expected{
      {basal_lo - 0.5, 18}, {0.5 * (basal_hi + supra_lo), 27}, {supra_hi + 0.5, 36}};
  for (const auto& [threshold, cells] : expected) {
    auto sim = build_simulation(scenario(threshold));
    sim->advance(4100);
    INFO("threshold " << threshold);
    CHECK(sim->world->cells.size() == cells);
  }
}
