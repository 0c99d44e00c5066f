// The epidermis model's assembly and its stratification summary.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <random>
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

namespace {

/// The former all-pairs definition of stacking_layers, kept as the reference the cell list must match.
std::vector<int> layers_all_pairs(const std::vector<float>& cx, const std::vector<float>& cy,
                                  const std::vector<float>& cz,
                                  const std::vector<epidermis::CellFrame>& frames, const Box& box,
                                  double width, double height) {
  const std::size_t n = cz.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return frames[a].height < frames[b].height; });
  std::vector<int> layer(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t b = order[k];
    for (std::size_t j = 0; j < k; ++j) {
      const std::size_t a = order[j];
      if (frames[b].height - frames[a].height <= 0.5 * height) continue;
      const double d[3] = {box.min_image_x(cx[b] - cx[a]), box.min_image_y(cy[b] - cy[a]),
                           static_cast<double>(cz[b] - cz[a])};
      const auto& u = frames[a].normal;
      const double along = d[0] * u[0] + d[1] * u[1] + d[2] * u[2];
      const double across2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - along * along;
      if (across2 < width * width) layer[b] = std::max(layer[b], layer[a] + 1);
    }
  }
  return layer;
}

/// A random tissue: n cells in [0, lx) x [0, ly) x [0, lz), a fifth of them within 0.1 width of a
/// periodic edge (minimum-image cases), some exactly on columns of one another; normals (0, 0, 1) or
/// tilted (tilt up to `tilt` radians, lengths off unit by up to 1e-6).
struct RandomTissue {
  std::vector<float> cx, cy, cz;
  std::vector<epidermis::CellFrame> frames;
};
RandomTissue random_tissue(std::mt19937& rng, std::size_t n, float lx, float ly, float lz, double width,
                           double tilt) {
  std::uniform_real_distribution<float> ux(0.0f, lx), uy(0.0f, ly), uz(0.0f, lz), u01(0.0f, 1.0f);
  RandomTissue t;
  for (std::size_t c = 0; c < n; ++c) {
    float x = ux(rng), y = uy(rng);
    const float r = u01(rng);
    if (r < 0.1f)
      x = (u01(rng) < 0.5f) ? static_cast<float>(0.1 * width) * u01(rng)
                            : lx - static_cast<float>(0.1 * width) * u01(rng);
    else if (r < 0.2f)
      y = (u01(rng) < 0.5f) ? static_cast<float>(0.1 * width) * u01(rng)
                            : ly - static_cast<float>(0.1 * width) * u01(rng);
    else if (r < 0.3f && c > 0) {  // on the column of an earlier cell, or just beside it
      const std::size_t o = static_cast<std::size_t>(u01(rng) * static_cast<float>(c)) % c;
      x = t.cx[o] + (u01(rng) < 0.5f ? 0.0f : static_cast<float>(width) * (0.98f + 0.04f * u01(rng)));
      y = t.cy[o];
    }
    t.cx.push_back(x);
    t.cy.push_back(y);
    t.cz.push_back(uz(rng));
    epidermis::CellFrame f;
    f.height = t.cz.back();
    if (tilt > 0.0) {
      const double theta = tilt * u01(rng), phi = 6.283185307179586 * u01(rng);
      const double len = 1.0 + 1e-6 * (2.0 * u01(rng) - 1.0);
      f.normal = {static_cast<float>(len * std::sin(theta) * std::cos(phi)),
                  static_cast<float>(len * std::sin(theta) * std::sin(phi)),
                  static_cast<float>(len * std::cos(theta))};
      f.height = t.cz.back() + 0.3f * (u01(rng) - 0.5f);  // a curved membrane's height is not z
    }
    t.frames.push_back(f);
  }
  return t;
}

}  // namespace

TEST_CASE("stacking layers by cell list equal the all-pairs definition on random tissues", "[epidermis]") {
  std::mt19937 rng(38);
  SECTION("random tissues, open and periodic axes") {
    for (int trial = 0; trial < 60; ++trial) {
      Box box;
      box.lx = 2.0f + 10.0f * std::uniform_real_distribution<float>(0.0f, 1.0f)(rng);
      box.ly = 2.0f + 10.0f * std::uniform_real_distribution<float>(0.0f, 1.0f)(rng);
      box.periodic_x = trial % 4 != 1;
      box.periodic_y = trial % 4 != 2;
      const double width = 0.3 + 0.7 * std::uniform_real_distribution<double>(0.0, 1.0)(rng);
      const double height = (trial % 5 == 0) ? 0.0 : 0.5 * width;
      const double tilt = (trial % 3 == 0) ? 0.0 : (trial % 3 == 1 ? 0.3 : 1.5);
      const auto t = random_tissue(rng, 50 + 40 * static_cast<std::size_t>(trial), box.lx, box.ly,
                                   1.0f + 0.2f * static_cast<float>(trial % 10), width, tilt);
      INFO("trial " << trial);
      std::size_t tested = 0;
      const auto fast = epidermis::stacking_layers(t.cx, t.cy, t.cz, t.frames, box, width, height, &tested);
      CHECK(fast == layers_all_pairs(t.cx, t.cy, t.cz, t.frames, box, width, height));
    }
  }
  SECTION("a width wider than the box and degenerate widths") {
    Box box;
    box.lx = box.ly = 1.0f;
    const auto t = random_tissue(rng, 200, 1.0f, 1.0f, 3.0f, 2.0, 0.5);
    for (double width : {0.0, -1.0, 2.0, 50.0, static_cast<double>(INFINITY), static_cast<double>(NAN)})
      CHECK(epidermis::stacking_layers(t.cx, t.cy, t.cz, t.frames, box, width, 0.1) ==
            layers_all_pairs(t.cx, t.cy, t.cz, t.frames, box, width, 0.1));
  }
  SECTION("a cell with a non-finite centre or normal") {
    Box box;
    box.lx = box.ly = 4.0f;
    auto t = random_tissue(rng, 300, 4.0f, 4.0f, 2.0f, 0.5, 0.2);
    t.frames[7].normal = {NAN, 0.0f, 1.0f};
    t.frames[9].normal = {0.0f, 0.0f, 0.0f};
    CHECK(epidermis::stacking_layers(t.cx, t.cy, t.cz, t.frames, box, 0.5, 0.25) ==
          layers_all_pairs(t.cx, t.cy, t.cz, t.frames, box, 0.5, 0.25));
    t.cx[3] = NAN;
    CHECK(epidermis::stacking_layers(t.cx, t.cy, t.cz, t.frames, box, 0.5, 0.25) ==
          layers_all_pairs(t.cx, t.cy, t.cz, t.frames, box, 0.5, 0.25));
  }
}

