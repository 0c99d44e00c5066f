#include "modules/surface_rd/surface_rd_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "engine/core/state_checks.hpp"
#include "engine/exec/algorithms.hpp"
#include "engine/exec/backend.hpp"
#include "engine/io/vtk.hpp"
#include "engine/mesh/device_mesh.hpp"
#include "engine/mesh/scenario_mesh.hpp"
#include "engine/schedule/module_registry.hpp"
#include "engine/util/random.hpp"
#include "modules/surface_rd/surface_initial_field.hpp"

namespace tissue::surface_rd {

namespace fs = std::filesystem;

namespace {

/// ParaView output: <field>_<step>.vtu (the mesh with one point array per species) and <field>.pvd.
template <class Real>
class SurfaceWriter final : public SnapshotWriter {
 public:
  SurfaceWriter(fs::path dir, SurfaceField<Real>& field)
      : dir_(std::move(dir)), field_(field), series_(dir_ / (field.name() + ".pvd")) {
    const auto& m = field.mesh();
    points_.resize(3 * m.vertex_count());
    for (std::size_t v = 0; v < m.vertex_count(); ++v) {
      points_[3 * v] = static_cast<float>(m.x[v]);
      points_[3 * v + 1] = static_cast<float>(m.y[v]);
      points_[3 * v + 2] = static_cast<float>(m.z[v]);
    }
  }
  void write(World& world) override {
    field_.download();
    const std::size_t n = field_.vertices();
    std::vector<io::VtkArray> arrays;
    for (int s = 0; s < field_.species_count(); ++s) {
      const auto first = field_.host().begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s) * n);
      arrays.push_back(io::VtkArray::of(field_.species_names()[static_cast<std::size_t>(s)],
                                        std::vector<Real>(first, first + static_cast<std::ptrdiff_t>(n))));
    }
    char file[96];
    std::snprintf(file, sizeof file, "%s_%09lld.vtu", field_.name().c_str(),
                  static_cast<long long>(world.step));
    io::write_vtu_triangles(dir_ / file, points_, field_.mesh().faces, arrays);
    series_.add(world.time, file);
    series_.set_view(io::SeriesView::surface(
        field_.species_names().front(), io::value_range(field_.host().data(), n), io::point_bounds(points_)));
  }
  std::vector<io::PvdSeries*> series() override { return {&series_}; }

 private:
  fs::path dir_;
  SurfaceField<Real>& field_;
  io::PvdSeries series_;
  std::vector<float> points_;
};

}  // namespace

template <class Real>
std::unique_ptr<SnapshotWriter> make_surface_writer(const fs::path& dir, SurfaceField<Real>& field) {
  return std::make_unique<SurfaceWriter<Real>>(dir, field);
}
template std::unique_ptr<SnapshotWriter> make_surface_writer<float>(const fs::path&, SurfaceField<float>&);
template std::unique_ptr<SnapshotWriter> make_surface_writer<double>(const fs::path&, SurfaceField<double>&);

SurfaceRdParams read_surface_rd_params(const io::ScenarioTable& rd, const io::ScenarioTable& models,
                                       InitialState& init) {
  SurfaceRdParams p;
  p.kinetics = rd.string("model", "chemotaxis", {"chemotaxis", "reaction"}) == "chemotaxis"
                   ? Kinetics::chemotaxis
                   : Kinetics::reaction;
  p.integrator =
      rd.string("integrator", "euler", {"euler", "rk4"}) == "rk4" ? Integrator::rk4 : Integrator::euler;
  try {  // kernel_path names the paths that moved to the benchmark
    p.path = kernel_path(rd.string("kernel", "stencil"));
  } catch (const std::invalid_argument& e) {
    rd.fail("kernel", e.what());
  }
  p.patch_vertices =
      static_cast<std::size_t>(rd.integer("patch_vertices", 256, io::Range::closed(32, 16384)));
  if (p.path == KernelPath::patches && p.integrator == Integrator::rk4)
    rd.fail("kernel", "the patches kernel does explicit Euler steps only (integrator = \"euler\")");
  init = InitialState{};
  if (p.kinetics == Kinetics::chemotaxis) {
    const auto c = models.table("chemotaxis");
    p.chemotaxis.D = c.number("D", p.chemotaxis.D, io::Range::positive());
    p.chemotaxis.r = c.number("r", p.chemotaxis.r, io::Range::non_negative());
    p.chemotaxis.alpha = c.number("alpha", p.chemotaxis.alpha, io::Range::non_negative());
    p.chemotaxis.s = c.number("s", p.chemotaxis.s, io::Range::positive());
    p.chemotaxis.N = c.number("N", p.chemotaxis.N, io::Range::positive());
    p.chemotaxis.scheme = c.string("scheme", "upwind", {"upwind", "seed"}) == "seed"
                              ? ChemotaxisScheme::seed
                              : ChemotaxisScheme::upwind;
    init.a = p.chemotaxis.N;  // the seed's uniform state f_n = N, f_c = N / (1 + N)
    init.b = p.chemotaxis.N / (1.0 + p.chemotaxis.N);
    init.noise = 0.01;
  } else {
    p.reaction = reactions::read_reaction(models.table("reaction"));
    init.a = 1.0;
    init.b = 0.0;
  }
  return p;
}

