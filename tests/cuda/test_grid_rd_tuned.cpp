// The tuned CUDA kernels of the grid RD Euler step (one step per launch, temporal blocking, 3D marching)
// give bit-identical results to the generic EulerStep functor (CUDA builds, CUDA backend).
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstring>
#include <limits>
#include <vector>

#include "cuda/runtime.hpp"
#include "engine/exec/backend.hpp"
#include "modules/grid_rd/grid_rd.hpp"
#include "modules/grid_rd/grid_rd_model.hpp"
#include "modules/grid_rd/grid_rd_tuned.hpp"

using namespace tissue;
using namespace tissue::grid_rd;

namespace {

/// Adds the field "rd" of p's grid to `world` with the tests' initial state (a patch of B and noise),
/// and fills the buffer the next step writes with NaN, so that a node a kernel leaves unwritten shows up
/// (freed device memory is often handed back with the previous run's results in it).
template <class Real>
GridField<Real>& add_test_field(World& world, const GridRdParams& p) {
  auto& field = world.add_field(std::make_unique<GridField<Real>>(
      "rd", p.shape, std::vector<std::string>{"a", "b"}, p.geometry<Real>()));
  std::fill(field.host().begin(), field.host().end(), std::numeric_limits<Real>::quiet_NaN());
  field.upload();
  field.swap();
  InitialState init;
  init.patch_size = p.shape.nx / 3.0;
  init.noise = 0.05;
  apply_initial_state(field, init, 7);
  return field;
}

template <class Real>
std::vector<Real> run(const GridRdParams& p, int calls, double dt) {
  World world{Box{}};
  auto& field = add_test_field<Real>(world, p);
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
  // bounding box of the differing nodes (x, y, z, species), to tell which tiles or faces went wrong
  int lo[4] = {1 << 30, 1 << 30, 1 << 30, 1 << 30}, hi[4] = {-1, -1, -1, -1};
  const std::size_t cells = p.shape.cells();
  Real first_generic = 0, first_tuned = 0;
  for (std::size_t i = 0; i < generic.size(); ++i) {
    if (std::memcmp(&generic[i], &tuned[i], sizeof(Real)) == 0) continue;
    if (differ++ == 0) first_generic = generic[i], first_tuned = tuned[i];
    const std::size_t c = i % cells;
    const int at[4] = {static_cast<int>(c % p.shape.nx), static_cast<int>(c / p.shape.nx % p.shape.ny),
                       static_cast<int>(c / p.shape.nx / p.shape.ny), static_cast<int>(i / cells)};
    for (int d = 0; d < 4; ++d) lo[d] = std::min(lo[d], at[d]), hi[d] = std::max(hi[d], at[d]);
  }
  INFO("nodes differing: " << differ << " of " << generic.size() << " in x " << lo[0] << ".." << hi[0]
                           << ", y " << lo[1] << ".." << hi[1] << ", z " << lo[2] << ".." << hi[2]
                           << ", species " << lo[3] << ".." << hi[3] << "; first: generic " << first_generic
                           << ", tuned " << first_tuned);
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

/// One float Gray-Scott step of the tuned kernels with launch shape `ts` equals the generic step bit for bit.
void check_one_step(const GridRdParams& p, const grid_rd::TunedShape& ts, float dt) {
  auto generic = p;
  generic.kernel = Kernel::generic;
  const auto expected = run<float>(generic, 1, dt);
  World world{Box{}};
  auto& field = add_test_field<float>(world, p);
  const reactions::GrayScott<float> gs{static_cast<float>(p.reaction.gray_scott.F),
                                       static_cast<float>(p.reaction.gray_scott.k)};
  REQUIRE(grid_rd::rd_euler_tuned(p.kernel_params<float>(), gs, dt, field.current().data(),
                                  field.next().data(), 1, ts));
  field.swap();
  field.download();
  REQUIRE(field.host().size() == expected.size());
  CHECK(std::memcmp(field.host().data(), expected.data(), expected.size() * sizeof(float)) == 0);
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

TEST_CASE("tuned 2D kernels equal the generic step on grids with interior and periodic-image tiles",
          "[cuda][grid_rd]") {
  exec::set_backend(exec::Backend::cuda);
  for (int steps : {1, 2, 4, 8, 14}) {
    INFO("steps per launch " << steps);
    GridRdParams p = base({300, 200, 1, 1.0}, Stencil::seed9);  // fast tiles, aligned 16-byte copies
    p.steps_per_launch = steps;
    check_equal<float>(p, 3, 1.0);
    p.shape = {302, 130, 1, 1.0};  // unaligned rows: element-wise copies; faces: general path
    check_equal<float>(p, 3, 1.0);
    p.faces = {GridBoundary::dirichlet, GridBoundary::neumann,  GridBoundary::periodic,
               GridBoundary::periodic,  GridBoundary::periodic, GridBoundary::periodic};
    p.dirichlet[0] = {0.8, 0.05};
    check_equal<float>(p, 3, 1.0);
    p.faces[2] = GridBoundary::neumann;
    p.faces[3] = GridBoundary::dirichlet;
    p.dirichlet[3] = {0.2, 0.3};
    check_equal<float>(p, 3, 1.0);
    p.stencil = Stencil::five;
    p.shape.h = 1.5;
    check_equal<double>(p, 3, 0.5);
  }
  exec::set_backend(exec::Backend::cpu);
}

TEST_CASE("chained one-step launches equal the generic step over many calls", "[cuda][grid_rd]") {
  // grids of one to a few waves of blocks (an H100 keeps 792 blocks of the default float tile resident,
  // 1056 of the double one), so that the launches of consecutive calls overlap; the first aligned
  // (16-byte window copies), the second not (element-wise copies) and with non-periodic faces in y
  exec::set_backend(exec::Backend::cuda);
  GridRdParams p = base({4096, 1540, 1, 1.0}, Stencil::seed9);
  check_equal<float>(p, 40, 1.0);
  p.shape = {3074, 1500, 1, 1.0};
  p.faces[2] = GridBoundary::neumann;
  p.faces[3] = GridBoundary::dirichlet;
  p.dirichlet[3] = {0.3, 0.2};
  check_equal<float>(p, 30, 1.0);
  p = base({2048, 2048, 1, 1.5}, Stencil::five);
  check_equal<double>(p, 20, 0.5);
  // 3D bulk-copy march: about two waves of 64-plane chunks on an H100 (a counter per y tile and chunk)
  p = base({512, 512, 256, 1.0}, Stencil::seven);
  check_equal<float>(p, 20, 0.5);
  p.shape = {256, 256, 512, 1.0};
  p.faces[2] = GridBoundary::neumann;
  p.faces[3] = GridBoundary::neumann;
  p.faces[4] = GridBoundary::dirichlet;
  p.faces[5] = GridBoundary::dirichlet;
  p.dirichlet[4] = {0.9, 0.05};
  p.dirichlet[5] = {0.4, 0.3};
  check_equal<float>(p, 20, 0.5);
  p = base({512, 256, 256, 1.0}, Stencil::seven);
  check_equal<double>(p, 12, 0.5);
  exec::set_backend(exec::Backend::cpu);
}

TEST_CASE("a chain of one-step launches waits for whatever ran between two calls", "[cuda][grid_rd]") {
  // Between calls of the tuned system, the generic system steps the same field (a kernel on the stream)
  // and the host rescales species A (two copies); the chained launch after either must see their writes.
  exec::set_backend(exec::Backend::cuda);
  GridRdParams p = base({2048, 1024, 1, 1.0}, Stencil::seed9);
  const auto run_mixed = [&](Kernel tuned_or_generic) {
    World world{Box{}};
    auto& field = add_test_field<float>(world, p);
    GridRdParams q = p;
    q.kernel = tuned_or_generic;
    GridRdSystem<float> system(q, field);
    q.kernel = Kernel::generic;
    GridRdSystem<float> generic(q, field);
    int call = 0;
    const auto step = [&](GridRdSystem<float>& s) { s.run(world, StepContext{call++, 0.0, 1.0}); };
    for (int round = 0; round < 4; ++round) {
      step(system);
      step(system);
      step(generic);
      step(system);
      field.download();
      for (std::size_t i = 0; i < p.shape.cells(); ++i) field.host()[i] *= 0.97f;
      field.upload();
      step(system);
    }
    field.download();
    return field.host();
  };
  const auto generic = run_mixed(Kernel::generic);
  const auto tuned = run_mixed(Kernel::automatic);
  REQUIRE(generic.size() == tuned.size());
  CHECK(std::memcmp(generic.data(), tuned.data(), generic.size() * sizeof(float)) == 0);
  exec::set_backend(exec::Backend::cpu);
}

TEST_CASE("every block of a chained one-step launch counts its tile", "[cuda][grid_rd]") {
  exec::set_backend(exec::Backend::cuda);
  const GridRdParams p = base({600, 200, 1, 1.0}, Stencil::seed9);
  World world{Box{}};
  auto& field = add_test_field<float>(world, p);
  grid_rd::StepChainStorage storage(p.shape.ny, p.shape.nz);
  grid_rd::StepChain& chain = storage.chain;
  DeviceBuffer<unsigned>& counters = storage.counters;
  const reactions::GrayScott<float> gs{0.038f, 0.061f};
  const auto launch = [&](const grid_rd::TunedShape& ts) {
    REQUIRE(grid_rd::rd_euler_tuned(p.kernel_params<float>(), gs, 1.0f, field.current().data(),
                                    field.next().data(), 1, ts, &chain));
    field.swap();
  };
  // window 16 rows (14 output rows): 5 x 15 tiles. The first launch follows other work (the field's
  // upload): it waits for the whole grid and does not count; the second starts counting.
  grid_rd::TunedShape sixteen;
  sixteen.tile1_rows = sixteen.tile1_rows_unchained = 16;
  launch(sixteen);
  CHECK_FALSE(chain.counted);
  for (int k = 0; k < 6; ++k) launch(sixteen);
  CHECK(chain.counted);
  CHECK(chain.launches == 6);
  CHECK(chain.per_launch == 5);
  CHECK(chain.used == 15);
  CHECK(chain.serial == cuda::enqueue_serial());
  CHECK(chain.last_out == field.current().data());
  auto counts = counters.to_host();
  CHECK(std::count(counts.begin(), counts.begin() + 15, 6u * 5u) == 15);
  CHECK(std::count(counts.begin() + 15, counts.end(), 0u) == p.shape.ny - 15);
  // the download above was work on the stream: the next launch does not count (and takes the unchained
  // window, 16 rows: the counts stay); then another tiling (window 8 rows: 6 output rows -> 34 tile
  // rows) restarts the counts from zero
  grid_rd::TunedShape eight;
  eight.tile1_rows = 8;
  launch(eight);
  CHECK_FALSE(chain.counted);
  CHECK(chain.launches == 6);
  launch(eight);
  launch(eight);
  CHECK(chain.counted);
  CHECK(chain.launches == 2);
  CHECK(chain.used == 34);
  counts = counters.to_host();
  CHECK(std::count(counts.begin(), counts.begin() + 34, 2u * 5u) == 34);
  CHECK(std::count(counts.begin() + 34, counts.end(), 0u) == p.shape.ny - 34);
  // every kind of work on the stream moves the serial on, so that the next launch waits for it
  std::uint64_t serial = cuda::enqueue_serial();
  counters.zero();
  CHECK(cuda::enqueue_serial() > serial);
  serial = cuda::enqueue_serial();
  field.download();
  CHECK(cuda::enqueue_serial() > serial);
  serial = cuda::enqueue_serial();
  GridRdParams q = p;
  q.kernel = Kernel::generic;
  GridRdSystem<float>(q, field).run(world, StepContext{0, 0.0, 1.0});
  CHECK(cuda::enqueue_serial() > serial);
  // after that other work, a launch does not count (the default: its unchained 16-row window); the next
  // one counts again (32-row window: a new tiling, so the counts restart)
  launch({});
  CHECK_FALSE(chain.counted);
  launch({});
  CHECK(chain.counted);
  CHECK(chain.launches == 1);
  CHECK(chain.used == 7);
  exec::set_backend(exec::Backend::cpu);
}

TEST_CASE("every block of a chained 3D bulk-copy launch counts its tile", "[cuda][grid_rd]") {
  exec::set_backend(exec::Backend::cuda);
  const GridRdParams p = base({200, 40, 70, 1.0}, Stencil::seven);
  World world{Box{}};
  auto& field = add_test_field<float>(world, p);
  grid_rd::StepChainStorage storage(p.shape.ny, p.shape.nz);
  grid_rd::StepChain& chain = storage.chain;
  DeviceBuffer<unsigned>& counters = storage.counters;
  const reactions::GrayScott<float> gs{0.038f, 0.061f};
  for (int k = 0; k < 5; ++k) {
    REQUIRE(grid_rd::rd_euler_tuned(p.kernel_params<float>(), gs, 0.5f, field.current().data(),
                                    field.next().data(), 1, {}, &chain));
    field.swap();
  }
  // tiles of 512 floats x 8 rows: one in x, five in y; the chunks depend on the device's block slots. The
  // first launch (after the upload) does not count.
  CHECK(chain.launches == 4);
  CHECK(chain.per_launch == 1);
  CHECK(chain.used % 5 == 0);
  const auto counts = counters.to_host();
  REQUIRE(chain.used <= counts.size());
  CHECK(std::count(counts.begin(), counts.begin() + chain.used, 4u) == static_cast<long>(chain.used));
  CHECK(std::count(counts.begin() + chain.used, counts.end(), 0u) ==
        static_cast<long>(counts.size() - chain.used));
  exec::set_backend(exec::Backend::cpu);
}

TEST_CASE("every launch shape of the tuned kernels equals the generic step", "[cuda][grid_rd]") {
  exec::set_backend(exec::Backend::cuda);
  const auto compare = [](const GridRdParams& p, const grid_rd::TunedShape& ts, float dt) {
    auto generic = p;
    generic.kernel = Kernel::generic;
    generic.steps_per_launch = 1;
    const auto expected = run<float>(generic, p.steps_per_launch, dt);
    const RdParams<float> rp = p.kernel_params<float>();
    World world{Box{}};
    auto& field = add_test_field<float>(world, p);
    const reactions::GrayScott<float> gs{static_cast<float>(p.reaction.gray_scott.F),
                                         static_cast<float>(p.reaction.gray_scott.k)};
    REQUIRE(grid_rd::rd_euler_tuned(rp, gs, dt, field.current().data(), field.next().data(),
                                    p.steps_per_launch, ts));
    field.swap();
    field.download();
    REQUIRE(field.host().size() == expected.size());
    CHECK(std::memcmp(field.host().data(), expected.data(), expected.size() * sizeof(float)) == 0);
  };
  for (int rows : {1, 2, 4}) {
    grid_rd::TunedShape ts;
    ts.rows_2d = rows;
    compare(base({150, 90, 1, 1.0}, Stencil::seed9), ts, 1.0f);
  }
  for (int threads : {128, 256})
    for (int tile1_rows : {8, 16, 32, 64}) {
      grid_rd::TunedShape ts;
      ts.tile1_rows = tile1_rows;
      ts.tile1_threads = threads;
      compare(base({600, 200, 1, 1.0}, Stencil::seed9), ts, 1.0f);
      compare(base({602, 150, 1, 1.0}, Stencil::seed9), ts, 1.0f);
    }
  for (int tile_rows : {32, 48})
    for (int steps : {2, 4, 8}) {
      grid_rd::TunedShape ts;
      ts.tile_rows = tile_rows;
      GridRdParams p = base({300, 200, 1, 1.0}, Stencil::seed9);
      p.steps_per_launch = steps;
      compare(p, ts, 1.0f);
    }
  for (int planes : {4, 8})
    for (const GridShape shape : {GridShape{150, 30, 41, 1.0}, GridShape{202, 40, 70, 1.0}}) {
      grid_rd::TunedShape ts;
      ts.bulk = false;
      ts.streaming = false;
      ts.block_3d = planes;
      GridRdParams p = base(shape, Stencil::seven);
      p.steps_per_launch = 2;
      compare(p, ts, 0.5f);
      p.faces.fill(GridBoundary::neumann);
      p.faces[4] = GridBoundary::dirichlet;
      compare(p, ts, 0.5f);
    }
  for (int rows : {1, 2, 4})
    for (bool z_middle : {false, true}) {
      grid_rd::TunedShape ts;
      ts.bulk = false;
      ts.streaming = false;
      ts.block_3d = 0;
      ts.rows_3d = rows;
      ts.z_middle = z_middle;
      GridRdParams p = base({150, 30, 41, 1.0}, Stencil::seven);
      p.steps_per_launch = 2;
      compare(p, ts, 0.5f);
    }
  exec::set_backend(exec::Backend::cpu);
}

TEST_CASE("every launch shape of the streaming 3D kernel equals the generic step", "[cuda][grid_rd]") {
  exec::set_backend(exec::Backend::cuda);
  const auto compare = [](GridRdParams p, const grid_rd::TunedShape& ts, float dt) {
    INFO("grid " << p.shape.nx << " x " << p.shape.ny << " x " << p.shape.nz << ", warps "
                 << ts.stream.warps_3d << ", planes " << ts.stream.planes_3d << ", ahead "
                 << ts.stream.depth_3d);
    check_one_step(p, ts, dt);
  };
  // rows of 33 vectors (a partial warp), 21 rows (a partial block), 75 planes (chunks that do not divide
  // the grid, both march directions), every boundary kind on the faces the chunks and warps end at
  for (const grid_rd::StreamShape& stream : grid_rd::kStreamShapes) {
    grid_rd::TunedShape ts;
    ts.bulk = false;
    ts.stream = stream;
    GridRdParams p = base({132, 21, 75, 1.0}, Stencil::seven);
    compare(p, ts, 0.5f);
    p.faces = {GridBoundary::dirichlet, GridBoundary::neumann,   GridBoundary::neumann,
               GridBoundary::dirichlet, GridBoundary::dirichlet, GridBoundary::neumann};
    p.dirichlet[0] = {1.0, 0.0};
    p.dirichlet[3] = {0.5, 0.25};
    p.dirichlet[4] = {0.2, 0.7};
    compare(p, ts, 0.5f);
  }
  exec::set_backend(exec::Backend::cpu);
}

TEST_CASE("every launch shape of the bulk-copy 3D kernel equals the generic step", "[cuda][grid_rd]") {
  exec::set_backend(exec::Backend::cuda);
  const auto compare = [](GridRdParams p, const grid_rd::TunedShape& ts, float dt) {
    INFO("grid " << p.shape.nx << " x " << p.shape.ny << " x " << p.shape.nz << ", tile bytes "
                 << ts.bulk_shape.tile_bytes << ", rows " << ts.bulk_shape.rows << ", buffers "
                 << ts.bulk_shape.buffers << ", planes " << ts.bulk_shape.planes << ", faces "
                 << static_cast<int>(p.faces[0]) << static_cast<int>(p.faces[2])
                 << static_cast<int>(p.faces[4]));
    check_one_step(p, ts, dt);
  };
  // 132 and 520 columns (full tiles of 128, 256 or 512 columns and a partial one, periodic x chunks at both
  // ends), 40 columns (one tile narrower than the tile: both x chunks in it), 21 and 9 rows (partial tiles),
  // 75, 37 and 11 planes (chunks that do not divide the grid, both march directions); periodic, Neumann and
  // Dirichlet faces on every axis
  using B = GridBoundary;
  const std::array<B, 6> face_sets[] = {
      {B::periodic, B::periodic, B::periodic, B::periodic, B::periodic, B::periodic},
      {B::dirichlet, B::neumann, B::neumann, B::dirichlet, B::dirichlet, B::neumann},
      {B::periodic, B::periodic, B::neumann, B::neumann, B::dirichlet, B::dirichlet},
      {B::neumann, B::dirichlet, B::periodic, B::periodic, B::periodic, B::periodic}};
  for (const grid_rd::BulkShape& bulk : grid_rd::kBulkShapes)
    for (const GridShape shape :
         {GridShape{132, 21, 75, 1.0}, GridShape{40, 20, 37, 1.0}, GridShape{520, 9, 11, 1.0}})
      for (const auto& faces : face_sets) {
        grid_rd::TunedShape ts;
        ts.bulk_shape = bulk;
        GridRdParams p = base(shape, Stencil::seven);
        p.faces = faces;
        p.dirichlet[0] = {1.0, 0.0};
        p.dirichlet[1] = {0.3, 0.6};
        p.dirichlet[3] = {0.5, 0.25};
        p.dirichlet[4] = {0.2, 0.7};
        p.dirichlet[5] = {0.9, 0.1};
        compare(p, ts, 0.5f);
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
  p = base({100, 40, 50, 1.0}, Stencil::seven);  // interior blocks on the fast path
  check_equal<float>(p, 3, 0.5);
  p.shape = {202, 40, 70, 1.0};  // several z chunks of blocks, odd row length
  check_equal<float>(p, 3, 0.5);
  check_equal<double>(p, 2, 0.5);
  p.faces.fill(GridBoundary::neumann);
  p.faces[0] = GridBoundary::dirichlet;
  p.dirichlet[0] = {1.0, 0.0};
  check_equal<float>(p, 3, 0.5);
  p.shape = {132, 21, 75, 1.0};  // the streaming kernel (nx a multiple of 4), in double
  check_equal<double>(p, 3, 0.5);
  exec::set_backend(exec::Backend::cpu);
}
