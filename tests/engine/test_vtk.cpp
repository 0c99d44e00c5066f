// VTK XML output: consistent appended-data offsets, atomic writes. (Readability by an independent
// reader, meshio, is checked in tests/scenarios.)
#include <unistd.h>
#include <catch2/catch.hpp>

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

namespace {
/// Independent RFC 4648 decoder.
std::vector<unsigned char> from_base64(const std::string& text) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<unsigned char> out;
  std::uint32_t buffer = 0;
  int bits = 0;
  for (char ch : text) {
    if (ch == '=') break;
    buffer = (buffer << 6) | static_cast<std::uint32_t>(alphabet.find(ch));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<unsigned char>((buffer >> bits) & 0xFF));
    }
  }
  return out;
}
}  // namespace

TEST_CASE("a .vtu point cloud holds every array as a base64 byte count followed by its bytes", "[vtk]") {
  const auto dir = temp_dir("vtu");
  const std::vector<float> points{0, 0, 0, 1, 2, 3, 4, 5, 6};
  const std::vector<std::int64_t> ids{10, 11, 12};
  const std::vector<float> values{0.5f, 1.5f, 2.5f};
  const std::vector<std::uint8_t> flags{1, 0, 1};
  io::write_vtu_points(
      dir / "p.vtu", points,
      {io::VtkArray::of("id", ids), io::VtkArray::of("v", values), io::VtkArray::of("f", flags)});
  const std::string s = slurp(dir / "p.vtu");
  CHECK(s.find("NumberOfPoints=\"3\" NumberOfCells=\"3\"") != std::string::npos);
  std::regex array_re("Name=\"v\" format=\"binary\">([A-Za-z0-9+/=]+)</DataArray>");
  std::smatch m;
  REQUIRE(std::regex_search(s, m, array_re));
  const std::string text = m[1];
  // the 8-byte header is encoded on its own: 12 characters
  const auto header = from_base64(text.substr(0, 12));
  REQUIRE(header.size() == 8);
  std::uint64_t bytes = 0;
  std::memcpy(&bytes, header.data(), 8);
  REQUIRE(bytes == 12);
  const auto data = from_base64(text.substr(12));
  REQUIRE(data.size() == 12);
  float v[3];
  std::memcpy(v, data.data(), 12);
  CHECK(v[0] == 0.5f);
  CHECK(v[1] == 1.5f);
  CHECK(v[2] == 2.5f);
  for (const auto& entry : fs::directory_iterator(dir))
    CHECK(entry.path().filename() == "p.vtu");  // no temporaries
  CHECK_THROWS_AS(
      io::write_vtu_points(dir / "bad.vtu", points, {io::VtkArray::of("short", std::vector<float>{1.0f})}),
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