void read_initial_state(const io::ScenarioTable& it, const mesh::TriangleMesh& mesh,
                        const std::vector<std::string>& species, const std::string& field,
                        const std::string& scenario_path, bool non_negative, InitialState& init) {
  const std::size_t vertices = mesh.vertex_count();
  const std::string type = it.string("type", "uniform", {"uniform", "file", "expression"});
  if (type != "uniform") {
    for (const char* key : {"a", "b", "patch_radius", "patch_vertex", "patch_a", "patch_b"})
      if (it.has(key) &&
          !(type == "expression" && std::find(species.begin(), species.end(), key) != species.end()))
        it.fail(key, "applies to type = \"uniform\" only, not \"" + type + "\"");
    for (const char* key : {"file", "arrays", "check_points", "point_tolerance"})
      if (type == "expression" && it.has(key)) it.fail(key, "applies to type = \"file\" only");
    init.values = read_initial_field(it, type, mesh, species, field, scenario_path, non_negative);
    init.noise = it.number("noise", 0.0, io::Range::non_negative());
    return;
  }
  for (const char* key : {"file", "arrays", "check_points", "point_tolerance"})
    if (it.has(key)) it.fail(key, "applies to type = \"file\" only (set type = \"file\")");
  init.a = it.number("a", init.a);
  init.b = it.number("b", init.b);
  init.noise = it.number("noise", init.noise, io::Range::non_negative());
  init.patch_radius = it.number("patch_radius", 0.0, io::Range::non_negative());
  init.patch_vertex = it.integer("patch_vertex", 0, io::Range::closed(0, static_cast<double>(vertices - 1)));
  init.patch_a = it.number("patch_a", 0.5);
  init.patch_b = it.number("patch_b", 0.25);
}

std::vector<std::string> species_names(const SurfaceRdParams& params) {
  return params.kinetics == Kinetics::chemotaxis ? std::vector<std::string>{"fn", "fc"}
                                                 : std::vector<std::string>{"a", "b"};
}

