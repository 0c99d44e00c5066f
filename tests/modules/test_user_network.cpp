// Gene networks written in the scenario (modules/gene_network/network_expressions.hpp, user_network.hpp):
// the epidermis network of scenarios/epidermis_user_network.toml against the built-in C++ network, the
// expression terms against closed-form solutions, and the errors a modeller sees for a bad expression.
// On the CUDA backend the same cases run the NVRTC-compiled kernel.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/core/cell_centres.hpp"
#include "engine/exec/error.hpp"
#include "engine/io/scenario.hpp"
#include "modules/builtin_modules.hpp"
#include "modules/gene_network/gene_network.hpp"
#include "modules/gene_network/user_network.hpp"

#include "tests/tissue_world.hpp"

using namespace tissue;
using tissue::sem::kAdhesiveElement;
using namespace tissue::grn;

namespace {

/// A cell of 4 elements around (x, y); adhesive cells sit on the membrane at height z_adh (A = 4 z_adh).
void add_cell(test::TissueWorld& w, float x, float y, float z, bool adhesive, float z_adh) {
  const auto c = w.add_cell_host();
  const float o = 0.1f;
  for (int k = 0; k < 4; ++k)
    w.add_element_host(c, x + (k % 2 ? o : -o), y + (k / 2 ? o : -o), adhesive ? z_adh : z,
                       adhesive ? kAdhesiveElement : 0);
}

/// 25 cells on a 5 x 5 lattice of pitch 0.7 in a periodic 3.5 x 3.5 box (4 neighbours each within 0.8),
/// every other cell lifted off the membrane, random concentrations around both epidermal states.
std::unique_ptr<test::TissueWorld> lattice_world(int species_rows) {
  auto w = std::make_unique<test::TissueWorld>(Box{3.5f, 3.5f, true, true, true}, species_rows);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0.05f, 2.0f), big(20.0f, 180.0f), height(0.1f, 0.4f);
  for (int i = 0; i < 25; ++i) {
    const bool adhesive = i % 2 == 0;
    add_cell(*w, 0.7f * static_cast<float>(i % 5) + 0.35f, 0.7f * static_cast<float>(i / 5) + 0.35f, 0.9f,
             adhesive, height(rng));
  }
  w->commit();
  for (std::size_t c = 0; c < 25; ++c)
    for (int k = 0; k < 6; ++k) w->species.host(c, k) = k == kDelta ? big(rng) : u(rng);
  w->cells.upload();
  update_cell_centres(*w);
  return w;
}

io::Scenario network_scenario(const std::string& gene_network) {
  return io::Scenario::from_string("[gene_network]\n" + gene_network, "network.toml");
}

/// Runs `steps` steps of a network on one isolated cell (A = 0) and returns its species afterwards.
std::vector<float> run_one_cell(const UserNetworkSpec& spec, const std::vector<float>& initial,
                                std::vector<std::pair<std::string, float>> columns, int steps, double dt) {
  test::TissueWorld w(Box{0, 0, false, false, true}, static_cast<int>(spec.species.size()) + 1);
  add_cell(w, 0.0f, 0.0f, 1.0f, false, 0.0f);
  w.commit();
  for (const auto& [name, value] : columns) w.cells.add_column<float>(name);
  for (std::size_t k = 0; k < initial.size(); ++k) w.species.host(0, static_cast<int>(k)) = initial[k];
  for (const auto& [name, value] : columns) w.cells.column<float>(name).host(0) = value;
  w.cells.upload();
  update_cell_centres(w);
  UserNetworkSystem sys(spec);
  for (int s = 0; s < steps; ++s) sys.run(w, StepContext{static_cast<std::int64_t>(s), s * dt, dt});
  w.download();
  std::vector<float> out;
  for (std::size_t k = 0; k < spec.species.size(); ++k) out.push_back(w.species.host(0, static_cast<int>(k)));
  return out;
}

}  // namespace

