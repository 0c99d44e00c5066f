// HDF5 checkpoints: a restart continues with the same bytes as an uninterrupted run (epidermis with growth
// and division, grid RD with RK4 and noise); damaged, truncated, foreign and other-version files are refused
// with an InputError, never loaded.
#include <hdf5.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/exec/error.hpp"
#include "engine/grid/grid.hpp"
#include "engine/io/atomic_file.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/run_record.hpp"
#include "engine/io/vtk.hpp"
#include "modules/builtin_modules.hpp"

using namespace tissue;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("tissue_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

/// 16 cells that grow every 100 steps and divide at 22 elements: divisions between steps 200 and 300.
const char* kEpidermis = R"(
[simulation]
model = "epidermis"
dt = 0.01
steps = 400
seed = 7
[initial]
cells_x = 4
cells_y = 4
elements_per_cell = 20
adhesive_elements = 10
spacing = 0.6
cell_radius = 0.3
[lifecycle]
growth_interval = 100
division_elements = 22
delta_threshold = 140.0
)";

/// Gray-Scott with noise, RK4, mixed boundaries.
const char* kGrid = R"(
[simulation]
model = "grid_rd"
dt = 1.0
steps = 60
seed = 3
[grid]
nx = 40
ny = 24
boundary = "neumann"
[reaction]
preset = "theta"
[grid_rd]
integrator = "rk4"
[initial]
patch_size = 8
noise = 0.05
)";

std::unique_ptr<Simulation> build(const char* text) {
  return build_simulation(io::Scenario::from_string(text, "test.toml"));
}

io::CheckpointHeader header_of(const Simulation& sim, const char* text) {
  io::CheckpointHeader h;
  h.engine_version = "test";
  h.model = sim.model;
  h.scenario_path = "test.toml";
  h.scenario_text = text;
  h.scenario_sha256 = io::sha256_hex(text);
  h.backend = "test";
  h.dt = sim.dt;
  h.steps_requested = sim.steps;
  return h;
}

/// Rows [0, size) of every column of both tables and every field array, as bytes, plus the clock.
std::vector<std::string> state_bytes(World& w) {
  w.download();
  std::vector<std::string> out;
  for (Table* t : {&w.cells, &w.elements})
    for (const auto& c : t->columns())
      for (int k = 0; k < c->components(); ++k) {
        const std::size_t value = size_of(c->scalar_type());
        const auto* p =
            static_cast<const char*>(c->host_bytes()) + static_cast<std::size_t>(k) * c->capacity() * value;
        out.emplace_back(p, t->size() * value);
      }
  for (const auto& f : w.fields)
    for (const auto& a : f->host_arrays())
      out.emplace_back(static_cast<const char*>(a.data), a.count() * size_of(a.type));
  out.push_back(std::to_string(w.step) + " " + std::to_string(w.next_cell_id));
  out.emplace_back(reinterpret_cast<const char*>(&w.time), sizeof w.time);
  return out;
}

/// Runs `text` for n1 steps, checkpoints, runs to n2; a second simulation restarts from the checkpoint and
/// runs to n2. Returns both final states.
std::pair<std::vector<std::string>, std::vector<std::string>> run_and_restart(const char* text,
                                                                              std::int64_t n1,
                                                                              std::int64_t n2,
                                                                              const fs::path& file) {
  auto a = build(text);
  io::PvdSeries series(file.parent_path() / "x.pvd");
  series.restore({{0.0, "x_0.vti"}, {1.5, "x_1.vti"}});
  a->advance(n1);
  io::write_checkpoint(file, *a->world, header_of(*a, text), {&series}, a->schedule.save_states(*a->world));
  a->advance(n2 - n1);

  auto b = build(text);
  io::PvdSeries restored(file.parent_path() / "x.pvd");
  b->schedule.restore_states(*b->world, io::read_checkpoint_state(file, *b->world, {&restored}));
  REQUIRE(b->world->step == n1);
  REQUIRE(restored.entries() == series.entries());
  b->advance(n2 - n1);
  return {state_bytes(*a->world), state_bytes(*b->world)};
}

/// Writes a small grid checkpoint and returns its path.
fs::path grid_checkpoint(const fs::path& dir) {
  auto sim = build(kGrid);
  sim->advance(3);
  const fs::path file = dir / "grid.h5";
  io::write_checkpoint(file, *sim->world, header_of(*sim, kGrid), {});
  return file;
}

