// The scheduler: declared order, every-k-steps systems, hooks between steps with compaction, and the order
// checked against the systems' declared reads and writes.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/backend.hpp"
#include "engine/exec/device_buffer.hpp"
#include "engine/exec/error.hpp"
#include "engine/io/scenario.hpp"
#include "engine/schedule/schedule.hpp"
#include "modules/builtin_modules.hpp"

using namespace tissue;

namespace {
struct Recorder final : System {
  std::string id;
  std::vector<std::string>* log;
  std::string name() const override { return id; }
  AccessList access() const override { return AccessList().read("cells", "count").write("cells", "flags"); }
  void run(World&, const StepContext& ctx) override {
    log->push_back(id + "@" + std::to_string(ctx.step) + ":" + std::to_string(ctx.dt));
  }
};
/// A system that only declares (check_access() never runs a system).
struct Declared final : System {
  std::string id;
  AccessList declared;
  std::string name() const override { return id; }
  AccessList access() const override { return declared; }
  void run(World&, const StepContext&) override {}
};
std::unique_ptr<Declared> declared(std::string id, AccessList access) {
  auto d = std::make_unique<Declared>();
  d->id = std::move(id);
  d->declared = std::move(access);
  return d;
}

std::unique_ptr<Recorder> recorder(std::string id, std::vector<std::string>* log) {
  auto r = std::make_unique<Recorder>();
  r->id = std::move(id);
  r->log = log;
  return r;
}
}  // namespace