TEST_CASE("the epidermis network written in the scenario follows the built-in network's trajectory",
          "[gene_network][user_network]") {
  const auto scenario = io::Scenario::from_file(TISSUE_SOURCE_DIR "/scenarios/epidermis_user_network.toml");
  const auto spec = read_user_network(scenario.root().table("gene_network"), {});
  REQUIRE(spec.species.size() == 6);
  for (int k = 0; k < 6; ++k) REQUIRE(spec.species[static_cast<std::size_t>(k)].name == kSpeciesNames[k]);
  REQUIRE(spec.mean_species == std::vector<int>{kNotch, kDelta, kBound});
  REQUIRE(spec.reads_adhesion);

  auto built_in = lattice_world(kSpeciesCount), user = lattice_world(kSpeciesCount);
  GeneNetworkParams params;  // Table 2, G = 0.4: the values the scenario writes out
  GeneNetworkSystem reference(params);
  UserNetworkSystem scripted(spec);
  const double dt = 0.05;
  const int steps = 400;  // t = 20: the Ovol toggle and Notch/Delta settle well away from the start
  for (int s = 0; s < steps; ++s) {
    const StepContext ctx{static_cast<std::int64_t>(s), s * dt, dt};
    reference.run(*built_in, ctx);
    scripted.run(*user, ctx);
  }
  built_in->download();
  user->download();
  // Same stage structure, same neighbour sums in the same order; the rates differ only in being evaluated
  // in double (scenario) or float (built-in) before the float update: a few float roundings per step, so
  // relative 1e-5 of each species' scale after 400 steps (measured: ~1e-7).
  std::size_t changed_state = 0;
  for (int k = 0; k < kSpeciesCount; ++k) {
    double scale = 0.0;
    for (std::size_t c = 0; c < 25; ++c)
      scale = std::max(scale, std::fabs(double(built_in->species.host(c, k))));
    for (std::size_t c = 0; c < 25; ++c) {
      INFO("species " << kSpeciesNames[k] << " cell " << c << " scale " << scale);
      REQUIRE(user->species.host(c, k) == Approx(built_in->species.host(c, k)).margin(1e-5 * scale));
    }
  }
  for (std::size_t c = 0; c < 25; ++c) {
    INFO("cell " << c);
    REQUIRE(user->flags.host(c) == built_in->flags.host(c));
    changed_state += (built_in->flags.host(c) & built_in->suprabasal()) ? 1 : 0;
  }
  // both states occur, so the comparison covers the whole toggle
  REQUIRE(changed_state > 0);
  REQUIRE(changed_state < 25);
}

TEST_CASE("production, decay, Hill terms and mass action follow their closed-form solutions",
          "[gene_network][user_network]") {
  const auto scenario = network_scenario(R"toml(
parameters = { p = 2.0, d = 0.5, K = 1.5, n = 3, k = 0.25 }
species = [
  { name = "x", initial = 1.0, rate = "p - d * x" },
  { name = "y", initial = 0.7, rate = "0" },
  { name = "z", initial = 0.0, rate = "hill_act(y, K, n) + hill_rep(y, K, n)" },
  { name = "w", initial = 0.0, rate = "hill_act(y, K, n)" },
  { name = "a", initial = 2.0, rate = "-k * a * b" },
  { name = "b", initial = 1.0, rate = "-k * a * b" },
]
)toml");
  const auto spec = read_user_network(scenario.root().table("gene_network"), {});
  const double dt = 0.01;
  const int steps = 500;
  const double t = dt * steps;
  const auto s = run_one_cell(spec, {1.0f, 0.7f, 0.0f, 0.0f, 2.0f, 1.0f}, {}, steps, dt);
  // x' = p - d x: x = p/d + (x0 - p/d) e^{-d t}; midpoint RK2 error ~ (d dt)^2 / 6 d t per unit, tiny here
  CHECK(s[0] == Approx(4.0 + (1.0 - 4.0) * std::exp(-0.5 * t)).epsilon(1e-5));
  CHECK(s[1] == Approx(0.7));
  // activation + repression of the same input = 1: z = t (exact for RK2 up to float rounding of the sum)
  CHECK(s[2] == Approx(t).epsilon(1e-5));
  const double act = std::pow(0.7, 3) / (std::pow(1.5, 3) + std::pow(0.7, 3));
  CHECK(s[3] == Approx(act * t).epsilon(1e-5));
  // a' = b' = -k a b: a - b = 1 stays, and b = 1 / (2 e^{k t} - 1) (a0 = 2, b0 = 1)
  CHECK(s[4] - s[5] == Approx(1.0).epsilon(1e-5));
  CHECK(s[5] == Approx(1.0 / (2.0 * std::exp(0.25 * t) - 1.0)).epsilon(1e-4));
}

