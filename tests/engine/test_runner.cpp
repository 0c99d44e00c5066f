// The engine-owned run (engine/run/runner.hpp) driven in-process, and a module that exists only in the test
// build: it registers itself into a registry beside the built-in modules and runs from a scenario, with no
// change to the engine or to modules/.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "engine/core/state_checks.hpp"
#include "engine/exec/error.hpp"
#include "engine/exec/parallel_for.hpp"
#include "engine/io/tissue_output.hpp"
#include "engine/run/ensemble.hpp"
#include "engine/run/runner.hpp"
#include "modules/builtin_modules.hpp"

using namespace tissue;
namespace fs = std::filesystem;

namespace {

/// Exponential decay of the cells' species 0 by explicit Euler: s <- s (1 - k dt).
struct DecayKernel {
  Span<float> s;
  float factor;
  TISSUE_HD void operator()(std::size_t i) const { s[i] = s[i] * factor; }
};

/// The test module's cells: a float column "s" on the World's cells table.
constexpr const char* kColumn = "test_s";

class DecaySystem final : public System {
 public:
  explicit DecaySystem(double rate) : rate_(rate) {}
  std::string name() const override { return "test_decay"; }
  bool replayable() const override { return true; }
  AccessList access() const override { return AccessList().read_write("cells", kColumn); }
  void run(World& w, const StepContext& ctx) override {
    exec::parallel_for(w.cells.size(), DecayKernel{w.cells.column<float>(kColumn).component(0),
                                                   static_cast<float>(1.0 - rate_ * ctx.dt)});
  }

 private:
  double rate_;
};

/// The test build's entity set "test_cells" ([test_cells] count, initial: cells without elements, each with
/// a value s) and module "test_decay" ([decay] rate [1/time]), and a preset of the two.
void register_test_decay(ModuleRegistry& registry) {
  registry.add(EntitySetInfo{
      "test_cells", "cells with a value s (test build only)", {"test_cells"}, [](Composition& comp) {
        const auto t = comp.root().table("test_cells");
        const auto cells = t.integer("count", 4, io::Range::closed(1, 1000));
        const double initial = t.number("initial", 1.0);
        World& w = comp.world();
        auto& s = w.cells.add_column<float>(kColumn);
        for (std::int64_t c = 0; c < cells; ++c)
          s.host(static_cast<std::size_t>(w.add_cell_host())) = static_cast<float>(initial);
        w.commit();
        w.add_output({TissueOutput::Kind::cell_column, "s", kColumn});
        comp.add_writer([](const fs::path& dir, const io::OutputPiece&) -> std::unique_ptr<SnapshotWriter> {
          return std::make_unique<io::TissueWriter>(dir, false, true);
        });
        comp.add_check([](World& world) {
          auto& column = world.cells.column<float>(kColumn);
          world.cells.download();
          for (std::size_t c = 0; c < world.cells.size(); ++c)
            if (!std::isfinite(column.host(c)))
              throw NumericalError("s of cell " + std::to_string(c) + " is not finite");
        });
      }});
  registry.add(ModuleInfo{"test_decay",
                          "exponential decay of s (test build only)",
                          {"decay"},
                          {"test_cells"},
                          0.0,
                          [](Composition& comp) {
                            const double rate = comp.root().table("decay").number("rate", 1.0);
                            comp.add_system(std::make_unique<DecaySystem>(rate));
                            comp.add_summary([](World& world) {
                              return "s[0] = " + std::to_string(world.cells.column<float>(kColumn).host(0));
                            });
                            comp.add_metric("s_mean", "mean of s over the cells", [](World& world) {
                              const auto& s = world.cells.column<float>(kColumn);
                              double sum = 0.0;
                              for (std::size_t c = 0; c < world.cells.size(); ++c) sum += s.host(c);
                              return sum / static_cast<double>(world.cells.size());
                            });
                          }});
  registry.add(PresetInfo{"test_decay", "decaying cells (test build only)", {"test_cells"}, {"test_decay"}});
}

ModuleRegistry registry_with_test_module() {
  ModuleRegistry r = builtin_modules();
  register_test_decay(r);
  return r;
}

/// A fresh directory under the temporary directory holding `scenario.toml` with `text`.
fs::path scenario_dir(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("tissue_test_runner_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "scenario.toml") << text;
  return dir;
}

std::string file_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

RunRequest request_for(const fs::path& dir, const std::string& out) {
  RunRequest r;
  r.scenario = (dir / "scenario.toml").string();
  r.out = dir / out;
  r.handle_signals = false;
  static std::FILE* const quiet = std::fopen("/dev/null", "w");  // the run's log lines, not needed here
  r.log = quiet;
  return r;
}

const char* kDecay = R"(
[simulation]
entities = ["test_cells"]
modules = ["test_decay"]
dt = 0.1
steps = 10
[test_cells]
count = 6
initial = 2.0
[decay]
rate = 0.5
[output]
every = 5
)";

}  // namespace