namespace {

/// Metrics `prefix` + species: each species' mean over the vertices (host mirror; World::download first).
template <class Real>
void add_mean_metrics(Composition& comp, const std::string& prefix, SurfaceField<Real>& field) {
  for (std::size_t sp = 0; sp < field.species_names().size(); ++sp)
    comp.add_metric(prefix + field.species_names()[sp],
                    "mean of species " + field.species_names()[sp] + " over the mesh's vertices",
                    [&field, sp](World&) {
                      const std::size_t n = field.vertices();
                      double sum = 0.0;
                      for (std::size_t i = 0; i < n; ++i)
                        sum += static_cast<double>(field.host()[sp * n + i]);
                      return sum / static_cast<double>(n);
                    });
}

/// The numerical checks of a surface field: NaN or infinite values, then values finite but beyond
/// limits.max_abs or growing without bound (MagnitudeGuard). `key` names the limits' table in messages
/// ("surface_rd", "membrane.rd"), `what` the values ("surface", "membrane"), `dt_key` what to reduce.
template <class Real>
void add_field_checks(Composition& comp, SurfaceField<Real>& field, const std::string& key,
                      const std::string& what, const std::string& dt_key, const MagnitudeLimits& limits) {
  comp.add_check([&field, what, dt_key](World& world) {
    const std::size_t bad = exec::count_non_finite(Span<const Real>(field.current()));
    if (bad == 0) return;
    field.download();
    std::size_t first = 0;
    while (first < field.host().size() && std::isfinite(field.host()[first])) ++first;
    std::ostringstream msg;
    msg << "step " << world.step << ": " << bad << " " << what
        << " values are NaN or infinite; the first: species "
        << field.species_names()[first / field.vertices()] << " at vertex " << first % field.vertices()
        << " = " << field.host()[first] << "; the time step is probably too large (reduce " << dt_key << ")";
    throw NumericalError(msg.str());
  });
  // finite but beyond <key>.max_abs, or growing without bound (after the NaN check above)
  comp.add_check([&field, guard = std::make_shared<MagnitudeGuard>(key, key, limits)](World& world) {
    const std::size_t n = field.vertices();
    const auto& names = field.species_names();
    const auto max_abs = species_max_abs(Span<const Real>(field.current()), names.size(), n);
    guard->observe(world.step, names, max_abs, [&](std::size_t s) {
      field.download();  // only on failure: where the largest |value| lies
      const std::size_t at = species_argmax_abs(field.host().data(), s, n);
      return "at vertex " + std::to_string(at);
    });
  });
}

/// `max_abs` and `growth_checks` of a reaction-diffusion table (docs/scenarios.md).
MagnitudeLimits read_magnitude_limits(const io::ScenarioTable& rd) {
  MagnitudeLimits limits;
  limits.max_abs = rd.number("max_abs", limits.max_abs, io::Range::positive());
  limits.growth_checks =
      static_cast<int>(rd.integer("growth_checks", limits.growth_checks, io::Range::closed(0, 1000000)));
  return limits;
}

template <class Real>
void install_typed(Composition& comp, std::shared_ptr<mesh::DeviceMesh> surface,
                   const SurfaceRdParams& params, const InitialState& init, double dt, double converge,
                   const MagnitudeLimits& limits) {
  const ModelSettings& settings = comp.settings();
  World& w = comp.world();
  auto& field = w.add_field(
      std::make_unique<SurfaceField<Real>>("surface", surface->shared_mesh(), species_names(params)));
  apply_initial_state(field, init, settings.seed);
  PatchSettings patches;
  if (params.path == KernelPath::patches) patches = {params.steps_per_launch, params.patch_vertices};
  // the operators' double-precision quantities and connectivity come from the shared mesh
  auto ops = std::make_shared<const MeshOperators<Real>>(std::move(surface), patches);
  auto system = std::make_unique<SurfaceRdSystem<Real>>(params, field, ops);
  SurfaceRdSystem<Real>* rd = system.get();
  comp.add_system(std::move(system), params.steps_per_launch);
  comp.set_derived_dt(dt);
  comp.add_writer([&field](const fs::path& dir, const io::OutputPiece&) -> std::unique_ptr<SnapshotWriter> {
    return make_surface_writer(dir, field);
  });
  add_field_checks(comp, field, "surface_rd", "surface", "surface_rd.dt_factor", limits);
  if (converge > 0.0) comp.set_converged([rd, converge](World&) { return rd->max_rate() < converge; });
  add_mean_metrics(comp, "mean_", field);
  comp.add_summary([&field, rd](World&) {
    std::ostringstream out;
    const std::size_t n = field.vertices();
    for (int s = 0; s < 2; ++s) {
      const Real* v = field.host().data() + static_cast<std::size_t>(s) * n;
      double lo = INFINITY, hi = -INFINITY, sum = 0.0, sum2 = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        lo = std::min(lo, static_cast<double>(v[i]));
        hi = std::max(hi, static_cast<double>(v[i]));
        sum += static_cast<double>(v[i]);
        sum2 += static_cast<double>(v[i]) * static_cast<double>(v[i]);
      }
      const double mean = sum / static_cast<double>(n);
      out << field.species_names()[static_cast<std::size_t>(s)] << ": min " << lo << ", max " << hi
          << ", mean " << mean << ", std "
          << std::sqrt(std::max(0.0, sum2 / static_cast<double>(n) - mean * mean)) << "\n";
    }
    out << "max |d/dt| at the final state: " << rd->max_rate();
    return out.str();
  });
}

}  // namespace

