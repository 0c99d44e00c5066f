// The tuned CUDA kernels of the grid RD Euler step (one step per launch, temporal blocking, 3D marching)
// give bit-identical results to the generic EulerStep functor (CUDA builds, CUDA backend).
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "engine/exec/backend.hpp"
#include "modules/grid_rd/grid_rd.hpp"
#include "modules/grid_rd/grid_rd_model.hpp"

using namespace tissue;
using namespace tissue::grid_rd;

namespace {

template <class Real>
std::vector<Real> run(const GridRdParams& p, int calls, double dt) {
  World world{Box{}, 0};
  auto& field = world.add_field(std::make_unique<GridField<Real>>(
      "rd", p.shape, std::vector<std::string>{"a", "b"}, p.geometry<Real>()));
  InitialState init;
  init.patch_size = p.shape.nx / 3.0;
  init.noise = 0.05;
  apply_initial_state(field, init, 7);
  GridRdSystem<Real> system(p, field);
  REQUIRE(dt <= p.stability_limit());  // a meaningful comparison needs a stable run
  for (int c = 0; c < calls; ++c) system.run(world, StepContext{c, 0.0, p.steps_per_launch * dt});
  field.download();
  return field.host();
}

template <class Real>
void check_equal(GridRdParams p, int calls, double dt) {
  p.kernel = Kernel::generic;
  const auto generic = run<Real>(p, calls, dt);
  p.kernel = Kernel::automatic;
  const auto tuned = run<Real>(p, calls, dt);
  REQUIRE(generic.size() == tuned.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < generic.size(); ++i)
    differ += std::memcmp(&generic[i], &tuned[i], sizeof(Real)) != 0;
  INFO("nodes differing: " << differ << " of " << generic.size());
  CHECK(differ == 0);
}

GridRdParams base(GridShape shape, Stencil stencil) {
  GridRdParams p;
  p.shape = shape;
  p.stencil = stencil;
  p.reaction.gray_scott = {0.038, 0.061};
  if (shape.nz > 1) p.reaction.diffusion[0] = 0.3, p.reaction.diffusion[1] = 0.15;
  return p;
}

}  // namespace

TEST_CASE("tuned 2D kernels equal the generic step bit for bit, all step counts and boundaries",
          "[cuda][grid_rd]") {
  exec::set_backend(exec::Backend::cuda);
  for (int steps : {1, 2, 3, 4, 8, 12}) {
    INFO("steps per launch " << steps);
    GridRdParams p = base({100, 70, 1, 1.0}, Stencil::seed9);  // not multiples of the tiles
    p.steps_per_launch = steps;
    check_equal<float>(p, 5, 1.0);
    p.faces = {GridBoundary::neumann,  GridBoundary::dirichlet, GridBoundary::periodic,
               GridBoundary::periodic, GridBoundary::periodic,  GridBoundary::periodic};
    p.dirichlet[1] = {0.9, 0.1};
    check_equal<float>(p, 5, 1.0);
    p.stencil = Stencil::five;
    p.shape.h = 1.5;
    p.faces = {GridBoundary::periodic, GridBoundary::periodic, GridBoundary::dirichlet,
               GridBoundary::neumann,  GridBoundary::periodic, GridBoundary::periodic};
    check_equal<double>(p, 5, 0.5);
    p.reaction.kind = reactions::ReactionSpec::Kind::polynomial;  // Schnakenberg-like terms
    p.reaction.polynomial.nf = 3;
    p.reaction.polynomial.f[0] = {0.1, 0, 0};
    p.reaction.polynomial.f[1] = {-1.0, 1, 0};
    p.reaction.polynomial.f[2] = {1.0, 2, 1};
    p.reaction.polynomial.ng = 2;
    p.reaction.polynomial.g[0] = {0.9, 0, 0};
    p.reaction.polynomial.g[1] = {-1.0, 2, 1};
    p.reaction.diffusion[0] = 0.05;
    p.reaction.diffusion[1] = 0.2;
    check_equal<float>(p, 3, 1.0);
  }
  exec::set_backend(exec::Backend::cpu);
}

TEST_CASE("the tuned 3D kernel equals the generic step bit for bit", "[cuda][grid_rd]") {
  exec::set_backend(exec::Backend::cuda);
  GridRdParams p = base({40, 20, 37, 1.0}, Stencil::seven);
  p.steps_per_launch = 2;
  check_equal<float>(p, 4, 0.5);
  p.faces.fill(GridBoundary::neumann);
  p.faces[5] = GridBoundary::dirichlet;
  check_equal<double>(p, 4, 0.5);
  exec::set_backend(exec::Backend::cpu);
}
