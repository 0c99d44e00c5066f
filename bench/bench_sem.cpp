// SEM throughput: RK2 steps of subcellular-element mechanics on a packed multilayer tissue slab.
//
//   bench_sem [--backend cpu|cuda] [--elements N ...] [--steps K] [--bandwidth GB/s] [--lanes G ...]
//             [--bin-size W ...] [--rebuild-every K ...] [--per-cell N] [--verlet 0|1 ...]
//
// Prints, per size: element-steps per second, time per step with its split into cell-list builds and
// force stages, and the ratio of the time to a memory-traffic floor (bytes that must stream through
// DRAM per step, over the device's bandwidth). Results for the GPU go into BENCHMARKS.md.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"
#include "engine/exec/group_for.hpp"
#include "modules/sem/sem.hpp"
#include "modules/sem/sem_layout.hpp"

using namespace tissue;
using bench::Clock;
using bench::seconds_since;

namespace {

/// Cells of `per_cell` elements (default 20) on a cubic lattice of pitch 0.6 (20)^(-1/3) per_cell^(1/3) (the
/// density of the packed epidermis whatever per_cell), four layers thick, periodic in x and y; a quarter of
/// the bottom layer's elements adhere to the membrane. per_cell = 1 leaves only intercellular pairs: the
/// difference to 20 is what the intracellular sums cost.
std::unique_ptr<World> make_slab(std::size_t target_elements, int per_cell) {
  const int layers = 4;
  const auto pitch = static_cast<float>(0.6 * std::cbrt(per_cell / 20.0));
  const auto cells = static_cast<double>(target_elements) / per_cell;
  const int side = std::max(4, static_cast<int>(std::lround(std::sqrt(cells / layers))));
  Box box;
  box.lx = box.ly = static_cast<float>(side) * pitch;
  auto w = std::make_unique<World>(box);
  w->cells.reserve(static_cast<std::size_t>(side) * side * layers);
  w->elements.reserve(static_cast<std::size_t>(side) * side * layers * per_cell);
  for (int k = 0; k < layers; ++k)
    for (int j = 0; j < side; ++j)
      for (int i = 0; i < side; ++i)
        sem::add_ball_cell(*w, (static_cast<float>(i) + 0.5f) * pitch, (static_cast<float>(j) + 0.5f) * pitch,
                           0.3f + static_cast<float>(k) * pitch, per_cell, 0.5f * pitch,
                           k == 0 ? (per_cell + 3) / 4 : 0);
  w->commit();
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"SEM throughput benchmark"};
  std::string backend = exec::cuda_compiled() ? "cuda" : "cpu";
  std::vector<std::size_t> sizes{100000, 1000000};
  int steps = 0;
  double bandwidth = 0;
  app.add_option("--backend", backend, "cpu or cuda");
  app.add_option("--elements", sizes, "element counts to run");
  std::vector<int> lanes_list{0};
  std::vector<double> bin_sizes{0.0};
  app.add_option("--lanes", lanes_list, "lanes per element of the force stages: 1, 2, 4, 8, or 0 = by size")
      ->check(CLI::IsMember({0, 1, 2, 4, 8}));
  app.add_option("--bin-size", bin_sizes, "cell-list bin widths to run (0 = the default)");
  std::vector<int> rebuild_list{sem::SemParams{}.rebuild_every};
  app.add_option("--rebuild-every", rebuild_list, "steps between cell-list builds to run (sem.rebuild_every)")
      ->check(CLI::Range(1, 1000));
  std::vector<int> verlet_list{1};
  app.add_option("--verlet", verlet_list, "Verlet lists on the cell list (sem.verlet_list): 1, 0 or both")
      ->check(CLI::Range(0, 1));
  int per_cell = 20;
  app.add_option("--per-cell", per_cell, "elements per cell (1: no intracellular pairs)")
      ->check(CLI::Range(1, 64));
  bool by_bins = false;
  app.add_flag("--by-bins", by_bins, "threads take the elements in the cell list's order");
  app.add_option("--steps", steps, "timed RK2 steps per size (default: 200 on cuda, 5 on cpu)");
  app.add_option("--bandwidth", bandwidth,
                 "memory bandwidth in GB/s for the floor (default: the device's "
                 "theoretical peak on cuda; 40 on cpu)");
  CLI11_PARSE(app, argc, argv);
  try {
    exec::set_backend(exec::parse_backend(backend));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_sem: %s\n", e.what());
    return 4;
  }
  const bool gpu = exec::backend() == exec::Backend::cuda;
  if (steps <= 0) steps = gpu ? 200 : 5;
  if (bandwidth <= 0) bandwidth = gpu ? exec::peak_bandwidth_gbs() : 40.0;
  std::printf("backend %s: %s, floor at %.0f GB/s\n", backend.c_str(), exec::device_description().c_str(),
              bandwidth);
  std::printf("%10s %5s %6s %7s %6s %8s %12s %10s %10s %10s %12s %10s\n", "elements", "lanes", "bin",
              "rebuild", "verlet", "steps", "elem-steps/s", "ms/step", "build ms", "force ms", "floor ms",
              "time/floor");
  for (std::size_t target : sizes)
    for (const double bin_size : bin_sizes)
      for (const int rebuild_every : rebuild_list)
        for (const int lanes : lanes_list)
          for (const int verlet : verlet_list) {
            auto world = make_slab(target, per_cell);
            World& w = *world;
            const std::size_t n = w.elements.size();
            sem::SemParams params;
            params.lanes = lanes;
            params.bin_size = bin_size;
            params.by_bins = by_bins;
            params.rebuild_every = rebuild_every;
            params.verlet_list = verlet != 0;
            sem::SemSystem sem(params);
            const double dt = 0.01;
            const auto step = [&](int k) {  // as the schedule steps it: prepare() decides whether it builds
              const StepContext ctx{k, 0, dt};
              sem.prepare(w, ctx);
              sem.run(w, ctx);
            };
            for (int k = 0; k < 20; ++k) step(k);  // warm-up: allocations, relaxation
            exec::synchronize();

            const auto t0 = Clock::now();
            for (int k = 20; k < 20 + steps; ++k) step(k);
            exec::synchronize();
            const double per_step = seconds_since(t0) / steps;

            // split: time the cell-list builds and the force stages separately (synchronised, so slower)
            DeviceBuffer<float> fx(n), fy(n), fz(n);
            const int probe = std::max(1, steps / 10);
            auto t1 = Clock::now();
            for (int k = 0; k < probe; ++k) sem.compute_forces(w, fx.span(), fy.span(), fz.span());
            exec::synchronize();
            const double build_plus_force = seconds_since(t1) / probe;
            CellList list;
            t1 = Clock::now();
            for (int k = 0; k < probe; ++k)
              list.build(w.x.span(), w.y.span(), w.z.span(), w.cell.span(), n, w.box,
                         static_cast<float>(params.effective_bin_size()),
                         static_cast<float>(params.z_extent));
            exec::synchronize();
            const double build = seconds_since(t1) / probe;
            t1 = Clock::now();  // the midpoint stage re-gathers the first stage's bins instead of a second
                                // build
            for (int k = 0; k < probe; ++k) list.refresh(w.x.span(), w.y.span(), w.z.span(), n);
            exec::synchronize();
            const double refresh = seconds_since(t1) / probe;

            // memory-traffic floor per RK2 step, bytes that must stream through DRAM per element:
            //   first stage's build: read x,y,z (12) write key (4); counting sort: histogram read key (4),
            //   scatter read key write index (8), rank read index, key, write order (12); sorted copy: read
            //   order, x, y, z, cell (20) write point (16); midpoint stage's refresh: read order, x, y, z
            //   (16), read and write the point (32); each force stage: read x, y, z, type, cell, base x, y, z
            //   (32) write 3 floats (12), neighbours cached.
            const double bytes_per_element_step = (12 + 4 + 4 + 8 + 12 + 20 + 16) + (16 + 32) + 2 * (32 + 12);
            const double floor = bytes_per_element_step * static_cast<double>(n) / (bandwidth * 1e9);
            std::printf("%10zu %5d %6.3f %7d %6d %8d %12.3e %10.3f %10.3f %10.3f %12.4f %10.1f\n", n,
                        lanes > 0 ? lanes : exec::lanes_for(n), params.effective_bin_size(), rebuild_every,
                        verlet, steps, static_cast<double>(n) / per_step, 1e3 * per_step,
                        1e3 * (build + refresh), 2e3 * (build_plus_force - build), 1e3 * floor,
                        per_step / floor);
          }
  std::printf(
      "(build and force: per step, timed separately with synchronisation; build = one cell-list build for "
      "the first stage and one refresh for the midpoint stage; force = twice a force evaluation on a fresh "
      "build, which includes the Verlet lists' build where they apply)\n");
  return 0;
}