TEST_CASE("neighbour means, the adhesion input and sampled fields reach the expressions",
          "[gene_network][user_network]") {
  SECTION("two neighbours relax to their mean: the sum stays, the difference decays as e^{-2t}") {
    const auto scenario = network_scenario(R"toml(
neighbour_distance = 1.0
species = [ { name = "y", rate = "mean_y - y" } ]
)toml");
    const auto spec = read_user_network(scenario.root().table("gene_network"), {});
    test::TissueWorld w(Box{0, 0, false, false, true}, 2);
    add_cell(w, 0.0f, 0.0f, 1.0f, false, 0.0f);
    add_cell(w, 0.5f, 0.0f, 1.0f, false, 0.0f);
    add_cell(w, 5.0f, 0.0f, 1.0f, false, 0.0f);  // no neighbours: mean 0, decays as e^{-t}
    w.commit();
    w.species.host(0, 0) = 3.0f;
    w.species.host(1, 0) = 1.0f;
    w.species.host(2, 0) = 2.0f;
    w.cells.upload();
    update_cell_centres(w);
    UserNetworkSystem sys(spec);
    const double dt = 0.01;
    for (int s = 0; s < 100; ++s) sys.run(w, StepContext{static_cast<std::int64_t>(s), s * dt, dt});
    w.download();
    // midpoint RK2 multiplies y' = -r y by 1 - r dt + (r dt)^2 / 2 per step, exactly for a linear system
    const auto rk2 = [&](double r) { return std::pow(1.0 - r * dt + 0.5 * r * dt * r * dt, 100); };
    CHECK(w.species.host(0, 0) + w.species.host(1, 0) == Approx(4.0).epsilon(1e-6));
    CHECK(w.species.host(0, 0) - w.species.host(1, 0) == Approx(2.0 * rk2(2.0)).epsilon(1e-5));
    CHECK(w.species.host(2, 0) == Approx(2.0 * rk2(1.0)).epsilon(1e-5));
    CHECK(w.species.host(0, 0) - w.species.host(1, 0) == Approx(2.0 * std::exp(-2.0)).epsilon(1e-3));
  }
  SECTION("the adhesion input is the sum of the adhesive elements' heights, a field its cell's sample") {
    const auto scenario = network_scenario(R"toml(
species = [ { name = "u", rate = "adhesion" }, { name = "v", rate = "2 * tgfb" } ]
)toml");
    const auto spec = read_user_network(scenario.root().table("gene_network"), {"tgfb", "other"});
    REQUIRE(spec.fields == std::vector<std::string>{"tgfb"});
    test::TissueWorld w(Box{0, 0, false, false, true}, 3);
    add_cell(w, 0.0f, 0.0f, 1.0f, true, 0.25f);  // A = 1
    w.commit();
    w.cells.add_column<float>("tgfb").host(0) = 0.75f;
    w.cells.upload();
    update_cell_centres(w);
    UserNetworkSystem sys(spec);
    for (int s = 0; s < 10; ++s) sys.run(w, StepContext{static_cast<std::int64_t>(s), s * 0.1, 0.1});
    w.download();
    CHECK(w.species.host(0, 0) == Approx(1.0).epsilon(1e-6));
    CHECK(w.species.host(0, 1) == Approx(1.5).epsilon(1e-6));
    CHECK(w.species.host(0, 2) == Approx(1.0).epsilon(1e-6));  // the adhesion row itself
  }
}