TEST_CASE("systems run in order, slow systems every k steps with step k*dt, hooks after due steps",
          "[schedule]") {
  World w(Box{});
  std::vector<std::string> log;
  Schedule s;
  s.add(recorder("a", &log));
  s.add(recorder("b", &log), 3);
  s.add_hook("grow", 2, [&](World& world, const StepContext& ctx) {
    log.push_back("hook@" + std::to_string(ctx.step));
    const auto c = world.add_cell_host();
    world.add_element_host(c, 0.5f, 0.5f, 0.5f);
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
  // the hooks' time by part: download, each hook, commit, adding up to hook_seconds()
  const auto& split = s.hook_split();
  REQUIRE(split.size() == 3);
  CHECK(split[0].first == "download");
  CHECK(split[1].first == "grow");
  CHECK(split[2].first == "commit");
  CHECK(split[0].second + split[1].second + split[2].second <= s.hook_seconds() * (1 + 1e-9) + 1e-12);
  CHECK_THROWS_AS(s.add(recorder("c", &log), 0), std::invalid_argument);
}

TEST_CASE("sub-cycled systems take m steps of k dt / m with their own start times, bad cadences are refused",
          "[schedule]") {
  World w(Box{});
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

TEST_CASE("the schedule refuses a same-step read of a column that a later system writes", "[schedule]") {
  // "sample" reads grid.signal, then "signal" advances it: a stale read unless declared as intended
  Schedule s;
  s.add(declared("centres", AccessList().read("elements", "x").write("cells", "cx")));
  s.add(declared("sample", AccessList().read("grid", "signal").read("cells", "cx").write("cells", "u")));
  s.add(declared("signal", AccessList().read_write("grid", "signal")), 2, 3);  // cadence does not matter
  CHECK_THROWS_AS(s.check_access(), InputError);
  CHECK_THROWS_WITH(
      s.check_access(),
      "schedule: system 'sample' reads grid.signal before the later system 'signal' writes it in "
      "the same step: run 'signal' before 'sample', or declare that 'sample' reads the previous "
      "step's grid.signal (AccessList::read_previous)");

  SECTION("the same order with the previous step's value declared is accepted and printed") {
    Schedule t;
    t.add(declared("centres", AccessList().read("elements", "x").write("cells", "cx")));
    t.add(declared("sample",
                   AccessList().read_previous("grid", "signal").read("cells", "cx").write("cells", "u")));
    t.add(declared("signal", AccessList().read_write("grid", "signal")), 2, 3);
    CHECK_NOTHROW(t.check_access());
    const std::string text = t.describe();
    CHECK(text.find("  system sample\n    reads:  cells.cx\n    reads previous step: grid.signal\n"
                    "    writes: cells.u\n") != std::string::npos);
    CHECK(text.find("  system signal (every 2 steps, step length 2 dt) (3 sub-steps of 2 dt / 3 per run)\n"
                    "    reads:  grid.signal\n    writes: grid.signal\n") != std::string::npos);
  }
  SECTION("reading after the writer, in order, is accepted") {
    Schedule t;
    t.add(declared("signal", AccessList().read_write("grid", "signal")));
    t.add(declared("sample", AccessList().read("grid", "signal").write("cells", "u")));
    t.add(declared("network", AccessList().read("cells", "u").read_write("cells", "species")));
    CHECK_NOTHROW(t.check_access());
  }
  SECTION("the previous step's value read after a writer of the same step is refused") {
    Schedule t;
    t.add(declared("signal", AccessList().read_write("grid", "signal")));
    t.add(declared("sample", AccessList().read_previous("grid", "signal")), 5);
    CHECK_THROWS_WITH(
        t.check_access(),
        "schedule: system 'sample' reads the previous step's grid.signal, but the earlier system "
        "'signal' writes it in the same step: run 'sample' before 'signal', or declare that "
        "'sample' reads grid.signal as the earlier systems leave it (AccessList::read)");
  }
}

TEST_CASE("a system may read and write its own columns, sub-cycled or not", "[schedule]") {
  Schedule s;
  s.add(declared("sem", AccessList().read("elements", "x", "type").write("elements", "x")));
  s.add(declared("field", AccessList().read_write("grid", "u")), 1, 10);  // reads its own sub-steps
  s.add(declared("relax", AccessList().read_previous("grid", "v").write("grid", "v")));
  s.add(declared("empty", AccessList()));
  CHECK_NOTHROW(s.check_access());
  CHECK(s.describe().find("  system empty\n    reads:  -\n    writes: -\n") != std::string::npos);
  // a later writer of a column an earlier system reads is another system's write: refused
  s.add(declared("other", AccessList().write("elements", "type")));
  CHECK_THROWS_WITH(s.check_access(), Catch::Contains("system 'sem' reads elements.type before the later "
                                                      "system 'other' writes it"));
}

TEST_CASE("every shipped scenario's schedule passes the access check", "[schedule][scenario]") {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const char* dir : {"scenarios", "tests/scenarios"})
    for (const auto& entry : fs::directory_iterator(fs::path(TISSUE_SOURCE_DIR) / dir))
      if (entry.path().extension() == ".toml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 20);
  for (const auto& file : files) {
    INFO(file.string());
    std::unique_ptr<Simulation> sim;
    REQUIRE_NOTHROW(sim = build_simulation(io::Scenario::from_file(file.string())));  // checks the order
    CHECK_NOTHROW(sim->schedule.check_access());
    // the cells sample a signal before the system that advances it: declared as the previous step's value
    if (file.filename() == "epidermis_tgfb.toml")
      CHECK(sim->schedule.describe().find("    reads previous step: grid.tgfb\n") != std::string::npos);
  }
}

namespace {
/// A replayable system with two launch sequences, chosen in prepare(): the largest of `a` (every third
/// step) or of `b` into `out`.
struct TwoSequences final : System {
  DeviceBuffer<float> a, b, out{1};
  DeviceBuffer<unsigned char> temp;
  bool take_a = false;
  int prepares = 0, runs = 0;
  std::string name() const override { return "two_sequences"; }
  AccessList access() const override { return AccessList(); }
  bool replayable() const override { return true; }
  std::uint64_t prepare(World&, const StepContext& ctx) override {
    ++prepares;
    take_a = ctx.step % 3 == 0;
    return take_a ? 1 : 0;
  }
  void run(World&, const StepContext&) override {
    ++runs;
    exec::max_into(take_a ? std::as_const(a).span() : std::as_const(b).span(), out.span(), temp);
  }
};
}  // namespace

TEST_CASE("step graphs keep one recording per variant a system's prepare() chooses", "[schedule]") {
  World w(Box{});
  auto system = std::make_unique<TwoSequences>();
  system->a.assign(std::vector<float>{1.0f, 3.0f, 2.0f});
  system->b.assign(std::vector<float>{10.0f, 20.0f});
  TwoSequences& two = *system;
  Schedule s;
  s.add(std::move(system));
  s.set_step_graphs(true);
  for (int k = 0; k < 12; ++k) {
    s.step(w, 0.1);
    REQUIRE(two.out.to_host()[0] == (k % 3 == 0 ? 3.0f : 20.0f));
  }
  CHECK(two.prepares == 12);  // every step, replayed or not
  if (exec::backend() == exec::Backend::cuda)
    CHECK(two.runs == 4);  // each sequence once normally and once recorded (steps 0 to 3), then replays
  else
    CHECK(two.runs == 12);  // no graphs on the CPU backend
}
