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

/// One flow step per time step, tau = the step length.
class ConformalWillmoreSystem final : public System {
 public:
  explicit ConformalWillmoreSystem(ConformalWillmoreFlow& flow) : flow_(flow) {}
  std::string name() const override { return "conformal_willmore"; }
  AccessList access() const override { return AccessList().read_write("surface", "positions"); }
  void run(World&, const StepContext& ctx) override { flow_.step(ctx.dt); }

 private:
  ConformalWillmoreFlow& flow_;
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
  comp.add_system(std::make_unique<ConformalWillmoreSystem>(*flow));
  comp.add_writer([flow, obj](const fs::path& dir) -> std::unique_ptr<SnapshotWriter> {
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
