// One SEM tissue over MPI ranks (one GPU each): weak and strong scaling of the decomposed step.
//
//   mpirun -np R bench_sem_decomposed [--backend cpu|cuda] [--scaling weak|strong] [--elements N]
//                                     [--steps K] [--warmup K] [--transport staged|nccl] [--per-cell N]
//                                     [--plain]
//
// The tissue is bench_sem's slab (cells of --per-cell elements, four layers, periodic in x and y). Weak:
// --elements per rank, the slab R times as long in x, cut in R along x; strong: --elements in all, a square
// slab over the process grid choose_process_grid picks. Rank 0 builds it, migration spreads it. Each rank
// drives the GPU of its node-local rank. After --warmup steps, --steps steps are timed as a whole, then as
// many again with each part synchronised: compute (the SEM's stages on owned and ghost elements), pack and
// unpack (gathering and scattering the halo rows on the device), transfer (the transport), check (the
// displacement reductions), rebuild (migration and host-side halo builds). Times are the slowest rank's.
// --plain also times the undecomposed SemSystem on one rank (rebuild_every 1 and the default), the honest
// one-GPU baseline. Results for the GPU go into BENCHMARKS.md.

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "engine/domain/decomposition.hpp"
#include "engine/domain/migration.hpp"
#include "engine/domain/mpi_communicator.hpp"
#include "engine/exec/algorithms.hpp"
#include "engine/exec/backend.hpp"
#include "modules/sem/sem.hpp"
#include "modules/sem/sem_decomposed.hpp"
#include "modules/sem/sem_layout.hpp"
#ifdef TISSUE_NCCL
#include "engine/domain/nccl_transport.hpp"
#endif

using namespace tissue;
using bench::Clock;
using bench::seconds_since;