template <class Real>
void apply_initial_state(SurfaceField<Real>& field, const InitialState& init, std::uint64_t seed) {
  const auto& m = field.mesh();
  const std::size_t n = field.vertices();
  const auto c = static_cast<std::size_t>(init.patch_vertex);
  for (std::size_t v = 0; v < n; ++v) {
    const double d = std::sqrt((m.x[v] - m.x[c]) * (m.x[v] - m.x[c]) + (m.y[v] - m.y[c]) * (m.y[v] - m.y[c]) +
                               (m.z[v] - m.z[c]) * (m.z[v] - m.z[c]));
    const bool inside = init.patch_radius > 0.0 && d <= init.patch_radius;
    double a = inside ? init.patch_a : init.a, b = inside ? init.patch_b : init.b;
    if (!init.values.empty()) {
      a = init.values[0][v];
      b = init.values[1][v];
    }
    if (init.noise > 0.0) {
      const auto u = random::uniform4(seed, random::kInitialLayout, v, 0);
      a += init.noise * (2.0 * u.v[0] - 1.0);
      b += init.noise * (2.0 * u.v[1] - 1.0);
    }
    field.host_at(0, v) = static_cast<Real>(a);
    field.host_at(1, v) = static_cast<Real>(b);
  }
  field.upload();
}
template void apply_initial_state<float>(SurfaceField<float>&, const InitialState&, std::uint64_t);
template void apply_initial_state<double>(SurfaceField<double>&, const InitialState&, std::uint64_t);

