// libFuzzer target for the checkpoint reader: arbitrary bytes are written to a file and restarted from as
// `tissue run --restart FILE` does before its first step (engine/run/runner.cpp): the header (format,
// version, attributes, the scenario text and its SHA-256), the refusal of a failed run's state, the model
// built from the stored scenario, then every table, field and .pvd series loaded and the tables' consistency
// checked. The only acceptable outcome of bad input is an InputError; any other exception, a crash, a
// sanitizer report or a time-out is a finding. HDF5 itself is the system library, not instrumented: the
// fuzzer steers by our code's coverage only, and a memory error inside HDF5 shows only if it crashes.
//
// Build and run: docs/fuzzing.md (preset "fuzz", clang from Debian).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/scenario.hpp"
#include "modules/builtin_modules.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {
std::filesystem::path checkpoint_path;  ///< where each input is written
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("TISSUE_MEMORY_LIMIT", "67108864", 1);
  tissue::exec::set_backend(tissue::exec::Backend::cpu);
  checkpoint_path = tissue::fuzz::scratch_dir() / "checkpoint_000000010.h5";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tissue::fuzz::write_file(checkpoint_path, data, size);
  try {
    const auto header = tissue::io::read_checkpoint_header(checkpoint_path);
    if (header.status != "ok") return 0;  // the runner refuses a failed run's state here
    const auto scenario = tissue::io::Scenario::from_string(header.scenario_text, header.scenario_path);
    const auto sim = tissue::build_simulation(scenario);
    // the output series of the checkpoint's own directory, which a restart continues (nothing is written)
    const auto writer = sim->make_writer(tissue::fuzz::scratch_dir() / "out", {});
    tissue::io::read_checkpoint_state(checkpoint_path, *sim->world, writer->series());
  } catch (const tissue::InputError&) {
  }
  return 0;
}