/// True when reading the header and the state of `file` throws InputError (what every bad file must do).
bool rejected(const fs::path& file) {
  try {
    const auto h = io::read_checkpoint_header(file);
    auto sim = build_simulation(io::Scenario::from_string(h.scenario_text, h.scenario_path));
    io::read_checkpoint_state(file, *sim->world, {});
  } catch (const InputError&) {
    return true;
  }
  return false;
}

}  // namespace

TEST_CASE("restart from a checkpoint continues an epidermis run with division bit for bit", "[checkpoint]") {
  const fs::path dir = temp_dir("checkpoint_epidermis");
  for (const std::int64_t n1 : {150, 250, 350}) {  // before, during and after the divisions
    INFO("checkpoint at step " << n1);
    const auto [straight, restarted] = run_and_restart(kEpidermis, n1, 400, dir / "e.h5");
    CHECK(straight == restarted);
  }
  auto sim = build(kEpidermis);
  const std::size_t cells0 = sim->world->cells.size();
  sim->advance(400);
  CHECK(sim->world->cells.size() > cells0);  // the runs above did cross divisions
  fs::remove_all(dir);
}

TEST_CASE("restart continues bit for bit an epidermis run that reuses its cell list over 4 steps",
          "[checkpoint]") {
  // the list is built at the hooks' steps (100, 200, 300) and every 4 steps after: a checkpoint at 150, 151
  // or 250 falls while it is reused, and the restart must rebuild it on the positions it was built on
  const std::string text = std::string(kEpidermis) + "[sem]\nrebuild_every = 4\n";
  const fs::path dir = temp_dir("checkpoint_reuse");
  for (const std::int64_t n1 : {150, 151, 152, 250}) {
    INFO("checkpoint at step " << n1);
    const auto [straight, restarted] = run_and_restart(text.c_str(), n1, 300, dir / "e.h5");
    CHECK(straight == restarted);
    // the list built at step 148 (or 248) is still in use at 150, 151 (250, 251); one is built at 152
    auto loaded = build(text.c_str());
    const SystemStates states = io::read_checkpoint_state(dir / "e.h5", *loaded->world, {});
    if (n1 % 4 == 0) {
      CHECK(states.empty());
    } else {
      REQUIRE(states.size() == 1);
      CHECK(states[0].first == "sem");
      CHECK(states[0].second.integers.at("built_step") == n1 / 4 * 4);
      CHECK(states[0].second.arrays.at("x").size() == loaded->world->elements.size());
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("a system state that does not fit the restarted model is refused", "[checkpoint]") {
  const std::string text = std::string(kEpidermis) + "[sem]\nrebuild_every = 4\n";
  auto sim = build(text.c_str());
  sim->advance(10);  // built at 8: steps 10 and 11 reuse it
  const SystemStates good = sim->schedule.save_states(*sim->world);
  REQUIRE(good.size() == 1);
  const auto refused = [&](SystemStates states) {
    auto b = build(text.c_str());
    b->world->step = 10;
    try {
      b->schedule.restore_states(*b->world, states);
    } catch (const InputError&) {
      return true;
    }
    return false;
  };
  CHECK_FALSE(refused(good));
  SystemStates short_array = good;
  short_array[0].second.arrays["y"].pop_back();
  CHECK(refused(short_array));
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    SystemStates not_finite = good;
    not_finite[0].second.arrays["z"][3] = bad;
    CHECK(refused(not_finite));
  }
  SystemStates stale = good;
  stale[0].second.integers["built_step"] = 4;  // a list built at 4 is not reused at step 10
  CHECK(refused(stale));
  SystemStates unknown = good;
  unknown[0].first = "no_such_system";
  CHECK(refused(unknown));
  CHECK(refused({good[0], good[0]}));
  // a model that reuses nothing takes no state
  auto grid = build(kGrid);
  CHECK_THROWS_AS(grid->schedule.restore_states(*grid->world, good), InputError);
}

TEST_CASE("restart from a checkpoint continues a grid RD run (RK4, noise) bit for bit", "[checkpoint]") {
  const fs::path dir = temp_dir("checkpoint_grid");
  const auto [straight, restarted] = run_and_restart(kGrid, 25, 60, dir / "g.h5");
  CHECK(straight == restarted);
  fs::remove_all(dir);
}

TEST_CASE("a checkpoint's header round-trips and its XDMF names its datasets", "[checkpoint]") {
  const fs::path dir = temp_dir("checkpoint_header");
  auto sim = build(kEpidermis);
  sim->advance(5);
  auto h = header_of(*sim, kEpidermis);
  h.status = "failed";
  h.message = "step 5: something";
  io::write_checkpoint(dir / "c.h5", *sim->world, h, {});
  const auto r = io::read_checkpoint_header(dir / "c.h5");
  CHECK(r.format_version == io::kCheckpointFormatVersion);
  CHECK(r.model == "epidermis");
  CHECK(r.scenario_text == kEpidermis);
  CHECK(r.status == "failed");
  CHECK(r.message == h.message);
  CHECK(r.step == 5);
  CHECK(r.time == sim->world->time);
  CHECK(r.dt == sim->dt);
  const std::string xdmf = slurp(dir / "c.xdmf");
  // points from the viewer copies (ParaView's XDMF 3 reader takes no X_Y_Z geometry), columns as stored
  CHECK(xdmf.find("c.h5:/view/elements/points") != std::string::npos);
  CHECK(xdmf.find("c.h5:/view/cells/points") != std::string::npos);
  CHECK(xdmf.find("c.h5:/tables/elements/type") != std::string::npos);
  CHECK(xdmf.find("GeometryType=\"X_Y_Z\"") == std::string::npos);
  CHECK(xdmf.find("NumberOfElements=\"" + std::to_string(sim->world->elements.size()) + "\"") !=
        std::string::npos);
  CHECK(!fs::exists(io::temporary_path(dir / "c.h5")));
  fs::remove_all(dir);
}

TEST_CASE("a checkpoint truncated at any byte is refused", "[checkpoint]") {
  const fs::path dir = temp_dir("checkpoint_truncated");
  const std::string bytes = slurp(grid_checkpoint(dir));
  REQUIRE(bytes.size() > 1000);
  std::mt19937_64 rng(12345);
  std::vector<std::size_t> cuts{0, 1, 7, 8, 100, 511, 512, 4096, bytes.size() / 2, bytes.size() - 1};
  for (int i = 0; i < 150; ++i) cuts.push_back(static_cast<std::size_t>(rng() % bytes.size()));
  for (const std::size_t cut : cuts) {
    INFO("truncated to " << cut << " of " << bytes.size() << " bytes");
    spit(dir / "t.h5", bytes.substr(0, cut));
    CHECK(rejected(dir / "t.h5"));
  }
  fs::remove_all(dir);
}

TEST_CASE("a checkpoint with a damaged dataset or metadata byte is refused", "[checkpoint]") {
  const fs::path dir = temp_dir("checkpoint_damaged");
  const fs::path file = grid_checkpoint(dir);
  const std::string bytes = slurp(file);
  // one byte in every 31 flipped in turn: data chunks fail their Fletcher-32 checksums,
  // metadata its checksums; a flip that changes nothing HDF5 reads (padding, free space) may load, but then
  // it must load the very same state
  auto reference = build(kGrid);
  io::read_checkpoint_state(file, *reference->world, {});
  const auto expected = state_bytes(*reference->world);
  int refused = 0, loaded_same = 0;
  for (std::size_t at = 0; at < bytes.size(); at += 31) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x5a);
    spit(dir / "d.h5", damaged);
    if (rejected(dir / "d.h5")) {
      ++refused;
      continue;
    }
    auto sim = build(kGrid);
    io::read_checkpoint_state(dir / "d.h5", *sim->world, {});
    INFO("byte " << at << " flipped and the checkpoint loaded");
    const auto got = state_bytes(*sim->world);
    REQUIRE(got.size() == expected.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      INFO("state array " << k);
      CHECK(got[k] == expected[k]);
    }
    ++loaded_same;
  }
  CHECK(refused > 0);
  // the data are most of the file: nearly every flip must be caught
  CHECK(refused > 4 * loaded_same);
  fs::remove_all(dir);
}

