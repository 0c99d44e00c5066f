// Per-operation timings of one conformal Willmore flow iteration (seed 002's benchmark rows) on spot and the
// Stanford bunny, with the seed's Quadro M3000M figures beside them.
//
//   bench_conformal_willmore [--backend cpu|cuda] [--repeats R] [--warmup W] [--tau T] [--mesh PATH]...
//                            [--solver S] [--preconditioner jacobi|multigrid] [--trace-steps N]
//
// After W whole steps (default 1), each repeat runs the stages of ConformalWillmoreFlow::step in order (the
// state moves on, as in a run), with a synchronisation around each stage; the table reports the mean per
// stage. The similarity transform and the spin positions are timed with both solvers (direct: Eigen
// SimplicialLDLT on the CPU, cuSOLVER csrlsvchol on the GPU; cg: conjugate gradients with their iterations on
// the device, preconditioned by aggregation multigrid (or Jacobi), E as a quaternion matrix,
// engine/linalg/conjugate_gradient.hpp). "GB/s" of the assembly rows counts their least traffic: per pattern
// entry the values written (8 B for L, 128 B for the 4 x 4 block of E) and the pattern read (row, column, two
// sources: 16 B); the limit is the device-to-device copy bandwidth measured in the same run.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "engine/exec/backend.hpp"
#include "engine/mesh/triangle_mesh.hpp"
#include "modules/curvature_flow/conformal_willmore.hpp"

using namespace tissue;
using namespace tissue::curvature_flow;
using bench::Clock;
using bench::seconds_since;