TEST_CASE("expression errors name the file, line, column and token", "[gene_network][user_network]") {
  const auto fails_with = [](const std::string& body, const std::string& expected) {
    const auto scenario = network_scenario(body);
    INFO(body);
    REQUIRE_THROWS_WITH(read_user_network(scenario.root().table("gene_network"), {"tgfb"}),
                        Catch::Contains(expected));
  };
  // the species table starts on line 2 of network.toml (line 1 is [gene_network])
  fails_with("species = [\n  { name = \"x\", rate = \"1 + * x\" } ]\n",
             "network.toml:3:24: gene_network.species[0].rate: ");
  fails_with("species = [ { name = \"x\", rate = \"1 + * x\" } ]\n", "(token \"*\") at column 5");
  fails_with("species = [ { name = \"x\", rate = \"2 * xx\" } ]\n", "unknown name \"xx\" at column 5");
  fails_with("species = [ { name = \"x\", rate = \"x^2\" } ]\n",
             "token \"^\" at column 2: write powers as pow(x, n)");
  fails_with("species = [ { name = \"x\", rate = \"x = 2\" } ]\n", "token \"=\" at column 3");
  fails_with("species = [ { name = \"x\", rate = \"hill_act(x, 1)\" } ]\n", "hill_act");
  fails_with("species = [ { name = \"x\", rate = \"(x + 1\" } ]\n", "Missing parenthesis");
  fails_with("species = [ { name = \"x\", rate = \"x, 2\" } ]\n", "one expression per rate");
  fails_with("species = [ { name = \"x\", rate = \"\" } ]\n", "empty expression");
  // constants that are not finite (the class: division by zero, log of zero, roots and logs of negatives,
  // overflow, through parameters too) are refused, not run into cells full of inf or NaN
  for (const char* rate : {"1/0", "-1/0", "log(0)", "sqrt(-1)", "log(-1)", "exp(1000)", "0/0"})
    fails_with(std::string("species = [ { name = \"x\", rate = \"") + rate + "\" } ]\n",
               "the expression is a constant that is not finite");
  fails_with("parameters = { k = 0 }\nspecies = [ { name = \"x\", rate = \"1/k\" } ]\n",
             "the expression is a constant that is not finite");
  fails_with("species = [ { name = \"x\" } ]\n", "rate: missing");
  fails_with("species = [ { name = \"x\", rate = \"1\" }, { name = \"x\", rate = \"1\" } ]\n",
             "\"x\" is already a species");
  fails_with("species = [ { name = \"adhesion\", rate = \"1\" } ]\n", "is already the adhesion input");
  fails_with("species = [ { name = \"tgfb\", rate = \"1\" } ]\n", "is already a signal field");
  fails_with("species = [ { name = \"exp\", rate = \"1\" } ]\n", "is already a function");
  fails_with("species = [ { name = \"mean_x\", rate = \"1\" } ]\n", "names starting with mean_ are reserved");
  fails_with("species = [ { name = \"2x\", rate = \"1\" } ]\n", "is not a valid name");
  fails_with("parameters = { x = 1 }\nspecies = [ { name = \"x\", rate = \"1\" } ]\n",
             "\"x\" is already a species");
  fails_with("suprabasal = \"mean_x > 1\"\nspecies = [ { name = \"x\", rate = \"1\" } ]\n",
             "gene_network.suprabasal: unknown name \"mean_x\"");
  fails_with("species = []\n", "at least one");
}

TEST_CASE("an epidermis scenario with a network that lacks delta is refused by the lifecycle",
          "[gene_network][user_network]") {
  const std::string text = R"toml(
[simulation]
model = "epidermis"
dt = 0.01
steps = 10
[initial]
cells_x = 4
cells_y = 4
[gene_network]
species = [ { name = "x", rate = "-x" } ]
)toml";
  REQUIRE_THROWS_WITH(build_simulation(io::Scenario::from_string(text, "no_delta.toml")),
                      Catch::Contains("no_delta.toml") && Catch::Contains("lifecycle.delta_threshold: ") &&
                          Catch::Contains("needs a species named delta"));
}
