// Throughput of reaction-diffusion on triangle meshes (the chemotaxis model of seed 000) against the
// memory-bandwidth limit, for the seed's baseline kernels and the fused kernel, in float and double.
//
//   bench_surface_rd [--backend cpu|cuda] [--small N] [--large N] [--steps K] [--bunny PATH]
//
// Meshes: regular rectangles of N x N vertices (default 141^2 ~ 20 K and 1000^2 = 1 M, the seed's R1/R2
// range) and the Stanford bunny (34 834 vertices). Minimum traffic of one step, counted per vertex-step from
// the mesh: both species read and written once (4 s bytes, s = sizeof(Real)); the operators read once:
// CSR offsets (4) and per neighbour an index and a weight (4 + s), the inverse area (s), the vertex-face
// offsets (4) and per incident face an index and an angle weight (4 + s), the boundary projection (6 s),
// and per face its 3 vertex indices and the two eq. 3 vectors (12 + 6 s). The ring kernel recomputes all
// geometry from positions: fields (4 s), positions (4 s: padded to one aligned load), degree (4) and ring
// indices (4 per neighbour).
// The limit is the device-to-device
// copy bandwidth measured in the same run. Results for the GPU go into BENCHMARKS.md.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "engine/exec/backend.hpp"
#include "engine/mesh/surface_field.hpp"
#include "modules/surface_rd/surface_rd.hpp"
#include "modules/surface_rd/surface_rd_model.hpp"

using namespace tissue;
using namespace tissue::surface_rd;
using bench::Clock;
using bench::seconds_since;

namespace {

/// Minimum bytes of one step per vertex (see the header comment) of the path's operator data.
double bytes_per_vertex_step(const mesh::TriangleMesh& m, const mesh::MeshTopology& t, double s,
                             KernelPath path) {
  const double slots =
      static_cast<double>(t.vertex_neighbours.size()) / static_cast<double>(m.vertex_count());
  if (path == KernelPath::ring_weights)  // as ring, plus a weight and an angle per slot (and the projection)
    return 4 * s + 4 * s + 4 + slots * (4 + 2 * s) + 6 * s;
  if (path == KernelPath::ring)  // fields, padded positions, the signed degree and the ring's indices
    return 4 * s + 4 * s + 4 +
           4.0 * static_cast<double>(t.vertex_neighbours.size()) / static_cast<double>(m.vertex_count());
  const auto n = static_cast<double>(m.vertex_count());
  const auto nnz_vv = static_cast<double>(t.vertex_neighbours.size());
  const auto nnz_vf = static_cast<double>(t.vertex_faces.size());
  const auto nf = static_cast<double>(m.face_count());
  const double total =
      n * (4 * s + 4 + s + 4 + 6 * s) + nnz_vv * (4 + s) + nnz_vf * (4 + s) + nf * (12 + 6 * s);
  return total / n;
}

/// Seconds per step of the chemotaxis model (alpha = 13, noise 0.01) on mesh m.
template <class Real>
double time_per_step(const std::shared_ptr<const mesh::TriangleMesh>& m, const mesh::MeshTopology& topology,
                     KernelPath path, int steps) {
  SurfaceRdParams p;
  p.chemotaxis.alpha = 13.0;
  p.path = path;
  World world{Box{}, 0};
  auto& field = world.add_field(
      std::make_unique<SurfaceField<Real>>("surface", m, std::vector<std::string>{"fn", "fc"}));
  InitialState init;
  init.a = 1.0;
  init.b = 0.5;
  init.noise = 0.01;
  apply_initial_state(field, init, 1);
  auto ops = std::make_shared<const MeshOperators<Real>>(*m, topology);
  SurfaceRdSystem<Real> system(p, field, ops);
  const double dt = 0.5 / (p.max_diffusion() * ops->spectral_radius_bound());
  for (int k = 0; k < 2; ++k) system.run(world, StepContext{k, 0.0, dt});  // warm-up
  exec::synchronize();
  const auto t0 = Clock::now();
  for (int k = 0; k < steps; ++k) system.run(world, StepContext{k, 0.0, dt});
  exec::synchronize();
  return seconds_since(t0) / steps;
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

  std::printf("%-20s %9s %-9s %-7s %10s %14s %9s %11s\n", "mesh", "vertices", "kernels", "real", "us/step",
              "G vertex-st/s", "B/v-step", "of copy BW");
  for (const auto& [name, m] : meshes) {
    const auto topology = mesh::build_topology(*m);
    for (const KernelPath path :
         {KernelPath::baseline, KernelPath::fused, KernelPath::ring, KernelPath::ring_weights})
      for (const bool dbl : {false, true}) {
        const double t = dbl ? time_per_step<double>(m, topology, path, steps)
                             : time_per_step<float>(m, topology, path, steps);
        const double rate = static_cast<double>(m->vertex_count()) / t;
        const double bytes = bytes_per_vertex_step(*m, topology, dbl ? 8.0 : 4.0, path);
        std::printf("%-20s %9zu %-9s %-7s %10.1f %14.3f %9.0f %10.1f%%\n", name.c_str(), m->vertex_count(),
                    path == KernelPath::fused          ? "fused"
                    : path == KernelPath::ring         ? "ring"
                    : path == KernelPath::ring_weights ? "ring_w"
                                                       : "baseline",
                    dbl ? "double" : "float", 1e6 * t, rate / 1e9, bytes, 100.0 * rate * bytes / bandwidth);
      }
  }
  return 0;
}
