// The scheduler: declared order, every-k-steps systems, hooks between steps with compaction.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "engine/schedule/schedule.hpp"

using namespace tissue;

namespace {
struct Recorder final : System {
  std::string id;
  std::vector<std::string>* log;
  std::string name() const override { return id; }
  AccessList access() const override {
    return AccessList().read("cells", {"count"}).write("cells", {"flags"});
  }
  void run(World&, const StepContext& ctx) override {
    log->push_back(id + "@" + std::to_string(ctx.step) + ":" + std::to_string(ctx.dt));
  }
};
std::unique_ptr<Recorder> recorder(std::string id, std::vector<std::string>* log) {
  auto r = std::make_unique<Recorder>();
  r->id = std::move(id);
  r->log = log;
  return r;
}
}  // namespace

TEST_CASE("systems run in order, slow systems every k steps with step k*dt, hooks after due steps",
          "[schedule]") {
  World w(Box{}, 0);
  std::vector<std::string> log;
  Schedule s;
  s.add(recorder("a", &log));
  s.add(recorder("b", &log), 3);
  s.add_hook("grow", 2, [&](World& world, const StepContext& ctx) {
    log.push_back("hook@" + std::to_string(ctx.step));
    const auto c = world.add_cell_host();
    world.add_element_host(c, 0.5f, 0.5f, 0.5f, 0);
  });
  for (int i = 0; i < 4; ++i) s.step(w, 0.5);
  const std::vector<std::string> expected{"a@0:0.500000", "b@0:1.500000", "a@1:0.500000", "hook@2",
                                          "a@2:0.500000", "a@3:0.500000", "b@3:1.500000", "hook@4"};
  CHECK(log == expected);
  CHECK(w.step == 4);
  CHECK(w.time == Approx(2.0));
  // the hooks' additions were committed (compacted and uploaded)
  CHECK(w.cells.size() == 2);
  w.download();
  CHECK(w.check_consistency().empty());
  const std::string text = s.describe();
  CHECK(text.find("system a") < text.find("system b"));
  CHECK(text.find("every 3 steps") != std::string::npos);
  CHECK(text.find("hook grow (every 2 steps)") != std::string::npos);
  CHECK_THROWS_AS(s.add(recorder("c", &log), 0), std::invalid_argument);
}

TEST_CASE("sub-cycled systems take m steps of k dt / m with their own start times; bad cadences are refused",
          "[schedule]") {
  World w(Box{}, 0);
  std::vector<std::string> log;
  std::vector<double> times;
  struct Clock final : System {
    std::vector<double>* times;
    std::string name() const override { return "clock"; }
    AccessList access() const override { return {}; }
    void run(World&, const StepContext& ctx) override { times->push_back(ctx.time); }
  };
  Schedule s;
  s.add(recorder("fast", &log), 1, 4);
  auto clock = std::make_unique<Clock>();
  clock->times = &times;
  s.add(std::move(clock), 2, 2);
  s.step(w, 0.5);
  s.step(w, 0.5);
  s.step(w, 0.5);
  REQUIRE(log.size() == 12);
  CHECK(log[0] == "fast@0:0.125000");
  CHECK(log[4] == "fast@1:0.125000");
  CHECK(log[11] == "fast@2:0.125000");
  // every 2 steps, 2 sub-steps of 2 * 0.5 / 2: at t = 0, 0.5 (step 0) and 1.0, 1.5 (step 2)
  CHECK(times == std::vector<double>{0.0, 0.5, 1.0, 1.5});
  CHECK(s.describe().find("system fast (4 sub-steps of 1 dt / 4 per run)") != std::string::npos);
  CHECK(s.system_names() == std::vector<std::string>{"fast", "clock"});

  s.set_cadence("fast", 3, 1);
  log.clear();
  s.step(w, 0.5);  // step 3: due
  CHECK(log == std::vector<std::string>{"fast@3:1.500000"});
  CHECK_THROWS_WITH(s.set_cadence("slow", 1, 1),
                    Catch::Contains("no system named 'slow'") && Catch::Contains("systems: fast, clock"));
  CHECK_THROWS_WITH(s.set_cadence("fast", 1, 0), Catch::Contains("substeps must be >= 1"));
  CHECK_THROWS_AS(s.add(recorder("c", &log), 1, 0), std::invalid_argument);
}
