#include "modules/curvature_flow/graph_flow_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/error.hpp"
#include "engine/io/vtk.hpp"
#include "engine/schedule/module_registry.hpp"
#include "modules/curvature_flow/conformal_willmore_model.hpp"

namespace tissue::curvature_flow {

std::vector<double> initial_graph(const GraphFlowParams& p, const InitialGraph& init) {
  std::vector<double> phi(p.nodes());
  const int nx = p.n1 + 1, ny = p.n2 + 1;
  constexpr double pi = 3.14159265358979323846;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const double x = p.x0 + i * p.h1(), y = p.y0 + j * p.h2();
      double v = init.value;
      if (init.type == "radial_sine")
        v = init.amplitude * std::sin(init.frequency * pi * std::sqrt(x * x + y * y));
      else if (init.type == "ridge")
        v = init.amplitude * std::cos(init.frequency * pi * (x - p.x0) / (p.x1 - p.x0));
      else if (init.type == "manufactured")
        v = p.manufactured.value(0.0, x, y);
      phi[static_cast<std::size_t>(j) * static_cast<std::size_t>(nx) + static_cast<std::size_t>(i)] = v;
    }
  return phi;
}

namespace {

/// The graph as a World field: owns the solver; its state for checkpoints is phi (N2 + 1, N1 + 1) and
/// the integrator's next step.
template <class Real>
class GraphField final : public FieldBase {
 public:
  GraphField(std::string name, const GraphFlowParams& params)
      : FieldBase(std::move(name)), solver(params), host_(params.nodes()) {}
  void download() override {
    exec::copy_bytes(host_.data(), exec::Backend::cpu, solver.device_state().data(), exec::backend(),
                     host_.size() * sizeof(Real));
    step_ = solver.next_step();
  }
  void upload() override {
    exec::copy_bytes(solver.device_state().data(), exec::backend(), host_.data(), exec::Backend::cpu,
                     host_.size() * sizeof(Real));
    solver.set_next_step(step_);
  }
  std::size_t bytes() const override {
    return host_.size() * sizeof(Real) * 9;
  }  // phi, w, 7 integrator arrays
  std::vector<HostArray> host_arrays() override {
    const auto& p = solver.params();
    return {HostArray{"phi",
                      scalar_type_of<Real>(),
                      {static_cast<std::size_t>(p.n2 + 1), static_cast<std::size_t>(p.n1 + 1)},
                      host_.data()},
            HostArray{"merson_step", ScalarType::f64, {1}, &step_}};
  }
  double grid_spacing() const override {
    const auto& p = solver.params();
    return p.h1() == p.h2() ? p.h1() : 0.0;
  }

  GraphFlowSolver<Real> solver;

 private:
  std::vector<Real> host_;
  double step_ = 0.0;
};

/// System "graph_flow": one adaptive integration over [t, t + dt] per schedule step.
template <class Real>
class GraphFlowSystem final : public System {
 public:
  explicit GraphFlowSystem(GraphFlowSolver<Real>& solver) : solver_(solver) {}
  std::string name() const override { return "graph_flow"; }
  AccessList access() const override { return AccessList().read_write("graph", "phi"); }
  void run(World&, const StepContext& ctx) override {
    const auto s = solver_.advance(ctx.time, ctx.time + ctx.dt);
    accepted += s.accepted;
    rejected += s.rejected;
  }
  std::int64_t accepted = 0, rejected = 0;

 private:
  GraphFlowSolver<Real>& solver_;
};

struct OutputOptions {
  bool vti = true, vts = true;
};

template <class Real>
class GraphWriter final : public SnapshotWriter {
 public:
  GraphWriter(std::filesystem::path dir, GraphFlowSolver<Real>& solver, OutputOptions options)
      : dir_(std::move(dir)),
        solver_(solver),
        options_(options),
        graph_series_(dir_ / "graph.pvd"),
        surface_series_(dir_ / "surface.pvd") {}

