// Catch2 runner of the tests that need MPI ranks (run under mpirun, tests/CMakeLists.txt): MPI is
// initialised around the session, every rank runs every test case (each case is collective), and the
// program fails on every rank if a check failed on any.
#define CATCH_CONFIG_RUNNER
#include <mpi.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>

#include "engine/exec/backend.hpp"

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  if (const char* name = std::getenv("TISSUE_TEST_BACKEND")) {
    try {
      tissue::exec::set_backend(tissue::exec::parse_backend(name));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cannot select backend '%s': %s\n", name, e.what());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  int failed = Catch::Session().run(argc, argv);
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