TEST_CASE("a module of the test build registers itself and runs from a scenario through a Runner",
          "[runner]") {
  const ModuleRegistry registry = registry_with_test_module();
  REQUIRE(registry.find("test_decay") != nullptr);
  REQUIRE(registry.find("sem") != nullptr);  // the built-in modules are still there
  REQUIRE(registry.find_preset("epidermis") != nullptr);
  const fs::path dir = scenario_dir("decay", kDecay);
  Runner runner(registry, request_for(dir, "out"));
  REQUIRE(runner.run() == kExitOk);
  World& w = *runner.simulation().world;
  w.download();
  // explicit Euler: 2 (1 - k dt)^n, the same float recurrence; within the scheme's error of 2 exp(-k t)
  float expected = 2.0f;
  for (int n = 0; n < 10; ++n) expected *= static_cast<float>(1.0 - 0.5 * 0.1);
  for (std::size_t c = 0; c < 6; ++c) {
    CHECK(w.cells.column<float>(kColumn).host(c) == expected);
    CHECK(w.cells.column<float>(kColumn).host(c) == Approx(2.0 * std::exp(-0.5)).epsilon(0.02));
  }
  CHECK(w.step == 10);
  CHECK(runner.record().status == "completed");
  CHECK(runner.record().steps_done == 10);
  CHECK(file_text(dir / "out" / "run.json").find("\"completed\"") != std::string::npos);
  CHECK(fs::exists(dir / "out" / "cells.pvd"));
  CHECK(fs::exists(dir / "out" / "cells_000000005.vtu"));
  CHECK(fs::exists(dir / "out" / io::CheckpointSeries::file_name(10, false)));
}

TEST_CASE("a Runner restarted from a checkpoint continues with the bytes of an uninterrupted run",
          "[runner]") {
  const ModuleRegistry registry = registry_with_test_module();
  const fs::path dir = scenario_dir("restart", kDecay);
  {
    Runner whole(registry, request_for(dir, "whole"));
    REQUIRE(whole.run() == kExitOk);
  }
  {
    RunRequest first = request_for(dir, "split");
    first.steps = 5;
    Runner half(registry, first);
    REQUIRE(half.run() == kExitOk);
  }
  RunRequest rest = request_for(dir, "");
  rest.scenario.clear();
  rest.out.clear();
  rest.restart = (dir / "split").string();
  rest.steps = 10;
  Runner second(registry, rest);
  CHECK(second.simulation().world->step == 5);
  REQUIRE(second.run() == kExitOk);
  CHECK(second.record().restarted_from ==
        (dir / "split" / io::CheckpointSeries::file_name(5, false)).string());
  const std::string last = io::CheckpointSeries::file_name(10, false);
  CHECK(file_text(dir / "split" / last) == file_text(dir / "whole" / last));
  CHECK(file_text(dir / "split" / "cells_000000010.vtu") == file_text(dir / "whole" / "cells_000000010.vtu"));
  CHECK(file_text(dir / "split" / "cells.pvd") == file_text(dir / "whole" / "cells.pvd"));
}

