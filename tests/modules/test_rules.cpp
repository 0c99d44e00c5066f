// Behaviour rules per cell type (issue 32, items 2 and 3; modules/rules): growth follows its rate against an
// independent evaluation of the rule; apoptosis removes the cell's elements over its duration and then the
// cell, and leaves the other cells' elements as they were; a transition switches the cell's type and with it
// the SEM's intracellular potential; secretion and uptake change the field's amount by exactly what the
// budget records; stochastic transitions at rate r over a time T happen with probability 1 - exp(-r T)
// (within 3 standard deviations); random motility gives the Brownian mean squared displacement; bad input is
// refused with its file:line:column.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/exec/device_buffer.hpp"
#include "engine/exec/error.hpp"
#include "engine/grid/grid.hpp"
#include "engine/io/scenario.hpp"
#include "modules/builtin_modules.hpp"
#include "modules/rules/rules.hpp"
#include "modules/sem/sem.hpp"

using namespace tissue;

namespace {

/// `v` with every digit (std::to_string keeps 6 decimals).
std::string exact(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

/// A periodic monolayer of n x n cells of `elements` elements with [[cell_types]] `types` (the first gets
/// all cells unless fractions are given in `types_toml`), modules `modules`, and `extra` appended.
std::string scenario(int n, int elements, const std::string& modules, const std::string& types_toml,
                     const std::string& extra, double dt = 0.01) {
  return "[simulation]\nentities = [\"tissue\"]\nmodules = [" + modules +
         "]\nseed = 3\nsteps = 10\ndt = " + exact(dt) + "\n[initial]\ncells_x = " + std::to_string(n) +
         "\ncells_y = " + std::to_string(n) + "\nelements_per_cell = " + std::to_string(elements) +
         "\nadhesive_elements = " + std::to_string(elements / 2) + "\n" + types_toml + extra;
}

std::unique_ptr<Simulation> build(const std::string& text) {
  return build_simulation(io::Scenario::from_string(text, "rules.toml"));
}

std::string error_of(const std::string& text) {
  try {
    build(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::map<std::int64_t, std::int32_t> counts_by_id(World& w) {
  w.download();
  std::map<std::int64_t, std::int32_t> out;
  for (std::size_t c = 0; c < w.cells.size(); ++c) out[w.cell_id.host(c)] = w.count.host(c);
  return out;
}

double field_amount(World& w, const std::string& name) {
  for (auto& f : w.fields)
    if (f->name() == name) {
      auto& g = dynamic_cast<GridField<float>&>(*f);
      g.download();
      double sum = 0.0;
      for (const float v : g.host()) sum += static_cast<double>(v);
      const double h = g.shape().h;
      return sum * h * h * h;
    }
  return std::nan("");
}

}  // namespace

TEST_CASE("rules: growth adds elements at the rule's rate, as an independent evaluation of it", "[rules]") {
  // dt = 2^-7 and interval 16: a round is 0.125 time units, exact in float; the rate depends on the count
  const std::string text = scenario(3, 10, "\"sem\", \"cell_centres\", \"rules\"",
                                    "[[cell_types]]\nname = \"a\"\n[cell_types.rules]\n"
                                    "growth_rate = \"g * hill_act(elements, 12, 2)\"\n",
                                    "[rules]\ninterval = 16\n[rules.parameters]\ng = 3.0\n", 0.0078125);
  auto sim = build(text);
  World& w = *sim->world;
  const int rounds = 48;
  sim->advance(16 * rounds);
  // independent: owed += g n^2 / (12^2 + n^2) * 0.125 per round, one element per whole unit owed
  int n = 10;
  double owed = 0.0;
  for (int r = 0; r < rounds; ++r) {
    owed += 3.0 * n * n / (144.0 + n * n) * 0.125;
    const int whole = static_cast<int>(std::floor(owed));
    n += whole;
    owed -= whole;
  }
  const auto counts = counts_by_id(w);
  REQUIRE(counts.size() == 9);
  for (const auto& [id, count] : counts) CHECK(count == n);
  CHECK(n > 14);  // the rule did grow the cells by several elements
  const auto& progress = w.cells.column<float>(rules::kGrowthProgressColumn);
  CHECK(static_cast<double>(progress.host(0)) == Approx(owed).margin(1e-5));
  CHECK(w.check_consistency().empty());
}

TEST_CASE("rules: apoptosis removes exactly the cell's elements over its duration, then the cell",
          "[rules]") {
  // type "b" starts apoptosis at the first round (rate 1e9: probability 1) and loses its elements over 1 time
  // unit; type "a" has no rules
  const std::string text = scenario(4, 10, "\"sem\", \"cell_centres\", \"rules\"",
                                    "[[cell_types]]\nname = \"a\"\nfraction = 0.5\n[[cell_types]]\nname = "
                                    "\"b\"\nfraction = 0.5\n[cell_types.rules]\napoptosis_rate = \"1e9\"\n"
                                    "apoptosis_duration = 1.0\n",
                                    "[rules]\ninterval = 10\n");
  auto sim = build(text);
  World& w = *sim->world;
  w.download();
  std::map<std::int64_t, int> type_of;
  const auto& type = w.cells.column<std::int32_t>(rules::kCellTypeColumn);
  for (std::size_t c = 0; c < w.cells.size(); ++c) type_of[w.cell_id.host(c)] = type.host(c);
  const auto before = counts_by_id(w);
  std::size_t a_cells = 0;
  for (const auto& [id, t] : type_of) a_cells += t == 0 ? 1 : 0;
  REQUIRE(a_cells > 0);
  REQUIRE(a_cells < 16);
  // apoptosis starts at step 10 (time 0.1); at step 60 half the duration has passed: ceil(10 * 0.5) = 5 left
  sim->advance(60);
  auto mid = counts_by_id(w);
  REQUIRE(mid.size() == 16);
  for (const auto& [id, count] : mid) {
    INFO("cell " << id << " of type " << type_of[id]);
    CHECK(count == (type_of[id] == 0 ? before.at(id) : 5));
  }
  CHECK(w.check_consistency().empty());
  // at step 110 the duration has passed: the b cells are gone, the a cells keep every element
  sim->advance(50);
  const auto after = counts_by_id(w);
  CHECK(after.size() == a_cells);
  std::size_t elements = 0;
  for (const auto& [id, count] : after) {
    CHECK(type_of[id] == 0);
    CHECK(count == before.at(id));
    elements += static_cast<std::size_t>(count);
  }
  CHECK(w.elements.size() == elements);
  CHECK(w.check_consistency().empty());
  for (std::size_t e = 0; e < w.elements.size(); ++e)
    REQUIRE(type_of[w.cell_id.host(static_cast<std::size_t>(w.cell.host(e)))] == 0);
}

TEST_CASE("rules: a transition switches the cell's type and the SEM's parameters with it", "[rules]") {
  const std::string text = scenario(
      2, 6, "\"sem\", \"cell_centres\", \"rules\"",
      "[[cell_types]]\nname = \"a\"\nfraction = 1.0\n[cell_types.rules]\ntransitions = [{ to = \"b\", rate "
      "= \"time > 0.05 ? 1e9 : 0\" }]\n[[cell_types]]\nname = \"b\"\nfraction = 0.0\n",
      "[rules]\ninterval = 5\n[sem.cell_types]\nb = { intra = { u0 = 0.9, xi1 = 0.1, w0 = 0.3, xi2 = 0.3 } "
      "}\n");
  auto sim = build(text);
  World& w = *sim->world;
  sem::SemSystem* sem = nullptr;
  for (std::size_t s = 0; s < sim->schedule.system_count(); ++s)
    if (auto* p = dynamic_cast<sem::SemSystem*>(&sim->schedule.system(s))) sem = p;
  REQUIRE(sem != nullptr);
  const auto forces = [&] {
    const std::size_t n = w.elements.size();
    DeviceBuffer<float> fx(n), fy(n), fz(n);
    sem->compute_forces(w, fx.span(), fy.span(), fz.span());
    return fx.to_host();
  };
  sim->advance(5);  // time 0.05: no transition yet (the rule reads time > 0.05 at step 5)
  w.download();
  const auto& type = w.cells.column<std::int32_t>(rules::kCellTypeColumn);
  for (std::size_t c = 0; c < w.cells.size(); ++c) CHECK(type.host(c) == 0);
  const auto as_a = forces();
  // the forces of the same positions with the cells' types set to b by hand, for comparison
  auto& writable = w.cells.column<std::int32_t>(rules::kCellTypeColumn);
  for (std::size_t c = 0; c < w.cells.size(); ++c) writable.host(c) = 1;
  writable.upload(w.cells.size());
  const auto as_b = forces();
  for (std::size_t c = 0; c < w.cells.size(); ++c) writable.host(c) = 0;
  writable.upload(w.cells.size());
  REQUIRE(as_a != as_b);
  sim->advance(5);  // step 10: the rule fires for every cell
  w.download();
  for (std::size_t c = 0; c < w.cells.size(); ++c) CHECK(type.host(c) == 1);
  // the SEM now uses b's potential: the forces equal those of b's parameters at the current positions
  const auto now = forces();
  for (std::size_t c = 0; c < w.cells.size(); ++c) writable.host(c) = 1;
  CHECK(now == forces());
}

TEST_CASE("rules: secretion and uptake change the field's amount by exactly the recorded budget", "[rules]") {
  // a static field (no transport): its amount changes only by the cells' secretion and uptake
  const std::string grid = "[signal.egf]\nspacing = 0.2\nheight = 1.0\ninitial = 2.0\n";
  const std::string text = scenario(
      3, 10, "\"sem\", \"cell_centres\", \"rules\"",
      "[[cell_types]]\nname = \"a\"\nfraction = 0.5\n[cell_types.rules]\nsecretion = [{ field = \"egf\", "
      "rate = "
      "\"1.5\" }]\n[[cell_types]]\nname = \"b\"\nfraction = 0.5\n[cell_types.rules]\nsecretion = [{ field = "
      "\"egf\", uptake = \"0.8\" }]\n",
      "[rules]\ninterval = 10\n" + grid);
  auto text_signals = text;
  text_signals.replace(text_signals.find("entities = [\"tissue\"]"), 21,
                       "entities = [\"tissue\", \"signals\"]");
  auto sim = build(text_signals);
  World& w = *sim->world;
  w.download();
  std::size_t secreting = 0;
  const auto& type = w.cells.column<std::int32_t>(rules::kCellTypeColumn);
  for (std::size_t c = 0; c < w.cells.size(); ++c) secreting += type.host(c) == 0 ? 1 : 0;
  REQUIRE(secreting > 0);
  REQUIRE(secreting < 9);
  const double before = field_amount(w, "egf");
  sim->advance(200);  // 20 rounds of 0.1
  const double after = field_amount(w, "egf");
  // find the engine's budget through the summary line
  sim->world->download();
  const std::string summary = sim->summary(w);
  INFO(summary);
  const auto at = summary.find("egf secreted ");
  REQUIRE(at != std::string::npos);
  const double secreted = std::stod(summary.substr(at + 13));
  const double taken = std::stod(summary.substr(summary.find("taken up ", at) + 9));
  CHECK(secreted == Approx(1.5 * 2.0 * static_cast<double>(secreting)).epsilon(1e-9));
  CHECK(taken > 0.0);
  CHECK(after - before == Approx(secreted - taken).epsilon(1e-4));
}

TEST_CASE("rules: transitions at rate r over a time T happen with probability 1 - exp(-r T)", "[rules]") {
  // 900 cells of one element, no mechanics: 10 rounds of 0.1 at r = 0.5
  const std::string text = scenario(
      30, 1, "\"rules\"",
      "[[cell_types]]\nname = \"a\"\nfraction = 1.0\n[cell_types.rules]\ntransitions = [{ to = \"b\", rate = "
      "\"r\" }]\n[[cell_types]]\nname = \"b\"\nfraction = 0.0\n",
      "[rules]\ninterval = 10\n[rules.parameters]\nr = 0.5\n");
  for (const int seed : {3, 4}) {
    auto s = text;
    s.replace(s.find("seed = 3"), 8, "seed = " + std::to_string(seed));
    auto sim = build(s);
    World& w = *sim->world;
    sim->advance(100);
    w.download();
    const auto& type = w.cells.column<std::int32_t>(rules::kCellTypeColumn);
    std::size_t switched = 0;
    for (std::size_t c = 0; c < w.cells.size(); ++c) switched += type.host(c) == 1 ? 1 : 0;
    const double p = 1.0 - std::exp(-0.5 * 1.0), n = static_cast<double>(w.cells.size());
    INFO("seed " << seed << ": " << switched << " of " << n);
    CHECK(std::abs(static_cast<double>(switched) / n - p) < 3.0 * std::sqrt(p * (1.0 - p) / n));
  }
}

TEST_CASE("motility: cells diffuse with the given coefficient (mean squared displacement 2 D t per axis)",
          "[rules]") {
  // 900 free one-element cells (no mechanics), D = 0.01 over t = 1: <dx^2 + dy^2> = 4 D t
  const std::string text = scenario(30, 1, "\"motility\"", "", "[motility]\ndiffusion = 0.01\n");
  auto sim = build(text);
  World& w = *sim->world;
  w.download();
  const auto x0 = w.x.host_data(), y0 = w.y.host_data();
  sim->advance(100);
  w.download();
  double sum = 0.0;
  const std::size_t n = w.elements.size();
  for (std::size_t e = 0; e < n; ++e) {
    const double dx = w.box.min_image_x(w.x.host(e) - x0[e]), dy = w.box.min_image_y(w.y.host(e) - y0[e]);
    sum += dx * dx + dy * dy;
  }
  const double msd = sum / static_cast<double>(n), expected = 4.0 * 0.01 * 1.0;
  // each axis's squared displacement has variance 2 (2 D t)^2
  CHECK(std::abs(msd - expected) <
        4.0 * std::sqrt(2.0 * 2.0 * std::pow(2.0 * 0.01, 2) / static_cast<double>(n)));
}

TEST_CASE("rules: bad input is refused at its file:line:column", "[rules]") {
  const std::string types = "[[cell_types]]\nname = \"a\"\n[cell_types.rules]\n";
  const auto bad = [&](const std::string& rules_lines, const std::string& extra = "",
                       const std::string& modules = "\"sem\", \"cell_centres\", \"rules\"") {
    return error_of(scenario(2, 4, modules, types + rules_lines, extra));
  };
  CHECK_THAT(bad("growth_rate = \"k * 2\"\n"),
             Catch::Contains("rules.toml:15:15") && Catch::Contains("unknown name \"k\""));
  CHECK_THAT(bad("transitions = [{ to = \"c\", rate = \"1\" }]\n"),
             Catch::Contains("rules.toml:15:23") && Catch::Contains("unknown cell type \"c\""));
  CHECK_THAT(bad("divide_when = \"elements >= \"\n"), Catch::Contains("rules.toml:15:15"));
  CHECK_THAT(bad("secretion = [{ field = \"egf\", rate = \"1\" }]\n"),
             Catch::Contains("no grid field named \"egf\""));
  CHECK_THAT(bad("motility = \"0.1\"\n"), Catch::Contains("add the module \"motility\""));
  CHECK_THAT(bad("chemotaxis = \"1\"\n"), Catch::Contains("add the module \"chemotaxis\""));
  CHECK_THAT(bad("apoptosis_duration = 2\n"), Catch::Contains("needs apoptosis_rate"));
  CHECK_THAT(bad("typo = 1\n"), Catch::Contains("rules.toml:15:1") && Catch::Contains("typo"));
  CHECK_THAT(error_of(scenario(2, 4, "\"sem\", \"cell_centres\", \"rules\"", "", "[rules]\ninterval = 5\n")),
             Catch::Contains("declare them with [[cell_types]]"));
  CHECK_THAT(bad("", "[lifecycle]\n", "\"sem\", \"cell_centres\", \"lifecycle\", \"rules\""),
             Catch::Contains("not both"));
}

TEST_CASE("rules: a chemotaxis rule scales the chemotaxis module's chi per cell type", "[rules]") {
  // one-element cells without mechanics in a linear field c = g x: type a climbs at chi g, type b (factor 0
  // from the first round on) stays
  const std::string text =
      "[simulation]\nentities = [\"tissue\", \"signals\"]\nmodules = [\"chemotaxis\", \"rules\"]\nseed = "
      "5\nsteps = "
      "10\ndt = 0.01\n[domain]\nperiodic = false\n[initial]\ncells_x = 4\ncells_y = 4\nelements_per_cell = "
      "1\nadhesive_elements = 0\n"
      "[[cell_types]]\nname = \"a\"\nfraction = 0.5\n[cell_types.rules]\nchemotaxis = "
      "\"1\"\n[[cell_types]]\nname = "
      "\"b\"\nfraction = 0.5\n[cell_types.rules]\nchemotaxis = \"0\"\n[rules]\ninterval = 1\n"
      "[signal.att]\nspacing = 0.2\nheight = 1.0\n[cell_chemotaxis]\nfield = \"att\"\nchi = 0.5\n";
  auto sim = build(text);
  World& w = *sim->world;
  const double g = 2.0;
  for (auto& f : w.fields)
    if (f->name() == "att") {
      auto& grid = dynamic_cast<GridField<float>&>(*f);
      const auto& shape = grid.shape();
      for (int k = 0; k < shape.nz; ++k)
        for (int j = 0; j < shape.ny; ++j)
          for (int i = 0; i < shape.nx; ++i)
            grid.host_at(0, i, j, k) = static_cast<float>(g * (i + 0.5) * shape.h);
      grid.upload();
    }
  sim->advance(1);  // the first round sets the factors
  w.download();
  const auto x1 = w.x.host_data();
  sim->advance(10);
  w.download();
  const auto& type = w.cells.column<std::int32_t>(rules::kCellTypeColumn);
  std::size_t seen[2] = {0, 0};
  for (std::size_t e = 0; e < w.elements.size(); ++e) {
    const auto t = type.host(static_cast<std::size_t>(w.cell.host(e)));
    // the gradient is exact between the first and the last node centres (0.1 and 2.3): elements that start
    // and end there
    if (x1[e] < 0.15f || x1[e] > 2.15f) continue;
    const double dx = w.box.min_image_x(w.x.host(e) - x1[e]);
    INFO("element " << e << " of type " << t << " from x = " << x1[e]);
    CHECK(dx == Approx(t == 0 ? 10 * 0.01 * 0.5 * g : 0.0).margin(2e-6));
    ++seen[t];
  }
  CHECK(seen[0] > 0);
  CHECK(seen[1] > 0);
}
