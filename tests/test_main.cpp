// Catch2 runner shared by every test binary. The backend comes from TISSUE_TEST_BACKEND (cpu|cuda) so
// that CTest runs the same test cases on each compiled backend (tests/CMakeLists.txt).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>

#include "engine/exec/backend.hpp"

int main(int argc, char* argv[]) {
  if (const char* name = std::getenv("TISSUE_TEST_BACKEND")) {
    try {
      tissue::exec::set_backend(tissue::exec::parse_backend(name));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cannot select backend '%s': %s\n", name, e.what());
      return 2;
    }
  }
  return Catch::Session().run(argc, argv);
}