TEST_CASE("a Runner stepped in pieces writes the files of run(), and one without output writes nothing",
          "[runner]") {
  const ModuleRegistry registry = registry_with_test_module();
  const fs::path dir = scenario_dir("pieces", kDecay);
  {
    Runner whole(registry, request_for(dir, "whole"));
    REQUIRE(whole.run() == kExitOk);
  }
  Runner pieces(registry, request_for(dir, "pieces"));
  CHECK_FALSE(pieces.finished());
  for (int n : {3, 0, 4}) REQUIRE(pieces.step(n) == kExitOk);
  CHECK(pieces.simulation().world->step == 7);
  CHECK(file_text(dir / "pieces" / "run.json").find("\"running\"") != std::string::npos);
  REQUIRE(pieces.step(3) == kExitOk);  // reaches the end step: its output and checkpoint are written
  CHECK(pieces.finished());
  pieces.close();
  pieces.close();  // a no-op
  CHECK(pieces.record().status == "completed");
  for (const char* name : {"cells.pvd", "cells_000000000.vtu", "cells_000000005.vtu", "cells_000000010.vtu",
                           "checkpoint_000000010.h5"})
    CHECK(file_text(dir / "pieces" / name) == file_text(dir / "whole" / name));
  // past the end step: stepping goes on at the output cadence
  REQUIRE(pieces.step(5) == kExitOk);
  CHECK(fs::exists(dir / "pieces" / "cells_000000015.vtu"));

  // in memory: no directory, but the same state, and a checkpoint where asked
  RunRequest memory = request_for(dir, "never");
  memory.write_output = false;
  Runner quiet(registry, memory);
  REQUIRE(quiet.step(10) == kExitOk);
  quiet.write_checkpoint_to(dir / "asked.h5");
  quiet.close();
  CHECK_FALSE(fs::exists(dir / "never"));
  CHECK(quiet.output_dir().empty());
  World& a = *quiet.simulation().world;
  a.download();
  CHECK(io::read_checkpoint_header(dir / "asked.h5").step == 10);
  Runner whole_again(registry, request_for(dir, "whole2"));
  REQUIRE(whole_again.run() == kExitOk);
  World& c = *whole_again.simulation().world;
  c.download();
  for (std::size_t i = 0; i < 6; ++i)
    CHECK(a.cells.column<float>(kColumn).host(i) == c.cells.column<float>(kColumn).host(i));
}

TEST_CASE("a Runner refuses bad input before it writes anything", "[runner]") {
  const ModuleRegistry registry = registry_with_test_module();
  const fs::path dir = scenario_dir("bad", std::string(kDecay) + "bogus = 1\n");
  CHECK_THROWS_AS(Runner(registry, request_for(dir, "out")), InputError);
  CHECK_FALSE(fs::exists(dir / "out"));
  const fs::path unknown = scenario_dir("unknown", "[simulation]\nmodel = \"no_such_model\"\n");
  try {
    Runner r(registry, request_for(unknown, "out"));
    FAIL("an unknown model was accepted");
  } catch (const InputError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("scenario.toml:2:9") != std::string::npos);
    CHECK(what.find("test_decay") != std::string::npos);  // the message lists the registered presets
    CHECK(what.find("epidermis") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(unknown / "out"));
  // built-in registry: the test module is not there
  CHECK_THROWS_AS(Runner(builtin_modules(), request_for(dir, "out2")), InputError);
}

