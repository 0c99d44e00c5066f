// libFuzzer target for the OBJ mesh reader: arbitrary bytes are written to a file that a scenario's
// `[mesh] file = ...` names, and read as every module reads its mesh (mesh::read_scenario_device_mesh: the
// strict record check, tinyobjloader, validation, topology, the one-fan check), then counted in pieces as
// the conformal flow does. The only acceptable outcome of bad input is an InputError; any other exception,
// a crash, a sanitizer report or a time-out is a finding.
//
// Build and run: docs/fuzzing.md (preset "fuzz", clang from Debian).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"
#include "engine/io/scenario.hpp"
#include "engine/mesh/scenario_mesh.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {
std::filesystem::path mesh_path;       ///< where each input is written
std::optional<tissue::io::Scenario> scenario;  ///< `file = "<mesh_path>"`
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("TISSUE_MEMORY_LIMIT", "67108864", 1);
  tissue::exec::set_backend(tissue::exec::Backend::cpu);
  mesh_path = tissue::fuzz::scratch_dir() / "mesh.obj";
  scenario = tissue::io::Scenario::from_string("file = \"mesh.obj\"\n",
                                               (tissue::fuzz::scratch_dir() / "fuzz.toml").string());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tissue::fuzz::write_file(mesh_path, data, size);
  try {
    const auto mesh = tissue::mesh::read_scenario_device_mesh(scenario->root(), scenario->path(),
                                                              /*bytes_per_vertex=*/1000.0, "mesh");
    (void)tissue::mesh::connected_components(mesh->topology());
  } catch (const tissue::InputError&) {
  }
  return 0;
}
