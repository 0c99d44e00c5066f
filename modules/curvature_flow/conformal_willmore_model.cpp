#include "modules/curvature_flow/conformal_willmore_model.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"
#include "engine/io/atomic_file.hpp"
#include "engine/io/vtk.hpp"
#include "engine/mesh/device_mesh.hpp"
#include "engine/mesh/mesh_operators.hpp"
#include "engine/mesh/scenario_mesh.hpp"
#include "engine/util/random.hpp"
#include "modules/curvature_flow/conformal_willmore.hpp"

namespace tissue::curvature_flow {

namespace fs = std::filesystem;

namespace {

/// The flowing surface as a World field: its positions, the last similarity transforms where the next
/// step's conjugate-gradient inverse iteration starts from them (with the two steps' before, from which it
/// extrapolates), and the multigrids' kept coarsest inverses (as the values they inverted) are the state a
/// checkpoint stores.
class ConformalSurface final : public FieldBase {
 public:
  /// The flow of `m`, whose device positions it moves.
  ConformalSurface(std::shared_ptr<mesh::DeviceMesh> m, const ConformalWillmoreSettings& s)
      : FieldBase("surface"),
        flow(m, s),
        host_(3 * m->vertex_count()),
        lambda_(4 * m->vertex_count()),
        history_(8 * m->vertex_count()),
        preconditioner_(flow.preconditioner_state_size()) {}
  void download() override {
    host_ = flow.positions();
    lambda_ = flow.similarity_values();
    history_ = flow.similarity_history();
    preconditioner_ = flow.preconditioner_state();
  }
  void upload() override {
    flow.set_positions(host_);
    flow.set_similarity_values(lambda_, history_);
    flow.set_preconditioner_state(preconditioner_);
  }
  std::size_t bytes() const override {
    return flow.dirac().nonzeros() * 12 + flow.laplacian().nonzeros() * 12 + flow.vertex_count() * 200 +
           flow.preconditioner_bytes();
  }
  std::vector<HostArray> host_arrays() override {
    return {
        HostArray{"positions", ScalarType::f64, {flow.vertex_count(), 3}, host_.data()},
        HostArray{"similarity_transforms", ScalarType::f64, {flow.vertex_count(), 4}, lambda_.data()},
        HostArray{"similarity_history", ScalarType::f64, {2, flow.vertex_count(), 4}, history_.data()},
        HostArray{"preconditioner_state", ScalarType::f64, {preconditioner_.size()}, preconditioner_.data()}};
  }
  bool surface_geometry(std::vector<double>& points, std::vector<std::int32_t>& triangles) const override {
    points = host_;
    triangles = flow.faces();
    return true;
  }

  ConformalWillmoreFlow flow;

 private:
  std::vector<double> host_;
  std::vector<double> lambda_;          ///< w x y z per vertex; zero before the first step
  std::vector<double> history_;         ///< the two steps' before (ConformalWillmoreFlow::similarity_history)
  std::vector<double> preconditioner_;  ///< ConformalWillmoreFlow::preconditioner_state
};

/// A flow step that raises the Willmore energy by more than this fraction is undone. Smaller rises are
/// accepted: near a round sphere, the discrete energy (cotangent mean curvature) of a mesh with skinny
/// triangles stops falling a little above 4 pi, where steps of any tau raise it at a similar rate (a jittered
/// latitude-longitude sphere, smallest angle 0.3 degrees, at step 6 of tau 0.5: W 12.77842 -> 12.78195 in
/// one step of 0.5, 0.007 per unit time; -> 12.77858 in seven steps of 0.0078, 0.003 per unit time), so
/// halving tau there only takes more steps to the same place.
constexpr double kEnergyRise = 1e-3;

/// Step-size control of the flow (issue 38 item 2): what the run did, for its summary.
struct StepControlLog {
  long long retried = 0;      ///< flow steps undone and tried again with half the tau
  double smallest_tau = 0.0;  ///< the smallest tau taken (0: every step took the full dt)
  std::string first_reason;   ///< why the first retried step was undone
  long long first_step = -1;  ///< the engine step it happened in
};

/// One engine step of length dt as flow steps of tau <= dt. With step control, a flow step that fails (a
/// NumericalError: the similarity transform vanished or diverged, a solver did not converge) or raises the
/// Willmore energy W (by more than 1e-6 W: the continuous flow lowers it monotonically) is undone (the
/// positions, and with CG the transforms its inverse iteration starts from) and tried again with tau / 2,
/// down to dt / 1024, below which the run fails; after two accepted steps in a row tau doubles again, up to
/// dt. Every engine step starts at tau = dt (so a restart from a checkpoint continues exactly), and without
/// failures it is one flow step of tau = dt, the same bytes as without control.
class ConformalWillmoreSystem final : public System {
 public:
  ConformalWillmoreSystem(ConformalWillmoreFlow& flow, bool control, std::shared_ptr<StepControlLog> log)
      : flow_(flow), control_(control), log_(std::move(log)) {}
  std::string name() const override { return "conformal_willmore"; }
  AccessList access() const override { return AccessList().read_write("surface", "positions"); }
  void run(World&, const StepContext& ctx) override {
    if (!control_) {
      flow_.step(ctx.dt);
      return;
    }
    const double floor = ctx.dt / 1024.0;
    const bool cg = flow_.settings().similarity_solver == LinearSolver::conjugate_gradient;
    double energy = flow_.measures().willmore, done = 0.0;
    double tau_next = ctx.dt;
    int accepted = 0;  // flow steps accepted in a row at tau_next
    while (ctx.dt - done > 1e-12 * ctx.dt) {
      const double tau = std::min(tau_next, ctx.dt - done);
      const std::vector<double> positions = flow_.positions();
      std::vector<double> lambda, history;
      if (cg) lambda = flow_.similarity_values(), history = flow_.similarity_history();
      std::string why;
      try {
        flow_.step(tau);
        const double after = flow_.measures().willmore;
        if (!std::isfinite(after))
          why = "the Willmore energy is not finite";
        else if (after > energy * (1.0 + kEnergyRise))
          why = "the Willmore energy rose from " + std::to_string(energy) + " to " + std::to_string(after);
        else
          energy = after;
      } catch (const NumericalError& e) {
        why = e.what();
      }
      if (why.empty()) {
        done += tau;
        if (tau < ctx.dt && (log_->smallest_tau == 0.0 || tau < log_->smallest_tau)) log_->smallest_tau = tau;
        if (++accepted >= 2 && tau_next < ctx.dt) tau_next = std::min(ctx.dt, 2.0 * tau_next), accepted = 0;
        continue;
      }
      if (log_->retried++ == 0) log_->first_reason = why, log_->first_step = ctx.step;
      flow_.set_positions(positions);
      if (cg) flow_.set_similarity_values(lambda, history);
      accepted = 0;
      tau_next = tau / 2.0;
      if (tau_next < floor)
        throw NumericalError("conformal Willmore flow: step " + std::to_string(ctx.step) +
                             " failed with tau down to " + std::to_string(tau) + " (dt / 1024): " + why);
    }
  }