TEST_CASE("checkpoints of another format version, model or shape are refused with a clear message",
          "[checkpoint]") {
  const fs::path dir = temp_dir("checkpoint_foreign");
  const fs::path file = grid_checkpoint(dir);

  SECTION("another format version") {
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0);
    const hid_t a = H5Aopen(f, "format_version", H5P_DEFAULT);
    const std::int64_t version = io::kCheckpointFormatVersion + 1;
    REQUIRE(H5Awrite(a, H5T_NATIVE_INT64, &version) >= 0);
    H5Aclose(a);
    H5Fclose(f);
    CHECK_THROWS_WITH(
        io::read_checkpoint_header(file),
        Catch::Contains("format version " + std::to_string(version) + "; this engine reads version"));
  }
  SECTION("another model") {
    auto sim = build(kEpidermis);
    CHECK_THROWS_WITH(io::read_checkpoint_state(file, *sim->world, {}),
                      Catch::Contains("random seed differs"));
    std::string same_seed = kEpidermis;
    same_seed.replace(same_seed.find("seed = 7"), 8, "seed = 3");
    auto other = build(same_seed.c_str());
    CHECK_THROWS_AS(io::read_checkpoint_state(file, *other->world, {}), InputError);
  }
  SECTION("another grid shape") {
    std::string other = kGrid;
    other.replace(other.find("nx = 40"), 7, "nx = 41");
    auto sim = build(other.c_str());
    CHECK_THROWS_WITH(io::read_checkpoint_state(file, *sim->world, {}),
                      Catch::Contains("/fields/rd/a has shape (1 x 24 x 40), expected (1 x 24 x 41)"));
  }
  SECTION("not a checkpoint") {
    spit(dir / "x.h5", "plain text");
    CHECK_THROWS_WITH(io::read_checkpoint_header(dir / "x.h5"), Catch::Contains("not an HDF5 file"));
    CHECK_THROWS_WITH(io::read_checkpoint_header(dir / "missing.h5"), Catch::Contains("no such file"));
    // the HDF5 1.8 format (superblock 0) carries no metadata checksums: refused before HDF5 parses it
    H5Fclose(H5Fcreate((dir / "old.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK_THROWS_WITH(io::read_checkpoint_header(dir / "old.h5"),
                      Catch::Contains("HDF5 superblock version 0"));
  }
  fs::remove_all(dir);
}

TEST_CASE("a checkpoint series keeps the newest checkpoints and finds the latest", "[checkpoint]") {
  const fs::path dir = temp_dir("checkpoint_series");
  auto sim = build(kGrid);
  io::CheckpointSeries series(dir, 2);
  auto h = header_of(*sim, kGrid);
  for (int i = 0; i < 4; ++i) {
    sim->advance(1);
    series.write(*sim->world, h, {});
  }
  CHECK(!fs::exists(dir / io::CheckpointSeries::file_name(2, false)));
  CHECK(fs::exists(dir / io::CheckpointSeries::file_name(3, false)));
  CHECK(fs::exists(dir / "checkpoint_000000004.xdmf"));
  sim->advance(1);
  h.status = "failed";
  series.write(*sim->world, h, {});
  CHECK(fs::exists(dir / "checkpoint_000000005_failed.h5"));
  CHECK(io::CheckpointSeries::latest(dir) == dir / "checkpoint_000000004.h5");  // never a failed one
  CHECK_THROWS_AS(io::CheckpointSeries::latest(dir / "nothing"), InputError);
  fs::remove_all(dir);
}

TEST_CASE("a checkpoint write that fails at any size leaves no HDF5 identifier open and no file",
          "[checkpoint]") {
  // the file-size limit (SIGXFSZ ignored: write() fails with EFBIG) cuts the write at a sweep of sizes; a
  // failed close used to leave the file's identifier half-destroyed, and HDF5's exit handler crashed on it
  const fs::path dir = temp_dir("checkpoint_full");
  auto sim = build(kGrid);
  sim->advance(1);
  const auto h = header_of(*sim, kGrid);
  const fs::path good = dir / "good.h5";
  io::write_checkpoint(good, *sim->world, h, {});
  const auto size = static_cast<rlim_t>(fs::file_size(good));
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
  struct sigaction ignore {
  }, previous{};
  ignore.sa_handler = SIG_IGN;
  REQUIRE(::sigaction(SIGXFSZ, &ignore, &previous) == 0);
  int failures = 0;
  for (rlim_t limit = 0; limit < size; limit += std::max<rlim_t>(size / 40, 1)) {
    const fs::path file = dir / "cut.h5";
    rlimit cut = saved;
    cut.rlim_cur = limit;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &cut) == 0);
    std::string message;
    try {
      io::write_checkpoint(file, *sim->world, h, {});
    } catch (const std::runtime_error& e) {
      message = e.what();
    }
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &saved) == 0);
    INFO("limit " << limit << " of " << size << " bytes: " << message);
    CHECK(message.find("cannot write checkpoint " + file.string()) == 0);
    CHECK(message.find("File too large") != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
    CHECK(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0);
    CHECK_FALSE(fs::exists(file));
    CHECK_FALSE(fs::exists(io::temporary_path(file)));
    failures += !message.empty();
  }
  ::sigaction(SIGXFSZ, &previous, nullptr);
  CHECK(failures >= 40);
  io::read_checkpoint_header(good);  // the earlier file is untouched
  fs::remove_all(dir);
}