TEST_CASE("a numerical failure stops the Runner, keeps the failed state and records it", "[runner]") {
  const ModuleRegistry registry = registry_with_test_module();
  const fs::path dir = scenario_dir("blowup", R"(
[simulation]
model = "test_decay"  # the preset: entities = ["test_cells"], modules = ["test_decay"]
dt = 1.0
steps = 50
check_every = 1
[decay]
rate = -1e20
)");
  Runner runner(registry, request_for(dir, "out"));
  CHECK_THROWS_AS(runner.run(), NumericalError);
  CHECK(runner.record().status == "failed");
  CHECK(runner.record().exit_code == kExitNumerical);
  CHECK(runner.record().steps_done < 50);
  CHECK(fs::exists(runner.record().last_checkpoint));
  CHECK(runner.record().last_checkpoint.find("_failed.h5") != std::string::npos);
  CHECK(file_text(dir / "out" / "run.json").find("\"failed\"") != std::string::npos);
}

TEST_CASE("a snapshot written on the host thread that fails fails the run, naming the file", "[runner]") {
  const ModuleRegistry registry = registry_with_test_module();
  const fs::path dir = scenario_dir("write_fails", kDecay);
  Runner runner(registry, request_for(dir, "out"));
  // the directory exists once the Runner is made; a directory where the step-5 snapshot goes makes its
  // write fail on the writer's thread
  fs::create_directories(dir / "out" / "cells_000000005.vtu" / "x");
  CHECK_THROWS_WITH(runner.run(), Catch::Contains("cells_000000005.vtu"));
  CHECK(runner.record().status == "failed");
  CHECK(file_text(dir / "out" / "run.json").find("\"failed\"") != std::string::npos);
}

TEST_CASE("run.json splits the wall time into stepping, hooks, output, checkpoints, checks and summary",
          "[runner]") {
  const ModuleRegistry registry = registry_with_test_module();
  const fs::path dir = scenario_dir("time_split", kDecay);
  Runner runner(registry, request_for(dir, "out"));
  REQUIRE(runner.run() == kExitOk);
  const auto& split = runner.record().time_split;
  REQUIRE(split.size() == 6);
  const char* names[] = {"stepping", "hooks", "output", "checkpoints", "checks", "summary"};
  double sum = 0.0;
  for (std::size_t k = 0; k < 6; ++k) {
    CHECK(split[k].first == names[k]);
    CHECK(split[k].second >= 0.0);
    sum += split[k].second;
  }
  CHECK(split[2].second > 0.0);  // three snapshots were written
  CHECK(split[3].second > 0.0);  // and a checkpoint
  CHECK(sum <= runner.record().wall_seconds * (1.0 + 1e-9) + 1e-9);
  const auto back = io::RunRecord::read(dir / "out");
  REQUIRE(back);
  REQUIRE(back->time_split.size() == 6);
  CHECK(back->time_split[3].second == split[3].second);
  // no elements in this model: no bytes per element
  CHECK(file_text(dir / "out" / "run.json").find("device_peak_bytes_per_element") == std::string::npos);
}

TEST_CASE("a restart leaves out of its series a snapshot the stopped run had queued but not written",
          "[runner]") {
  const ModuleRegistry registry = registry_with_test_module();
  const fs::path dir = scenario_dir("restart_missing", kDecay);
  {
    RunRequest first = request_for(dir, "split");
    first.steps = 5;
    Runner half(registry, first);
    REQUIRE(half.run() == kExitOk);
  }
  // as if killed while the step-0 snapshot was still being written: the checkpoint names it
  fs::remove(dir / "split" / "cells_000000000.vtu");
  RunRequest rest = request_for(dir, "");
  rest.scenario.clear();
  rest.out.clear();
  rest.restart = (dir / "split").string();
  rest.steps = 10;
  Runner second(registry, rest);
  REQUIRE(second.run() == kExitOk);
  const std::string pvd = file_text(dir / "split" / "cells.pvd");
  CHECK(pvd.find("cells_000000000.vtu") == std::string::npos);
  CHECK(pvd.find("cells_000000005.vtu") != std::string::npos);
  CHECK(pvd.find("cells_000000010.vtu") != std::string::npos);
}

