#include "modules/grid_rd/grid_rd_model.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "engine/core/state_checks.hpp"
#include "engine/exec/algorithms.hpp"
#include "engine/exec/backend.hpp"
#include "engine/io/grid_output.hpp"
#include "engine/io/png.hpp"
#include "engine/io/vtk.hpp"
#include "engine/schedule/module_registry.hpp"
#include "engine/util/random.hpp"

namespace tissue::grid_rd {

namespace {

GridBoundary parse_boundary(const io::ScenarioTable& t, const std::string& key, GridBoundary fallback) {
  const std::string v = t.string(key,
                                 fallback == GridBoundary::periodic  ? "periodic"
                                 : fallback == GridBoundary::neumann ? "neumann"
                                                                     : "dirichlet",
                                 {"periodic", "neumann", "dirichlet"});
  return v == "periodic"  ? GridBoundary::periodic
         : v == "neumann" ? GridBoundary::neumann
                          : GridBoundary::dirichlet;
}

template <class Real>
std::string summarize(GridField<Real>& field) {
  std::ostringstream out;
  const std::size_t n = field.cells();
  for (int sp = 0; sp < field.species_count(); ++sp) {
    const Real* v = field.host().data() + static_cast<std::size_t>(sp) * n;
    double lo = INFINITY, hi = -INFINITY, sum = 0.0, sum2 = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const double x = static_cast<double>(v[i]);
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      sum += x;
      sum2 += x * x;
    }
    const double mean = sum / static_cast<double>(n);
    const double sd = std::sqrt(std::max(0.0, sum2 / static_cast<double>(n) - mean * mean));
    out << (sp ? "\n" : "") << "species " << field.species_names()[static_cast<std::size_t>(sp)] << ": min "
        << lo << ", max " << hi << ", mean " << mean << ", spatial standard deviation " << sd;
  }
  return out.str();
}

template <class Real>
void install_typed(Composition& comp, const GridRdParams& params, const InitialState& init,
                   const io::GridOutputOptions& output, const MagnitudeLimits& limits) {
  const ModelSettings& settings = comp.settings();
  World& w = comp.world();
  auto& field = w.add_field(std::make_unique<GridField<Real>>(
      "rd", params.shape, std::vector<std::string>{"a", "b"}, params.geometry<Real>()));
  apply_initial_state(field, init, settings.seed);
  comp.add_system(std::make_unique<GridRdSystem<Real>>(params, field), params.steps_per_launch);
  comp.add_writer([&field, output](const std::filesystem::path& dir,
                                   const io::OutputPiece&) -> std::unique_ptr<SnapshotWriter> {
    return std::make_unique<io::GridWriter<Real>>(dir, field, output);
  });
  comp.add_summary([&field](World&) {
    field.download();
    return summarize(field);
  });
  for (std::size_t sp = 0; sp < field.species_names().size(); ++sp)
    comp.add_metric("mean_" + field.species_names()[sp],
                    "mean of species " + field.species_names()[sp] + " over the grid's nodes [concentration]",
                    [&field, sp](World&) {
                      field.download();
                      const std::size_t n = field.cells();
                      double sum = 0.0;
                      for (std::size_t i = 0; i < n; ++i)
                        sum += static_cast<double>(field.host()[sp * n + i]);
                      return sum / static_cast<double>(n);
                    });
  comp.add_check([&field](World& world) {
    const std::size_t bad = exec::count_non_finite(Span<const Real>(field.current()));
    if (bad == 0) return;
    field.download();  // only on failure: find the first bad node for the message
    const std::size_t n = field.cells();
    std::size_t first = 0;
    while (first < field.host().size() && std::isfinite(field.host()[first])) ++first;
    const std::size_t species = first / n, node = first % n;
    const GridShape& s = field.shape();
    std::ostringstream msg;
    msg << "step " << world.step << ": " << bad << " grid values are NaN or infinite; the first: species "
        << field.species_names()[species] << " at node (" << node % static_cast<std::size_t>(s.nx) << ", "
        << node / static_cast<std::size_t>(s.nx) % static_cast<std::size_t>(s.ny) << ", "
        << node / (static_cast<std::size_t>(s.nx) * static_cast<std::size_t>(s.ny))
        << ") = " << field.host()[first]
        << "; the reaction is probably too stiff for simulation.dt (reduce it, or use grid_rd.integrator = "
           "\"rk4\")";
    throw NumericalError(msg.str());
  });
  // finite but beyond grid_rd.max_abs, or growing without bound (after the NaN check above)
  comp.add_check(
      [&field, guard = std::make_shared<MagnitudeGuard>("grid_rd", "grid_rd", limits)](World& world) {
        const std::size_t n = field.cells();
        const auto& names = field.species_names();
        const auto max_abs = species_max_abs(Span<const Real>(field.current()), names.size(), n);
        guard->observe(world.step, names, max_abs, [&](std::size_t s) {
          field.download();  // only on failure: where the largest |value| lies
          const std::size_t at = species_argmax_abs(field.host().data(), s, n);
          const GridShape& g = field.shape();
          const auto nx = static_cast<std::size_t>(g.nx), ny = static_cast<std::size_t>(g.ny);
          return "at node (" + std::to_string(at % nx) + ", " + std::to_string(at / nx % ny) + ", " +
                 std::to_string(at / (nx * ny)) + ")";
        });
      });
  std::ostringstream d;
  d << params.shape.nx << " x " << params.shape.ny;
  if (params.shape.nz > 1) d << " x " << params.shape.nz;
  d << " grid (h = " << params.shape.h << ", " << settings.precision << "), "
    << (params.stencil == Stencil::seed9  ? "seed 9-point"
        : params.stencil == Stencil::five ? "5-point"
                                          : "7-point")
    << " stencil, " << (params.integrator == Integrator::euler ? "Euler" : "RK4") << ", "
    << params.reaction.describe();
  comp.add_description(d.str());
}

}  // namespace