 private:
  ConformalWillmoreFlow& flow_;
  bool control_;
  std::shared_ptr<StepControlLog> log_;
};

/// surface_<step>.vtu (positions, mean curvature H, Willmore energy density H^2), surface.pvd, and the
/// latest surface as surface_final.obj.
class SurfaceWriter final : public SnapshotWriter {
 public:
  SurfaceWriter(fs::path dir, ConformalWillmoreFlow& flow, bool obj)
      : dir_(std::move(dir)), flow_(flow), obj_(obj), series_(dir_ / "surface.pvd") {}
  void write(World& world) override {
    flow_.measures();
    const std::vector<double> p = flow_.positions();
    const std::vector<double> h = flow_.mean_curvature_values();
    std::vector<double> density(h.size());
    for (std::size_t v = 0; v < h.size(); ++v) density[v] = h[v] * h[v];
    const std::vector<float> points(p.begin(), p.end());
    char file[64];
    std::snprintf(file, sizeof file, "surface_%09lld.vtu", static_cast<long long>(world.step));
    io::write_vtu_triangles(
        dir_ / file, points, flow_.faces(),
        {io::VtkArray::of("mean_curvature", h), io::VtkArray::of("willmore_density", density)});
    series_.add(world.time, file);
    series_.set_view(
        io::SeriesView::surface("mean_curvature", io::value_range(h.data(), h.size()), io::point_bounds(p)));
    if (!obj_) return;
    std::ostringstream out;
    out.precision(17);
    out << "# conformal Willmore flow, step " << world.step << "\n";
    for (std::size_t v = 0; v < p.size() / 3; ++v)
      out << "v " << p[3 * v] << ' ' << p[3 * v + 1] << ' ' << p[3 * v + 2] << '\n';
    const auto& f = flow_.faces();
    for (std::size_t t = 0; t < f.size() / 3; ++t)
      out << "f " << f[3 * t] + 1 << ' ' << f[3 * t + 1] + 1 << ' ' << f[3 * t + 2] + 1 << '\n';
    io::write_file_atomic(dir_ / "surface_final.obj", out.str());
  }
  std::vector<io::PvdSeries*> series() override { return {&series_}; }

