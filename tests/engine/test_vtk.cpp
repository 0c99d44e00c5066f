// VTK XML output: consistent appended-data offsets, atomic writes. (Readability by an independent
// reader, meshio, is checked in tests/scenarios.)
#include <unistd.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/io/background_writer.hpp"
#include "engine/io/vtk.hpp"
#include "tests/vtk_read.hpp"

using namespace tissue;
namespace fs = std::filesystem;

namespace {
using test::from_base64;
using test::slurp;
fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("tissue_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
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

TEST_CASE("a background writer runs its jobs in order, bounds those pending and reports a failure once",
          "[io]") {
  SECTION("order") {
    std::vector<int> done;  // touched by the worker only until wait() returns
    {
      io::BackgroundWriter writer(2);
      for (int k = 0; k < 20; ++k) writer.submit([&done, k] { done.push_back(k); });
      writer.wait();
      REQUIRE(done.size() == 20);
      for (int k = 0; k < 20; ++k) CHECK(done[static_cast<std::size_t>(k)] == k);
      writer.submit([&done] { done.push_back(20); });
    }  // the destructor waits for the last one
    CHECK(done.size() == 21);
  }
  SECTION("at most max_pending jobs: submit() waits for room") {
    io::BackgroundWriter writer(1);
    std::atomic<bool> first_done{false};
    writer.submit([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      first_done = true;
    });
    writer.submit([] {});  // returns once the first has run: it held the only place
    CHECK(first_done);
    writer.wait();
  }
  SECTION("a failed job: its error comes once, the jobs queued behind it are dropped") {
    io::BackgroundWriter writer(4);
    std::atomic<int> ran{0};
    std::atomic<bool> release{false};
    writer.submit([&] {
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      throw std::runtime_error("cannot write x.vtu");
    });
    writer.submit([&] { ++ran; });  // queued behind the failing one
    release = true;
    CHECK_THROWS_WITH(writer.wait(), "cannot write x.vtu");
    CHECK(ran == 0);
    writer.wait();  // reported once
    writer.submit([&] { ++ran; });
    writer.wait();
    CHECK(ran == 1);
  }
  SECTION("a failure is also reported by the next submit(), which then queues nothing") {
    io::BackgroundWriter writer(1);  // the second submit waits for the first job to end: deterministic
    writer.submit([] { throw std::runtime_error("disk full"); });
    std::atomic<int> ran{0};
    CHECK_THROWS_WITH(writer.submit([&] { ++ran; }), "disk full");
    writer.wait();
    CHECK(ran == 0);
  }
}

TEST_CASE("a series entry appended before its file is written is dropped on restore when the file is missing",
          "[io]") {
  const fs::path dir = temp_dir("pvd_missing");
  io::PvdSeries s(dir / "cells.pvd");
  std::ofstream(dir / "cells_0.vtu") << "x";
  s.append(0.0, "cells_0.vtu");
  s.append(1.0, "cells_1.vtu");           // queued, never written
  CHECK(!fs::exists(dir / "cells.pvd"));  // append() writes no index
  const std::string xml = s.index_xml();
  CHECK(xml.find("cells_1.vtu") != std::string::npos);
  const auto dropped = s.drop_missing();
  REQUIRE(dropped.size() == 1);
  CHECK(dropped[0] == "cells_1.vtu");
  REQUIRE(s.entries().size() == 1);
  CHECK(s.entries()[0].second == "cells_0.vtu");
  fs::remove_all(dir);
}

TEST_CASE("a .pvtu names its pieces and declares their arrays", "[vtk]") {
  const auto dir = temp_dir("pvtu");
  const std::vector<std::int64_t> ids{10, 11};
  const std::vector<float> v{0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
  io::write_pvtu_points(dir / "p.pvtu", {io::VtkArray::of("id", ids), io::VtkArray::of("v&w", v, 3)},
                        {"p_0.vtu", "p_1.vtu"});
  const std::string s = slurp(dir / "p.pvtu");
  CHECK(s.find("type=\"PUnstructuredGrid\"") != std::string::npos);
  CHECK(test::all_matches(s, "Source=\"([^\"]*)\"") == std::vector<std::string>{"p_0.vtu", "p_1.vtu"});
  CHECK(test::all_matches(s, "<PDataArray type=\"(\\w+)\" Name") ==
        std::vector<std::string>{"Int64", "Float32"});
  CHECK(test::all_matches(s, "Name=\"([^\"]*)\"") == std::vector<std::string>{"id", "v&amp;w"});
  CHECK(s.find("Name=\"v&amp;w\" NumberOfComponents=\"3\"") != std::string::npos);
  fs::remove_all(dir);
}