template <class Real>
void apply_initial_state(GridField<Real>& field, const InitialState& init, std::uint64_t seed) {
  const GridShape& s = field.shape();
  const std::size_t n = field.cells();
  auto& host = field.host();
  if (init.type == "file") {
    std::ifstream in(init.file, std::ios::binary);
    if (!in) throw InputError(init.file + ": initial-state file not found or unreadable");
    in.read(reinterpret_cast<char*>(host.data()), static_cast<std::streamsize>(host.size() * sizeof(Real)));
    if (in.gcount() != static_cast<std::streamsize>(host.size() * sizeof(Real)) || in.peek() != EOF)
      throw InputError(init.file + ": expected exactly " + std::to_string(host.size() * sizeof(Real)) +
                       " bytes (2 species x " + std::to_string(n) + " nodes x " +
                       std::to_string(sizeof(Real)) + "-byte values, species-major)");
  } else {
    const double ci = 0.5 * s.nx, cj = 0.5 * s.ny, ck = 0.5 * s.nz, half = 0.5 * init.patch_size;
    for (int k = 0; k < s.nz; ++k)
      for (int j = 0; j < s.ny; ++j)
        for (int i = 0; i < s.nx; ++i) {
          const double dx = i + 0.5 - ci, dy = j + 0.5 - cj, dz = s.nz > 1 ? k + 0.5 - ck : 0.0;
          const bool inside =
              init.type == "seed" && (init.patch == "sphere" ? dx * dx + dy * dy + dz * dz <= half * half
                                                             : std::abs(dx) <= half && std::abs(dy) <= half &&
                                                                   (s.nz == 1 || std::abs(dz) <= half));
          field.host_at(0, i, j, k) = static_cast<Real>(inside ? init.patch_a : init.a);
          field.host_at(1, i, j, k) = static_cast<Real>(inside ? init.patch_b : init.b);
        }
  }
  if (init.noise > 0.0)
    for (std::size_t idx = 0; idx < n; ++idx) {
      const auto u = random::uniform4(seed, random::kInitialLayout, idx, 0);
      for (int sp = 0; sp < 2; ++sp)
        host[static_cast<std::size_t>(sp) * n + idx] += static_cast<Real>(init.noise * (2.0 * u.v[sp] - 1.0));
    }
  field.upload();
}
template void apply_initial_state<float>(GridField<float>&, const InitialState&, std::uint64_t);
template void apply_initial_state<double>(GridField<double>&, const InitialState&, std::uint64_t);

