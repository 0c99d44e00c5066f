// Gray-Scott throughput on structured grids, against the memory-bandwidth limit.
//
//   bench_grid_rd [--backend cpu|cuda] [--size2d N] [--size3d N] [--steps K] [--sweep]
//
// For float Gray-Scott (two species) the least traffic of one explicit step reads and writes each species
// once: 16 bytes per cell-update. The limit is the device-to-device copy bandwidth measured in the same
// run (bytes read + bytes written per second). Printed per case: cell-updates per second and
// (16 B x cell-updates/s) / copy bandwidth; above 100 % is possible only with several steps per launch
// (temporal blocking). --sweep (CUDA builds) also times every launch shape of the tuned kernels
// (grid_rd::TunedShape), to choose the defaults. Results for the GPU go into BENCHMARKS.md.

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "engine/exec/backend.hpp"
#include "engine/exec/device_buffer.hpp"
#include "modules/grid_rd/grid_rd.hpp"
#include "modules/grid_rd/grid_rd_model.hpp"

#if defined(TISSUE_BACKEND_CUDA)
#include "modules/grid_rd/grid_rd_tuned.hpp"
#endif

using namespace tissue;
using namespace tissue::grid_rd;
using bench::Clock;
using bench::copy_bandwidth;
using bench::seconds_since;

