// Throughput of reaction-diffusion on triangle meshes (the chemotaxis model of seed 000) against the
// memory-bandwidth limit, for every kernel path in float and double.
//
//   bench_surface_rd [--backend cpu|cuda] [--small N] [--large N] [--steps K] [--bunny PATH]
//                    [--patch-sweep]
//
// Meshes: regular rectangles of N x N vertices (default 141^2 ~ 20 K and 1000^2 = 1 M, the seed's R1/R2
// range) and the Stanford bunny (34 834 vertices). The paths: the module's (baseline, stencil, patches) and
// those kept here only for comparison (fused, ring, ring_weights: bench/surface_rd_variants.hpp).
// "B/v-step" is the least traffic of the path per
// vertex-step, counted from the mesh (s = sizeof(Real)):
//   baseline, fused: both species read and written once (4 s); the operators read once: CSR offsets (4)
//     and per neighbour an index and a weight (4 + s), the inverse area (s), the vertex-face offsets (4)
//     and per incident face an index and an angle weight (4 + s), the boundary projection (6 s), and per
//     face its 3 vertex indices and the two eq. 3 vectors (12 + 6 s);
//   ring: fields (4 s), positions (4 s: padded to one aligned load), degree (4), per neighbour an index (4);
//   ring_weights: ring plus per neighbour a Laplacian weight and an angle (2 s), the projection (6 s);
//   stencil: fields (4 s), degree (4), per neighbour an index and the 4 stencil weights (4 + 4 s);
//   patches, per launch of K steps over the patches with their halos: per local vertex its global index
//     and both species read (4 + 2 s); per stencil row its degree (1) and per slot a 16-bit local index and
//     the stencil weights (2 + 4 s); per vertex both species written (2 s); divided by K.
// The limit is the device-to-device copy bandwidth measured in the same run. Results for the GPU go into
// BENCHMARKS.md.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_common.hpp"
#include "bench/surface_rd_variants.hpp"
#include "engine/exec/backend.hpp"
#include "engine/mesh/surface_field.hpp"
#include "modules/surface_rd/surface_rd.hpp"
#include "modules/surface_rd/surface_rd_model.hpp"

using namespace tissue;
using namespace tissue::surface_rd;
using bench::Clock;
using bench::seconds_since;

namespace {

using variants::Variant;

/// One case: a kernel path of the module or a variant kept here, its steps per launch and (patches) patch
/// size and threads per block.
struct Case {
  KernelPath path;
  std::optional<Variant> variant;  ///< instead of `path`
  int steps_per_launch = 1;
  std::size_t patch_vertices = 256;
  unsigned patch_threads = 512;  // 0: one thread per local vertex

  Case(KernelPath p, int k = 1, std::size_t vertices = 256, unsigned threads = 512)
      : path(p), steps_per_launch(k), patch_vertices(vertices), patch_threads(threads) {}
  Case(Variant v) : path(KernelPath::baseline), variant(v) {}