  void write(World& world) override {
    const std::vector<Real> phi = solver_.state();
    std::vector<Real> h, w;
    solver_.curvature(h, w);
    const GraphFlowParams& p = solver_.params();
    const int nx = p.n1 + 1, ny = p.n2 + 1;
    const std::vector<io::VtkArray> arrays = {io::VtkArray::of("phi", phi), io::VtkArray::of("H", h),
                                              io::VtkArray::of("w", w)};
    char tag[32];
    std::snprintf(tag, sizeof tag, "%09lld", static_cast<long long>(world.step));
    if (options_.vti) {
      // image data at z = 0; the height is the point array phi (ParaView: Warp By Scalar)
      const double origin[3] = {p.x0, p.y0, 0.0};
      const std::string file = std::string("graph_") + tag + ".vti";
      if (p.h1() == p.h2()) {
        io::write_vti(dir_ / file, nx, ny, 1, origin, p.h1(), arrays);
        graph_series_.add(world.time, file);
        graph_series_.set_view(
            io::SeriesView::grid(1, "phi", io::value_range(phi.data(), phi.size()),
                                 {p.x0, p.x0 + (nx - 1) * p.h1(), p.y0, p.y0 + (ny - 1) * p.h1(), 0.0, 0.0}));
      }
    }
    if (options_.vts) {
      std::vector<double> points(3 * phi.size());
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          const std::size_t k =
              static_cast<std::size_t>(j) * static_cast<std::size_t>(nx) + static_cast<std::size_t>(i);
          points[3 * k] = p.x0 + i * p.h1();
          points[3 * k + 1] = p.y0 + j * p.h2();
          points[3 * k + 2] = static_cast<double>(phi[k]);
        }
      const std::string file = std::string("surface_") + tag + ".vts";
      io::write_vts(dir_ / file, nx, ny, 1, points, arrays);
      surface_series_.add(world.time, file);
      surface_series_.set_view(
          io::SeriesView::surface("phi", io::value_range(phi.data(), phi.size()), io::point_bounds(points)));
    }
  }
  std::vector<io::PvdSeries*> series() override { return {&graph_series_, &surface_series_}; }

 private:
  std::filesystem::path dir_;
  GraphFlowSolver<Real>& solver_;
  OutputOptions options_;
  io::PvdSeries graph_series_, surface_series_;
};

template <class Real>
void install_typed(Composition& comp, const GraphFlowParams& params, const InitialGraph& init,
                   const OutputOptions& output) {
  const ModelSettings& settings = comp.settings();
  World& world = comp.world();
  GraphFlowSolver<Real>& solver = world.add_field(std::make_unique<GraphField<Real>>("graph", params)).solver;
  const std::vector<double> phi0 = initial_graph(params, init);
  solver.set_state(std::vector<Real>(phi0.begin(), phi0.end()));
  auto system = std::make_unique<GraphFlowSystem<Real>>(solver);
  GraphFlowSystem<Real>* sys = system.get();
  comp.add_system(std::move(system));
  comp.add_writer([&solver, output](const std::filesystem::path& dir,
                                    const io::OutputPiece&) -> std::unique_ptr<SnapshotWriter> {
    return std::make_unique<GraphWriter<Real>>(dir, solver, output);
  });
  comp.add_summary([&solver, sys](World&) {
    const std::vector<Real> phi = solver.state();
    const auto [lo, hi] = std::minmax_element(phi.begin(), phi.end());
    const GraphMeasures m = solver.measures();
    std::ostringstream out;
    out << "graph: min " << *lo << ", max " << *hi << "; surface area " << m.area << ", Willmore energy "
        << m.willmore << "\nRunge-Kutta-Merson: " << sys->accepted << " steps accepted, " << sys->rejected
        << " rejected";
    return out.str();
  });
  comp.add_check([&solver](World& w) {
    const std::size_t bad = exec::count_non_finite(Span<const Real>(solver.device_state()));
    if (bad == 0) return;
    throw NumericalError("step " + std::to_string(w.step) + ": " + std::to_string(bad) +
                         " graph values are NaN or infinite (graph_flow.tolerance too loose for the flow?)");
  });
  std::ostringstream d;
  d << (params.flow == GraphFlow::willmore ? "Willmore" : "mean-curvature") << " flow of a graph, "
    << params.n1 << " x " << params.n2 << " intervals on [" << params.x0 << ", " << params.x1 << "] x ["
    << params.y0 << ", " << params.y1 << "] (h = " << params.h1() << ", " << settings.precision << "), "
    << (params.boundary == GraphBoundary::neumann ? "Neumann" : "Dirichlet") << " boundary, "
    << (params.forcing == GraphForcing::manufactured ? "manufactured forcing, " : "")
    << "Runge-Kutta-Merson (tolerance " << params.merson.tolerance << ")";
  comp.add_description(d.str());
}

}  // namespace

/// [graph]: the height function's domain, intervals and boundary, shared as "graph" (a GraphFlowParams
/// with only those set) with the flow acting on it.
void create_graph(Composition& comp) {
  auto shared = std::make_shared<GraphFlowParams>();
  GraphFlowParams& p = *shared;
  const auto graph = comp.root().table("graph");
  const auto n = graph.integer("n", 128, io::Range::closed(1, 1 << 15));
  p.n1 = static_cast<int>(graph.integer("n1", n, io::Range::closed(1, 1 << 15)));
  p.n2 = static_cast<int>(graph.integer("n2", n, io::Range::closed(1, 1 << 15)));
  const double lo = graph.number("min", -2.0), hi = graph.number("max", 2.0);
  p.x0 = graph.number("xmin", lo);
  p.x1 = graph.number("xmax", hi);
  p.y0 = graph.number("ymin", lo);
  p.y1 = graph.number("ymax", hi);
  if (!(p.x1 > p.x0)) graph.fail("xmax", "must be larger than xmin");
  if (!(p.y1 > p.y0)) graph.fail("ymax", "must be larger than ymin");
  if (p.n1 < 4 || p.n2 < 4)
    graph.fail(graph.has("n1") || graph.has("n2") ? "n1" : "n",
               "the grid needs at least 4 intervals per axis: h = " + std::to_string(p.h1()) +
                   " is too coarse for the domain");
  p.boundary = graph.string("boundary", "neumann", {"neumann", "dirichlet"}) == "dirichlet"
                   ? GraphBoundary::dirichlet
                   : GraphBoundary::neumann;
  comp.share("graph", shared);
}

