/// @file grid_rd_bulk.cu
/// Bulk-copy z-march of the 3D grid reaction-diffusion Euler step (declared in grid_rd_bulk.hpp, called by
/// rd_euler_tuned).
///
/// A block owns a tile of TX x TY nodes (TX = TXB bytes of a row; by default 2048 bytes, 512 floats or 256
/// doubles, by 8 rows) and marches a chunk of planes along z. Every plane of the tile with its halo (one row
/// above and below, 16 bytes left and right, both species) lands in one of NB plane buffers in shared
/// memory by bulk copies (cp.async.bulk: one per row and species, completion counted in bytes on the
/// buffer's `full` mbarrier). The copies are issued by a producer warp; the compute warps (one thread per
/// column, marching the tile's rows) compute plane z from the buffers of z - 1, z and z + 1 while the next
/// NB - 3 planes are in flight, and release a buffer by arriving on its `empty` mbarrier. There is no block
/// barrier in the march: the copies need no registers and no waiting threads, and every value the stencil
/// reads comes from shared memory, so L2 sees each byte about once (against three times for the
/// register-streaming kernel, whose neighbours come through L1).
///
/// What the measurements chose (BENCHMARKS.md): issuing the copies from the compute warps between block
/// barriers left them waiting on the slowest warp (62-67 % of the copy bandwidth); a producer warp and a
/// path without ghost selects for tiles and planes away from non-periodic faces reached 77-81 % with
/// 512-byte tiles; 1-2 KB tiles read the x halo (a 32-byte sector on each side of every row) relatively
/// less and reached 86-87 %. Launched one after another, chunks of 64 planes beat both shorter ones (more
/// halo planes) and one long march per tile in a single wave (82 %); chained launches (StepChain: the next
/// step's blocks start on the multiprocessors the last chunks leave idle) favour chunks of 32.
///
/// Boundaries: rows, planes and 16-byte x chunks of a periodic face are copied from the opposite side;
/// nothing is copied beyond a Neumann or Dirichlet face, and the stencil takes the ghost value there
/// instead (for the seven-point stencil a face neighbour's Neumann mirror is the centre node itself).
///
/// Results equal the generic EulerStep bit for bit: the same stencil (operands in the same order) and
/// update functions.

#include <cuda_runtime.h>
#include <cuda/ptx>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cuda/pdl.cuh"
#include "cuda/runtime.hpp"
#include "modules/grid_rd/grid_rd_bulk.hpp"
#include "modules/grid_rd/grid_rd_common.cuh"
#include "modules/grid_rd/step_chain.cuh"

