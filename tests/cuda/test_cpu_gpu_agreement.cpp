// CPU and GPU runs of one short epidermis scenario agree to float32 rounding (CUDA builds only).
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "engine/exec/backend.hpp"
#include "engine/io/scenario.hpp"
#include "modules/epidermis/epidermis.hpp"
#include "modules/builtin_modules.hpp"
#include "tests/support.hpp"

using namespace tissue;

namespace {
struct Result {
  std::size_t cells = 0, elements = 0;
  double mean[3] = {0, 0, 0};
  double max_deviation_scale = 0;
  std::vector<double> x, y, z;
};

Result run_on(exec::Backend b, std::int64_t steps) {
  exec::set_backend(b);
  const auto scenario = io::Scenario::from_file(TISSUE_SOURCE_DIR "/tests/scenarios/epidermis_short.toml");
  auto sim = build_simulation(scenario);
  sim->advance(steps);
  World& w = *sim->world;
  w.download();
  Result r;
  r.cells = w.cells.size();
  r.elements = w.elements.size();
  const double lx = w.box.lx, ly = w.box.ly;
  for (std::size_t e = 0; e < r.elements; ++e) {
    r.x.push_back(w.x.host(e));
    r.y.push_back(w.y.host(e));
    r.z.push_back(w.z.host(e));
    // means of positions unwrapped relative to the box centre
    r.mean[0] += test::min_image(w.x.host(e) - lx / 2, lx);
    r.mean[1] += test::min_image(w.y.host(e) - ly / 2, ly);
    r.mean[2] += w.z.host(e);
  }
  for (double& m : r.mean) m /= static_cast<double>(r.elements);
  return r;
}
}  // namespace

TEST_CASE("CPU and CUDA runs of the same short scenario agree to float32 rounding", "[cuda]") {
  const std::int64_t steps = 600;  // crosses growth hooks (every 200 steps in epidermis_short.toml)
  const Result cpu = run_on(exec::Backend::cpu, steps);
  const Result gpu = run_on(exec::Backend::cuda, steps);
  exec::set_backend(exec::Backend::cpu);
  REQUIRE(cpu.cells == gpu.cells);
  REQUIRE(cpu.elements == gpu.elements);
  double worst = 0;
  for (std::size_t e = 0; e < cpu.elements; ++e)
    worst = std::max({worst, std::abs(test::min_image(cpu.x[e] - gpu.x[e], 12.0)),
                      std::abs(test::min_image(cpu.y[e] - gpu.y[e], 12.0)), std::abs(cpu.z[e] - gpu.z[e])});
  INFO("largest element deviation " << worst);
  for (int a = 0; a < 3; ++a) CHECK(gpu.mean[a] == Approx(cpu.mean[a]).margin(1e-4));
  CHECK(worst < 1e-3);
}