namespace {

struct Case {
  std::string name;
  GridShape shape;
  Stencil stencil;
  Kernel kernel;
  int steps_per_launch;
};

/// Seconds per step of float Gray-Scott (theta) on the case's grid.
double time_per_step(const Case& c, int steps) {
  GridRdParams p;
  p.shape = c.shape;
  p.stencil = c.stencil;
  p.kernel = c.kernel;
  p.steps_per_launch = c.steps_per_launch;
  p.reaction.gray_scott = {0.038, 0.061};
  if (c.shape.nz > 1) p.reaction.diffusion[0] = 0.3, p.reaction.diffusion[1] = 0.15;
  const double dt = c.shape.nz > 1 ? 0.5 : 1.0;
  World world{Box{}};
  auto& field = world.add_field(std::make_unique<GridField<float>>(
      "rd", p.shape, std::vector<std::string>{"a", "b"}, p.geometry<float>()));
  InitialState init;
  init.patch_size = c.shape.nx / 4.0;
  init.noise = 0.02;
  apply_initial_state(field, init, 1);
  GridRdSystem<float> system(p, field);
  const int calls = steps / c.steps_per_launch;
  for (int k = 0; k < 2; ++k) system.run(world, StepContext{k, 0.0, dt * c.steps_per_launch});  // warm-up
  exec::synchronize();
  const auto t0 = Clock::now();
  for (int k = 0; k < calls; ++k) system.run(world, StepContext{k, 0.0, dt * c.steps_per_launch});
  exec::synchronize();
  return seconds_since(t0) / (calls * c.steps_per_launch);
}

#if defined(TISSUE_BACKEND_CUDA)
/// Seconds per step of the tuned kernels with launch shape `ts`, called directly (float Gray-Scott), the
/// one-step launches chained as GridRdSystem chains them (grid_rd::StepChain), or (chained = false) each
/// waiting for the whole previous launch, as after other work on the stream.
double time_tuned(const Case& c, const grid_rd::TunedShape& ts, int steps, bool chained = true) {
  GridRdParams p;
  p.shape = c.shape;
  p.stencil = c.stencil;
  const bool three_d = c.shape.nz > 1;
  if (three_d) p.reaction.diffusion[0] = 0.3, p.reaction.diffusion[1] = 0.15;  // as time_per_step
  const RdParams<float> rp = p.kernel_params<float>();
  const reactions::GrayScott<float> gs{0.038f, 0.061f};
  const float dt = three_d ? 0.5f : 1.0f;
  DeviceBuffer<float> a(2 * c.shape.cells()), b(2 * c.shape.cells());
  a.zero();
  b.zero();
  grid_rd::StepChainStorage storage(c.shape.ny, c.shape.nz);
  const int calls = steps / c.steps_per_launch;
  float *in = a.data(), *out = b.data();
  const auto call = [&] {
    if (!grid_rd::rd_euler_tuned(rp, gs, dt, in, out, c.steps_per_launch, ts,
                                 chained ? &storage.chain : nullptr))
      throw std::runtime_error("no tuned kernel for " + c.name);
    std::swap(in, out);
  };
  call();
  exec::synchronize();
  const auto t0 = Clock::now();
  for (int k = 0; k < calls; ++k) call();
  exec::synchronize();
  return seconds_since(t0) / (calls * c.steps_per_launch);
}

/// Times every launch shape of the tuned kernels.
void sweep(int size2d, int size3d, int steps, double bandwidth) {
  std::printf("\nlaunch shapes of the tuned kernels (grid_rd::TunedShape):\n");
  const auto report = [&](const std::string& name, const GridShape& shape, double t) {
    const double rate = static_cast<double>(shape.cells()) / t;
    std::printf("%-40s %10.4f %16.2f %11.1f%%\n", name.c_str(), 1e3 * t, rate / 1e9,
                100.0 * 16.0 * rate / bandwidth);
  };
  const GridShape s2{size2d, size2d, 1, 1.0}, s3{size3d, size3d, size3d, 1.0};
  const auto plane_count = [](int n) { return n > 0 ? std::to_string(n) : std::string("auto"); };
  const Case c2{"2D", s2, Stencil::seed9, Kernel::automatic, 1},
      c3{"3D", s3, Stencil::seven, Kernel::automatic, 1};
  for (const grid_rd::BulkShape& bulk : grid_rd::kBulkShapes) {
    grid_rd::TunedShape ts;
    ts.bulk_shape = bulk;
    report(
        "3D bulk copies, " + std::to_string(bulk.tile_bytes) + " B x " + std::to_string(bulk.rows) +
            " rows, " + std::to_string(bulk.buffers) + " buffers, " + plane_count(bulk.planes) + " planes" +
            (bulk.unchained_planes != bulk.planes ? " (" + plane_count(bulk.unchained_planes) + " unchained)"
                                                  : std::string()),
        s3, time_tuned(c3, ts, steps / 4));
  }
  // every launch waiting for the whole previous one (another system's kernel between two steps)
  for (int p : {64, 32}) {
    grid_rd::TunedShape ts;
    ts.bulk_shape.unchained_planes = p;
    report("3D bulk copies, 2048 B x 8 rows, 4 buffers, unchained, " + plane_count(p) + " planes", s3,
           time_tuned(c3, ts, steps / 4, false));
  }
  for (int rows : {16, 32}) {
    grid_rd::TunedShape ts;
    ts.tile1_rows_unchained = rows;
    report("2D 1 step, shared tile 128 x " + std::to_string(rows) + ", 256 threads, unchained", s2,
           time_tuned(c2, ts, steps, false));
  }
  for (const grid_rd::StreamShape& stream : grid_rd::kStreamShapes) {
    grid_rd::TunedShape ts;
    ts.bulk = false;
    ts.stream = stream;
    report("3D streaming, " + std::to_string(stream.warps_3d) + " warps, " +
               std::to_string(stream.planes_3d) + " per chunk, " + std::to_string(stream.depth_3d) + " ahead",
           s3, time_tuned({"3D", s3, Stencil::seven, Kernel::automatic, 1}, ts, steps / 4));
  }
  for (int threads : {128, 256})
    for (int tile1_rows : {8, 16, 32, 64}) {
      grid_rd::TunedShape ts;
      ts.tile1_rows = ts.tile1_rows_unchained = tile1_rows;
      ts.tile1_threads = threads;
      report("2D 1 step, shared tile 128 x " + std::to_string(tile1_rows) + ", " + std::to_string(threads) +
                 " threads",
             s2, time_tuned({"2D", s2, Stencil::seed9, Kernel::automatic, 1}, ts, steps));
    }
  for (int rows : {1, 2, 4}) {
    grid_rd::TunedShape ts;
    ts.rows_2d = rows;
    report("2D 1 step, rows_2d " + std::to_string(rows), s2,
           time_tuned({"2D", s2, Stencil::seed9, Kernel::automatic, 1}, ts, steps));
  }
  for (int t : {2, 4, 8})
    for (int tile_rows : {32, 48}) {
      grid_rd::TunedShape ts;
      ts.tile_rows = tile_rows;
      report("2D " + std::to_string(t) + " steps, tile_rows " + std::to_string(tile_rows), s2,
             time_tuned({"2D", s2, Stencil::seed9, Kernel::automatic, t}, ts, steps));
    }
  for (int planes : {4, 8}) {
    grid_rd::TunedShape ts;
    ts.bulk = false;
    ts.streaming = false;
    ts.block_3d = planes;
    report("3D shared block 64 x 8 x " + std::to_string(planes), s3,
           time_tuned({"3D", s3, Stencil::seven, Kernel::automatic, 1}, ts, steps / 4));
  }
  for (int rows : {1, 2, 4})
    for (bool z_middle : {false, true}) {
      grid_rd::TunedShape ts;
      ts.bulk = false;
      ts.streaming = false;
      ts.block_3d = 0;
      ts.rows_3d = rows;
      ts.z_middle = z_middle;
      report("3D rows_3d " + std::to_string(rows) + (z_middle ? ", order x z y" : ", order x y z"), s3,
             time_tuned({"3D", s3, Stencil::seven, Kernel::automatic, 1}, ts, steps / 4));
    }
}
#endif

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"grid reaction-diffusion throughput benchmark"};
  std::string backend = exec::cuda_compiled() ? "cuda" : "cpu";
  int size2d = 0, size3d = 0, steps = 0;
  bool sweep_shapes = false;
  app.add_option("--backend", backend, "cpu or cuda");
  app.add_option("--size2d", size2d, "2D grid side (default 4096 on cuda, 1024 on cpu)");
  app.add_option("--size3d", size3d, "3D grid side (default 512 on cuda, 96 on cpu)");
  app.add_option("--steps", steps, "timed steps per case (default 400 on cuda, 16 on cpu; a multiple of 8)");
  app.add_flag("--sweep", sweep_shapes, "also time every launch shape of the tuned CUDA kernels");
  CLI11_PARSE(app, argc, argv);
  try {
    exec::set_backend(exec::parse_backend(backend));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_grid_rd: %s\n", e.what());
    return 4;
  }
  const bool gpu = exec::backend() == exec::Backend::cuda;
  if (size2d <= 0) size2d = gpu ? 4096 : 1024;
  if (size3d <= 0) size3d = gpu ? 512 : 96;
  if (steps <= 0) steps = gpu ? 400 : 16;
  steps = (steps + 7) / 8 * 8;

  const double bandwidth = copy_bandwidth(gpu ? (std::size_t{1} << 30) : (std::size_t{1} << 28));
  std::printf("backend %s: %s\ndevice-to-device copy: %.0f GB/s (read + write); theoretical peak %.0f GB/s\n",
              backend.c_str(), exec::device_description().c_str(), bandwidth / 1e9,
              exec::peak_bandwidth_gbs());

  std::vector<Case> cases{
      {"2D generic functor", {size2d, size2d, 1, 1.0}, Stencil::seed9, Kernel::generic, 1}};
  if (gpu) {
    cases.push_back(
        {"2D tuned, 1 step/launch", {size2d, size2d, 1, 1.0}, Stencil::seed9, Kernel::automatic, 1});
    for (int t : {2, 4, 8})
      cases.push_back({"2D temporal, " + std::to_string(t) + " steps/launch",
                       {size2d, size2d, 1, 1.0},
                       Stencil::seed9,
                       Kernel::automatic,
                       t});
  }
  cases.push_back({"3D generic functor", {size3d, size3d, size3d, 1.0}, Stencil::seven, Kernel::generic, 1});
  if (gpu)
    cases.push_back(
        {"3D tuned, 1 step/launch", {size3d, size3d, size3d, 1.0}, Stencil::seven, Kernel::automatic, 1});

  std::printf("%-32s %14s %10s %16s %12s\n", "case", "cells", "ms/step", "G cell-updates/s", "of copy BW");
  for (const auto& c : cases) {
    const double t = time_per_step(c, steps);
    const double rate = static_cast<double>(c.shape.cells()) / t;
    std::printf("%-32s %14zu %10.4f %16.2f %11.1f%%\n", c.name.c_str(), c.shape.cells(), 1e3 * t, rate / 1e9,
                100.0 * 16.0 * rate / bandwidth);
  }
#if defined(TISSUE_BACKEND_CUDA)
  if (sweep_shapes && gpu) sweep(size2d, size3d, steps, bandwidth);
#endif
  return 0;
}
