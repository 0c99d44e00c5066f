// Scenario validation: every key is checked, errors carry file:line:column.
#include <catch2/catch.hpp>
#include <string>

#include "engine/io/scenario.hpp"

using namespace tissue;
using Catch::Matchers::Contains;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("scenario values are read with defaults and ranges", "[scenario]") {
  const auto s =
      io::Scenario::from_string("[simulation]\ndt = 0.02\nsteps = 10\n[sem.intra]\nu0 = 1\n", "t.toml");
  const auto sim = s.root().table("simulation");
  CHECK(sim.number("dt", 0.01, io::Range::positive()) == 0.02);
  CHECK(sim.integer("steps", 5, io::Range::non_negative()) == 10);
  CHECK(sim.integer("seed", 42) == 42);
  CHECK(s.root().table("sem").table("intra").number("u0", 0.3) == 1.0);  // integers accepted as numbers
  CHECK_NOTHROW(s.check_unused());
}

TEST_CASE("an unknown key is reported with its position and a suggestion", "[scenario]") {
  const auto s = io::Scenario::from_string("[simulation]\ndt = 0.02\nstesp = 10\n", "bad.toml");
  const auto sim = s.root().table("simulation");
  sim.number("dt", 0.01);
  sim.integer("steps", 1);
  const std::string msg = error_of([&] { s.check_unused(); });
  CHECK_THAT(msg, Contains("bad.toml:3:1: unknown key 'simulation.stesp'"));
  CHECK_THAT(msg, Contains("did you mean 'steps'?"));
}

TEST_CASE("an unknown section is reported", "[scenario]") {
  const auto s = io::Scenario::from_string("[simulation]\ndt = 0.1\n\n[semm]\nu0 = 1\n", "x.toml");
  s.root().table("simulation").number("dt", 0.01);
  CHECK_THAT(error_of([&] { s.check_unused(); }), Contains("x.toml:4:2: unknown key 'semm'"));
}

TEST_CASE("wrong types and out-of-range values name the key and what was expected", "[scenario]") {
  const auto s = io::Scenario::from_string(
      "[simulation]\ndt = -0.01\nsteps = \"many\"\nseed = 1.5\nmodel = \"epidermiss\"\nflag = 3\n", "v.toml");
  const auto sim = s.root().table("simulation");
  CHECK_THAT(error_of([&] { sim.number("dt", 0.01, io::Range::positive()); }),
             Contains("v.toml:2:6: simulation.dt: expected a number > 0, got -0.01"));
  CHECK_THAT(error_of([&] { sim.integer("steps", 1, io::Range::non_negative()); }),
             Contains("v.toml:3:9: simulation.steps: expected an integer >= 0, got a string \"many\""));
  CHECK_THAT(error_of([&] { sim.integer("seed", 1); }),
             Contains("simulation.seed: expected an integer, got the number 1.5"));
  CHECK_THAT(error_of([&] { sim.string("model", "epidermis", {"epidermis"}); }),
             Contains("expected one of \"epidermis\", got \"epidermiss\""));
  CHECK_THAT(error_of([&] { sim.boolean("flag", false); }),
             Contains("expected true or false, got the integer 3"));
  CHECK_THAT(error_of([&] { sim.table("dt"); }), Contains("simulation.dt: expected a table"));
}

TEST_CASE("missing files and invalid TOML are input errors", "[scenario]") {
  CHECK_THAT(error_of([] { io::Scenario::from_file("/nonexistent/scenario.toml"); }),
             Contains("/nonexistent/scenario.toml: scenario file not found"));
  CHECK_THAT(error_of([] { io::Scenario::from_string("[simulation\ndt = 1\n", "broken.toml"); }),
             Contains("broken.toml:1:"));
  CHECK_THAT(error_of([] { io::Scenario::from_string("a = 1\na = 2\n", "dup.toml"); }),
             Contains("dup.toml:2:"));
}

TEST_CASE("non-ASCII characters outside strings and comments are refused before toml++ sees them",
          "[scenario]") {
  // toml++ 3.3.0 reaches __builtin_unreachable on some of them (marzer/tomlplusplus#190, #295; fuzz_scenario)
  CHECK_THAT(error_of([] { io::Scenario::from_string("a = 1\xc2\xa1\n", "after.toml"); }),
             Contains("after.toml:1:6: invalid TOML: a non-ASCII character outside a string or comment"));
  CHECK_THAT(error_of([] { io::Scenario::from_string("a = 1\n\xcc\xaa\n", "alone.toml"); }),
             Contains("alone.toml:2:1: invalid TOML"));
  CHECK_THAT(error_of([] { io::Scenario::from_string("s = \"\"\"\\\n  \xc2\xa7\"\"\"\n", "ml.toml"); }),
             Contains("ml.toml:2:3: invalid TOML: a non-ASCII character after a backslash"));
  CHECK_THAT(error_of([] { io::Scenario::from_string("s = \"\"\"\\\xc2\xa7\"\"\"\n", "esc.toml"); }),
             Contains("esc.toml:1:9: invalid TOML"));
  // where TOML allows them, they stay allowed: a byte-order mark, comments, every kind of string and key
  const auto fine = io::Scenario::from_string(
      "\xEF\xBB\xBF# Schr\xc3\xb6" "dinger\n"
      "a = \"\xc2\xb5m\" # \xc2\xa1\n"
      "b = '\xc2\xb5m'\n"
      "c = \"\"\"\n\xc2\xb5 \\\n  x \xc2\xb5\"\"\"\"\n"
      "d = \'\'\'\xc2\xb5\'\'\'\'\'\n"
      "\"\xc2\xb5\" = 1\n",
      "fine.toml");
  CHECK(fine.root().string("a", "") == "\xc2\xb5m");
  CHECK(fine.root().string("c", "") == "\xc2\xb5 x \xc2\xb5\"");
  CHECK(fine.root().string("d", "") == "\xc2\xb5\'\'");
  CHECK(fine.root().has("\xc2\xb5"));
}

TEST_CASE("Range describes itself", "[scenario]") {
  CHECK(io::Range::positive().describe(false) == "a number > 0");
  CHECK(io::Range::closed(1, 5).describe(true) == "an integer in [1, 5]");
  CHECK(io::Range::any().describe(true) == "an integer");
  CHECK_FALSE(io::Range::positive().contains(0.0));
  CHECK_FALSE(io::Range::any().contains(std::nan("")));
}