namespace tissue::grid_rd {

namespace {

namespace ptx = ::cuda::ptx;

/// Shape of a block: a tile of TX = TXB bytes of x (TXB / sizeof(Real) nodes) by TY rows, NB plane
/// buffers of [species 2][TY + 2 rows][WX] in shared memory with two mbarriers each (full, empty), and
/// the warps: enough compute warps for one thread per column (at least 8), plus the producer warp.
template <class Real, int TXB, int TY, int NB>
struct BulkConfig {
  static constexpr int HX = 16 / static_cast<int>(sizeof(Real));   ///< x halo: one 16-byte chunk
  static constexpr int TX = TXB / static_cast<int>(sizeof(Real));  ///< tile columns
  static constexpr int WX = TX + 2 * HX, WY = TY + 2;
  static constexpr int SPECIES = WX * WY;  ///< elements of one species in a buffer
  static constexpr int PLANE = 2 * SPECIES;
  static constexpr int COMPUTE_WARPS = TX / 32 > 8 ? TX / 32 : 8;
  static constexpr int THREADS = 32 * (COMPUTE_WARPS + 1);
  static constexpr int GROUPS = 32 * COMPUTE_WARPS / TX;  ///< row groups
  static constexpr int RY = TY / GROUPS;                  ///< rows per thread
  static constexpr std::size_t SMEM =
      static_cast<std::size_t>(NB) * PLANE * sizeof(Real) + 2 * NB * sizeof(std::uint64_t);
  /// blocks per multiprocessor the shared memory allows (227 KiB per multiprocessor on sm_90, 1 KiB of it
  /// reserved per block), at most 3: the register budget of __launch_bounds__
  static constexpr int FIT = static_cast<int>(227 * 1024 / (SMEM + 1024));
  static constexpr int MIN_BLOCKS = FIT < 1 ? 1 : FIT > 3 ? 3 : FIT;
  static_assert(32 * COMPUTE_WARPS % TX == 0 && TY % GROUPS == 0,
                "the row groups must split the tile evenly");
  static_assert(NB >= 3, "the stencil reads three planes");
};

/// Maps an index one node outside [0, n) onto the node a periodic face copies it from. @return false when
/// it lies outside a non-periodic face (nothing is copied; the stencil takes the ghost value) or more than
/// one node outside.
__device__ __forceinline__ bool copy_source(int& i, int n, GridBoundary low, GridBoundary high) {
  if (i >= 0 && i < n) return true;
  if (i < -1 || i > n) return false;
  if ((i < 0 ? low : high) != GridBoundary::periodic) return false;
  i = i < 0 ? n - 1 : 0;
  return true;
}

/// The value the stencil takes for a face neighbour: `loaded` (from the plane buffers) unless the
/// neighbour lies outside face f and that face is not periodic; then the ghost value of
/// GridGeometry::sample: the centre (the Neumann mirror of a face neighbour) or the Dirichlet value.
template <class Real>
__device__ __forceinline__ Real neighbour(const GridGeometry<Real>& g, bool outside, int f, int s,
                                          Real centre, Real loaded) {
  if (!outside || g.face[f] == GridBoundary::periodic) return loaded;
  return g.face[f] == GridBoundary::neumann ? centre : g.dirichlet[f][s];
}

/// Waits until the phase of `bar` with the given parity has completed.
__device__ __forceinline__ void wait_phase(std::uint64_t* bar, std::uint32_t parity) {
  while (!ptx::mbarrier_try_wait_parity(bar, parity)) {
  }
}

template <class Real, class Reaction, int TXB, int TY, int NB>
__global__ void __launch_bounds__(BulkConfig<Real, TXB, TY, NB>::THREADS,
                                  BulkConfig<Real, TXB, TY, NB>::MIN_BLOCKS)
    rd_bulk_3d(RdParams<Real> p, Reaction reaction, Real dt, const Real* __restrict__ in,
               Real* __restrict__ out, int chunk, ChainArgs chain) {
  using L = BulkConfig<Real, TXB, TY, NB>;
  constexpr int HX = L::HX, TX = L::TX, WX = L::WX, WY = L::WY, RY = L::RY, kComputeWarps = L::COMPUTE_WARPS;
  extern __shared__ __align__(128) unsigned char smem_bytes[];
  Real* planes = reinterpret_cast<Real*>(smem_bytes);  // [NB][PLANE]
  // full[b]: the copies of the plane in buffer b have landed; empty[b]: every compute warp is done with it
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(smem_bytes + NB * L::PLANE * sizeof(Real));
  std::uint64_t* empty = full + NB;
  const GridGeometry<Real>& g = p.grid;
  const std::size_t n = g.cells();
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int x0 = static_cast<int>(blockIdx.x) * TX, y0 = static_cast<int>(blockIdx.y) * TY;
  // a chained launch takes the chunks rotated (StepChain); counter: (y tile, chunk)
  const int chunks = static_cast<int>(gridDim.z), tiles_y = static_cast<int>(gridDim.y);
  const int bz = (static_cast<int>(blockIdx.z) + chain.shift) % chunks;
  const Chunk ch = chunk_of(bz, chunk, g.nz);
  const int slots = ch.count + 2;  // slot k holds plane first + step (k - 1), in buffer k % NB

  if (tid == 0) {
    for (int b = 0; b < NB; ++b) {
      ptx::mbarrier_init(&full[b], 1);
      ptx::mbarrier_init(&empty[b], kComputeWarps);
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  if (chain.wait_grid) cuda::pdl_wait();
  cuda::pdl_launch_dependents();  // on every path: the next launch's blocks wait only on started ones

  if (warp == kComputeWarps) {
    if (!chain.wait_grid) {
      // the tiles the copies read, of the previous launch: y tiles and chunks beside this one (periodic)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz)
          wait_for_count(chain.counters[periodic_index(static_cast<int>(blockIdx.y) + dy, tiles_y) * chunks +
                                        periodic_index(bz + dz, chunks)],
                         chain.target);
      acquire_counted();
      ptx::fence_proxy_async(ptx::space_global);  // the bulk copies (async proxy) read after the acquire
    }
    // The producer warp: slot k goes into buffer k % NB once the compute warps are done with slot k - NB.
    // Lane l copies rows l, l + 32, ... of [species][WY] (the span of the row inside the grid, plus the
    // periodic x chunks at the ends), announcing the bytes on full[b] before each copy; lane 0 arrives once
    // every lane has announced its bytes.
    const int lo = max(x0 - HX, 0), hi = min(x0 + TX + HX, g.nx);
    const bool wrap_x = g.face[0] == GridBoundary::periodic;
    for (int k = 0; k < slots; ++k) {
      const int b = k % NB;
      if (k >= NB) {
        wait_phase(&empty[b], static_cast<std::uint32_t>((k / NB - 1) & 1));
        // the compute warps' reads of the buffer (generic proxy) come before the copies (async proxy)
        ptx::fence_proxy_async(ptx::space_shared);
      }
      int z = ch.first + ch.step * (k - 1);
      if (copy_source(z, g.nz, g.face[4], g.face[5]))
        for (int i = lane; i < 2 * WY; i += 32) {
          const int s = i / WY, r = i - s * WY;
          int y = y0 - 1 + r;
          if (!copy_source(y, g.ny, g.face[2], g.face[3])) continue;
          const Real* row = in + s * n + g.index(0, y, z);
          Real* dst = planes + b * L::PLANE + s * L::SPECIES + r * WX;
          const auto copy = [&](int to, int from, int count) {
            const auto bytes = static_cast<std::uint32_t>(count * sizeof(Real));
            ptx::mbarrier_expect_tx(ptx::sem_relaxed, ptx::scope_cta, ptx::space_shared, &full[b], bytes);
            ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, dst + to, row + from, bytes, &full[b]);
          };
          copy(lo - (x0 - HX), lo, hi - lo);
          if (wrap_x && x0 == 0) copy(0, g.nx - HX, HX);
          if (wrap_x && x0 + TX >= g.nx) copy(HX + g.nx - x0, 0, HX);
        }
      __syncwarp();
      if (lane == 0) ptx::mbarrier_arrive(&full[b]);
    }
    return;
  }

  // Compute warps: thread (x, row group) marches rows ry0 .. ry0 + RY - 1 of column x through each plane.
  const int x = tid % TX, ry0 = tid / TX * RY, gx = x0 + x;
  const bool west_out = gx == 0, east_out = gx == g.nx - 1, active_x = gx < g.nx;
  // tiles away from every non-periodic face in x and y (the planes away from one in z) read every
  // neighbour from the buffers: no ghost values to select
  const bool xy_plain = (x0 > 0 || g.face[0] == GridBoundary::periodic) &&
                        (x0 + TX < g.nx || g.face[1] == GridBoundary::periodic) &&
                        (y0 > 0 || g.face[2] == GridBoundary::periodic) &&
                        (y0 + TY < g.ny || g.face[3] == GridBoundary::periodic);
  const auto full_slot = [&](int k) { wait_phase(&full[k % NB], static_cast<std::uint32_t>((k / NB) & 1)); };
  full_slot(0);
  full_slot(1);
#pragma unroll 1
  for (int r = 0; r < ch.count; ++r) {
    full_slot(r + 2);
    const int z = ch.first + ch.step * r;
    const Real* behind = planes + (r % NB) * L::PLANE;
    const Real* middle = planes + ((r + 1) % NB) * L::PLANE;
    const Real* ahead = planes + ((r + 2) % NB) * L::PLANE;
    const Real* up = ch.step > 0 ? ahead : behind;  // plane z + 1
    const Real* down = ch.step > 0 ? behind : ahead;
    const bool up_out = z == g.nz - 1, down_out = z == 0;
    const bool plain = xy_plain && (!down_out || g.face[4] == GridBoundary::periodic) &&
                       (!up_out || g.face[5] == GridBoundary::periodic);
    const int at0 = (ry0 + 1) * WX + HX + x;  // window position of the thread's first node
    std::size_t o = g.index(gx, y0 + ry0, z);
    const auto march = [&](auto ghosts) {
      constexpr bool kGhosts = decltype(ghosts)::value;
      Real south[2], centre[2];
#pragma unroll
      for (int s = 0; s < 2; ++s) {
        south[s] = middle[s * L::SPECIES + at0 - WX];
        centre[s] = middle[s * L::SPECIES + at0];
      }
#pragma unroll
      for (int i = 0; i < RY; ++i) {
        const int gy = y0 + ry0 + i, at = at0 + i * WX;
        Real lap[2], north[2];
#pragma unroll
        for (int s = 0; s < 2; ++s) {
          const Real* m = middle + s * L::SPECIES + at;
          const Real c = centre[s];
          north[s] = m[WX];
          Real no = north[s], so = south[s], we = m[-1], ea = m[1], u = up[s * L::SPECIES + at],
               d = down[s * L::SPECIES + at];
          if constexpr (kGhosts) {
            no = neighbour(g, gy == g.ny - 1, 3, s, c, no);
            so = neighbour(g, gy == 0, 2, s, c, so);
            we = neighbour(g, west_out, 0, s, c, we);
            ea = neighbour(g, east_out, 1, s, c, ea);
            u = neighbour(g, up_out, 5, s, c, u);
            d = neighbour(g, down_out, 4, s, c, d);
          }
          lap[s] = seven_point(no, we, c, ea, so, u, d, p.inv_h2);
        }
        Real na, nb;
        euler_node(p, reaction, dt, centre[0], centre[1], lap[0], lap[1], na, nb);
        if (active_x && gy < g.ny) {
          out[o] = na;
          out[n + o] = nb;
        }
        o += static_cast<std::size_t>(g.nx);
#pragma unroll
        for (int s = 0; s < 2; ++s) south[s] = centre[s], centre[s] = north[s];
      }
    };
    if (plain)
      march(std::false_type{});
    else
      march(std::true_type{});
    __syncwarp();
    if (lane == 0) ptx::mbarrier_arrive(&empty[r % NB]);  // this warp is done with slot r
  }
  if (chain.counters) {  // the tile is written: release it to the next launch (compute warps only)
    asm volatile("bar.sync 1, %0;" ::"r"(32 * kComputeWarps) : "memory");
    if (tid == 0) release_count(chain.counters[static_cast<int>(blockIdx.y) * chunks + bz]);
  }
}

/// Blocks of `Kernel` the device holds at once (multiprocessors x resident blocks each), asked once.
/// @throws BackendError if the runtime cannot tell.
template <auto Kernel>
int block_slots(int threads, std::size_t smem) {
  static int slots = 0;
  if (slots == 0) {
    int device = 0, sms = 0, per_sm = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err == cudaSuccess)
      err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, threads, smem);
    if (err != cudaSuccess)
      throw BackendError(std::string("rd_bulk_3d occupancy: ") + cudaGetErrorString(err));
    slots = sms * (per_sm > 0 ? per_sm : 1);
  }
  return slots;
}

/// Launches one step with the shape's template parameters and chunks of shape.planes planes (a launch
/// that continues `chain`) or shape.unchained_planes (any other), or fewer where the grid would not give
/// every block slot of the device a chunk (0: the fewest chunks that do).
template <class Real, class Reaction, int TXB, int TY, int NB>
void launch_bulk_3d(const BulkShape& shape, const RdParams<Real>& p, const Reaction& r, Real dt,
                    const Real* in, Real* out, StepChain* chain) {
  using L = BulkConfig<Real, TXB, TY, NB>;
  constexpr auto kernel = rd_bulk_3d<Real, Reaction, TXB, TY, NB>;
  allow_dynamic_smem<kernel>(L::SMEM);  // before the occupancy query, which counts it
  const int bx = (p.grid.nx + L::TX - 1) / L::TX, by = (p.grid.ny + TY - 1) / TY;
  const int per_column = max(block_slots<kernel>(L::THREADS, L::SMEM) / (bx * by), 1);  // chunks that fill
  const int fill = (p.grid.nz + per_column - 1) / per_column;
  // after anything but the chain's last launch: the chunks that are fastest without the overlap
  const bool chained = continues_chain(chain, in, out);
  const int planes = chained ? shape.planes : shape.unchained_planes;
  const int chunk = planes > 0 ? min(planes, fill) : fill;
  const int bz = (p.grid.nz + chunk - 1) / chunk;
  const auto ubx = static_cast<unsigned>(bx), uby = static_cast<unsigned>(by),
             ubz = static_cast<unsigned>(bz);
  const ChainArgs args =  // a counter per (y tile, chunk)
      chained ? join_chain(chain, uby * ubz, ubx, ubz, in, out) : ChainArgs{};
  cuda::launch_pdl("rd_bulk_3d", kernel, dim3(ubx, uby, ubz), dim3(L::THREADS), L::SMEM, nullptr, p, r, dt,
                   in, out, chunk, args);
  cuda::check_last_launch("rd_bulk_3d");
  count_launch(chain, args, in, out);
}

}  // namespace