TEST_CASE("a Runner records the metrics asked for in run.json, in the order asked", "[runner]") {
  const ModuleRegistry registry = registry_with_test_module();
  const fs::path dir = scenario_dir("metrics", kDecay);
  RunRequest r = request_for(dir, "out");
  r.metrics = std::vector<std::string>{"s_mean", "cells", "step"};
  Runner runner(registry, r);
  REQUIRE(runner.run() == kExitOk);
  const auto record = io::RunRecord::read(dir / "out");
  REQUIRE(record);
  REQUIRE(record->metrics.size() == 3);
  CHECK(record->metrics[0].first == "s_mean");
  // explicit Euler of ds/dt = -k s: s_n = s_0 (1 - k dt)^n, in float
  float s = 2.0f;
  for (int n = 0; n < 10; ++n) s = s * static_cast<float>(1.0 - 0.5 * 0.1);
  CHECK(record->metrics[0].second == static_cast<double>(s));
  CHECK(record->metrics[1] == std::pair<std::string, double>{"cells", 6.0});
  CHECK(record->metrics[2] == std::pair<std::string, double>{"step", 10.0});

  RunRequest all = request_for(dir, "all");
  all.metrics = std::vector<std::string>{};  // every metric of the model, the engine's first
  Runner every(registry, all);
  REQUIRE(every.run() == kExitOk);
  const auto names = io::RunRecord::read(dir / "all")->metrics;
  REQUIRE(names.size() == 4);
  CHECK(names[0].first == "step");
  CHECK(names[1].first == "time");
  CHECK(names[2].first == "cells");
  CHECK(names[3].first == "s_mean");

  RunRequest bad = request_for(dir, "never");
  bad.metrics = std::vector<std::string>{"s_max"};
  CHECK_THROWS_WITH(Runner(registry, bad), Catch::Contains("metric 's_max' is not measured by the model") &&
                                               Catch::Contains("s_mean"));
  CHECK_FALSE(fs::exists(dir / "never"));
}

TEST_CASE("an ensemble runs its members on threads of their own with the results of solo runs", "[runner]") {
  // members packed 2 and 3 at once (on CUDA each on a stream of its own) against the same scenarios run
  // alone: the metrics are the analytic decay and every file equals the solo run's
  const ModuleRegistry registry = registry_with_test_module();
  const fs::path dir = scenario_dir("ensemble", kDecay);
  std::ofstream(dir / "sweep.toml")
      << "scenario = \"scenario.toml\"\nmetrics = [\"s_mean\"]\n"
         "[grid]\n\"decay.rate\" = [0.5, 1.0, 2.0]\n\"test_cells.initial\" = [1.0, 2.0]\n";
  for (const int threads : {2, 3}) {
    SweepRequest request;
    request.out = dir / ("sweep_" + std::to_string(threads));
    request.log = nullptr;
    Ensemble ensemble(registry, sweep::read_sweep(dir / "sweep.toml"), request);
    REQUIRE(ensemble.spec().members.size() == 6);
    ListQueue queue(ensemble.to_run());
    REQUIRE(ensemble.run(queue, threads) == kExitOk);
    ensemble.write_csv();
    CHECK(ensemble.tally() == "6 members: 6 completed");
    CHECK(ensemble.to_run().empty());
    for (const auto& m : ensemble.spec().members) {
      const double rate = std::stod(m.values[0]), initial = std::stod(m.values[1]);
      const auto record = io::RunRecord::read(request.out / m.name);
      REQUIRE(record);
      CHECK(record->status == "completed");
      float s = static_cast<float>(initial);
      for (int n = 0; n < 10; ++n) s = s * static_cast<float>(1.0 - rate * 0.1);
      REQUIRE(record->metrics.size() == 1);
      CHECK(record->metrics[0].second == static_cast<double>(s));
      // the member's scenario run alone
      std::ofstream(dir / "solo.toml") << m.scenario_text;
      RunRequest solo = request_for(dir, "solo_" + m.name);
      solo.scenario = (dir / "solo.toml").string();
      solo.overwrite = true;
      Runner runner(registry, solo);
      REQUIRE(runner.run() == kExitOk);
      for (const char* name :
           {"cells.pvd", "cells_000000000.vtu", "cells_000000005.vtu", "cells_000000010.vtu"})
        CHECK(file_text(dir / ("solo_" + m.name) / name) == file_text(request.out / m.name / name));
      CHECK(file_text(request.out / m.name / "scenario.toml") == m.scenario_text);
    }
    const std::string csv = file_text(request.out / "sweep.csv");
    CHECK(
        csv.rfind("member,directory,decay.rate,test_cells.initial,status,exit_code,steps,wall_seconds,s_mean,"
                  "message\n0,m000,0.5,1.0,completed,0,10,",
                  0) == 0);
  }
  // a second sweep into the same directory is refused
  std::ofstream(dir / "other.toml") << "scenario = \"scenario.toml\"\n[grid]\n\"decay.rate\" = [0.5]\n";
  SweepRequest again;
  again.out = dir / "sweep_2";
  CHECK_THROWS_WITH(Ensemble(registry, sweep::read_sweep(dir / "other.toml"), again),
                    Catch::Contains("holds another sweep"));
}