namespace {

/// [mesh]: a triangle mesh (file or generated), shared as "mesh" (a DeviceMesh: its derived quantities are
/// built once, on the first module's require, for every module on it).
void create_mesh(Composition& comp) {
  comp.share("mesh", mesh::read_scenario_device_mesh(comp.root().table("mesh"), comp.settings().scenario_path,
                                                     kBytesPerVertex, "mesh"));
}

/// One description line on the chemotaxis scheme: for "upwind" its positivity bound (PositivityBound) and a
/// warning when the mesh has negative cotangent weights or dt exceeds the bound (module README,
/// "Positivity"); for "seed" that the scheme is neither positive nor conservative.
std::string positivity_description(const ChemotaxisParams& p, const mesh::CotangentLaplacian& L, double dt) {
  std::ostringstream d;
  if (p.scheme == ChemotaxisScheme::seed) {
    d << "chemotaxis scheme \"seed\" (-alpha f_n lap f_c - alpha grad f_n . grad f_c, eqs. 2-4): neither "
         "positive nor conservative";
    return d.str();
  }
  const PositivityBound b = positivity_bound(p, L);
  d << "chemotaxis scheme \"upwind\" (conservative edge fluxes): f_n >= 0 and 0 <= f_c <= 1 guaranteed for "
       "dt <= "
    << b.dt << " on a mesh without negative cotangent weights";
  if (dt <= b.dt && b.negative_weights == 0) {
    d << " (dt = " << dt << ": yes, while f_n <= " << b.density_limit(p, dt) << ")";
    return d.str();
  }
  d << "; warning: positivity is not guaranteed:";
  if (dt > b.dt) d << " dt = " << dt << " exceeds the bound;";
  if (b.negative_weights > 0) d << " " << b.negative_weights << " edges have negative cotangent weights;";
  d << " the numerical check still stops a blow-up";
  return d.str();
}

/// [surface_rd], [chemotaxis] or [reaction], [initial]: reaction-diffusion of two species on the shared mesh.
void install_surface_rd(Composition& comp) {
  const auto root = comp.root();
  const ModelSettings& settings = comp.settings();
  const std::shared_ptr<mesh::DeviceMesh> surface = comp.find<mesh::DeviceMesh>("mesh");
  const std::shared_ptr<const mesh::TriangleMesh> m = surface->shared_mesh();
  const mesh::MeshTopology& topology = surface->topology();

  const auto rd = root.table("surface_rd");
  InitialState init;
  SurfaceRdParams p = read_surface_rd_params(rd, root, init);
  p.steps_per_launch = static_cast<int>(rd.integer("steps_per_launch", 1, io::Range::closed(1, 16)));
  if (settings.steps % p.steps_per_launch != 0)
    rd.fail("steps_per_launch", "must divide simulation.steps (" + std::to_string(settings.steps) + ")");
  if (settings.output_every % p.steps_per_launch != 0)
    rd.fail("steps_per_launch", "must divide output.every (" + std::to_string(settings.output_every) + ")");
  const double dt_factor = rd.number("dt_factor", 0.05, io::Range::positive());
  const double converge = rd.number("converge", 0.0, io::Range::non_negative());
  const MagnitudeLimits limits = read_magnitude_limits(rd);
  read_initial_state(root.table("initial"), *m, species_names(p), "surface", settings.scenario_path,
                     p.kinetics == Kinetics::chemotaxis, init);

  const double h = mesh::mean_edge_length(*m, topology);
  const double dt = settings.dt_given ? settings.dt : dt_factor * h * h;
  // explicit stability of the diffusion part, from a Gershgorin bound on the Laplacian's spectrum (host
  // only: nothing is allocated on the device before the input is accepted)
  const double limit = (p.integrator == Integrator::rk4 ? 2.785 : 2.0) /
                       (p.max_diffusion() * surface->require_cotangent_laplacian().spectral_radius_bound());
  if (dt > limit) {
    std::ostringstream msg;
    msg << "time step " << dt << (settings.dt_given ? "" : " (surface_rd.dt_factor * mean edge^2)")
        << " exceeds the explicit stability bound " << limit
        << " of the diffusion on this mesh (D_max = " << p.max_diffusion() << ", mean edge " << h << ")";
    if (settings.dt_given) throw InputError(settings.where_dt + ": simulation.dt: " + msg.str());
    rd.fail("dt_factor", msg.str());
  }
  // memory: on the device the species and the integrator's stages (12 arrays of 2 species per vertex) and
  // the cotangent Laplacian with the mesh (about 80 bytes per face); on the host the field's mirror, the
  // mesh and the snapshot writer's copies (points and species)
  const double value_bytes = settings.precision == "double" ? 8.0 : 4.0;
  const auto vertices = static_cast<double>(m->vertex_count()), faces = static_cast<double>(m->face_count());
  exec::MemoryEstimate need;
  need.device = vertices * 2.0 * value_bytes * 12.0 + faces * 80.0;
  need.host = vertices * (2.0 * value_bytes * 2.0 + 24.0 + 12.0) + faces * 12.0;
  comp.reserve_memory(
      root.table("mesh"), "",
      std::to_string(m->vertex_count()) + " mesh vertices (2 species, " + settings.precision + ")", need);

  if (settings.precision == "double")
    install_typed<double>(comp, surface, p, init, dt, converge, limits);
  else
    install_typed<float>(comp, surface, p, init, dt, converge, limits);
  std::ostringstream d;
  d << m->vertex_count() << " vertices, " << m->face_count() << " faces (" << topology.boundary_edges
    << " boundary edges, mean edge " << h << "), "
    << (p.kinetics == Kinetics::chemotaxis ? std::string(p.chemotaxis.scheme == ChemotaxisScheme::upwind
                                                             ? "chemotaxis (seed eq. 1, upwind fluxes)"
                                                             : "chemotaxis (seed eq. 1, seed scheme)")
                                           : p.reaction.describe())
    << ", " << (p.integrator == Integrator::rk4 ? "RK4" : "Euler") << ", " << kernel_description(p.path)
    << (p.steps_per_launch > 1 ? ", " + std::to_string(p.steps_per_launch) + " steps per launch"
                               : std::string())
    << ", " << settings.precision
    << (converge > 0.0 ? ", stop when max |dY/dt| < " + std::to_string(converge) : std::string());
  comp.add_description(d.str());
  if (p.kinetics == Kinetics::chemotaxis) {
    const std::string positivity =
        positivity_description(p.chemotaxis, surface->require_cotangent_laplacian(), dt);
    comp.add_description(positivity);
    if (positivity.find("warning") != std::string::npos)  // like the mesh reader's warnings
      std::fprintf(stderr, "tissue: warning: surface_rd: %s\n", positivity.c_str());
  }
}

/// [membrane.rd]: reaction-diffusion on the membrane mesh (entity set "membrane"), a SurfaceField
/// "membrane" shared as "membrane.field" (cells sample it: module membrane_sampling); [output] membrane.
void install_membrane_rd(Composition& comp) {
  const auto table = comp.root().table("membrane");
  const auto membrane_mesh = comp.find<mesh::DeviceMesh>("membrane");
  const auto membrane = membrane_mesh->shared_mesh();
  if (!table.has("rd")) table.fail("", "the module membrane_rd needs its parameters in [membrane.rd]");
  const auto rd = table.table("rd");
  InitialState initial;
  const SurfaceRdParams params = read_surface_rd_params(rd, rd, initial);
  const MagnitudeLimits limits = read_magnitude_limits(rd);
  read_initial_state(rd.table("initial"), *membrane, species_names(params), "membrane",
                     comp.settings().scenario_path, params.kinetics == Kinetics::chemotaxis, initial);
  World& w = comp.world();
  auto field = std::shared_ptr<SurfaceField<float>>(
      &w.add_field(std::make_unique<SurfaceField<float>>("membrane", membrane, species_names(params))),
      [](SurfaceField<float>*) {});  // owned by the World
  apply_initial_state(*field, initial, comp.settings().seed);
  auto ops = std::make_shared<const MeshOperators<float>>(membrane_mesh);  // the membrane's cached quantities
  comp.add_system(std::make_unique<SurfaceRdSystem<float>>(params, *field, ops));
  add_field_checks(comp, *field, "membrane.rd", "membrane", "simulation.dt", limits);
  if (comp.root().table("output").boolean("membrane", true))
    comp.add_writer(
        [field](const fs::path& dir, const io::OutputPiece&) { return make_surface_writer(dir, *field); });
  add_mean_metrics(comp, "membrane_mean_", *field);
  comp.add_summary([field](World&) {
    field->download();
    std::ostringstream out;
    out << "membrane field:";
    const std::size_t n = field->vertices();
    for (int s = 0; s < field->species_count(); ++s) {
      const auto first = field->host().begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s) * n);
      const auto [lo, hi] = std::minmax_element(first, first + static_cast<std::ptrdiff_t>(n));
      out << (s ? "; " : " ") << field->species_names()[static_cast<std::size_t>(s)] << " min " << *lo
          << " max " << *hi;
    }
    return out.str();
  });
  comp.add_description("membrane field: " + (params.kinetics == Kinetics::chemotaxis
                                                 ? std::string("the chemotaxis model")
                                                 : params.reaction.describe()));
  comp.share("membrane.field", field);
}

}  // namespace

}  // namespace tissue::surface_rd

namespace tissue::modules {

/// Registers the triangle-mesh entity set and reaction-diffusion on surfaces (a mesh, or the membrane).
void register_surface_rd(ModuleRegistry& registry) {
  registry.add(EntitySetInfo{"mesh",
                             "a triangle mesh: an OBJ file (scaled) or a generated sphere/plane",
                             {"mesh"},
                             surface_rd::create_mesh});
  registry.add(ModuleInfo{"surface_rd",
                          "reaction-diffusion on the triangle mesh (Descombes et al.; snakeskin chemotaxis); "
                          "dt from surface_rd.dt_factor and the mean edge unless given",
                          {"surface_rd", "chemotaxis", "reaction", "initial", "mesh"},
                          {"mesh"},
                          0.0,
                          surface_rd::install_surface_rd});
  registry.add(ModuleInfo{"membrane_rd",
                          "reaction-diffusion on the basement membrane's mesh ([membrane.rd]), sampled by "
                          "cells through membrane_sampling",
                          {"membrane"},
                          {"membrane"},
                          0.0,
                          surface_rd::install_membrane_rd});
  registry.add(PresetInfo{"surface_rd", "reaction-diffusion on a triangle mesh", {"mesh"}, {"surface_rd"}});
}

}  // namespace tissue::modules
