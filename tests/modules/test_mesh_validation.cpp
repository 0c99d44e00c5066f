// One mesh validation for every module that reads a mesh (issue "Hostile input", item 12): a bowtie vertex
// (two fans of faces meeting at one vertex) is refused alike by the mesh entity set (surface RD, conformal
// Willmore) and by the membrane entity set, with the scenario's place; the conformal flow refuses a mesh in
// several pieces as invalid input instead of failing later in its linear solvers.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/exec/error.hpp"
#include "engine/io/scenario.hpp"
#include "modules/builtin_modules.hpp"

using namespace tissue;
namespace fs = std::filesystem;

namespace {

fs::path write_mesh(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / "tissue_test_mesh_validation";
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

std::string error_of(const std::string& scenario) {
  try {
    build_simulation(io::Scenario::from_string(scenario, "mesh_validation.toml"));
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

/// The three ways a scenario brings in a mesh file.
std::string surface(const fs::path& file) {
  return "[simulation]\nentities = [\"mesh\"]\nmodules = [\"surface_rd\"]\n[mesh]\nfile = \"" +
         file.string() + "\"\n";
}
std::string conformal(const fs::path& file) {
  return "[simulation]\nentities = [\"mesh\"]\nmodules = [\"conformal_willmore\"]\n[mesh]\nfile = \"" +
         file.string() + "\"\n";
}
std::string membrane(const fs::path& file) {
  return "[simulation]\nentities = [\"membrane\", \"tissue\"]\nmodules = [\"sem\"]\n[membrane]\nfile = \"" +
         file.string() + "\"\n[initial]\ncells_x = 4\ncells_y = 4\n";
}

}  // namespace

TEST_CASE("a bowtie vertex is refused by every module that reads a mesh, at the scenario's mesh table",
          "[mesh][hostile]") {
  // two triangles that share only vertex 1
  const auto bowtie =
      write_mesh("bowtie.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv -1 0 0\nv 0 -1 0\nf 1 2 3\nf 1 4 5\n");
  for (const auto& [scenario, table] :
       {std::pair{surface(bowtie), "mesh"}, std::pair{conformal(bowtie), "mesh"},
        std::pair{membrane(bowtie), "membrane"}}) {
    const std::string what = error_of(scenario);
    INFO(scenario);
    CHECK_THAT(what,
               Catch::Contains("mesh_validation.toml:") && Catch::Contains(table) &&
                   Catch::Contains("bowtie.obj: the mesh is refused (vertex and face indices from 0)") &&
                   Catch::Contains("non-manifold (pinched) vertices, whose faces form more than one fan: 0 "
                                   "(2 fans)") &&
                   Catch::Contains("repair = true splits pinched vertices"));
  }
}

TEST_CASE("the conformal flow refuses a mesh in two pieces as invalid input", "[mesh][hostile]") {
  // two disjoint tetrahedra, each closed and outward oriented
  std::string text;
  for (int piece = 0; piece < 2; ++piece) {
    const double x = 3.0 * piece;
    text += "v " + std::to_string(x) + " 0 0\nv " + std::to_string(x + 1) + " 0 0\nv " + std::to_string(x) +
            " 1 0\nv " + std::to_string(x) + " 0 1\n";
  }
  for (int piece = 0; piece < 2; ++piece) {
    const int o = 4 * piece;
    const auto f = [&](int a, int b, int c) {
      return "f " + std::to_string(o + a) + " " + std::to_string(o + b) + " " + std::to_string(o + c) + "\n";
    };
    text += f(1, 3, 2) + f(1, 2, 4) + f(1, 4, 3) + f(2, 3, 4);
  }
  const auto pieces = write_mesh("two_pieces.obj", text);
  CHECK_THAT(error_of(conformal(pieces)), Catch::Contains("mesh_validation.toml:") &&
                                              Catch::Contains("needs a connected surface") &&
                                              Catch::Contains("2 separate pieces"));
  // one piece alone is a valid surface for it
  std::string one = text.substr(0, text.find("v 3"));
  const auto tetrahedron = write_mesh("tetrahedron.obj", one + "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n");
  CHECK(error_of(conformal(tetrahedron)) == "(accepted)");
}

TEST_CASE("surface RD reports the mesh's defects before any other error of its scenario", "[mesh]") {
  // two tetrahedra sharing only their vertex 0
  const fs::path file =
      write_mesh("pinched_rd.obj",
                 "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nv -1 0 0\nv 0 -1 0\nv 0 0 -1\n"
                 "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\nf 1 5 6\nf 1 7 5\nf 1 6 7\nf 5 7 6\n");
  // dt far above the explicit stability bound: the mesh is what the user must hear of first
  const std::string scenario =
      "[simulation]\nentities = [\"mesh\"]\nmodules = [\"surface_rd\"]\ndt = 1000.0\n"
      "[mesh]\nfile = \"" +
      file.string() + "\"\n";
  std::string what = "(accepted)";
  try {
    build_simulation(io::Scenario::from_string(scenario, (file.parent_path() / "rd.toml").string()));
  } catch (const InputError& e) {
    what = e.what();
  }
  CHECK_THAT(what, Catch::Contains("pinched") && Catch::Contains(file.string()));
  // repaired, the same scenario fails on its dt instead
  const std::string repaired = scenario + "repair = true\n";
  try {
    build_simulation(io::Scenario::from_string(repaired, (file.parent_path() / "rd.toml").string()));
    what = "(accepted)";
  } catch (const InputError& e) {
    what = e.what();
  }
  CHECK_THAT(what, !Catch::Contains("pinched"));
  CHECK(what != "(accepted)");
}
