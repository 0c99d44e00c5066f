#include "modules/curvature_flow/graph_flow_eoc.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"

namespace tissue::curvature_flow {

template <class Real>
ManufacturedErrors manufactured_errors(GraphFlowParams params, int n, double end_time, int samples) {
  if (!(end_time > 0.0))
    throw InputError("EOC: the end time must be > 0 (got " + std::to_string(end_time) + ")");
  if (samples < 1) throw InputError("EOC: at least one sampling interval is needed");
  if (params.forcing != GraphForcing::manufactured)
    throw InputError("EOC: the errors need the manufactured forcing (forcing = manufactured)");
  params.n1 = params.n2 = n;
  GraphFlowSolver<Real> solver(params);
  solver.set_manufactured(0.0);
  const GraphView<Real> g = solver.view();
  const double h1 = params.h1(), h2 = params.h2(), theta = end_time / samples;
  ManufacturedErrors e;
  e.n = n;
  e.h = h1;
  double sum1 = 0.0, sum2 = 0.0;
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k <= samples; ++k) {
    const double t = k == samples ? end_time : k * theta;
    if (k > 0) {
      const auto s = solver.advance(k == 1 ? 0.0 : (k - 1) * theta, t);
      e.accepted += s.accepted;
      e.rejected += s.rejected;
    }
    const std::vector<Real> phi = solver.state();
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const double exact = params.manufactured.value(t, params.x0 + i * h1, params.y0 + j * h2);
        const double d = std::abs(static_cast<double>(phi[g.index(i, j)]) - exact);
        sum1 += d;
        sum2 += d * d;
        e.linf = std::max(e.linf, d);
      }
  }
  exec::synchronize();
  e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  e.l1 = theta * sum1 * h1 * h2;
  e.l2 = std::sqrt(theta * sum2 * h1 * h2);
  return e;
}

template ManufacturedErrors manufactured_errors<float>(GraphFlowParams, int, double, int);
template ManufacturedErrors manufactured_errors<double>(GraphFlowParams, int, double, int);

double experimental_order(double error_coarse, double error_fine, double h_coarse, double h_fine) {
  return std::log(error_coarse / error_fine) / std::log(h_coarse / h_fine);
}

std::string eoc_table(const std::vector<ManufacturedErrors>& rows) {
  std::string out =
      "| Meshes | L1 error | EOC | L2 error | EOC | Linf error | EOC | time [s] | steps accepted/rejected |\n"
      "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  char line[320];
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const ManufacturedErrors& e = rows[r];
    auto eoc = [&](double ManufacturedErrors::*norm) {
      if (r == 0) return std::string();
      char b[16];
      std::snprintf(b, sizeof b, "%.2f", experimental_order(rows[r - 1].*norm, e.*norm, rows[r - 1].h, e.h));
      return std::string(b);
    };
    std::snprintf(line, sizeof line, "| %d^2 | %.1e | %s | %.1e | %s | %.1e | %s | %.3g | %lld/%lld |\n", e.n,
                  e.l1, eoc(&ManufacturedErrors::l1).c_str(), e.l2, eoc(&ManufacturedErrors::l2).c_str(),
                  e.linf, eoc(&ManufacturedErrors::linf).c_str(), e.seconds, e.accepted, e.rejected);
    out += line;
  }
  return out;
}

}  // namespace tissue::curvature_flow
