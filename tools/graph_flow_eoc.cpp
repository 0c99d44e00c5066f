// graph_flow_eoc: errors and experimental orders of convergence of the graph curvature flows against the
// manufactured solution (30) of the curvature-flow seed (Oberhuber, Suzuki & Zabka 2011, section 5),
// printed in the layout of its Tables 2-4, with the wall time of each row (its Tables 5-7).
//
//   graph_flow_eoc [--flow mcf|willmore] [--precision float|double] [--from 16] [--to 128]
//                  [--end-time 0.1] [--samples 10] [--tolerance 1e-6] [--kernel persistent|tiled|fused|plain]
//                  [--sigma 1] [--backend cpu|cuda]

#include <CLI/CLI.hpp>
#include <cstdio>
#include <vector>

#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"
#include "modules/curvature_flow/graph_flow_eoc.hpp"

using namespace tissue;
using namespace tissue::curvature_flow;

int main(int argc, char** argv) {
  CLI::App app{"EOC of the graph mean-curvature and Willmore flows on the seed's manufactured solution"};
  std::string flow = "mcf", precision = "double", kernel = "persistent";
  std::string backend = exec::cuda_compiled() ? "cuda" : "cpu";
  int from = 16, to = 128, samples = 10;
  double end_time = 0.1, tolerance = 1e-6, sigma = 1.0;
  app.add_option("--flow", flow, "mcf or willmore")->check(CLI::IsMember({"mcf", "willmore"}));
  app.add_option("--precision", precision, "float or double")->check(CLI::IsMember({"float", "double"}));
  app.add_option("--from", from, "coarsest mesh (intervals per axis)")->check(CLI::Range(4, 1 << 15));
  app.add_option("--to", to, "finest mesh (doubling from --from)")->check(CLI::Range(4, 1 << 15));
  app.add_option("--end-time", end_time, "T of the norms (31)-(33)");
  app.add_option("--samples", samples, "M: the norms sample t = k T / M, k = 0..M")
      ->check(CLI::Range(1, 100000));
  app.add_option("--tolerance", tolerance, "Runge-Kutta-Merson tolerance");
  app.add_option("--kernel", kernel,
                 "persistent (the shared-memory tile stages in one cooperative launch), tiled (one "
                 "shared-memory kernel per stage), fused (one thread per node, fused stage combinations) or "
                 "plain (the reference: separate combination kernels)")
      ->check(CLI::IsMember({"persistent", "tiled", "fused", "plain"}));
  app.add_option("--sigma", sigma, "sigma of the manufactured solution (30)");
  app.add_option("--backend", backend, "cpu or cuda");
  CLI11_PARSE(app, argc, argv);
  try {
    exec::set_backend(exec::parse_backend(backend));
    GraphFlowParams p;
    p.flow = flow == "willmore" ? GraphFlow::willmore : GraphFlow::mean_curvature;
    p.boundary = GraphBoundary::dirichlet;
    p.forcing = GraphForcing::manufactured;
    p.manufactured.sigma = sigma;
    p.merson.tolerance = tolerance;
    p.tiled = kernel == "persistent" || kernel == "tiled";
    p.persistent = kernel == "persistent";
    p.merson.fused = kernel != "plain";
    std::printf(
        "%s flow of graphs, %s precision, manufactured solution (30) with n = %d, r = %g, sigma = %g on "
        "[-4, 4]^2, Dirichlet, T = %g, M = %d, tolerance %g, %s kernels\nbackend %s: %s\n\n",
        flow == "willmore" ? "Willmore" : "mean-curvature", precision.c_str(), p.manufactured.n,
        p.manufactured.r, sigma, end_time, samples, tolerance, kernel.c_str(), backend.c_str(),
        exec::device_description().c_str());
    std::vector<ManufacturedErrors> rows;
    for (int n = from; n <= to; n *= 2) {
      rows.push_back(precision == "double" ? manufactured_errors<double>(p, n, end_time, samples)
                                           : manufactured_errors<float>(p, n, end_time, samples));
      std::printf("%d^2 done in %.3g s\n", n, rows.back().seconds);
      std::fflush(stdout);
    }
    std::printf("\n%s", eoc_table(rows).c_str());
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
