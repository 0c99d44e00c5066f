// run.json: the SHA-256 wrapper against the FIPS 180-2 test vectors, and the written record read back.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/exec/error.hpp"
#include "engine/io/atomic_file.hpp"
#include "engine/io/run_directory.hpp"
#include "engine/io/run_record.hpp"
#include "engine/util/progress.hpp"

using namespace tissue;
namespace fs = std::filesystem;

TEST_CASE("sha256_hex matches the FIPS 180-2 test vectors", "[io]") {
  CHECK(io::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(io::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(io::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_CASE("a run record is written as JSON with the scenario's hash", "[io]") {
  // per process: the CPU and CUDA test binaries may run this case at the same time
  const fs::path dir = fs::temp_directory_path() / ("tissue_test_run_record_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  io::RunRecord r;
  r.set_scenario(dir / "s.toml", "abc");
  CHECK(r.scenario_sha256 == io::sha256_hex("abc"));
  CHECK(fs::path(r.scenario_path).is_absolute());
  r.started = io::utc_now_iso8601();
  REQUIRE(r.started.size() == 20);
  CHECK(r.started[10] == 'T');
  CHECK(r.started.back() == 'Z');
  r.message = "a \"quoted\" message";
  r.write(dir);
  std::ifstream in(dir / "run.json");
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().find("\"status\": \"running\"") != std::string::npos);
  CHECK(text.str().find("\"ended\": null") != std::string::npos);
  CHECK(text.str().find(R"(a \"quoted\" message)") != std::string::npos);  // escaped by the JSON writer
  fs::remove_all(dir);
}

TEST_CASE("stale temporaries of killed writers are removed, live and foreign files kept", "[io]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "tissue_test_stale_tmp";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto touch = [&](const std::string& name) { std::ofstream(dir / name) << "x"; };
  // pid 999999999 cannot be running (above any pid_max); our own pid is
  touch("cells_000000100.vtu.tmp-999999999");                          // a dead writer's: removed
  touch("checkpoint_000000100.h5.tmp-" + std::to_string(::getpid()));  // a live writer's, fresh: kept
  touch("old.vtu.tmp-" + std::to_string(::getpid()));                  // a live pid but hours old: removed
  fs::last_write_time(dir / ("old.vtu.tmp-" + std::to_string(::getpid())),
                      fs::file_time_type::clock::now() - std::chrono::hours(3));
  touch("notes.tmp-draft");  // not our pattern
  touch("cells_000000100.vtu");
  CHECK(io::remove_stale_temporaries(dir) == 2);
  CHECK_FALSE(fs::exists(dir / "cells_000000100.vtu.tmp-999999999"));
  CHECK_FALSE(fs::exists(dir / ("old.vtu.tmp-" + std::to_string(::getpid()))));
  CHECK(fs::exists(dir / ("checkpoint_000000100.h5.tmp-" + std::to_string(::getpid()))));
  CHECK(fs::exists(dir / "notes.tmp-draft"));
  CHECK(fs::exists(dir / "cells_000000100.vtu"));
  CHECK(io::remove_stale_temporaries(dir / "missing") == 0);  // errors are ignored
  fs::remove_all(dir);
}

TEST_CASE("without a terminal, progress lines come every 10 % and at least every log interval", "[io]") {
  const auto lines = [](std::int64_t total, std::chrono::milliseconds interval, std::int64_t updates) {
    std::FILE* out = std::tmpfile();
    Progress p(total, false, out);
    p.set_log_interval(interval);
    for (std::int64_t s = 1; s <= updates; ++s) p.update(s);
    std::rewind(out);
    int n = 0;
    for (int c; (c = std::fgetc(out)) != EOF;) n += c == '\n';
    std::fclose(out);
    return n;
  };
  CHECK(lines(100, std::chrono::hours(1), 100) == 11);  // deciles 0 .. 10
  // a run of 10^18 steps stays in its first decile for ages: without the interval one line only
  CHECK(lines(1000000000000000000, std::chrono::hours(1), 50) == 1);
  CHECK(lines(1000000000000000000, std::chrono::milliseconds(0), 50) == 50);
  // near the int64 limit the decile does not overflow (10 * done would)
  CHECK(lines(9000000000000000000, std::chrono::hours(1), 3) == 1);
}

TEST_CASE("the files a run writes are told from others by name", "[io]") {
  for (const char* name :
       {"run.json", "checkpoint_000000100.h5", "checkpoint_000000100.xdmf", "checkpoint_000000100_failed.h5",
        "checkpoint_000000100_failed.xdmf", "rd.pvd", "cells.pvd", "rd_000000100.vti", "b_000000100.png",
        "elements_000000100.vtu", "surface_000000100.vts", "surface_final.obj", "rd_1000000000.vti",
        "run.json.tmp-123", "checkpoint_000000100.h5.tmp-99999", "rd.pvd.tmp-7", "view.pvsm",
        "view.pvsm.tmp-42"})
    CHECK(io::is_run_output(name));
  for (const char* name :
       {".tissue.lock", "notes.txt", "run.json.bak", "data.csv", "rd_100.vti", "scenario.toml",
        "checkpoint_.h5", "checkpoint_12.h5.tmp-x", "my plot.png", "a/b.pvd", "surface.obj", "my_view.pvsm"})
    CHECK_FALSE(io::is_run_output(name));
}

TEST_CASE("a run record reads back, and a file that is not one is refused", "[io]") {
  const fs::path dir = fs::temp_directory_path() / ("tissue_test_record_read_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  CHECK_FALSE(io::RunRecord::read(dir).has_value());
  io::RunRecord r;
  r.set_scenario(dir / "s.toml", "abc");
  r.status = "failed";
  r.exit_code = 1;
  r.message = "cannot write x";
  r.steps_done = 7;
  r.hook_split = {{"download", 0.5}, {"lifecycle.grow_and_divide", 1.25}, {"commit", 0.75}};
  r.write(dir);
  CHECK(fs::file_size(dir / "run.json") % 4096 == 0);  // room for the final record on a full disk
  const auto back = io::RunRecord::read(dir);
  REQUIRE(back.has_value());
  CHECK(back->hook_split == r.hook_split);  // in order
  CHECK(back->scenario_sha256 == io::sha256_hex("abc"));
  CHECK(back->status == "failed");
  CHECK(back->message == "cannot write x");
  CHECK(back->steps_done == 7);
  for (const char* bad : {"", "not json", "{}", R"({"status": 1})", "[1, 2]"}) {
    std::ofstream(dir / "run.json") << bad;
    CHECK_THROWS_AS(io::RunRecord::read(dir), InputError);
  }
  fs::remove_all(dir);
}

TEST_CASE("a directory lock excludes a second holder, names the owner and dies with its holder", "[io]") {
  const fs::path dir = fs::temp_directory_path() / ("tissue_test_lock_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  CHECK(io::lock_owner(dir).empty());
  {
    io::DirectoryLock lock(dir);
    CHECK(lock.held());
    const std::string owner = "pid " + std::to_string(::getpid()) + " on host ";
    CHECK(io::lock_owner(dir).rfind(owner, 0) == 0);
    try {  // a second open file description conflicts, in this process as in another
      io::DirectoryLock second(dir);
      FAIL("a second lock was granted");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find(owner) != std::string::npos);
    }
    CHECK_THROWS_AS(io::check_not_locked(dir), InputError);
    io::DirectoryLock moved = std::move(lock);
    CHECK(moved.held());
    CHECK_FALSE(lock.held());
  }
  CHECK(io::lock_owner(dir).empty());  // released; the file stays, informational
  CHECK(fs::exists(dir / io::kLockFileName));
  io::check_not_locked(dir);
  io::DirectoryLock again(dir);
  CHECK(again.held());
  fs::remove_all(dir);
}