namespace {

/// [grid]: the structured grid's nodes, spacing and boundaries, shared as "grid" (a GridRdParams with only
/// shape, faces and the Dirichlet values set) with the modules acting on it.
void create_grid(Composition& comp) {
  auto shared = std::make_shared<GridRdParams>();
  GridRdParams& p = *shared;
  const auto grid = comp.root().table("grid");
  p.shape.nx = static_cast<int>(grid.integer("nx", 256, io::Range::closed(1, 1 << 20)));
  p.shape.ny = static_cast<int>(grid.integer("ny", 256, io::Range::closed(1, 1 << 20)));
  p.shape.nz = static_cast<int>(grid.integer("nz", 1, io::Range::closed(1, 1 << 20)));
  p.shape.h = grid.number("h", 1.0, io::Range::positive());
  if (p.shape.nx < 3 || p.shape.ny < 3 || (p.shape.nz > 1 && p.shape.nz < 3))
    grid.fail("nx", "every axis of the grid needs at least 3 nodes (nz = 1 for 2D)");
  // boundaries: `boundary` for every face, refined per axis or face in [grid.boundaries] (x, ymin, ...)
  const GridBoundary all = parse_boundary(grid, "boundary", GridBoundary::periodic);
  const auto boundary_keys = grid.table("boundaries");
  const char* axes[3] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a) {
    const GridBoundary axis = parse_boundary(boundary_keys, axes[a], all);
    for (int side = 0; side < 2; ++side)
      p.faces[static_cast<std::size_t>(2 * a + side)] =
          parse_boundary(boundary_keys, std::string(axes[a]) + (side ? "max" : "min"), axis);
    const GridBoundary lo = p.faces[static_cast<std::size_t>(2 * a)],
                       hi = p.faces[static_cast<std::size_t>(2 * a + 1)];
    if ((lo == GridBoundary::periodic) != (hi == GridBoundary::periodic))
      boundary_keys.fail(std::string(axes[a]) + (lo == GridBoundary::periodic ? "max" : "min"),
                         std::string("a periodic boundary pairs opposite faces: ") + axes[a] + "min and " +
                             axes[a] + "max must both be periodic or both not");
  }
  // Dirichlet ghost values: [grid.dirichlet] a, b for every face, refined per face ([grid.dirichlet.xmin]
  // ...)
  const auto dirichlet = grid.table("dirichlet");
  const double da = dirichlet.number("a", 1.0), db = dirichlet.number("b", 0.0);
  const char* faces[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};
  for (std::size_t f = 0; f < 6; ++f) {
    const auto face = dirichlet.table(faces[f]);
    p.dirichlet[f] = {face.number("a", da), face.number("b", db)};
  }
  comp.share("grid", shared);
}

