// Initial fields of surface reaction-diffusion from files and expressions (issue 38, item 6): values loaded
// from .vtu (the project's own writer: inline base64; hand-written ASCII and appended raw), .ply (ASCII and
// binary little-endian) and .h5 (the project's checkpoint) files equal the written values per vertex
// exactly; an expression field equals the expression evaluated here at the vertices; a run started from a
// previous run's final .vtu or checkpoint continues it bit for bit; every input error is one InputError line
// naming the file, array or vertex.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/exec/error.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/mesh/surface_field.hpp"
#include "modules/builtin_modules.hpp"
#include "modules/surface_rd/surface_rd_model.hpp"

using namespace tissue;
namespace fs = std::filesystem;

namespace {

/// A fresh folder for one test's files.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("tissue_surface_initial_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// Builds a scenario as if read from dir/test.toml (relative file names resolve against dir).
std::unique_ptr<Simulation> build(const fs::path& dir, const std::string& text) {
  return build_simulation(io::Scenario::from_string(text, (dir / "test.toml").string()));
}

/// The surface field's values (species-major), in double.
std::vector<double> values_of(Simulation& sim) {
  if (auto* f = dynamic_cast<SurfaceField<float>*>(sim.world->fields.front().get())) {
    f->download();
    return {f->host().begin(), f->host().end()};
  }
  auto& d = dynamic_cast<SurfaceField<double>&>(*sim.world->fields.front());
  d.download();
  return d.host();
}

const mesh::TriangleMesh& mesh_of(Simulation& sim) {
  if (auto* f = dynamic_cast<SurfaceField<float>*>(sim.world->fields.front().get())) return f->mesh();
  return dynamic_cast<SurfaceField<double>&>(*sim.world->fields.front()).mesh();
}

/// A chemotaxis run on an icosphere of 162 vertices (noise from the seed).
std::string scenario(const std::string& precision, const std::string& initial) {
  return "[simulation]\nmodel = \"surface_rd\"\nsteps = 100\nprecision = \"" + precision +
         "\"\n[mesh]\ngenerate = \"icosphere\"\nsubdivisions = 2\n[chemotaxis]\nalpha = 13.0\n[initial]\n" +
         initial;
}

/// Per-vertex test values of species s: irregular, exactly representable in float.
double value(std::size_t s, std::size_t v) {
  return static_cast<double>(static_cast<float>(0.5 + 0.001 * static_cast<double>((v * 37 + s * 11) % 101)));
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string number(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

/// A VTK UnstructuredGrid of the mesh's points (no cells) with arrays fn and fc = value(0/1, v): ASCII, or
/// appended raw with UInt32 headers. `vertices` < mesh size writes only the first ones.
void write_vtu(const fs::path& path, const mesh::TriangleMesh& m, bool ascii, std::size_t vertices,
               double poison = 0.0) {
  std::string xml =
      "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"0.1\" "
      "byte_order=\"LittleEndian\">\n<UnstructuredGrid>\n<Piece NumberOfPoints=\"" +
      std::to_string(vertices) + "\" NumberOfCells=\"0\">\n<PointData>\n";
  std::string raw;
  auto append = [&raw](const std::vector<double>& v) {
    const auto bytes = static_cast<std::uint32_t>(v.size() * sizeof(double));
    const std::size_t offset = raw.size();
    raw.append(reinterpret_cast<const char*>(&bytes), sizeof bytes);
    raw.append(reinterpret_cast<const char*>(v.data()), bytes);
    return offset;
  };
  auto array = [&](const std::string& name, int components, const std::vector<double>& v) {
    std::string tag = "<DataArray type=\"Float64\" Name=\"" + name + "\" NumberOfComponents=\"" +
                      std::to_string(components) + "\" format=\"";
    if (ascii) {
      tag += "ascii\">";
      for (double x : v) tag += number(x) + " ";
      return tag + "</DataArray>\n";
    }
    return tag + "appended\" offset=\"" + std::to_string(append(v)) + "\"/>\n";
  };
  for (std::size_t s = 0; s < 2; ++s) {
    std::vector<double> v(vertices);
    for (std::size_t i = 0; i < vertices; ++i) v[i] = value(s, i);
    if (s == 1 && vertices > 5) v[5] += poison;
    xml += array(s == 0 ? "fn" : "fc", 1, v);
  }
  xml += "</PointData>\n<Points>\n";
  std::vector<double> p;
  for (std::size_t i = 0; i < vertices; ++i) p.insert(p.end(), {m.x[i], m.y[i], m.z[i]});
  xml += array("Points", 3, p);
  xml +=
      "</Points>\n<Cells>\n<DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\"></DataArray>\n"
      "<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\"></DataArray>\n"
      "<DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\"></DataArray>\n</Cells>\n</Piece>\n"
      "</UnstructuredGrid>\n";
  if (!ascii) xml += "<AppendedData encoding=\"raw\">\n_" + raw + "\n</AppendedData>\n";
  write_text(path, xml + "</VTKFile>\n");
}

/// A PLY file of the mesh's vertices in `order` with double properties x y z u w (u = value(0, v),
/// w = value(1, v)) and a uchar property, ASCII or binary little-endian, and one triangle.
void write_ply(const fs::path& path, const mesh::TriangleMesh& m, bool ascii,
               const std::vector<std::size_t>& order) {
  std::string text =
      std::string("ply\nformat ") + (ascii ? "ascii" : "binary_little_endian") +
      " 1.0\ncomment test\nelement vertex " + std::to_string(order.size()) +
      "\nproperty double x\nproperty double y\nproperty double z\nproperty uchar flag\n"
      "property float u\nproperty double w\nelement face 1\nproperty list uchar int vertex_indices\n"
      "end_header\n";
  for (std::size_t v : order) {
    const double xyz[3] = {m.x[v], m.y[v], m.z[v]};
    const auto u = static_cast<float>(value(0, v));
    const double w = value(1, v);
    const std::uint8_t flag = 7;
    if (ascii) {
      text += number(xyz[0]) + " " + number(xyz[1]) + " " + number(xyz[2]) + " 7 " + number(u) + " " +
              number(w) + "\n";
    } else {
      text.append(reinterpret_cast<const char*>(xyz), sizeof xyz);
      text.append(reinterpret_cast<const char*>(&flag), 1);
      text.append(reinterpret_cast<const char*>(&u), sizeof u);
      text.append(reinterpret_cast<const char*>(&w), sizeof w);
    }
  }
  if (ascii)
    text += "3 0 1 2\n";
  else {
    const std::uint8_t three = 3;
    const std::int32_t f[3] = {0, 1, 2};
    text.append(reinterpret_cast<const char*>(&three), 1);
    text.append(reinterpret_cast<const char*>(f), sizeof f);
  }
  write_text(path, text);
}

void check_values(Simulation& sim) {
  const auto got = values_of(sim);
  const std::size_t n = got.size() / 2;
  for (std::size_t s = 0; s < 2; ++s)
    for (std::size_t v = 0; v < n; ++v) {
      INFO("species " << s << " vertex " << v);
      REQUIRE(got[s * n + v] == value(s, v));
    }
}

}  // namespace

TEST_CASE("surface initial fields load from the project's .vtu output and checkpoint exactly",
          "[surface_rd][initial]") {
  for (const std::string precision : {"float", "double"}) {
    INFO(precision);
    const fs::path dir = scratch("own_" + precision);
    auto first = build(dir, scenario(precision, "noise = 0.05\n"));
    first->advance(10);
    const auto state = values_of(*first);
    // the project's writers: the snapshot .vtu and the checkpoint
    auto* field = first->world->fields.front().get();
    if (precision == "float")
      surface_rd::make_surface_writer(dir, dynamic_cast<SurfaceField<float>&>(*field))->write(*first->world);
    else
      surface_rd::make_surface_writer(dir, dynamic_cast<SurfaceField<double>&>(*field))->write(*first->world);
    io::write_checkpoint(dir / "last.h5", *first->world, io::CheckpointHeader{}, {});
    const std::string vtu = "surface_000000010.vtu";
    REQUIRE(fs::exists(dir / vtu));
    // a float run's .vtu holds Float32 arrays, a double run's Float64: both exact, like the checkpoint
    for (const std::string& file : {vtu, std::string("last.h5")}) {
      INFO(file);
      auto second = build(dir, scenario(precision, "type = \"file\"\nfile = \"" + file + "\"\n"));
      CHECK(values_of(*second) == state);  // bit for bit
      // the continued run equals the uninterrupted one (the kinetics do not depend on time or the RNG) to
      // the rounding of one update: an initial field carries no compensations of the compensated summation
      // (a restart from the checkpoint does, and is bit for bit: the restart tests)
      auto again = build(dir, scenario(precision, "noise = 0.05\n"));
      again->advance(25);
      second->advance(15);
      const auto continued = values_of(*second), straight = values_of(*again);
      REQUIRE(continued.size() == straight.size());
      const double ulps = precision == "float" ? 4.0 * 1.2e-7 : 4.0 * 2.3e-16;
      double worst = 0.0;
      for (std::size_t k = 0; k < continued.size(); ++k)
        worst = std::max(worst, std::abs(continued[k] - straight[k]) / std::max(1.0, std::abs(straight[k])));
      CHECK(worst <= ulps);
    }
    // datasets named per species: the species swapped
    auto swapped =
        build(dir, scenario(precision,
                            "type = \"file\"\nfile = \"last.h5\"\n"
                            "arrays = { fn = \"/fields/surface/fc\", fc = \"/fields/surface/fn\" }\n"));
    const auto got = values_of(*swapped);
    const std::size_t n = got.size() / 2;
    for (std::size_t v = 0; v < n; ++v) {
      REQUIRE(got[v] == state[n + v]);
      REQUIRE(got[n + v] == state[v]);
    }
  }
}

TEST_CASE("surface initial fields load from ASCII and appended-raw .vtu and from .ply",
          "[surface_rd][initial]") {
  const fs::path dir = scratch("formats");
  for (const std::string precision : {"float", "double"}) {
    auto probe = build(dir, scenario(precision, ""));
    const auto& m = mesh_of(*probe);
    const std::size_t n = m.vertex_count();
    std::vector<std::size_t> identity(n);
    for (std::size_t v = 0; v < n; ++v) identity[v] = v;
    write_vtu(dir / "ascii.vtu", m, true, n);
    write_vtu(dir / "raw.vtu", m, false, n);
    write_ply(dir / "ascii.ply", m, true, identity);
    write_ply(dir / "binary.ply", m, false, identity);
    for (const char* file : {"ascii.vtu", "raw.vtu"}) {
      INFO(precision << " " << file);
      auto sim = build(dir, scenario(precision, "type = \"file\"\nfile = \"" + std::string(file) + "\"\n"));
      check_values(*sim);
    }
    for (const char* file : {"ascii.ply", "binary.ply"}) {
      INFO(precision << " " << file);
      auto sim = build(dir, scenario(precision, "type = \"file\"\nfile = \"" + std::string(file) +
                                                    "\"\narrays = { fn = \"u\", fc = \"w\" }\n"));
      check_values(*sim);
    }
  }
}

TEST_CASE("a surface initial field from expressions equals them at the vertices", "[surface_rd][initial]") {
  const fs::path dir = scratch("expression");
  auto sim = build(dir, scenario("double",
                                 "type = \"expression\"\nfn = \"1 + 0.1*sin(3*x)\"\n"
                                 "fc = \"0.5 + 0.01*r*cos(theta) + 0.02*(phi > 0 ? 1 : 0) + 0*y*z\"\n"));
  const auto got = values_of(*sim);
  const auto& m = mesh_of(*sim);
  const std::size_t n = m.vertex_count();
  for (std::size_t v = 0; v < n; ++v) {
    const double r = std::sqrt(m.x[v] * m.x[v] + m.y[v] * m.y[v] + m.z[v] * m.z[v]);
    const double theta = std::acos(m.z[v] / r), phi = std::atan2(m.y[v], m.x[v]);
    INFO("vertex " << v);
    CHECK(got[v] == 1 + 0.1 * std::sin(3 * m.x[v]));
    CHECK(got[n + v] == Approx(0.5 + 0.01 * r * std::cos(theta) + 0.02 * (phi > 0 ? 1 : 0)).epsilon(1e-15));
  }
  // the reaction model's species a and b take expressions under their names
  auto reaction =
      build(dir,
            "[simulation]\nmodel = \"surface_rd\"\n[mesh]\ngenerate = \"icosphere\"\n"
            "subdivisions = 1\n[surface_rd]\nmodel = \"reaction\"\n[reaction]\npreset = \"mu\"\n"
            "[initial]\ntype = \"expression\"\na = \"1 - 0.5*(z > 0.5)\"\nb = \"0.25*(z > 0.5)\"\n");
  const auto ab = values_of(*reaction);
  const auto& mr = mesh_of(*reaction);
  for (std::size_t v = 0; v < mr.vertex_count(); ++v) {
    CHECK(ab[v] == (mr.z[v] > 0.5 ? 0.5f : 1.0f));
    CHECK(ab[mr.vertex_count() + v] == (mr.z[v] > 0.5 ? 0.25f : 0.0f));
  }
}

TEST_CASE("surface initial fields refuse bad files, arrays, values and expressions in one line",
          "[surface_rd][initial]") {
  const fs::path dir = scratch("errors");
  auto probe = build(dir, scenario("float", ""));
  const auto& m = mesh_of(*probe);
  const std::size_t n = m.vertex_count();
  write_vtu(dir / "good.vtu", m, true, n);
  write_vtu(dir / "short.vtu", m, true, n - 2);
  write_vtu(dir / "nan.vtu", m, true, n, NAN);
  write_vtu(dir / "negative.vtu", m, true, n, -10.0);
  std::vector<std::size_t> swapped(n);
  for (std::size_t v = 0; v < n; ++v) swapped[v] = v;
  std::swap(swapped[3], swapped[4]);
  write_ply(dir / "reordered.ply", m, true, swapped);
  fs::create_directories(dir / "folder.vtu");
  write_text(dir / "garbage.h5", "not hdf5");
  write_text(dir / "field.txt", "1 2 3");
  const auto file = [](const std::string& f, const std::string& more = "") {
    return "type = \"file\"\nfile = \"" + f + "\"\n" + more;
  };
  const auto refuses = [&](const std::string& initial, const std::string& what) {
    INFO(initial);
    try {
      build(dir, scenario("float", initial));
      FAIL("accepted");
    } catch (const InputError& e) {
      const std::string msg = e.what();
      CHECK(msg.find('\n') == std::string::npos);
      CHECK_THAT(msg, Catch::Contains(what));
    }
  };
  refuses(file("none.vtu"), "initial.file: " + (dir / "none.vtu").string() + ": file not found");
  refuses(file("folder.vtu"), "folder.vtu: is a directory, not a file");
  refuses(file("none.h5"), "none.h5: file not found");
  refuses(file("garbage.h5"), "garbage.h5: not an HDF5 file");
  refuses(file("field.txt"), "field.txt: unknown format (extension \".txt\")");
  refuses(file("short.vtu"),
          "short.vtu: " + std::to_string(n - 2) + " vertices, the mesh has " + std::to_string(n));
  refuses(file("good.vtu", "arrays = { fn = \"density\" }\n"),
          "initial.arrays: " + (dir / "good.vtu").string() +
              ": no scalar point array \"density\" for species fn");
  refuses(file("good.vtu", "arrays = { fx = \"fn\" }\n"),
          "initial.arrays.fx: not a species of the model (fn, fc)");
  refuses(file("nan.vtu"), "array \"fc\" (species fc): vertex 5 has the value NaN, not finite");
  refuses(file("negative.vtu"), "array \"fc\" (species fc): vertex 5 has the value -9.");
  refuses(file("negative.vtu"), "the model's densities must be >= 0");
  refuses(file("reordered.ply", "arrays = { fn = \"u\", fc = \"w\" }\n"), "reordered.ply: vertex 3 lies at");
  refuses(file("good.vtu", "point_tolerance = -1\n"), "initial.point_tolerance");
  refuses(file("good.vtu", "patch_radius = 0.5\n"),
          "initial.patch_radius: applies to type = \"uniform\" only");
  refuses("type = \"file\"\n", "initial.type: type = \"file\" needs a file");
  refuses("file = \"good.vtu\"\n", "initial.file: applies to type = \"file\" only");
  refuses(file("last.h5"), "last.h5: file not found");
  refuses("type = \"expression\"\nfn = \"1\"\n", "needs an expression for species fc");
  refuses("type = \"expression\"\nfn = \"1 + \"\nfc = \"1\"\n", "initial.fn: ");
  refuses("type = \"expression\"\nfn = \"1 + q\"\nfc = \"1\"\n", "unknown name \"q\" at column 5");
  refuses("type = \"expression\"\nfn = \"x^2\"\nfc = \"1\"\n", "token \"^\" at column 2");
  refuses("type = \"expression\"\nfn = \"log(x - 10)\"\nfc = \"1\"\n",
          "the expression fn (species fn): vertex 0 has the value NaN, not finite");
  refuses("type = \"expression\"\nfn = \"x\"\nfc = \"1\"\n", "the model's densities must be >= 0");
  // mismatching positions pass with the check off (the user's decision)
  CHECK_NOTHROW(build(dir, scenario("float", file("reordered.ply",
                                                  "arrays = { fn = \"u\", fc = \"w\" }\n"
                                                  "check_points = false\n"))));
}

TEST_CASE("the membrane field takes [membrane.rd.initial] expressions and files alike",
          "[surface_rd][initial]") {
  const fs::path dir = scratch("membrane");
  std::ifstream in(std::string(TISSUE_SOURCE_DIR) + "/tests/scenarios/placodes_short.toml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string old = "[membrane.rd.initial]\na = 1.0\nb = 0.9\nnoise = 0.2\n";
  const auto at = text.find(old);
  REQUIRE(at != std::string::npos);
  const auto with = [&](const std::string& initial) {
    std::string t = text;
    t.replace(at, old.size(), "[membrane.rd.initial]\n" + initial);
    return t;
  };
  auto sim = build_simulation(
      io::Scenario::from_string(with("type = \"expression\"\na = \"1 + 0.1*x\"\nb = \"0.5 + 0.01*z\"\n"),
                                std::string(TISSUE_SOURCE_DIR) + "/tests/scenarios/placodes_short.toml"));
  SurfaceField<float>* membrane = nullptr;
  for (auto& f : sim->world->fields)
    if (f->name() == "membrane") membrane = dynamic_cast<SurfaceField<float>*>(f.get());
  REQUIRE(membrane != nullptr);
  membrane->download();
  const auto& m = membrane->mesh();
  for (std::size_t v = 0; v < m.vertex_count(); ++v) {
    REQUIRE(membrane->host_at(0, v) == static_cast<float>(1 + 0.1 * m.x[v]));
    REQUIRE(membrane->host_at(1, v) == static_cast<float>(0.5 + 0.01 * m.z[v]));
  }
  CHECK_THROWS_WITH(
      build_simulation(
          io::Scenario::from_string(with("type = \"file\"\nfile = \"none.h5\"\n"),
                                    std::string(TISSUE_SOURCE_DIR) + "/tests/scenarios/placodes_short.toml")),
      Catch::Contains("membrane.rd.initial.file: ") && Catch::Contains("none.h5: file not found"));
}
