// The sweep file of `tissue sweep`: parsing, validation, expansion into members and their scenario texts.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "engine/run/sweep_spec.hpp"

using namespace tissue;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const char* kBase = R"(# base scenario
[simulation]
dt = 0.01   # time step
steps = 100
seed = 10

[a]
x = 1.0
n = 5
name = "plain"
flag = false
list = [1, 2]
sem.intra.u0 = 0.3
inl = { u0 = 0.3, xi1 = 0.1 }

[b]
y = 2.5
)";

/// A fresh temporary folder holding base.toml (`base`) and sweep.toml (`sweep`).
fs::path write_files(const std::string& name, const std::string& sweep, const std::string& base = kBase) {
  const fs::path dir = fs::temp_directory_path() / ("tissue_test_sweep_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "base.toml", std::ios::binary) << base;
  std::ofstream(dir / "sweep.toml", std::ios::binary) << sweep;
  return dir / "sweep.toml";
}

sweep::SweepSpec sweep_of(const std::string& name, const std::string& body, const std::string& base = kBase) {
  return sweep::read_sweep(write_files(name, "scenario = \"base.toml\"\n" + body, base));
}

/// The message of the InputError that reading this sweep throws ("(no error)" if none).
std::string error_of(const std::string& name, const std::string& body, const std::string& base = kBase) {
  try {
    sweep_of(name, body, base);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

/// The values of parameter k over all members.
std::vector<std::string> column(const sweep::SweepSpec& s, std::size_t k) {
  std::vector<std::string> out;
  for (const auto& m : s.members) out.push_back(m.values.at(k));
  return out;
}

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("sweep lists and ranges expand in order", "[sweep]") {
  SECTION("a list, converted to the base's float type") {
    const auto s = sweep_of("list", "[grid]\n\"a.x\" = [0.1, 2, 1e-7, -3.5]\n");
    REQUIRE(s.parameters.size() == 1);
    CHECK(s.parameters[0].key == "a.x");
    CHECK(s.parameters[0].where ==
          (fs::temp_directory_path() / "tissue_test_sweep_list" / "sweep.toml").string() + ":3:1");
    CHECK(column(s, 0) == V{"0.1", "2.0", "1e-07", "-3.5"});
    CHECK_THAT(s.members[2].scenario_text, Contains("\nx = 1e-07\n"));
  }
  SECTION("linear count, both ends included, integers") {
    const auto s = sweep_of("count", "[grid]\n\"a.n\" = { from = 1000, to = 3000, count = 3 }\n");
    CHECK(column(s, 0) == V{"1000", "2000", "3000"});
  }
  SECTION("count 1 gives from") {
    const auto s = sweep_of("count1", "[grid]\n\"a.x\" = { from = 0.5, to = 3, count = 1 }\n");
    CHECK(column(s, 0) == V{"0.5"});
  }
  SECTION("log scale") {
    const auto s =
        sweep_of("log", "[grid]\n\"a.x\" = { from = 0.1, to = 1000, count = 5, scale = \"log\" }\n");
    CHECK(column(s, 0) == V{"0.1", "1.0", "10.0", "100.0", "1000.0"});
  }
  SECTION("steps, rounded to 15 digits, the end included within tolerance") {
    const auto s = sweep_of("step", "[grid]\n\"a.x\" = { from = 0, to = 1, step = 0.1 }\n");
    CHECK(column(s, 0) == V{"0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0"});
    const auto t = sweep_of("step2", "[grid]\n\"a.n\" = { from = 0, to = 9, step = 2 }\n");
    CHECK(column(t, 0) == V{"0", "2", "4", "6", "8"});
  }
  SECTION("integer keys round range values to the nearest integer") {
    const auto s = sweep_of("round", "[grid]\n\"a.n\" = { from = 0, to = 5, count = 3 }\n");
    CHECK(column(s, 0) == V{"0", "3", "5"});
  }
  SECTION("strings and booleans") {
    const auto s =
        sweep_of("strings", "[grid]\n\"a.name\" = [\"p\", \"say \\\"hi\\\"\"]\n\"a.flag\" = [true, false]\n");
    CHECK(column(s, 0) == V{"\"p\"", "\"p\"", "\"say \\\"hi\\\"\"", "\"say \\\"hi\\\"\""});
    CHECK(column(s, 1) == V{"true", "false", "true", "false"});
    CHECK_THAT(s.members[2].scenario_text, Contains("name = \"say \\\"hi\\\"\"\n"));
  }
  SECTION("nested tables end at an array or a range") {
    const auto s = sweep_of(
        "nested", "[grid.a]\nx = [1.5, 2.5]\n[grid.a.sem.intra]\nu0 = { from = 1, to = 2, count = 2 }\n");
    REQUIRE(s.parameters.size() == 2);
    CHECK(s.parameters[0].key == "a.x");
    CHECK(s.parameters[1].key == "a.sem.intra.u0");
    CHECK(column(s, 1) == V{"1.0", "2.0", "1.0", "2.0"});
  }
}

TEST_CASE("a 2x2 grid with 2 replicates is 8 members, the first key slowest", "[sweep]") {
  const auto s = sweep_of("grid8",
                          "out = \"sweeps/x\"\nsteps = 20\nevery = 0\ncheckpoint_every = 5\n"
                          "metrics = [\"cells\", \"layers\"]\nreplicates = 2\n"
                          "[grid]\n\"b.y\" = [1.0, 2.0]\n\"a.n\" = [7, 8]\n");
  REQUIRE(s.parameters.size() == 3);
  CHECK(s.parameters[0].key == "b.y");
  CHECK(s.parameters[1].key == "a.n");
  CHECK(s.parameters[2].key == "simulation.seed");
  REQUIRE(s.members.size() == 8);
  CHECK(s.members[0].name == "m000");
  CHECK(s.members[7].name == "m007");
  CHECK(s.members[5].index == 5);
  CHECK(column(s, 0) == V{"1.0", "1.0", "1.0", "1.0", "2.0", "2.0", "2.0", "2.0"});
  CHECK(column(s, 1) == V{"7", "7", "8", "8", "7", "7", "8", "8"});
  CHECK(column(s, 2) == V{"10", "11", "10", "11", "10", "11", "10", "11"});  // base seed 10
  CHECK_THAT(s.members[6].scenario_text, Contains("\nseed = 10\n"));
  CHECK_THAT(s.members[6].scenario_text, Contains("\ny = 2.0\n"));
  CHECK_THAT(s.members[6].scenario_text, Contains("\nn = 8\n"));
  CHECK(s.out == "sweeps/x");
  CHECK(s.steps == 20);
  CHECK(s.every == 0);
  CHECK(s.checkpoint_every == 5);
  CHECK(s.metrics == V{"cells", "layers"});
  CHECK_THAT(s.metrics_where, Contains("sweep.toml:6:11"));
  CHECK(s.base.filename() == "base.toml");
  CHECK(s.base_text == kBase);
}

TEST_CASE("sweep member names widen past 1000 members, and nothing varied is one member", "[sweep]") {
  const auto one = sweep_of("one", "");
  REQUIRE(one.members.size() == 1);
  CHECK(one.members[0].name == "m000");
  CHECK(one.members[0].scenario_text == kBase);
  CHECK(one.parameters.empty());
  const auto file = write_files("from_text", "");
  const auto text = sweep::parse_sweep("scenario = \"base.toml\"\nseeds = [4]\n", file.string());
  CHECK(text.base == file.parent_path() / "base.toml");
  CHECK(text.members.at(0).values == V{"4"});
  const auto many = sweep_of("many", "replicates = 1001\n");
  CHECK(many.members.back().name == "m1000");
  CHECK(many.members.front().name == "m0000");
}

TEST_CASE("sweep seeds lists and seed insertion", "[sweep]") {
  SECTION("seeds") {
    const auto s = sweep_of("seeds", "seeds = [1, 7, 42]\n");
    CHECK(column(s, 0) == V{"1", "7", "42"});
  }
  SECTION("inserted after the [simulation] header when the base has no seed") {
    const std::string base = "[simulation] # header\ndt = 0.1\n[a]\nx = 1.0\n";
    const auto s = sweep_of("insert", "replicates = 2\n", base);
    CHECK(column(s, 0) == V{"1", "2"});  // base seed 1 when absent
    CHECK(s.members[1].scenario_text == "[simulation] # header\nseed = 2\ndt = 0.1\n[a]\nx = 1.0\n");
    const auto crlf = sweep_of("insert_crlf", "seeds = [5]\n", "[simulation]\r\ndt = 0.1\r\n");
    CHECK(crlf.members[0].scenario_text == "[simulation]\r\nseed = 5\r\ndt = 0.1\r\n");
  }
  SECTION("a base without a [simulation] header line is refused") {
    CHECK_THAT(error_of("noheader1", "replicates = 2\n", "[a]\nx = 1.0\n"),
               Contains("sweep.toml:2:14: simulation.seed: the base scenario"));
    CHECK_THAT(error_of("noheader2", "replicates = 2\n", "simulation.dt = 0.1\n"),
               Contains("write simulation.seed in the base scenario"));
    CHECK_THAT(error_of("noheader3", "replicates = 2\n", "simulation = { dt = 0.1 }\n"),
               Contains("write simulation.seed in the base scenario"));
    CHECK_THAT(error_of("noheader4", "replicates = 2\n", "[simulation.output]\nevery = 3\n"),
               Contains("write simulation.seed in the base scenario"));
  }
}

TEST_CASE("sweep values are substituted at their exact spans, the rest byte-identical", "[sweep]") {
  const auto s =
      sweep_of("spans",
               "[grid]\n\"simulation.dt\" = [0.02]\n\"a.sem.intra.u0\" = [0.7]\n\"a.inl.xi1\" = [0.25]\n"
               "\"a.inl.u0\" = [1]\n\"a.name\" = [\"q\"]\n");
  REQUIRE(s.members.size() == 1);
  std::string expected = kBase;
  const auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = expected.find(from);
    REQUIRE(at != std::string::npos);
    expected.replace(at, from.size(), to);
  };
  replace("dt = 0.01   # time step", "dt = 0.02   # time step");
  replace("sem.intra.u0 = 0.3", "sem.intra.u0 = 0.7");
  replace("inl = { u0 = 0.3, xi1 = 0.1 }", "inl = { u0 = 1.0, xi1 = 0.25 }");
  replace("name = \"plain\"", "name = \"q\"");
  CHECK(s.members[0].scenario_text == expected);
}

TEST_CASE("sweep spans count characters, not bytes, and reach the end of the file", "[sweep]") {
  const std::string base =
      "\xEF\xBB\xBF[a] # \xC3\xA9t\xC3\xA9\ns = { t = \"\xC3\xA9\xC3\xA9\", x = 1.0 }\ny = 3";
  const auto s = sweep_of("utf8", "[grid]\n\"a.s.x\" = [2.5]\n\"a.y\" = [4]\n", base);
  CHECK(s.members[0].scenario_text ==
        "\xEF\xBB\xBF[a] # \xC3\xA9t\xC3\xA9\ns = { t = \"\xC3\xA9\xC3\xA9\", x = 2.5 }\ny = 4");
  const auto t = sweep_of("bom_seed", "seeds = [3]\n", "\xEF\xBB\xBF[simulation]\ndt = 1.0");
  CHECK(t.members[0].scenario_text == "\xEF\xBB\xBF[simulation]\nseed = 3\ndt = 1.0");
  const auto u = sweep_of("eof_header", "seeds = [3]\n", "[simulation]");
  CHECK(u.members[0].scenario_text == "[simulation]\nseed = 3\n");
  const auto v = sweep_of("bom_first", "[grid]\n\"v\" = [7]\n", "\xEF\xBB\xBFv = 1\n");
  CHECK(v.members[0].scenario_text == "\xEF\xBB\xBFv = 7\n");
}

TEST_CASE("sweep latin hypercube designs hit every stratum once per dimension", "[sweep]") {
  const std::string body =
      "[sample]\nmethod = \"latin_hypercube\"\ncount = 16\nseed = 7\n[sample.ranges]\n"
      "\"a.x\" = { from = 0.2, to = 0.8 }\n\"b.y\" = { from = 1, to = 100, scale = \"log\" }\n";
  const auto s = sweep_of("lhs", body);
  REQUIRE(s.members.size() == 16);
  std::set<int> strata_x, strata_y;
  for (const auto& m : s.members) {
    const double x = std::stod(m.values[0]), y = std::stod(m.values[1]);
    CHECK(x >= 0.2);
    CHECK(x <= 0.8);
    CHECK(y >= 1.0);
    CHECK(y <= 100.0);
    strata_x.insert(static_cast<int>((x - 0.2) / 0.6 * 16));
    strata_y.insert(static_cast<int>(std::log(y) / std::log(100.0) * 16));
  }
  CHECK(strata_x.size() == 16);
  CHECK(strata_y.size() == 16);
  const auto again = sweep_of("lhs2", body);
  for (std::size_t i = 0; i < 16; ++i) CHECK(again.members[i].values == s.members[i].values);
  const auto other =
      sweep_of("lhs3",
               "[sample]\nmethod = \"latin_hypercube\"\ncount = 16\nseed = 8\n[sample.ranges]\n"
               "\"a.x\" = { from = 0.2, to = 0.8 }\n");
  CHECK(column(other, 0) != column(s, 0));
}

TEST_CASE("sweep uniform samples are deterministic and within range", "[sweep]") {
  const std::string body =
      "[sample]\nmethod = \"uniform\"\ncount = 50\n[sample.ranges]\n\"a.n\" = { from = 10, to = 20 }\n";
  const auto s = sweep_of("uniform", body);
  for (const auto& v : column(s, 0)) {
    CHECK(std::stoi(v) >= 10);
    CHECK(std::stoi(v) <= 20);
    CHECK(v.find('.') == std::string::npos);  // rounded: an integer key
  }
  CHECK(column(sweep_of("uniform2", body), 0) == column(s, 0));
}

TEST_CASE("sweep sobol designs are the unscrambled sequence after the origin", "[sweep]") {
  const auto s = sweep_of("sobol",
                          "[sample]\nmethod = \"sobol\"\ncount = 4\n[sample.ranges]\n"
                          "\"a.x\" = { from = 0, to = 1 }\n\"b.y\" = { from = 0, to = 1 }\n");
  CHECK(column(s, 0) == V{"0.5", "0.75", "0.25", "0.375"});
  CHECK(column(s, 1) == V{"0.5", "0.25", "0.75", "0.375"});
}

TEST_CASE("sweep grid and samples combine, samples inside grid combinations", "[sweep]") {
  const auto s =
      sweep_of("combined",
               "seeds = [3, 4]\n[grid]\n\"a.n\" = [1, 2]\n[sample]\nmethod = \"sobol\"\ncount = 2\n"
               "[sample.ranges]\n\"a.x\" = { from = 0, to = 1 }\n");
  REQUIRE(s.members.size() == 8);
  CHECK(column(s, 0) == V{"1", "1", "1", "1", "2", "2", "2", "2"});
  CHECK(column(s, 1) == V{"0.5", "0.5", "0.75", "0.75", "0.5", "0.5", "0.75", "0.75"});
  CHECK(column(s, 2) == V{"3", "4", "3", "4", "3", "4", "3", "4"});
}

TEST_CASE("sweep csv fields are quoted as RFC 4180 asks", "[sweep]") {
  CHECK(sweep::csv_field("0.4") == "0.4");
  CHECK(sweep::csv_field("\"x\"") == "\"\"\"x\"\"\"");
  CHECK(sweep::csv_field("a,b") == "\"a,b\"");
  CHECK(sweep::csv_field("a\nb") == "\"a\nb\"");
  CHECK(sweep::csv_field("") == "");
}

TEST_CASE("sweep files with bad input are refused with their position and key", "[sweep]") {
  const auto err = [](const std::string& body, const std::string& base = kBase) {
    return error_of("bad", body, base);
  };
  // the sweep file itself
  CHECK_THAT(err("stesp = 3\n"), Contains("sweep.toml:2:1: stesp: unknown key"));
  CHECK_THAT(err("steps = -1\n"), Contains("sweep.toml:2:9: steps: expected an integer >= 0, got -1"));
  CHECK_THAT(err("every = 1.5\n"), Contains("sweep.toml:2:9: every: expected an integer >= 0"));
  CHECK_THAT(err("out = 3\n"), Contains("sweep.toml:2:7: out: expected an output directory"));
  CHECK_THAT(err("metrics = [\"a\", \"a\"]\n"),
             Contains("sweep.toml:2:17: metrics: entry 1: \"a\" is listed twice"));
  CHECK_THAT(err("metrics = [\"\"]\n"),
             Contains("sweep.toml:2:12: metrics: entry 0: expected a metric name"));
  CHECK_THAT(err("metrics = []\n"), Contains("sweep.toml:2:11: metrics: an empty list"));
  CHECK_THAT(err("[grid\n"), Contains("sweep.toml:2:"));
  CHECK_THAT(err("[grid\n"), Contains("invalid TOML"));
  {
    const auto file = write_files("missing_scenario", "steps = 3\n");
    try {
      sweep::read_sweep(file);
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK_THAT(std::string(e.what()), Contains("sweep.toml: scenario: missing"));
    }
    CHECK_THROWS_AS(sweep::read_sweep(file.parent_path() / "nothing.toml"), InputError);
  }
  // the base scenario
  {
    const auto file = write_files("nobase", "scenario = \"nope.toml\"\n");
    CHECK_THROWS_WITH(sweep::read_sweep(file), Contains("sweep.toml:1:12: scenario: ") &&
                                                   Contains("nope.toml: base scenario not found"));
  }
  CHECK_THAT(err("", "[a]\nx = = 1\n"), Contains("base.toml:2:"));
  CHECK_THAT(err("", "[a]\nx = = 1\n"), Contains("invalid TOML"));
  // replicates and seeds
  CHECK_THAT(err("replicates = 0\n"), Contains("sweep.toml:2:14: replicates: expected an integer >= 1"));
  CHECK_THAT(err("replicates = 2\nseeds = [1]\n"),
             Contains("sweep.toml:3:9: seeds: give either replicates or seeds"));
  CHECK_THAT(err("seeds = [1, 1]\n"), Contains("sweep.toml:2:13: seeds: entry 1: 1 is listed twice"));
  CHECK_THAT(err("seeds = [-1]\n"), Contains("sweep.toml:2:10: seeds: entry 0: expected an integer >= 0"));
  CHECK_THAT(err("seeds = []\n"), Contains("sweep.toml:2:9: seeds: expected a non-empty array"));
  CHECK_THAT(err("replicates = 2\n[grid]\n\"simulation.seed\" = [1, 2]\n"),
             Contains("sweep.toml:2:14: simulation.seed: varied twice (also at "));
  CHECK_THAT(err("replicates = 2\n", "[simulation]\nseed = 1.5\n"),
             Contains("simulation.seed: is the number 1.5"));
  // keys the base does not have or cannot vary
  CHECK_THAT(
      err("[grid]\n\"a.zz\" = [1]\n"),
      Contains("sweep.toml:3:1: a.zz: not set in the base scenario") && Contains("set it there to vary it"));
  CHECK_THAT(err("[grid]\n\"a.x.y\" = [1]\n"), Contains("a.x.y: not set in the base scenario"));
  CHECK_THAT(err("[grid]\n\"a.sem\" = [1]\n"),
             Contains("sweep.toml:3:1: a.sem: is a table in the base scenario") &&
                 Contains("vary its entries instead"));
  CHECK_THAT(err("[grid]\n\"a.list\" = [1]\n"),
             Contains("sweep.toml:3:1: a.list: is an array in the base scenario"));
  CHECK_THAT(err("[grid]\n\"a.x\" = [1.0]\n[sample]\nmethod = \"uniform\"\ncount = "
                 "2\n[sample.ranges]\n\"a.x\" = { from = 0, to = 1 }\n"),
             Contains("sweep.toml:8:1: a.x: varied twice (also at ") && Contains("sweep.toml:3:1"));
  CHECK_THAT(err("[grid]\n\"a.x\" = [1.0]\n[grid.a]\nx = [2.0]\n"),
             Contains("sweep.toml:5:1: a.x: varied twice"));
  // lists
  CHECK_THAT(err("[grid]\n\"a.x\" = []\n"), Contains("sweep.toml:3:1: a.x: an empty list"));
  CHECK_THAT(err("[grid]\n\"a.n\" = [1, 2.5]\n"),
             Contains("sweep.toml:3:13: a.n: entry 1: expected an integer"));
  CHECK_THAT(err("[grid]\n\"a.n\" = [2.0]\n"),
             Contains("sweep.toml:3:10: a.n: entry 0: expected an integer"));
  CHECK_THAT(err("[grid]\n\"a.x\" = [\"s\"]\n"),
             Contains("sweep.toml:3:10: a.x: entry 0: expected a number"));
  CHECK_THAT(err("[grid]\n\"a.x\" = [inf]\n"),
             Contains("sweep.toml:3:10: a.x: entry 0: expected a finite number"));
  CHECK_THAT(err("[grid]\n\"a.x\" = [nan]\n"), Contains("expected a finite number"));
  CHECK_THAT(err("[grid]\n\"a.name\" = [1]\n"),
             Contains("sweep.toml:3:13: a.name: entry 0: expected a string"));
  CHECK_THAT(err("[grid]\n\"a.flag\" = [1]\n"),
             Contains("sweep.toml:3:13: a.flag: entry 0: expected true or false"));
  CHECK_THAT(err("[grid]\n\"a.x\" = [0.1, 0.10]\n"),
             Contains("sweep.toml:3:1: a.x: gives the value 0.1 twice"));
  CHECK_THAT(err("[grid]\n\"a.x\" = 0.5\n"),
             Contains("sweep.toml:3:1: a.x: expected a list of values or a range"));
  // grid ranges
  CHECK_THAT(err("[grid]\n\"a.x\" = { from = 0, to = 1, count = 0 }\n"),
             Contains("sweep.toml:3:37: a.x: count: expected an integer >= 1"));
  CHECK_THAT(err("[grid]\n\"a.x\" = { from = 0, to = 1, step = 0 }\n"),
             Contains("sweep.toml:3:36: a.x: step: expected a number > 0"));
  CHECK_THAT(err("[grid]\n\"a.x\" = { from = 0, to = 1, step = -1 }\n"),
             Contains("step: expected a number > 0"));
  CHECK_THAT(err("[grid]\n\"a.x\" = { from = 2, to = 1, count = 2 }\n"),
             Contains("sweep.toml:3:26: a.x: to (1) is less than from (2)"));
  CHECK_THAT(err("[grid]\n\"a.x\" = { from = 0, to = 1, count = 2, scale = \"log\" }\n"),
             Contains("sweep.toml:3:18: a.x: a log-scale range needs ends > 0"));
  CHECK_THAT(err("[grid]\n\"a.x\" = { from = 1, to = 2, count = 2, scale = \"cubic\" }\n"),
             Contains("a.x: scale: expected \"linear\" or \"log\""));
  CHECK_THAT(err("[grid]\n\"a.x\" = { from = 1, to = 2 }\n"),
             Contains("sweep.toml:3:9: a.x: range: give one of `count` and `step`"));
  CHECK_THAT(err("[grid]\n\"a.x\" = { from = 1, to = 2, count = 2, cout = 3 }\n"),
             Contains("sweep.toml:3:40: a.x: unknown key 'cout'"));
  CHECK_THAT(err("[grid]\n\"a.x\" = { to = 2, count = 2 }\n"), Contains("a.x: range: `from` missing"));
  CHECK_THAT(
      err("[grid]\n\"a.name\" = { from = 1, to = 2, count = 2 }\n"),
      Contains("sweep.toml:3:1: a.name: is a string in the base scenario; a range needs a numeric key"));
  CHECK_THAT(err("[grid]\n\"a.n\" = { from = 1, to = 2, count = 5 }\n"),
             Contains("a.n: gives the value 1 twice"));
  CHECK_THAT(err("[grid]\n\"a.x\" = { from = 0, to = 1e9, step = 1e-3 }\n"),
             Contains("step: ") && Contains("more than a sweep may have members"));
  // samples
  const std::string sample = "[sample]\nmethod = \"uniform\"\ncount = 2\n[sample.ranges]\n";
  CHECK_THAT(
      err("[sample]\nmethod = \"uniform\"\ncount = 0\n[sample.ranges]\n\"a.x\" = { from = 0, to = 1 }\n"),
      Contains("sweep.toml:4:9: sample.count: sample size must be at least 1"));
  CHECK_THAT(
      err("[sample]\nmethod = \"random\"\ncount = 2\n[sample.ranges]\n\"a.x\" = { from = 0, to = 1 }\n"),
      Contains("sweep.toml:3:10: sample.method: expected \"latin_hypercube\", \"sobol\" or \"uniform\""));
  CHECK_THAT(err("[sample]\ncount = 2\n[sample.ranges]\n\"a.x\" = { from = 0, to = 1 }\n"),
             Contains("sample.method: missing"));
  CHECK_THAT(err("[sample]\nmethod = \"uniform\"\ncount = 2\nsize = 3\n"),
             Contains("sweep.toml:5:1: sample.size: unknown key"));
  CHECK_THAT(err("[sample]\nmethod = \"uniform\"\ncount = 2\n"), Contains("sample.ranges: missing"));
  CHECK_THAT(err(sample + "\"a.x\" = { from = 1, to = 1 }\n"),
             Contains("sweep.toml:6:26: a.x: a sampled range needs from < to"));
  CHECK_THAT(err(sample + "\"a.x\" = { from = 0, to = 1, scale = \"log\" }\n"),
             Contains("sweep.toml:6:18: a.x: a log-scale range needs ends > 0"));
  CHECK_THAT(err(sample + "\"a.x\" = { from = 0, to = 1, count = 3 }\n"),
             Contains("sweep.toml:6:29: a.x: unknown key 'count'"));
  CHECK_THAT(err(sample + "\"a.x\" = [0.1, 0.2]\n"), Contains("sweep.toml:6:1: a.x: expected a range"));
  CHECK_THAT(err(sample + "\"a.flag\" = { from = 0, to = 1 }\n"),
             Contains("a.flag: is true or false in the base scenario"));
  {
    std::string ranges, base = "[p]\n";
    for (int i = 0; i < 3668; ++i) {
      ranges += "\"p.k" + std::to_string(i) + "\" = { from = 0, to = 1 }\n";
      base += "k" + std::to_string(i) + " = 0.5\n";
    }
    CHECK_THAT(err("[sample]\nmethod = \"sobol\"\ncount = 1\n[sample.ranges]\n" + ranges, base),
               Contains("sweep.toml:3:10: sample.method: sobol supports at most 3667 dimensions, got 3668"));
  }
  // absurd sizes
  CHECK_THAT(err("replicates = 1000\n[grid]\n\"a.x\" = { from = 0, to = 1, count = 1000 }\n"),
             Contains("more than 100000 members"));
}