template <class Real, class Reaction>
void rd_bulk_3d(const BulkShape& t, const RdParams<Real>& p, const Reaction& r, Real dt, const Real* in,
                Real* out, StepChain* chain) {
  const auto is = [&](int bytes, int rows, int buffers) {
    return t.tile_bytes == bytes && t.rows == rows && t.buffers == buffers;
  };
  const BulkShape d{};
  if (is(d.tile_bytes, d.rows, d.buffers))
    return launch_bulk_3d<Real, Reaction, 2048, 8, 4>(t, p, r, dt, in, out, chain);
  if constexpr (kSweepShapes<Reaction>) {
    if (is(512, 16, 4)) return launch_bulk_3d<Real, Reaction, 512, 16, 4>(t, p, r, dt, in, out, chain);
    if (is(512, 16, 5)) return launch_bulk_3d<Real, Reaction, 512, 16, 5>(t, p, r, dt, in, out, chain);
    if (is(512, 8, 8)) return launch_bulk_3d<Real, Reaction, 512, 8, 8>(t, p, r, dt, in, out, chain);
    if (is(1024, 16, 5)) return launch_bulk_3d<Real, Reaction, 1024, 16, 5>(t, p, r, dt, in, out, chain);
    if (is(1024, 16, 4)) return launch_bulk_3d<Real, Reaction, 1024, 16, 4>(t, p, r, dt, in, out, chain);
    if (is(2048, 8, 5)) return launch_bulk_3d<Real, Reaction, 2048, 8, 5>(t, p, r, dt, in, out, chain);
    if (is(2048, 10, 4)) return launch_bulk_3d<Real, Reaction, 2048, 10, 4>(t, p, r, dt, in, out, chain);
  }
  throw std::invalid_argument("no bulk-copy grid-RD kernel compiled for tiles of " +
                              std::to_string(t.tile_bytes) + " bytes x " + std::to_string(t.rows) +
                              " rows and " + std::to_string(t.buffers) + " plane buffers");
}

#define TISSUE_BULK_INSTANTIATE(Real, Reaction)                                                         \
  template void rd_bulk_3d(const BulkShape&, const RdParams<Real>&, const Reaction&, Real, const Real*, \
                           Real*, StepChain*);
TISSUE_GRID_RD_REACTIONS(TISSUE_BULK_INSTANTIATE)
#undef TISSUE_BULK_INSTANTIATE

}  // namespace tissue::grid_rd
