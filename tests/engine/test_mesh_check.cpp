// Mesh validation and repair (engine/mesh/mesh_check.hpp; issue 38 item 2): every defect of a mesh is
// listed with 0-based indices, skinny triangles are reported with their angles, pinched vertices are split
// by the repair, and the scenario's mesh table names the file and refuses or repairs as asked. The meshes
// are built here with the defect placed where the expected message says.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/exec/error.hpp"
#include "engine/io/scenario.hpp"
#include "engine/mesh/mesh_check.hpp"
#include "engine/mesh/scenario_mesh.hpp"
#include "engine/mesh/triangle_mesh.hpp"

using namespace tissue;
using namespace tissue::mesh;
namespace fs = std::filesystem;

namespace {

/// Two tetrahedra sharing vertex 0 only (a pinched, closed, outward-oriented genus-0 pair): 7 vertices.
TriangleMesh pinched_tetrahedra() {
  TriangleMesh m;
  m.x = {0, 1, 0, 0, -1, 0, 0};
  m.y = {0, 0, 1, 0, 0, -1, 0};
  m.z = {0, 0, 0, 1, 0, 0, -1};
  // tetrahedron (0, 1, 2, 3) and its mirror image (0, 4, 5, 6), faces counter-clockwise seen from outside
  m.faces = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3, 0, 4, 5, 0, 6, 4, 0, 5, 6, 4, 6, 5};
  return m;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

fs::path write_file(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("tissue_test_mesh_check_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

std::string obj_text(const TriangleMesh& m) {
  std::string t;
  for (std::size_t v = 0; v < m.vertex_count(); ++v)
    t += "v " + std::to_string(m.x[v]) + " " + std::to_string(m.y[v]) + " " + std::to_string(m.z[v]) + "\n";
  for (std::size_t f = 0; f < m.face_count(); ++f)
    t += "f " + std::to_string(m.corner(f, 0) + 1) + " " + std::to_string(m.corner(f, 1) + 1) + " " +
         std::to_string(m.corner(f, 2) + 1) + "\n";
  return t;
}

/// The mesh of a scenario table `[mesh] file = ...` plus `extra` keys, or the error it is refused with.
std::string scenario_mesh_error(const fs::path& file, const std::string& extra, TriangleMesh* out = nullptr) {
  const auto scenario = io::Scenario::from_string("[mesh]\nfile = \"" + file.string() + "\"\n" + extra,
                                                  (file.parent_path() / "check.toml").string());
  try {
    TriangleMesh m = read_scenario_mesh(scenario.root().table("mesh"), scenario.path(), 100.0);
    if (out) *out = m;
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("valid meshes have no defects, and their angles are measured", "[mesh]") {
  for (const auto& m : {icosphere(3, 1.0), rectangle_mesh(5, 4, 2.0, 1.0)}) {
    const MeshReport r = check_mesh(m, {});
    CHECK(r.ok());
    CHECK(r.warnings.empty());
    CHECK(r.pinched_vertices == 0);
  }
  // the rectangle's right triangles: 45 and 90 degrees for a square grid
  const MeshReport square = check_mesh(rectangle_mesh(5, 5, 1.0, 1.0), {});
  CHECK(square.min_angle_degrees == Approx(45.0).epsilon(1e-12));
  CHECK(square.max_angle_degrees == Approx(90.0).epsilon(1e-12));
  CHECK(square.boundary_edges == 16);
}

TEST_CASE("a latitude-longitude sphere warns of its needle triangles at the poles, with the angle",
          "[mesh]") {
  // 64 segments: a polar triangle's apex angle is 360/64 = 5.625 degrees
  const MeshReport r = check_mesh(uv_sphere(16, 64, 1.0), {});
  CHECK(r.ok());
  REQUIRE(r.warnings.size() == 1);
  CHECK_THAT(r.warnings[0],
             Catch::Contains("skinny triangles (an angle below 10.0 degrees); smallest angle 5."));
  // the polar triangles' apex: 2 asin(cos(theta / 2) sin(dphi / 2)) for the first ring at theta = pi / 16
  const double pi = std::acos(-1.0),
               apex = 2.0 * std::asin(std::cos(pi / 32.0) * std::sin(pi / 64.0)) * 180.0 / pi;
  CHECK(r.min_angle_degrees <= apex + 1e-9);
  CHECK(r.min_angle_degrees > 5.0);
  // a threshold below the smallest angle: nothing to report
  MeshRequirements lax;
  lax.skinny_degrees = 5.0;
  CHECK(check_mesh(uv_sphere(16, 64, 1.0), lax).warnings.empty());
}

TEST_CASE("every defect is listed at once, with 0-based indices", "[mesh]") {
  SECTION("a pinched vertex") {
    const MeshReport r = check_mesh(pinched_tetrahedra(), {});
    CHECK_FALSE(r.ok());
    CHECK(r.pinched_vertices == 1);
    CHECK_THAT(r.error_text(),
               Catch::Equals("non-manifold (pinched) vertices, whose faces form more than one fan: 0 "
                             "(2 fans)"));
  }
  SECTION(
      "unused vertices, a degenerate face, a non-manifold edge and an inconsistent orientation together") {
    TriangleMesh m = rectangle_mesh(3, 3, 1.0, 1.0);             // 9 vertices, 8 faces
    m.x.push_back(5.0), m.y.push_back(5.0), m.z.push_back(5.0);  // vertex 9: unused
    m.faces.insert(m.faces.end(), {0, 1, 1});                    // face 8: a repeated vertex
    m.faces.insert(m.faces.end(), {m.faces[0], m.faces[1], 9});  // face 9: a third face on face 0's first
                                                                 // edge, in face 0's direction
    const MeshReport r = check_mesh(m, {});
    const std::string text = r.error_text();
    INFO(text);
    CHECK_THAT(text, Catch::Contains("degenerate faces (a vertex repeated): face 8 (vertices 0, 1, 1)"));
    CHECK(text.find("vertices no face uses") == std::string::npos);  // face 9 uses vertex 9
    CHECK_THAT(text, Catch::Contains("edges traversed in the same direction by both faces"));
    CHECK(r.unreferenced_vertices == 0);
    m.faces.resize(m.faces.size() - 3);  // without face 9: vertex 9 is unused
    const std::string unused = check_mesh(m, {}).error_text();
    CHECK_THAT(unused, Catch::Contains("vertices no face uses: 9"));
  }
  SECTION("a face folded over its neighbour (an inverted triangle)") {
    TriangleMesh m;
    m.x = {0, 1, 1, 0.9};
    m.y = {0, 0, 1, 0.1};
    m.z = {0, 0, 0, 0};
    m.faces = {0, 1, 2, 0, 2, 3};  // consistently oriented, but vertex 3 lies on vertex 1's side of 0-2
    CHECK_THAT(check_mesh(m, {}).error_text(), Catch::Contains("faces folded onto each other") &&
                                                   Catch::Contains("faces 0, 1 across edge 0-2"));
  }
  SECTION("an open surface where a closed one is required, and a closed one oriented inward") {
    MeshRequirements closed;
    closed.closed = true;
    CHECK(check_mesh(rectangle_mesh(3, 3, 1.0, 1.0), {}).ok());
    CHECK_THAT(check_mesh(rectangle_mesh(3, 3, 1.0, 1.0), closed).error_text(),
               Catch::Contains("boundary edges (the model requires a closed surface): 0-1, 0-3") &&
                   Catch::Contains("(and 3 more)"));
    TriangleMesh inward = icosphere(1, 1.0);
    for (std::size_t f = 0; f < inward.face_count(); ++f)
      std::swap(inward.faces[3 * f + 1], inward.faces[3 * f + 2]);
    CHECK_THAT(check_mesh(inward, closed).error_text(), Catch::Contains("oriented inward"));
  }
}

TEST_CASE("the repair splits a pinched vertex into one per fan and drops unused vertices", "[mesh]") {
  TriangleMesh m = pinched_tetrahedra();
  m.x.insert(m.x.begin(), 9.0), m.y.insert(m.y.begin(), 9.0),
      m.z.insert(m.z.begin(), 9.0);  // unused vertex 0
  for (auto& v : m.faces) ++v;
  const auto done = repair_mesh(m);
  INFO(joined(done));
  REQUIRE(done.size() == 2);
  CHECK(done[0] == "dropped 1 vertices that no face uses (the others renumbered)");
  CHECK(done[1] == "split 1 pinched vertices (vertex 0 into 0, 7)");
  const MeshReport r = check_mesh(m, {});
  CHECK(r.ok());
  CHECK(m.vertex_count() == 8);
  CHECK(connected_components(build_topology(m)) == 2);
  // the copy sits where the pinched vertex was; each tetrahedron keeps its volume
  CHECK(m.x[7] == 0.0);
  CHECK(m.y[7] == 0.0);
  CHECK(m.z[7] == 0.0);
  one_ring(m, build_topology(m));  // every vertex now has one fan
  CHECK(repair_mesh(m).empty());   // nothing left to repair
}

TEST_CASE("the scenario's mesh table names the file, lists the defects, and repairs when asked", "[mesh]") {
  const fs::path file = write_file("pinched.obj", obj_text(pinched_tetrahedra()));
  const std::string refused = scenario_mesh_error(file, "");
  CHECK_THAT(refused,
             Catch::Contains("check.toml:2:8") && Catch::Contains(file.string()) &&
                 Catch::Contains("the mesh is refused (vertex and face indices from 0)") &&
                 Catch::Contains("pinched) vertices, whose faces form more than one fan: 0 (2 fans)") &&
                 Catch::Contains("repair = true splits pinched vertices"));
  TriangleMesh repaired;
  CHECK(scenario_mesh_error(file, "repair = true\n", &repaired) == "(accepted)");
  CHECK(repaired.vertex_count() == 8);
  // a closed surface required of an open one
  const fs::path sheet = write_file("sheet.obj", obj_text(rectangle_mesh(3, 3, 1.0, 1.0)));
  CHECK(scenario_mesh_error(sheet, "") == "(accepted)");
  CHECK_THAT(scenario_mesh_error(sheet, "closed = true\n"),
             Catch::Contains("boundary edges (the model requires a closed surface)"));
  CHECK_THAT(scenario_mesh_error(sheet, "skinny_angle = 90\n"), Catch::Contains("skinny_angle"));
}