 private:
  fs::path dir_;
  ConformalWillmoreFlow& flow_;
  bool obj_;
  io::PvdSeries series_;
};

/// Moves every vertex along its normal by amplitude * (mean edge length) * uniform(-1, 1) (Philox stream
/// of `seed`, one draw per vertex).
void add_normal_noise(mesh::TriangleMesh& m, double amplitude, std::uint64_t seed) {
  if (amplitude == 0.0) return;
  const mesh::MeshTopology t = mesh::build_topology(m);
  const double scale = amplitude * mesh::mean_edge_length(m, t);
  const auto normals = mesh::vertex_normals(m);
  for (std::size_t v = 0; v < m.vertex_count(); ++v) {
    const double u = 2.0 * static_cast<double>(random::uniform4(seed, 7, v, 0).v[0]) - 1.0;
    m.x[v] += scale * u * normals[v][0];
    m.y[v] += scale * u * normals[v][1];
    m.z[v] += scale * u * normals[v][2];
  }
}

}  // namespace

void install_conformal_willmore(Composition& comp) {
  const auto root = comp.root();
  const ModelSettings& settings = comp.settings();
  const auto sim_table = root.table("simulation");
  if (sim_table.has("precision") && settings.precision != "double")
    sim_table.fail("precision", "conformal_willmore runs in double precision only");
  // a copy: the flow moves its own vertices (and caches their quantities in its own DeviceMesh)
  mesh::TriangleMesh m = comp.find<mesh::DeviceMesh>("mesh")->mesh();
  const auto init = root.table("initial");
  add_normal_noise(m, init.number("noise", 0.0, io::Range::non_negative()), settings.seed);

  const auto t = root.table("conformal_willmore");
  ConformalWillmoreSettings s;
  s.similarity_solver = linear_solver_from_string(t.string("similarity_solver", "direct", {"direct", "cg"}));
  s.positions_solver = linear_solver_from_string(t.string("positions_solver", "direct", {"direct", "cg"}));
  s.preconditioner =
      preconditioner_from_string(t.string("preconditioner", "multigrid", {"jacobi", "multigrid"}));
  s.inverse_iterations = static_cast<int>(t.integer("inverse_iterations", 3, io::Range::closed(1, 100)));
  s.cg_tolerance = t.number("cg_tolerance", 1e-10, io::Range::positive());
  s.similarity_tolerance = t.number("similarity_tolerance", 1e-11, io::Range::positive());
  s.eigen_tolerance = t.number("eigen_tolerance", 2e-4, io::Range::positive());
  s.first_solve_tolerance = t.number("first_solve_tolerance", s.first_solve_tolerance, io::Range::positive());
  s.start_extrapolation = static_cast<int>(t.integer("start_extrapolation", 2, io::Range::closed(0, 2)));
  s.preserve_area = t.boolean("preserve_area", true);
  const bool step_control = t.boolean("step_control", true);
  const bool obj = root.table("output").boolean("obj", true);

  ConformalWillmoreFlow* flow = nullptr;
  try {
    // the flow's mesh and its cached quantities (pattern, device connectivity and positions)
    mesh::validate(m, "conformal Willmore flow");
    auto surface = std::make_shared<mesh::DeviceMesh>(m, "conformal Willmore flow");
    surface->require_one_ring();  // one fan of faces around each vertex, as for every mesh
    // the flow's linear systems are singular on a mesh in several pieces (one null space each)
    if (const std::size_t pieces = mesh::connected_components(surface->topology()); pieces > 1)
      throw InputError("the conformal Willmore flow needs a connected surface; the mesh has " +
                       std::to_string(pieces) + " separate pieces");
    flow = &comp.world().add_field(std::make_unique<ConformalSurface>(std::move(surface), s)).flow;
  } catch (const InputError& e) {
    throw InputError(root.table("mesh").where("file") + ": " + e.what());
  }
  auto control_log = std::make_shared<StepControlLog>();
  comp.add_system(std::make_unique<ConformalWillmoreSystem>(*flow, step_control, control_log));
  comp.add_writer(
      [flow, obj](const fs::path& dir, const io::OutputPiece&) -> std::unique_ptr<SnapshotWriter> {
        return std::make_unique<SurfaceWriter>(dir, *flow, obj);
      });
  comp.add_metric("willmore_energy", "Willmore energy of the surface (4 pi for a round sphere)",
                  [flow](World&) { return flow->measures().willmore; });
  comp.add_metric("area", "surface area [length^2]", [flow](World&) { return flow->measures().area; });
  comp.add_metric("volume", "enclosed volume [length^3]", [flow](World&) { return flow->measures().volume; });
  comp.add_summary([flow](World&) {
    const SurfaceMeasures me = flow->measures();
    std::ostringstream out;
    out << "surface: area " << me.area << ", volume " << me.volume << ", Willmore energy " << me.willmore
        << " (round sphere: 4 pi = " << 4.0 * M_PI << ")";
    return out.str();
  });
  if (step_control)
    comp.add_summary([control_log](World&) {
      if (control_log->retried == 0) return std::string("step control: every step took the full tau");
      std::ostringstream out;
      out << "step control: " << control_log->retried << " flow steps undone and retried with half the tau "
          << "(the first in step " << control_log->first_step << ": " << control_log->first_reason
          << "); smallest tau taken " << control_log->smallest_tau;
      return out.str();
    });
  comp.add_check([flow](World& w) {
    const std::vector<double> p = flow->positions();
    for (const double v : p)
      if (!std::isfinite(v))
        throw NumericalError(
            "step " + std::to_string(w.step) +
            ": vertex positions are NaN or infinite (simulation.dt, the flow's tau, too large?)");
  });
  std::ostringstream d;
  d << "conformal Willmore flow (spin transformations), " << m.vertex_count() << " vertices, "
    << m.face_count() << " faces, tau = " << settings.dt << ", similarity transform "
    << to_string(s.similarity_solver) << ", spin positions " << to_string(s.positions_solver);
  comp.add_description(d.str());
}

}  // namespace tissue::curvature_flow