TEST_CASE("stacking layers by cell list equal the all-pairs definition on seeded tissues", "[epidermis]") {
  // the epidermis scenario's seeded monolayer, with cells lifted onto their neighbours (stacks across the
  // periodic edges too), and a shell of cells on a sphere (radial normals, heights above the sphere)
  const auto scenario = io::Scenario::from_string(
      "[simulation]\nsteps = 10\n[initial]\ncells_x = 12\ncells_y = 10\nspacing = 0.6\n", "seeded.toml");
  auto sim = build_simulation(scenario);
  World& w = *sim->world;
  w.download();
  const std::size_t n = w.cells.size();
  std::vector<float> cx(n), cy(n), cz(n);
  std::vector<epidermis::CellFrame> frames(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u01(0.0f, 1.0f);
  for (std::size_t c = 0; c < n; ++c) {
    cx[c] = w.cx.host(c);
    cy[c] = w.cy.host(c);
    cz[c] = w.cz.host(c) + (c % 3 == 0 ? 0.5f * std::floor(4.0f * u01(rng)) : 0.0f);
    if (c % 7 == 0) cx[c] = w.box.wrap_x(cx[c] + 0.3f);  // half a spacing: over two neighbours
    frames[c].height = cz[c];
  }
  const auto s = epidermis::summarize(w);
  for (double width : {s.cell_width, 0.3, 0.6, 0.61, 1.3}) {
    INFO("width " << width);
    CHECK(epidermis::stacking_layers(cx, cy, cz, frames, w.box, width, s.cell_height) ==
          layers_all_pairs(cx, cy, cz, frames, w.box, width, s.cell_height));
  }
  // a sphere of radius 5 with cells in three shells (open box: no periodic axes)
  Box open;
  open.periodic_x = open.periodic_y = false;
  open.floor = false;
  std::vector<float> sx, sy, sz;
  std::vector<epidermis::CellFrame> sf;
  for (int shell = 0; shell < 3; ++shell)
    for (int k = 0; k < 600; ++k) {
      const double zc = 1.0 - 2.0 * (k + 0.5) / 600.0, phi = 2.399963229728653 * k + 0.3 * shell;
      const double r = std::sqrt(1.0 - zc * zc), radius = 5.3 + 0.6 * shell + 0.05 * u01(rng);
      const double nx = r * std::cos(phi), ny = r * std::sin(phi);
      sx.push_back(static_cast<float>(radius * nx));
      sy.push_back(static_cast<float>(radius * ny));
      sz.push_back(static_cast<float>(radius * zc));
      sf.push_back({static_cast<float>(radius - 5.0),
                    {static_cast<float>(nx), static_cast<float>(ny), static_cast<float>(zc)}});
    }
  for (double width : {0.4, 0.7, 2.0}) {
    INFO("sphere, width " << width);
    CHECK(epidermis::stacking_layers(sx, sy, sz, sf, open, width, 0.5) ==
          layers_all_pairs(sx, sy, sz, sf, open, width, 0.5));
  }
}

TEST_CASE("stacking layers test pairs in proportion to the cells, not their square", "[epidermis]") {
  // cells_x = cells_y = 300 in three layers: 270 000 cells; all pairs would be 3.6e10 tests
  const std::size_t side = 300, layers = 3;
  const float spacing = 0.6f;
  Box box;
  box.lx = box.ly = spacing * static_cast<float>(side);
  std::vector<float> cx, cy, cz;
  std::vector<epidermis::CellFrame> frames;
  for (std::size_t l = 0; l < layers; ++l)
    for (std::size_t j = 0; j < side; ++j)
      for (std::size_t i = 0; i < side; ++i) {
        cx.push_back(spacing * (static_cast<float>(i) + 0.5f * static_cast<float>(l % 2)));
        cy.push_back(spacing * static_cast<float>(j));
        cz.push_back(0.3f + 0.5f * static_cast<float>(l));
        frames.push_back({cz.back(), {0.0f, 0.0f, 1.0f}});
      }
  std::size_t tested = 0;
  const auto layer = epidermis::stacking_layers(cx, cy, cz, frames, box, 0.6, 0.5, &tested);
  const std::size_t n = cz.size();
  CHECK(tested < 1000 * n);
  std::vector<std::size_t> per_layer(layers, 0);
  for (int l : layer) ++per_layer[static_cast<std::size_t>(l)];
  CHECK(per_layer == std::vector<std::size_t>(layers, side * side));
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