/// [reaction], [grid_rd], [initial], [output]: reaction-diffusion of two species on the shared grid.
void install_grid_rd(Composition& comp) {
  const auto root = comp.root();
  const ModelSettings& settings = comp.settings();
  const auto grid = root.table("grid");
  GridRdParams p = *comp.find<GridRdParams>("grid");

  p.reaction = reactions::read_reaction(root.table("reaction"));

  const auto rd = root.table("grid_rd");
  const bool three_d = p.shape.nz > 1;
  const std::string stencil = rd.string("stencil", three_d ? "seven" : "seed9", {"seed9", "five", "seven"});
  p.stencil = stencil == "seed9" ? Stencil::seed9 : stencil == "five" ? Stencil::five : Stencil::seven;
  if (three_d && p.stencil != Stencil::seven)
    rd.fail("stencil", "a 3D grid (nz > 1) needs the \"seven\" stencil");
  if (!three_d && p.stencil == Stencil::seven)
    rd.fail("stencil", "the \"seven\" stencil needs a 3D grid (nz > 1)");
  p.integrator =
      rd.string("integrator", "euler", {"euler", "rk4"}) == "rk4" ? Integrator::rk4 : Integrator::euler;
  p.kernel =
      rd.string("kernel", "auto", {"auto", "generic"}) == "generic" ? Kernel::generic : Kernel::automatic;
  p.steps_per_launch = static_cast<int>(rd.integer("steps_per_launch", 1, io::Range::closed(1, 64)));
  MagnitudeLimits limits;
  limits.max_abs = rd.number("max_abs", limits.max_abs, io::Range::positive());
  limits.growth_checks =
      static_cast<int>(rd.integer("growth_checks", limits.growth_checks, io::Range::closed(0, 1000000)));
  if (settings.steps % p.steps_per_launch != 0)
    rd.fail("steps_per_launch", "must divide simulation.steps (" + std::to_string(settings.steps) + ")");

  InitialState init;
  const auto it = root.table("initial");
  init.type = it.string("type", "seed", {"seed", "uniform", "file"});
  init.a = it.number("a", init.a);
  init.b = it.number("b", init.b);
  init.patch = it.string("patch", init.patch, {"square", "sphere"});
  init.patch_size = it.number("patch_size", init.patch_size, io::Range::non_negative());
  init.patch_a = it.number("patch_a", init.patch_a);
  init.patch_b = it.number("patch_b", init.patch_b);
  init.noise = it.number("noise", init.noise, io::Range::non_negative());
  init.file = it.string("file", "");
  if (init.type == "file" && init.file.empty()) it.fail("file", "type = \"file\" needs a file");

  io::GridOutputOptions output;
  const auto out = root.table("output");
  output.vti = out.boolean("vti", true);
  output.png_species = out.string("png", three_d ? "" : "b", {"", "a", "b"});
  if (out.has("png_min") || out.has("png_max")) {
    output.png_fixed_range = true;
    output.png_lo = out.number("png_min", 0.0);
    output.png_hi = out.number("png_max", 1.0);
    if (!(output.png_hi > output.png_lo)) out.fail("png_max", "must be larger than png_min");
  }

  // checks before any step: stability and memory
  if (settings.dt > p.stability_limit()) {
    std::ostringstream msg;
    msg << settings.where_dt << ": simulation.dt: " << settings.dt << " exceeds the explicit stability limit "
        << p.stability_limit() << " of " << (p.integrator == Integrator::rk4 ? "RK4" : "Euler")
        << " with the " << stencil
        << " stencil and D_max = " << std::max(p.reaction.diffusion[0], p.reaction.diffusion[1])
        << " (dt <= " << (p.integrator == Integrator::rk4 ? "2.785" : "2") << " / (D_max * "
        << laplacian_spectral_radius(p.stencil, p.shape.h) << "))";
    throw InputError(msg.str());
  }
  // memory before anything is allocated (the field's DeviceBuffers, its host mirror, the VTK staging)
  const double value_bytes = settings.precision == "double" ? 8.0 : 4.0;
  const double arrays = p.integrator == Integrator::rk4 ? 5.0 : 2.0;  // current, next (+ RK4's k, acc, tmp)
  const double values = static_cast<double>(p.shape.cells()) * 2.0;   // 2 species per node
  exec::MemoryEstimate need;
  need.device = values * value_bytes * arrays;
  // the host mirror (download() before output and checkpoints), a copy of every species in the VTK writer's
  // arrays while a snapshot is written, and a PNG's RGB pixels with their compressed stream
  need.host =
      values * value_bytes * (output.vti ? 2.0 : 1.0) +
      (output.png_species.empty() || p.shape.nz > 1 ? 0.0 : 8.0 * static_cast<double>(p.shape.cells()));
  std::ostringstream what;
  what << p.shape.nx << " x " << p.shape.ny << " x " << p.shape.nz << " grid nodes (2 species, "
       << settings.precision << ", " << arrays << " arrays)";
  comp.reserve_memory(grid, "nx", what.str(), need);

  if (settings.precision == "double")
    install_typed<double>(comp, p, init, output, limits);
  else
    install_typed<float>(comp, p, init, output, limits);
}

}  // namespace

}  // namespace tissue::grid_rd

namespace tissue::modules {

/// Registers reaction-diffusion on structured grids.
void register_grid_rd(ModuleRegistry& registry) {
  registry.add(EntitySetInfo{"grid",
                             "a 2D/3D structured grid: nodes, spacing h, boundary of each face",
                             {"grid"},
                             grid_rd::create_grid});
  registry.add(ModuleInfo{"grid_rd",
                          "reaction-diffusion of two species on the structured grid (Gray-Scott, "
                          "polynomial/Hill reactions; tuned CUDA kernels)",
                          {"reaction", "grid_rd", "initial", "grid"},
                          {"grid"},
                          1.0,
                          grid_rd::install_grid_rd});
  registry.add(PresetInfo{"grid_rd", "reaction-diffusion on a structured grid", {"grid"}, {"grid_rd"}});
}

}  // namespace tissue::modules