/// [graph_flow], [forcing], [initial], [output]: mean-curvature or Willmore flow of the shared graph.
void install_graph_flow(Composition& comp) {
  const auto root = comp.root();
  const ModelSettings& settings = comp.settings();
  GraphFlowParams p = *comp.find<GraphFlowParams>("graph");
  const auto flow = root.table("graph_flow");
  p.flow = flow.string("flow", "mean_curvature", {"mean_curvature", "willmore"}) == "willmore"
               ? GraphFlow::willmore
               : GraphFlow::mean_curvature;
  if (flow.has("tolerance") && !(flow.number("tolerance", 1.0) > 0.0))
    flow.fail("tolerance", "must be > 0 (the Runge-Kutta-Merson error tolerance)");
  p.merson.tolerance = flow.number("tolerance", 1e-6, io::Range::positive());
  p.merson.initial_step = flow.number("initial_step", 0.0, io::Range::non_negative());
  p.merson.min_step = flow.number("min_step", 0.0, io::Range::non_negative());
  const std::string kernel = flow.string("kernel", "persistent", {"persistent", "tiled", "fused", "plain"});
  p.tiled = kernel == "persistent" || kernel == "tiled";
  p.persistent = kernel == "persistent";
  p.merson.fused = kernel != "plain";

  const auto forcing = root.table("forcing");
  p.forcing = forcing.string("type", "none", {"none", "manufactured"}) == "manufactured"
                  ? GraphForcing::manufactured
                  : GraphForcing::none;
  p.manufactured.n = static_cast<int>(forcing.integer("n", 2, io::Range::closed(2, 64)));
  if (p.manufactured.n % 2) forcing.fail("n", "must be even, so that the solution vanishes on the boundary");
  p.manufactured.r = forcing.number("r", 4.0, io::Range::positive());
  p.manufactured.sigma = forcing.number("sigma", 1.0, io::Range::non_negative());

  InitialGraph init;
  const auto it = root.table("initial");
  init.type = it.string("type", "radial_sine", {"radial_sine", "ridge", "manufactured", "flat"});
  init.amplitude = it.number("amplitude", init.amplitude);
  init.frequency = it.number("frequency", init.frequency);
  init.value = it.number("value", init.value);

  OutputOptions output;
  const auto out = root.table("output");
  output.vti = out.boolean("vti", true);
  output.vts = out.boolean("vts", true);

  p.validate();
  if (settings.precision == "double")
    install_typed<double>(comp, p, init, output);
  else
    install_typed<float>(comp, p, init, output);
}

}  // namespace tissue::curvature_flow

namespace tissue::modules {

/// Registers the curvature flows: of graphs (graph_flow) and conformal Willmore flow of closed surfaces
/// (conformal_willmore, modules/curvature_flow/conformal_willmore_model.cpp).
void register_curvature_flow(ModuleRegistry& registry) {
  registry.add(EntitySetInfo{"graph",
                             "a height function z = u(x, y) on a rectangle: intervals, boundary",
                             {"graph"},
                             curvature_flow::create_graph});
  registry.add(ModuleInfo{"graph_flow",
                          "mean-curvature and Willmore flow of graphs (Oberhuber, Suzuki & Zabka 2011), "
                          "adaptive Runge-Kutta-Merson",
                          {"graph_flow", "forcing", "initial"},
                          {"graph"},
                          0.0,
                          curvature_flow::install_graph_flow});
  registry.add(ModuleInfo{"conformal_willmore",
                          "conformal Willmore flow of a closed triangle mesh by spin transformations "
                          "(Crane et al.)",
                          {"conformal_willmore", "initial"},
                          {"mesh"},
                          0.0,
                          curvature_flow::install_conformal_willmore});
  registry.add(PresetInfo{"graph_flow", "curvature flow of a graph", {"graph"}, {"graph_flow"}});
  registry.add(PresetInfo{
      "conformal_willmore", "conformal Willmore flow of a closed surface", {"mesh"}, {"conformal_willmore"}});
}

}  // namespace tissue::modules