  std::string name() const {
    if (variant) return *variant == Variant::ring_weights ? "ring_w" : variants::variant_name(*variant);
    std::string s = kernel_name(path);
    if (path == KernelPath::patches) s += " x" + std::to_string(steps_per_launch);
    return s;
  }
};

/// Minimum bytes of one step per vertex (see the header comment) of the path.
template <class Real>
double bytes_per_vertex_step(const mesh::TriangleMesh& m, const mesh::MeshTopology& t,
                             const MeshOperators<Real>& ops, const Case& c) {
  constexpr double s = sizeof(Real);
  const auto n = static_cast<double>(m.vertex_count());
  const double slots = static_cast<double>(t.vertex_neighbours.size()) / n;
  if (c.variant == Variant::ring) return 4 * s + 4 * s + 4 + 4 * slots;
  if (c.variant == Variant::ring_weights) return 4 * s + 4 * s + 4 + slots * (4 + 2 * s) + 6 * s;
  switch (c.variant ? KernelPath::baseline : c.path) {  // fused: the baseline's operators
    case KernelPath::stencil:
      return 4 * s + 4 + slots * (4 + 4 * s);
    case KernelPath::patches: {
      const auto counts = ops.patch_counts();
      const double launch = static_cast<double>(counts.local) * (4 + 2 * s) +
                            static_cast<double>(counts.rows) +
                            static_cast<double>(counts.slots) * (2 + 4 * s) + n * 2 * s;
      return launch / (n * c.steps_per_launch);
    }
    default: {
      const auto nnz_vv = static_cast<double>(t.vertex_neighbours.size());
      const auto nnz_vf = static_cast<double>(t.vertex_faces.size());
      const auto nf = static_cast<double>(m.face_count());
      return (n * (4 * s + 4 + s + 4 + 6 * s) + nnz_vv * (4 + s) + nnz_vf * (4 + s) + nf * (12 + 6 * s)) / n;
    }
  }
}

struct Measured {
  double seconds;   ///< per step
  double bytes;     ///< least traffic per vertex-step of the path
  double one_pass;  ///< least traffic per vertex-step of one step without temporal blocking (print_row)
};

/// Time per step of the chemotaxis model (alpha = 13, noise 0.01) on mesh m, and the traffic counts.
template <class Real>
Measured measure(const std::shared_ptr<const mesh::TriangleMesh>& m, const mesh::MeshTopology& topology,
                 const Case& c, int steps) {
  SurfaceRdParams p;
  p.chemotaxis.alpha = 13.0;
  p.chemotaxis.scheme = ChemotaxisScheme::seed;  // the variants (and BENCHMARKS.md) time the seed's scheme
  p.path = c.path;
  p.steps_per_launch = c.steps_per_launch;
  p.patch_vertices = c.patch_vertices;
  p.patch_threads = c.patch_threads;
  World world{Box{}};
  auto& field = world.add_field(
      std::make_unique<SurfaceField<Real>>("surface", m, std::vector<std::string>{"fn", "fc"}));
  InitialState init;
  init.a = 1.0;
  init.b = 0.5;
  init.noise = 0.01;
  apply_initial_state(field, init, 1);
  PatchSettings patches;
  if (c.path == KernelPath::patches) patches = {c.steps_per_launch, c.patch_vertices};
  auto ops = std::make_shared<const MeshOperators<Real>>(*m, topology, patches);
  std::unique_ptr<System> system;
  if (c.variant)
    system = std::make_unique<variants::VariantSystem<Real>>(
        *c.variant, p, field, std::make_shared<const variants::VariantOperators<Real>>(*m, topology, ops));
  else
    system = std::make_unique<SurfaceRdSystem<Real>>(p, field, ops);
  const double dt = 0.5 / (p.max_diffusion() * ops->spectral_radius_bound()) * c.steps_per_launch;
  for (int k = 0; k < 2; ++k) system->run(world, StepContext{k, 0.0, dt});  // warm-up
  exec::synchronize();
  const int calls = std::max(1, steps / c.steps_per_launch);
  const auto t0 = Clock::now();
  for (int k = 0; k < calls; ++k) system->run(world, StepContext{k, 0.0, dt});
  exec::synchronize();
  const double seconds = seconds_since(t0) / (calls * c.steps_per_launch);
  return {seconds, bytes_per_vertex_step(*m, topology, *ops, c),
          bytes_per_vertex_step(*m, topology, *ops,
                                c.path == KernelPath::patches ? Case{KernelPath::stencil} : c)};
}

/// One result line; `one_pass` is the least traffic of one step of the same operators without temporal
/// blocking (the stencil path's for patches), whose ratio shows how far several steps per launch go beyond
/// the one-pass limit.
void print_row(const std::string& mesh, std::size_t vertices, const std::string& kernel, const char* real,
               double seconds, double bytes, double one_pass, double bandwidth) {
  const double rate = static_cast<double>(vertices) / seconds;
  std::printf("%-20s %9zu %-16s %-7s %10.1f %14.3f %9.0f %10.1f%% %11.1f%%\n", mesh.c_str(), vertices,
              kernel.c_str(), real, 1e6 * seconds, rate / 1e9, bytes, 100.0 * rate * bytes / bandwidth,
              100.0 * rate * one_pass / bandwidth);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"surface reaction-diffusion throughput against the memory-bandwidth limit"};
  std::string backend = exec::cuda_compiled() ? "cuda" : "cpu";
  int small = 141, large = 0, steps = 0;
  std::string bunny = std::string(TISSUE_SOURCE_DIR) + "/scenarios/meshes/stanford-bunny.obj";
  app.add_option("--backend", backend, "cpu or cuda");
  app.add_option("--small", small, "side of the small rectangle mesh (default 141: 19 881 vertices)");
  app.add_option("--large", large, "side of the large rectangle mesh (default 1000 on cuda, 400 on cpu)");
  app.add_option("--steps", steps, "timed steps per case (default 200 on cuda, 10 on cpu)");
  app.add_option("--bunny", bunny, "the bunny OBJ file ('' to skip)");
  bool patch_sweep = false;
  app.add_flag("--patch-sweep", patch_sweep,
               "patches path only: patch sizes and block sizes, float, large mesh");
  CLI11_PARSE(app, argc, argv);
  try {
    exec::set_backend(exec::parse_backend(backend));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_surface_rd: %s\n", e.what());
    return 2;
  }
  const bool gpu = exec::backend() == exec::Backend::cuda;
  if (large == 0) large = gpu ? 1000 : 400;
  if (steps == 0) steps = gpu ? 200 : 10;
  const double bandwidth = bench::copy_bandwidth(gpu ? (std::size_t{1} << 30) : (std::size_t{1} << 28));
  std::printf("backend %s: %s\ndevice-to-device copy: %.0f GB/s (read + write)\n", backend.c_str(),
              exec::device_description().c_str(), bandwidth / 1e9);

