// A gene network per cell type (issue 37; modules/gene_network/typed_network.hpp): each cell follows its
// type's network (decay at the type's rate, against exp(-k t)); a species the type's network lacks keeps its
// value bit for bit; a transition (rules) switches the network from the next step (piecewise analytic); a
// cell of a type runs its network with the same bits as that network alone; two types pointing to one
// network give the bytes of the tissue-wide network; bad input is refused with one line. On the CUDA
// backend the merged network runs as the NVRTC kernel.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/exec/error.hpp"
#include "engine/io/scenario.hpp"
#include "modules/builtin_modules.hpp"
#include "modules/gene_network/gene_network.hpp"

using namespace tissue;

namespace {

constexpr double kDt = 0.01;

/// An isolated 4 x 4 monolayer (cells 4 apart: no neighbours) with `types_toml` and `extra` appended.
std::string scenario(const std::string& modules, const std::string& types_toml, const std::string& extra) {
  return "[simulation]\nentities = [\"tissue\"]\nmodules = [" + modules +
         "]\nseed = 5\nsteps = 10\ndt = 0.01\n[initial]\ncells_x = 4\ncells_y = 4\nelements_per_cell = "
         "4\nadhesive_elements = 0\nspacing = 4.0\ncell_radius = 0.3\n" +
         types_toml + extra;
}

/// Type a: X' = -k X (k = 0.5), A' = -k A; type b: X' = -k X (k = 0.2), B' = -k B. Same parameter name k.
const std::string kNetA =
    "[cell_types.gene_network]\nparameters = { k = 0.5 }\nspecies = [{ name = \"X\", initial = 10.0, rate = "
    "\"-k * X\" }, { name = \"A\", initial = 2.0, rate = \"-k * A\" }]\n";
const std::string kNetB =
    "[cell_types.gene_network]\nparameters = { k = 0.2 }\nspecies = [{ name = \"X\", initial = 10.0, rate = "
    "\"-k * X\" }, { name = \"B\", initial = 3.0, rate = \"-k * B\" }]\n";

std::string two_types(const std::string& a_extra, const std::string& b_extra, double fraction_a = 0.5) {
  return "[[cell_types]]\nname = \"a\"\nfraction = " + std::to_string(fraction_a) + "\n" + a_extra +
         "[[cell_types]]\nname = \"b\"\nfraction = " + std::to_string(1.0 - fraction_a) + "\n" + b_extra;
}

std::unique_ptr<Simulation> build(const std::string& text) {
  return build_simulation(io::Scenario::from_string(text, "typed.toml"));
}

std::string error_of(const std::string& text) {
  try {
    build(text)->advance(1);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

/// The species column's host values after a download, species-major (row * capacity + cell).
std::vector<float> species_of(World& w) {
  w.download();
  const auto& s = grn::species_column(w);
  std::vector<float> out;
  for (int k = 0; k < s.components(); ++k)
    for (std::size_t c = 0; c < w.cells.size(); ++c) out.push_back(s.host(c, k));
  return out;
}

std::vector<std::int32_t> types_of(World& w) {
  w.download();
  const auto& t = w.cells.column<std::int32_t>("cell_type");
  std::vector<std::int32_t> out;
  for (std::size_t c = 0; c < w.cells.size(); ++c) out.push_back(t.host(c));
  return out;
}

}  // namespace

TEST_CASE("typed networks: each cell decays at its type's rate, and a species its network lacks stays put",
          "[typed_network]") {
  auto sim = build(scenario("\"cell_centres\", \"gene_network\"", two_types(kNetA, kNetB), ""));
  World& w = *sim->world;
  const auto& names = grn::species_column(w).component_names();
  REQUIRE(names == std::vector<std::string>{"X", "A", "B", "adhesion"});  // union, in declaration order
  const auto types = types_of(w);
  int count_a = 0;
  for (auto t : types) count_a += t == 0 ? 1 : 0;
  REQUIRE(count_a > 0);
  REQUIRE(count_a < 16);
  const int steps = 200;
  sim->advance(steps);
  w.download();
  const auto& s = grn::species_column(w);
  const double t = steps * kDt;
  for (std::size_t c = 0; c < w.cells.size(); ++c) {
    const double k = types[c] == 0 ? 0.5 : 0.2;
    INFO("cell " << c << " of type " << types[c]);
    CHECK(static_cast<double>(s.host(c, 0)) == Approx(10.0 * std::exp(-k * t)).epsilon(1e-4));
    if (types[c] == 0) {
      CHECK(static_cast<double>(s.host(c, 1)) == Approx(2.0 * std::exp(-0.5 * t)).epsilon(1e-4));
      CHECK(s.host(c, 2) == 3.0f);  // B is not in a's network: rate 0, the same bits
    } else {
      CHECK(s.host(c, 1) == 2.0f);  // A is not in b's network
      CHECK(static_cast<double>(s.host(c, 2)) == Approx(3.0 * std::exp(-0.2 * t)).epsilon(1e-4));
    }
  }
}

TEST_CASE("typed networks: a cell runs its type's network with the bits of that network alone",
          "[typed_network]") {
  // the merged network (type a: kNetA, type b: kNetB) against each network as the only one of the tissue
  auto typed = build(scenario("\"cell_centres\", \"gene_network\"", two_types(kNetA, kNetB), ""));
  auto only_a = build(scenario("\"cell_centres\", \"gene_network\"", two_types(kNetA, kNetA), ""));
  auto only_b = build(scenario("\"cell_centres\", \"gene_network\"", two_types(kNetB, kNetB), ""));
  typed->advance(50);
  only_a->advance(50);
  only_b->advance(50);
  const auto types = types_of(*typed->world);
  const auto t = species_of(*typed->world), a = species_of(*only_a->world), b = species_of(*only_b->world);
  const std::size_t n = types.size();
  for (std::size_t c = 0; c < n; ++c) {
    INFO("cell " << c << " of type " << types[c]);
    if (types[c] == 0) {
      CHECK(std::memcmp(&t[c], &a[c], sizeof(float)) == 0);          // X
      CHECK(std::memcmp(&t[n + c], &a[n + c], sizeof(float)) == 0);  // A
    } else {
      CHECK(std::memcmp(&t[c], &b[c], sizeof(float)) == 0);              // X
      CHECK(std::memcmp(&t[2 * n + c], &b[n + c], sizeof(float)) == 0);  // B
    }
  }
}

TEST_CASE("typed networks: two types pointing to one network give the tissue-wide network's bytes",
          "[typed_network]") {
  const std::string net =
      "parameters = { k = 0.3, m = 1.5 }\nneighbour_distance = 5.0\nspecies = [{ name = \"X\", initial = "
      "4.0, "
      "rate = \"m * hill_act(mean_Y + 0.1, 1, 2) - k * X\" }, { name = \"Y\", initial = 1.0, rate = \"X - "
      "Y\" }]\n";
  const std::string types = two_types("", "");
  auto wide = build(scenario("\"cell_centres\", \"gene_network\"", types, "[gene_network]\n" + net));
  auto per_type = build(
      scenario("\"cell_centres\", \"gene_network\"",
               two_types("[cell_types.gene_network]\n" + net, "[cell_types.gene_network]\n" + net), ""));
  wide->advance(100);
  per_type->advance(100);
  const auto a = species_of(*wide->world), b = species_of(*per_type->world);
  REQUIRE(a.size() == b.size());
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  CHECK(grn::species_column(*per_type->world).component_names() ==
        grn::species_column(*wide->world).component_names());
  CHECK(a[0] != 4.0f);  // the network did run
}

TEST_CASE("typed networks: neighbour means average over the neighbours of every type", "[typed_network]") {
  // type a: Y' = 1 (Y = t); type b: Y' = 0 (Y stays 0) and Z' = mean_Y, so a b cell with n_a of its 4
  // neighbours of type a has Z = (n_a / 4) t^2 / 2 (midpoint RK2 is exact for this quadratic)
  const std::string a =
      "[cell_types.gene_network]\nneighbour_distance = 5.0\nspecies = [{ name = \"Y\", rate = \"1\" }]\n";
  const std::string b =
      "[cell_types.gene_network]\nneighbour_distance = 5.0\nspecies = [{ name = \"Y\", rate = \"0\" }, { "
      "name "
      "= \"Z\", rate = \"mean_Y\" }]\n";
  auto sim = build(scenario("\"cell_centres\", \"gene_network\"", two_types(a, b), ""));
  World& w = *sim->world;
  const auto types = types_of(w);
  sim->advance(100);
  const auto x = species_of(w);
  const std::size_t n = types.size();
  const double t = 100 * kDt;
  int checked = 0;
  for (std::size_t c = 0; c < n; ++c) {
    if (types[c] == 0) {
      CHECK(static_cast<double>(x[c]) == Approx(t).epsilon(1e-5));
      continue;
    }
    int n_a = 0, neighbours = 0;
    for (std::size_t o = 0; o < n; ++o) {
      const float dx = w.box.min_image_x(w.cx.host(o) - w.cx.host(c));
      const float dy = w.box.min_image_y(w.cy.host(o) - w.cy.host(c));
      if (o == c || dx * dx + dy * dy >= 25.0f) continue;
      ++neighbours;
      n_a += types[o] == 0 ? 1 : 0;
    }
    REQUIRE(neighbours == 4);
    INFO("b cell " << c << " with " << n_a << " a neighbours");
    CHECK(x[c] == 0.0f);
    CHECK(static_cast<double>(x[n + c]) == Approx(n_a / 4.0 * t * t / 2.0).margin(1e-5));
    checked += n_a > 0 ? 1 : 0;
  }
  CHECK(checked > 0);  // some b cell has a neighbours
}

TEST_CASE("typed networks: a transition switches the cell's network from the next step", "[typed_network]") {
  // every cell starts as a and becomes b at the rules' round at step 30 (time > 0.25)
  const std::string types =
      "[[cell_types]]\nname = \"a\"\nfraction = 1.0\n" + kNetA +
      "[cell_types.rules]\ntransitions = [{ to = \"b\", rate = \"time > 0.25 ? 1e9 : 0\" }]\n"
      "[[cell_types]]\nname = \"b\"\nfraction = 0.0\n" +
      kNetB;
  auto sim = build(
      scenario("\"sem\", \"cell_centres\", \"gene_network\", \"rules\"", types, "[rules]\ninterval = 10\n"));
  World& w = *sim->world;
  const std::size_t n = w.cells.size();
  // the type each cell runs in each step: the type before the step (the rules' hook runs after the systems)
  std::vector<std::vector<std::int32_t>> type_in_step;
  for (int s = 0; s < 60; ++s) {
    type_in_step.push_back(types_of(w));
    sim->advance(1);
  }
  const auto x = species_of(w);
  int switched_at = -1;
  for (int s = 0; s < 60 && switched_at < 0; ++s)
    if (type_in_step[static_cast<std::size_t>(s)][0] == 1) switched_at = s;
  REQUIRE(switched_at == 30);  // the round at the end of step 30 (time 0.3)
  for (std::size_t c = 0; c < n; ++c) {
    CHECK(type_in_step[29][c] == 0);
    CHECK(type_in_step[30][c] == 1);
    // 30 steps at k = 0.5, then 30 at k = 0.2
    const double expected = 10.0 * std::exp(-0.5 * 30 * kDt) * std::exp(-0.2 * 30 * kDt);
    CHECK(static_cast<double>(x[c]) == Approx(expected).epsilon(1e-4));
    // A decayed only while the cell was a; B only since it is b
    CHECK(static_cast<double>(x[n + c]) == Approx(2.0 * std::exp(-0.5 * 30 * kDt)).epsilon(1e-4));
    CHECK(static_cast<double>(x[2 * n + c]) == Approx(3.0 * std::exp(-0.2 * 30 * kDt)).epsilon(1e-4));
  }
}

TEST_CASE("typed networks: bad input is refused with one line", "[typed_network]") {
  const std::string mods = "\"cell_centres\", \"gene_network\"";
  // a per-type network without [[cell_types]] (the tissue's reader refuses the plain table first)
  CHECK_THAT(error_of(scenario(mods, kNetA, "[gene_network]\nnoise = 0.0\n")),
             Catch::Contains("cell_types: expected an array of tables"));
  // a species two networks start at different values
  const std::string other_x =
      "[cell_types.gene_network]\nspecies = [{ name = \"X\", initial = 1.0, rate = \"-X\" }]\n";
  CHECK_THAT(error_of(scenario(mods, two_types(kNetA, other_x), "")),
             Catch::Contains("species 'X' starts at 1 here but at 10"));
  // the built-in network's keys beside per-type networks
  CHECK_THAT(error_of(scenario(mods, two_types(kNetA, kNetB), "[gene_network]\nk_a = 0.001\n")),
             Catch::Contains("the built-in epidermis network cannot be mixed"));
  // noise per type
  CHECK_THAT(error_of(scenario(mods, two_types(kNetA + "noise = 0.1\n", kNetB), "")),
             Catch::Contains("noise is one setting of the tissue"));
  // different neighbour distances
  CHECK_THAT(error_of(scenario(mods, two_types(kNetA, kNetB + "neighbour_distance = 2.0\n"), "")),
             Catch::Contains("share one neighbour distance"));
  // an empty per-type network
  CHECK_THAT(error_of(scenario(mods, two_types("[cell_types.gene_network]\n", kNetB), "")),
             Catch::Contains("needs sbml = \"file\" or [[cell_types.gene_network.species]]"));
  // the type column's name taken by a species
  CHECK_THAT(error_of(scenario(mods,
                               two_types("[cell_types.gene_network]\nspecies = [{ name = \"network_type\", "
                                         "rate = \"0\" }]\n",
                                         kNetB),
                               "")),
             Catch::Contains("is reserved with per-type networks"));
  // one-line messages
  CHECK(error_of(scenario(mods, two_types(kNetA, other_x), "")).find('\n') == std::string::npos);
}
