#include "engine/mesh/scenario_mesh.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"
#include "engine/mesh/mesh_check.hpp"

namespace tissue::mesh {

namespace fs = std::filesystem;

double mean_edge_length(const TriangleMesh& m, const MeshTopology& t) {
  double sum = 0.0;
  for (std::size_t v = 0; v < m.vertex_count(); ++v)
    for (auto k = static_cast<std::size_t>(t.vertex_offsets[v]);
         k < static_cast<std::size_t>(t.vertex_offsets[v + 1]); ++k) {
      const auto w = static_cast<std::size_t>(t.vertex_neighbours[k]);
      if (w < v) continue;
      sum += std::sqrt((m.x[w] - m.x[v]) * (m.x[w] - m.x[v]) + (m.y[w] - m.y[v]) * (m.y[w] - m.y[v]) +
                       (m.z[w] - m.z[v]) * (m.z[w] - m.z[v]));
    }
  return sum / static_cast<double>(t.edges);
}

TriangleMesh read_scenario_mesh(const io::ScenarioTable& t, const std::string& scenario_path,
                                double bytes_per_vertex) {
  const bool has_file = t.has("file");
  const std::string generate =
      t.string("generate", has_file ? "" : "rectangle", {"", "rectangle", "icosphere", "uv_sphere"});
  if (has_file && !generate.empty()) t.fail("generate", "give either mesh.file or mesh.generate, not both");
  // what the mesh must be, and whether to repair it, read before the mesh: a bad value is reported first
  MeshRequirements requirements;
  requirements.closed = t.boolean("closed", false);
  requirements.skinny_degrees = t.number("skinny_angle", 10.0, io::Range::closed(0.0, 60.0));
  const bool repair = t.boolean("repair", false);
  TriangleMesh m;
  std::string source = "the generated mesh";
  std::vector<std::string> warnings;
  if (has_file) {
    fs::path file = t.string("file", "");
    if (file.is_relative()) file = fs::path(scenario_path).parent_path() / file;
    source = file.string();
    try {
      m = read_obj(file, &warnings, false);  // checked below, after the repair
    } catch (const InputError& e) {
      t.fail("file", e.what());  // the table's own name: mesh.file, membrane.file
    }
    // the file's hash goes into checkpoints: a restart refuses a mesh that changed since
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    t.record_input_file(fs::absolute(file).lexically_normal(), bytes);
  } else {
    // the size is checked before anything is generated
    const auto check_size = [&](const char* key, double vertices) {
      const double need = vertices * bytes_per_vertex;
      if (vertices > 1e9 || need > static_cast<double>(exec::available_memory_bytes())) {
        std::ostringstream msg;
        msg << "a generated mesh of " << vertices << " vertices needs about " << need / 1e9
            << " GB, more than available (or over 10^9 vertices)";
        t.fail(key, msg.str());
      }
    };
    if (generate == "rectangle") {
      const int nx = static_cast<int>(t.integer("nx", 140, io::Range::closed(2, 100000)));
      const int ny = static_cast<int>(t.integer("ny", 140, io::Range::closed(2, 100000)));
      check_size("nx", static_cast<double>(nx) * ny);
      m = rectangle_mesh(nx, ny, t.number("lx", 1.0, io::Range::positive()),
                         t.number("ly", 1.0, io::Range::positive()));
    } else if (generate == "icosphere") {
      const int s = static_cast<int>(t.integer("subdivisions", 5, io::Range::closed(0, 10)));
      check_size("subdivisions", 10.0 * std::pow(4.0, s) + 2.0);
      m = icosphere(s, t.number("radius", 1.0, io::Range::positive()));
    } else {
      const int rings = static_cast<int>(t.integer("rings", 64, io::Range::closed(2, 100000)));
      const int segments = static_cast<int>(t.integer("segments", 128, io::Range::closed(3, 100000)));
      check_size("rings", static_cast<double>(rings - 1) * segments + 2.0);
      m = uv_sphere(rings, segments, t.number("radius", 1.0, io::Range::positive()));
    }
  }
  const double scale = t.number("scale", 1.0, io::Range::positive());
  for (std::size_t v = 0; v < m.vertex_count(); ++v) {
    m.x[v] *= scale;
    m.y[v] *= scale;
    m.z[v] *= scale;
  }
  if (repair)
    for (const auto& done : repair_mesh(m))
      warnings.push_back(source + ": repaired (repair = true): " + done);
  try {
    require_valid_mesh(m, source, requirements, &warnings);
  } catch (const InputError& e) {
    std::string hint;
    const MeshReport report = check_mesh(m, requirements);
    if (!repair && (report.pinched_vertices > 0 || report.unreferenced_vertices > 0))
      hint = " (repair = true splits pinched vertices and drops unused ones)";
    t.fail(has_file ? "file" : "generate", e.what() + hint);
  }
  for (const auto& w : warnings) std::fprintf(stderr, "tissue: warning: %s\n", w.c_str());
  return m;
}

std::shared_ptr<DeviceMesh> read_scenario_device_mesh(const io::ScenarioTable& table,
                                                      const std::string& scenario_path,
                                                      double bytes_per_vertex, const std::string& source) {
  auto mesh = std::make_shared<TriangleMesh>(read_scenario_mesh(table, scenario_path, bytes_per_vertex));
  std::shared_ptr<DeviceMesh> device_mesh;
  try {
    device_mesh = std::make_shared<DeviceMesh>(mesh, source);
    device_mesh->require_one_ring();  // every mesh is checked alike: one fan of faces around each vertex
  } catch (const InputError& e) {
    table.fail("", e.what());
  }
  return device_mesh;
}

}  // namespace tissue::mesh
