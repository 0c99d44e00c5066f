// VTK XML output: consistent appended-data offsets, atomic writes. (Readability by an independent
// reader, meshio, is checked in tests/scenarios.)
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "engine/io/vtk.hpp"

using namespace tissue;
namespace fs = std::filesystem;

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("tissue_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
}  // namespace

TEST_CASE("a .vtu point cloud has one appended block per array at the declared offsets", "[vtk]") {
  const auto dir = temp_dir("vtu");
  const std::vector<float> points{0, 0, 0, 1, 2, 3, 4, 5, 6};
  const std::vector<std::int64_t> ids{10, 11, 12};
  const std::vector<float> values{0.5f, 1.5f, 2.5f};
  io::write_vtu_points(dir / "p.vtu", points, {io::VtkArray::of("id", ids), io::VtkArray::of("v", values)});
  const std::string s = slurp(dir / "p.vtu");
  CHECK(s.find("NumberOfPoints=\"3\" NumberOfCells=\"3\"") != std::string::npos);
  const auto data_start = s.find("_", s.find("<AppendedData")) + 1;  // raw data follows the "_" marker
  std::regex offset_re("Name=\"(\\w+)\"[^>]*offset=\"(\\d+)\"");
  // the "v" array: 8-byte length header then 3 floats
  std::smatch m;
  std::string rest = s.substr(0, data_start);
  bool found_v = false;
  for (std::sregex_iterator it(rest.begin(), rest.end(), offset_re), end; it != end; ++it) {
    if ((*it)[1] != "v") continue;
    found_v = true;
    const auto off = data_start + std::stoull((*it)[2]);
    std::uint64_t bytes = 0;
    std::memcpy(&bytes, s.data() + off, 8);
    REQUIRE(bytes == 12);
    float v[3];
    std::memcpy(v, s.data() + off + 8, 12);
    CHECK(v[0] == 0.5f);
    CHECK(v[2] == 2.5f);
  }
  CHECK(found_v);
  for (const auto& entry : fs::directory_iterator(dir)) CHECK(entry.path().filename() == "p.vtu");  // no temporaries
  CHECK_THROWS_AS(io::write_vtu_points(dir / "bad.vtu", points, {io::VtkArray::of("short", std::vector<float>{1.0f})}),
                  std::invalid_argument);
  fs::remove_all(dir);
}

TEST_CASE("a .pvd series lists every snapshot in order", "[vtk]") {
  const auto dir = temp_dir("pvd");
  io::PvdSeries series(dir / "s.pvd");
  series.add(0.0, "a_0.vtu");
  series.add(2.5, "a_1.vtu");
  const std::string s = slurp(dir / "s.pvd");
  CHECK(s.find("timestep=\"0\" group=\"\" part=\"0\" file=\"a_0.vtu\"") != std::string::npos);
  CHECK(s.find("timestep=\"2.5\" group=\"\" part=\"0\" file=\"a_1.vtu\"") > s.find("a_0.vtu"));
  fs::remove_all(dir);
}