  struct Mesh {
    std::string name;
    std::shared_ptr<const mesh::TriangleMesh> mesh;
  };
  std::vector<Mesh> meshes;
  for (int side : {small, large})
    meshes.push_back(
        {"rectangle " + std::to_string(side) + "^2",
         std::make_shared<mesh::TriangleMesh>(mesh::rectangle_mesh(side, side, side * 0.2, side * 0.2))});
  if (!bunny.empty())
    meshes.push_back({"bunny", std::make_shared<mesh::TriangleMesh>(mesh::read_obj(bunny))});

  std::printf("%-20s %9s %-16s %-7s %10s %14s %9s %11s %12s\n", "mesh", "vertices", "kernels", "real",
              "us/step", "G vertex-st/s", "B/v-step", "of copy BW", "vs 1-pass");
  if (patch_sweep) {  // patch size and block size of the patches path, float, on the large mesh
    const auto& [name, m] = meshes[1];
    const auto topology = mesh::build_topology(*m);
    for (const int k : {2, 4, 8})
      for (const std::size_t vertices : {192, 256, 384})
        for (const unsigned threads : {0u, 512u}) {
          const Case c{KernelPath::patches, k, vertices, threads};
          const auto r = measure<float>(m, topology, c, steps);
          print_row(
              name, m->vertex_count(),
              c.name() + " " + std::to_string(vertices) + "/" + (threads ? std::to_string(threads) : "auto"),
              "float", r.seconds, r.bytes, r.one_pass, bandwidth);
        }
    return 0;
  }
  const std::vector<Case> cases{{KernelPath::baseline},   {Variant::fused},         {Variant::ring},
                                {Variant::ring_weights},  {KernelPath::stencil},    {KernelPath::patches, 1},
                                {KernelPath::patches, 2}, {KernelPath::patches, 4}, {KernelPath::patches, 8}};
  for (const auto& [name, m] : meshes) {
    const auto topology = mesh::build_topology(*m);
    for (const Case& c : cases)
      for (const bool dbl : {false, true}) {
        const auto r = dbl ? measure<double>(m, topology, c, steps) : measure<float>(m, topology, c, steps);
        print_row(name, m->vertex_count(), c.name(), dbl ? "double" : "float", r.seconds, r.bytes, r.one_pass,
                  bandwidth);
      }
  }
  return 0;
}
