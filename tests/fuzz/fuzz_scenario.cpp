// libFuzzer target for the scenario reader: arbitrary bytes go through what `tissue check` does (TOML
// parsing, every module's key validation, building the model). The only acceptable outcome of bad input is
// an InputError; any other exception, a crash or a sanitizer report is a finding. Models are built on the
// CPU backend under a 64 MB memory limit (TISSUE_MEMORY_LIMIT), so inputs asking for huge worlds must be
// refused by the memory checks rather than allocated.
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

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("TISSUE_MEMORY_LIMIT", "67108864", 1);
  tissue::exec::set_backend(tissue::exec::Backend::cpu);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto scenario = tissue::io::Scenario::from_string(text, "fuzz.toml");
    tissue::build_simulation(scenario);
  } catch (const tissue::InputError&) {
  }
  return 0;
}