namespace {

/// The seed's Quadro M3000M rows (ns), by (operation, mesh); 0 where the seed has none.
double seed_m3000m_ms(const std::string& op, const std::string& mesh) {
  static const std::map<std::string, std::map<std::string, double>> table = {
      {"cotangent_laplacian", {{"spot", 95927}, {"bunny", 185237}}},
      {"intrinsic_dirac", {{"spot", 571206}, {"bunny", 1.28079e6}}},
      {"vertex_mass", {{"spot", 256301}, {"bunny", 294982}}},
      {"similarity_xform direct", {{"spot", 8.58772e8}, {"bunny", 2.73471e9}}},
      {"similarity_xform cg", {{"spot", 2.18979e8}, {"bunny", 7.19855e8}}},
      {"divergent_edges", {{"spot", 137633}, {"bunny", 270829}}},
      {"spin_positions direct", {{"spot", 8.20441e8}, {"bunny", 2.71461e9}}},
      {"spin_positions cg", {{"spot", 1.39873e9}, {"bunny", 1.09265e10}}},
  };
  const auto op_it = table.find(op);
  if (op_it == table.end()) return 0.0;
  const auto it = op_it->second.find(mesh);
  return it == op_it->second.end() ? 0.0 : it->second * 1e-6;
}

struct Row {
  std::string op;
  double ms = 0.0;
  double bytes = 0.0;  ///< least traffic of the stage, 0 where not counted
};

double timed(const std::function<void()>& f) {
  exec::synchronize();
  const auto t0 = Clock::now();
  f();
  exec::synchronize();
  return seconds_since(t0) * 1e3;
}

/// Mean stage times of `repeats` steps with the given solvers, after `warmup` steps.
std::vector<Row> time_stages(const mesh::TriangleMesh& m, LinearSolver solver, Preconditioner preconditioner,
                             int repeats, double tau, int warmup) {
  ConformalWillmoreSettings s;
  s.similarity_solver = s.positions_solver = solver;
  s.preconditioner = preconditioner;
  ConformalWillmoreFlow flow(m, s);
  // warm-up: allocations, library handles, symbolic analysis; more steps time the flow further on, where
  // the inverse iteration starts from transforms extrapolated from the last three steps
  for (int k = 0; k < warmup; ++k) flow.step(tau);
  const double nnz = static_cast<double>(flow.pattern().columns.size());
  std::vector<Row> rows = {{"vertex_mass + vertex_normals", 0, 0},
                           {"cotangent_laplacian", 0, nnz * (8 + 16)},
                           {"mean_curvature + project_basis sums", 0, 0},
                           {"project_basis", 0, 0},
                           {"intrinsic_dirac", 0, nnz * (128 + 16)},
                           {"similarity_xform " + to_string(solver), 0, 0},
                           {"divergent_edges", 0, 0},
                           {"spin_positions " + to_string(solver), 0, 0},
                           {"normalize (translate, rescale)", 0, 0},
                           {"full iteration, " + to_string(solver), 0, 0}};
  for (int r = 0; r < repeats; ++r) {
    rows[0].ms += timed([&] { flow.update_geometry(); });
    rows[1].ms += timed([&] { flow.assemble_laplacian(); });
    rows[2].ms += timed([&] { flow.mean_curvature(); });
    rows[3].ms += timed([&] { flow.project_curvature_change(tau); });
    rows[4].ms += timed([&] { flow.assemble_dirac(); });
    rows[5].ms += timed([&] { flow.similarity_transform(); });
    rows[6].ms += timed([&] { flow.transformed_edges(); });
    rows[7].ms += timed([&] { flow.spin_positions(); });
    rows[8].ms += timed([&] { flow.normalize_positions(); });
  }
  // the whole step without the per-stage synchronisations
  const double full = timed([&] {
    for (int r = 0; r < repeats; ++r) flow.step(tau);
  });
  for (auto& row : rows) row.ms /= repeats;
  rows.back().ms = full / repeats;
  if (solver == LinearSolver::conjugate_gradient)
    std::printf(
        "  (cg iterations of the last step: %d on E over %d inverse iterations, %d on L for the 3 "
        "coordinates)\n",
        flow.report().similarity_iterations, flow.report().inverse_iterations,
        flow.report().positions_iterations);
  return rows;
}

/// Runs `steps` whole steps with the given solvers, printing per step its time, the solvers' work and the
/// surface's Willmore energy: how the cost changes as the flow moves on.
void trace_steps(const mesh::TriangleMesh& m, LinearSolver solver, Preconditioner preconditioner, int steps,
                 double tau) {
  ConformalWillmoreSettings s;
  s.similarity_solver = s.positions_solver = solver;
  s.preconditioner = preconditioner;
  ConformalWillmoreFlow flow(m, s);
  std::printf("  %4s %10s %10s %8s %10s %12s %10s\n", "step", "ms", "cg on E", "solves", "cg on L",
              "eigenvalue", "W");
  for (int k = 0; k < steps; ++k) {
    const double ms = timed([&] { flow.step(tau); });
    const StepReport& r = flow.report();
    std::printf("  %4d %10.3f %10d %8d %10d %12.4e %10.4f\n", k + 1, ms, r.similarity_iterations,
                r.inverse_iterations, r.positions_iterations, r.eigenvalue, flow.measures().willmore);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Per-operation timings of conformal Willmore flow (seed 002's rows)"};
  std::string backend = exec::cuda_available() ? "cuda" : "cpu";
  int repeats = 5, warmup = 1;
  double tau = 0.5;
  std::vector<std::string> meshes = {std::string(TISSUE_SOURCE_DIR) + "/scenarios/meshes/spot.obj",
                                     std::string(TISSUE_SOURCE_DIR) + "/scenarios/meshes/stanford-bunny.obj"};
  app.add_option("--backend", backend, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--repeats", repeats, "steps timed per solver")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "whole steps before the timed ones")->check(CLI::PositiveNumber);
  app.add_option("--tau", tau, "time step")->check(CLI::PositiveNumber);
  app.add_option("--mesh", meshes, "OBJ files");
  std::string solvers = "both";
  app.add_option("--solver", solvers, "direct, cg or both")->check(CLI::IsMember({"direct", "cg", "both"}));
  std::string preconditioner = "multigrid";
  app.add_option("--preconditioner", preconditioner, "of the cg solves: jacobi or multigrid")
      ->check(CLI::IsMember({"jacobi", "multigrid"}));
  int trace = 0;
  app.add_option("--trace-steps", trace, "instead of the table: this many whole steps, one line each")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  exec::set_backend(backend == "cuda" ? exec::Backend::cuda : exec::Backend::cpu);
  const double bandwidth = bench::copy_bandwidth(std::size_t{1} << 28);
  std::printf("conformal Willmore flow, one iteration per row (mean of %d after %d steps), backend %s: %s\n",
              repeats, warmup, backend.c_str(), exec::device_description().c_str());
  std::printf("copy bandwidth %.0f GB/s\n", bandwidth * 1e-9);
  for (const auto& path : meshes) {
    const mesh::TriangleMesh m = mesh::read_obj(path);
    const std::string name = path.find("bunny") != std::string::npos  ? "bunny"
                             : path.find("spot") != std::string::npos ? "spot"
                                                                      : path;
    std::printf("\n%s: %zu vertices, %zu faces\n", name.c_str(), m.vertex_count(), m.face_count());
    if (trace == 0)
      std::printf("%-38s %12s %10s %8s %16s\n", "operation", "ms", "GB/s", "of copy", "seed M3000M ms");
    for (const LinearSolver solver : {LinearSolver::direct, LinearSolver::conjugate_gradient}) {
      if (solvers != "both" && linear_solver_from_string(solvers) != solver) continue;
      if (trace > 0) {
        std::printf(" %s solvers:\n", to_string(solver).c_str());
        trace_steps(m, solver, preconditioner_from_string(preconditioner), trace, tau);
        continue;
      }
      for (const Row& row :
           time_stages(m, solver, preconditioner_from_string(preconditioner), repeats, tau, warmup)) {
        const std::string seed_key = row.op.rfind("vertex_mass", 0) == 0 ? "vertex_mass" : row.op;
        const double seed = seed_m3000m_ms(seed_key, name);
        const double gbs = row.bytes > 0 ? row.bytes / (row.ms * 1e-3) * 1e-9 : 0.0;
        char gb[16] = "", frac[16] = "", sd[24] = "";
        if (gbs > 0) {
          std::snprintf(gb, sizeof gb, "%.1f", gbs);
          std::snprintf(frac, sizeof frac, "%.0f%%", 100.0 * gbs * 1e9 / bandwidth);
        }
        if (seed > 0) std::snprintf(sd, sizeof sd, "%.3f", seed);
        std::printf("%-38s %12.3f %10s %8s %16s\n", row.op.c_str(), row.ms, gb, frac, sd);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