TEST_CASE("the magnitude guard stops a field beyond its bound or growing without bound", "[runner][checks]") {
  const std::vector<std::string> species{"a", "b"};
  const auto where = [](std::size_t s) { return "at vertex " + std::to_string(s); };
  SECTION("beyond the bound: the species, value, step and key are named") {
    MagnitudeGuard guard("surface_rd", "surface_rd", MagnitudeLimits{});
    guard.observe(100, species, {1.0, 1e12}, where);  // at the bound is allowed
    try {
      guard.observe(200, species, {1.0, 3e66}, where);
      FAIL("no NumericalError");
    } catch (const NumericalError& e) {
      const std::string m = e.what();
      CHECK(m.find("step 200") != std::string::npos);
      CHECK(m.find("species b") != std::string::npos);
      CHECK(m.find("3e+66") != std::string::npos);
      CHECK(m.find("at vertex 1") != std::string::npos);
      CHECK(m.find("surface_rd.max_abs = 1e+12") != std::string::npos);
    }
  }
  SECTION("growth: more than tenfold at growth_checks checks in a row") {
    MagnitudeLimits limits;
    limits.growth_checks = 3;
    MagnitudeGuard guard("grid_rd", "grid_rd", limits);
    double v = 1e-3;
    guard.observe(0, species, {1.0, v}, where);
    guard.observe(1, species, {1.0, v *= 11.0}, where);
    guard.observe(2, species, {1.0, v *= 11.0}, where);
    guard.observe(3, species, {1.0, v *= 2.0}, where);  // the run of growing checks is broken
    guard.observe(4, species, {1.0, v *= 11.0}, where);
    guard.observe(5, species, {1.0, v *= 11.0}, where);
    try {
      guard.observe(6, species, {1.0, v * 11.0}, where);
      FAIL("no NumericalError");
    } catch (const NumericalError& e) {
      CHECK(std::string(e.what()).find("grew more than 10-fold at each of 3 checks in a row (since step 4") !=
            std::string::npos);
    }
  }
  SECTION("no growth check when growth_checks = 0; growth from zero is not counted") {
    MagnitudeLimits limits;
    limits.growth_checks = 0;
    MagnitudeGuard off("grid_rd", "grid_rd", limits);
    MagnitudeGuard on("grid_rd", "grid_rd", MagnitudeLimits{});
    double v = 1e-6;
    on.observe(0, species, {0.0, v}, where);
    off.observe(0, species, {0.0, v}, where);
    for (int k = 1; k <= 10; ++k) {
      v *= 10.0;  // exactly tenfold: not more than tenfold
      CHECK_NOTHROW(on.observe(k, species, {k < 5 ? 0.0 : 1.0, v}, where));
      CHECK_NOTHROW(off.observe(k, species, {0.0, v * static_cast<double>(k)}, where));
    }
  }
}
