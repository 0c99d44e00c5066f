// libFuzzer target for the scenario reader: arbitrary bytes go through what `tissue check` does (TOML
// parsing, every module's key validation, building the model, describing its schedule). The only acceptable
// outcome of bad input is an InputError; any other exception, a crash, a sanitizer report or a time-out is a
// finding. Models are built on the CPU backend under a 64 MB memory limit (TISSUE_MEMORY_LIMIT), so inputs
// asking for huge worlds must be refused by the memory checks rather than allocated.
//
// The scenario stands in a scratch directory whose meshes/spot.obj and meshes/stanford-bunny.obj (the mesh
// files the shipped scenarios name) are a small octahedron, so the modules reading a mesh get past it
// quickly; the OBJ reader has its own target (fuzz_obj.cpp).
//
// Build and run: docs/fuzzing.md (preset "fuzz", clang from Debian).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"
#include "engine/io/scenario.hpp"
#include "modules/builtin_modules.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {
std::string scenario_path;  ///< the name the input stands under (no file is written there)
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("TISSUE_MEMORY_LIMIT", "67108864", 1);
  tissue::exec::set_backend(tissue::exec::Backend::cpu);
  const auto& dir = tissue::fuzz::scratch_dir();
  std::filesystem::create_directories(dir / "meshes");
  for (const char* name : {"spot.obj", "stanford-bunny.obj"})
    tissue::fuzz::write_file(dir / "meshes" / name, tissue::fuzz::kOctahedronObj);
  scenario_path = (dir / "fuzz.toml").string();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto scenario = tissue::io::Scenario::from_string(std::move(text), scenario_path);
    const auto sim = tissue::build_simulation(scenario);
    (void)sim->schedule.describe();
  } catch (const tissue::InputError&) {
  }
  return 0;
}