namespace {

constexpr int kLayers = 4;

/// bench_sem's slab: cells of `per_cell` elements on a cubic lattice of pitch 0.6 (per_cell / 20)^(1/3), four
/// layers, `stretch` times as long in x as in y, about `target` elements.
Box slab_box(std::size_t target, int per_cell, int stretch, int& side_y) {
  const double pitch = 0.6 * std::cbrt(per_cell / 20.0);
  const double cells = static_cast<double>(target) / per_cell;
  side_y = std::max(4, static_cast<int>(std::lround(std::sqrt(cells / kLayers / stretch))));
  Box box;
  box.lx = static_cast<float>(stretch * side_y * pitch);
  box.ly = static_cast<float>(side_y * pitch);
  return box;
}

void fill_slab(World& w, int side_x, int side_y, int per_cell) {
  const auto pitch = static_cast<float>(0.6 * std::cbrt(per_cell / 20.0));
  w.cells.reserve(static_cast<std::size_t>(side_x) * side_y * kLayers);
  w.elements.reserve(static_cast<std::size_t>(side_x) * side_y * kLayers * per_cell);
  for (int k = 0; k < kLayers; ++k)
    for (int j = 0; j < side_y; ++j)
      for (int i = 0; i < side_x; ++i)
        sem::add_ball_cell(w, (static_cast<float>(i) + 0.5f) * pitch, (static_cast<float>(j) + 0.5f) * pitch,
                           0.3f + static_cast<float>(k) * pitch, per_cell, 0.5f * pitch,
                           k == 0 ? (per_cell + 3) / 4 : 0);
}

/// The slowest rank's value.
double slowest(double v) {
  double out = v;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

/// The node-local rank (the GPU this rank drives).
int local_rank() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int r = 0;
  MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CLI::App app{"decomposed SEM scaling benchmark"};
  std::string backend = exec::cuda_compiled() ? "cuda" : "cpu";
  std::string scaling = "weak", transport_name = "staged";
  std::size_t elements = 4000000;
  int steps = 0, warmup = 100, per_cell = 20;
  bool plain = false;
  app.add_option("--backend", backend, "cpu or cuda");
  app.add_option("--scaling", scaling, "weak (--elements per rank) or strong (--elements in all)")
      ->check(CLI::IsMember({"weak", "strong"}));
  app.add_option("--elements", elements, "elements per rank (weak) or in all (strong)");
  app.add_option("--steps", steps, "timed RK2 steps (default: 200 on cuda, 5 on cpu)");
  app.add_option("--warmup", warmup, "steps before timing (relaxation, allocations)");
  app.add_option("--transport", transport_name, "halo transport: staged (through the host) or nccl")
      ->check(CLI::IsMember({"staged", "nccl"}));
  app.add_option("--per-cell", per_cell, "elements per cell")->check(CLI::Range(1, 64));
  app.add_flag("--plain", plain, "with one rank: also time the undecomposed SemSystem");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    MPI_Finalize();
    return code;
  }

  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  try {
    const exec::Backend b = exec::parse_backend(backend);
    const int local = local_rank();
    exec::set_backend(b, b == exec::Backend::cuda ? local % std::max(1, exec::cuda_device_count()) : 0);
    const bool gpu = exec::backend() == exec::Backend::cuda;
    if (steps <= 0) steps = gpu ? 200 : 5;

    domain::MpiCommunicator comm;
    std::unique_ptr<domain::DeviceTransport> transport;
    if (transport_name == "nccl") {
#ifdef TISSUE_NCCL
      transport = std::make_unique<domain::NcclTransport>(comm.handle());
#else
      throw std::invalid_argument(
          "--transport nccl: this build has no NCCL (a CUDA build where NCCL is found)");
#endif
    }

    const bool weak = scaling == "weak";
    int side_y = 0;
    const int stretch = weak ? ranks : 1;
    const Box box =
        slab_box(weak ? elements * static_cast<std::size_t>(ranks) : elements, per_cell, stretch, side_y);
    const int side_x = stretch * side_y;
    sem::SemParams params;
    const double pitch = 0.6 * std::cbrt(per_cell / 20.0);
    // the halo: the cut-off, a cell's radius (its elements lie within 0.5 pitch of its centre), a margin
    const double width = params.effective_inter_cutoff() + 0.5 * pitch + 0.3;
    const domain::ProcessGrid grid =
        weak ? domain::ProcessGrid{ranks, 1} : domain::choose_process_grid(ranks, box, width);
    const domain::Decomposition decomposition(grid, box, width);

    World w(box);
    sem::add_sem_columns(w);
    sem::DecomposedSem::add_columns(w);
    if (rank == 0) fill_slab(w, side_x, side_y, per_cell);
    w.commit();
    domain::migrate_to_owners(decomposition, comm, w);
    const auto total = comm.sum(static_cast<std::int64_t>(w.elements.size()));
    if (rank == 0)
      std::printf(
          "%d ranks (%d x %d), %s scaling, %lld elements (%d x %d x %d cells of %d), halo %.3f, %s: %s\n",
          ranks, grid.px, grid.py, scaling.c_str(), static_cast<long long>(total), side_x, side_y, kLayers,
          per_cell, width, transport ? transport->name() : "staged", exec::device_description().c_str());

    sem::DecomposedSem sem(params, decomposition, comm, transport.get());
    const double dt = 0.01;
    int k = 0;
    const auto run = [&](int n) {
      for (int i = 0; i < n; ++i, ++k) sem.step(w, StepContext{k, k * dt, dt});
    };
    run(warmup);
    exec::synchronize();
    MPI_Barrier(MPI_COMM_WORLD);
    const std::size_t rebuilds_before = sem.rebuilds();
    auto t0 = Clock::now();
    run(steps);
    exec::synchronize();
    const double per_step = slowest(seconds_since(t0)) / steps;
    const std::size_t rebuilds = sem.rebuilds() - rebuilds_before;

    sem.reset_timings();
    sem.set_timing(true);
    run(steps);
    const auto& t = sem.timings();
    const double n = t.steps;
    const double compute = slowest(t.compute / n), pack = slowest(t.pack / n),
                 transfer = slowest(t.transfer / n), unpack = slowest(t.unpack / n),
                 check = slowest(t.check / n), rebuild = slowest(t.rebuild / n);
    const double per_rebuild = slowest(t.rebuilds > 0 ? t.rebuild / static_cast<double>(t.rebuilds) : 0.0);
    const auto ghosts = comm.max(static_cast<std::int64_t>(sem.ghosts()));
    if (rank == 0) {
      std::printf("%6s %10s %10s %9s %8s %9s %9s | %9s %9s %9s %9s %9s %9s %8s %10s\n", "ranks", "elements",
                  "per rank", "ghosts", "rebuilds", "ms/step", "margin", "compute", "pack", "transfer",
                  "unpack", "check", "rebuild", "rebuilds", "ms/rebuild");
      std::printf(
          "%6d %10lld %10lld %9lld %8zu %9.3f %9.3f | %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %8zu %10.1f\n",
          ranks, static_cast<long long>(total), static_cast<long long>(total / ranks),
          static_cast<long long>(ghosts), rebuilds, 1e3 * per_step, sem.margin(), 1e3 * compute, 1e3 * pack,
          1e3 * transfer, 1e3 * unpack, 1e3 * check, 1e3 * rebuild, t.rebuilds, 1e3 * per_rebuild);
      std::printf(
          "(ms/step: %d steps unsynchronised after %d of warm-up; the split: %d more steps, each part "
          "synchronised, per step, slowest rank, with its rebuilds and their mean; ghosts: the most on a "
          "rank)\n",
          steps, warmup, steps);
    }
    // one rebuild, forced by a change of the world on every rank (as after a round of divisions)
    ++w.revision;
    sem.reset_timings();
    run(1);
    const double forced = slowest(sem.timings().rebuild);
    if (rank == 0) std::printf("one forced rebuild: %.1f ms (slowest rank)\n", 1e3 * forced);

    // the checksum of the positions: the same tissue whatever the transport
    w.download();
    double sum = 0.0;
    for (std::size_t e = 0; e < w.elements.size(); ++e) sum += w.x.host(e) + w.y.host(e) + w.z.host(e);
    double all = 0.0;
    MPI_Allreduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf("checksum of the positions after %d steps: %.9e\n", k, all);

    if (plain && ranks == 1) {
      for (const int rebuild_every : {1, sem::SemParams{}.rebuild_every}) {
        World whole(box);
        sem::add_sem_columns(whole);
        fill_slab(whole, side_x, side_y, per_cell);
        whole.commit();
        sem::SemParams p;
        p.rebuild_every = rebuild_every;
        sem::SemSystem system(p);
        int j = 0;
        const auto step = [&](int count) {
          for (int i = 0; i < count; ++i, ++j) {
            const StepContext ctx{j, j * dt, dt};
            system.prepare(whole, ctx);
            system.run(whole, ctx);
          }
        };
        step(warmup);
        exec::synchronize();
        t0 = Clock::now();
        step(steps);
        exec::synchronize();
        std::printf("undecomposed SemSystem, rebuild_every %d: %.3f ms/step\n", rebuild_every,
                    1e3 * seconds_since(t0) / steps);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_sem_decomposed (rank %d): %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}
