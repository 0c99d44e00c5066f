/// @file grid_rd_stream.cu
/// Streaming one-step kernel of the 3D grid reaction-diffusion Euler step (declared in grid_rd_stream.hpp,
/// called by rd_euler_tuned).
///
/// A thread owns four consecutive x nodes (one 16-byte vector of floats, two of doubles) of one (x, y)
/// row and marches a chunk of planes through a register ring: the plane ahead is requested D iterations
/// before it is needed, so every warp keeps D vectors per species in flight without waiting on anything,
/// and there are no block barriers (each warp streams on its own). The x-neighbours come from the
/// neighbouring lanes by warp shuffles (the two edge lanes load theirs), the y-neighbours are the centre
/// rows of the warps above and below, read again through L1. Every node is read from DRAM once per step,
/// except the two halo planes of a chunk; chunks march in alternating directions, so that two
/// neighbouring chunks read their shared halo at about the same time (from L2).
///
/// Results equal the generic EulerStep bit for bit: the same stencil and update functions, with the z
/// neighbours passed in march order, which only swaps the operands of the commutative up + down.
///
/// An earlier 2D variant (rows instead of planes, every row with its x-neighbours) reached 78-80 % of the
/// copy bandwidth against the shared-memory tile's 82.5 % and was dropped (BENCHMARKS.md).
///
/// Requirements (checked by the launcher): nx a multiple of 4 and 16-byte aligned species arrays.

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "cuda/pdl.cuh"
#include "cuda/runtime.hpp"
#include "modules/grid_rd/grid_rd_common.cuh"
#include "modules/grid_rd/grid_rd_stream.hpp"

namespace tissue::grid_rd {

namespace {

/// Four consecutive x nodes of one species.
template <class Real>
struct Quad {
  Real v[4];
};

/// Four values at p (16-byte aligned) through the read-only cache.
template <class Real>
__device__ __forceinline__ Quad<Real> load_quad(const Real* __restrict__ p) {
  Quad<Real> q;
  if constexpr (std::is_same_v<Real, float>) {
    const float4 t = __ldg(reinterpret_cast<const float4*>(p));
    q.v[0] = t.x, q.v[1] = t.y, q.v[2] = t.z, q.v[3] = t.w;
  } else {
    const double2 a = __ldg(reinterpret_cast<const double2*>(p)),
                  b = __ldg(reinterpret_cast<const double2*>(p) + 1);
    q.v[0] = a.x, q.v[1] = a.y, q.v[2] = b.x, q.v[3] = b.y;
  }
  return q;
}

template <class Real>
__device__ __forceinline__ void store_quad(Real* p, const Real (&v)[4]) {
  if constexpr (std::is_same_v<Real, float>) {
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    reinterpret_cast<double2*>(p)[0] = make_double2(v[0], v[1]);
    reinterpret_cast<double2*>(p)[1] = make_double2(v[2], v[3]);
  }
}

/// Nodes x4 .. x4 + 3 of row (y, z) of species s (data u); y and z may lie one node outside the grid
/// (ghost rows and planes from the boundary rules).
template <class Real>
__device__ __forceinline__ Quad<Real> row_quad(const GridGeometry<Real>& g, const Real* __restrict__ u, int s,
                                               int x4, int y, int z) {
  if (y >= 0 && y < g.ny && z >= 0 && z < g.nz) return load_quad(u + g.index(x4, y, z));
  Quad<Real> q;
#pragma unroll
  for (int i = 0; i < 4; ++i) q.v[i] = g.sample(u, s, x4 + i, y, z);
  return q;
}

/// A row of four nodes with the west neighbour of the first and the east neighbour of the last.
template <class Real>
struct Strip {
  Quad<Real> q;
  Real west, east;  ///< loaded by the warp's edge lanes, filled from the neighbouring lanes at first use
};

/// The edge lanes' outer neighbours of row (y, z): lane 0 requests x4 - 1 into `west`, the last lane inside
/// the row x4 + 4 into `east`. Inside the grid these are plain (predicated) loads; only lanes at a face
/// take the boundary rules, which would otherwise serialise two long divergent branches per row.
template <class Real>
__device__ __forceinline__ void request_edges(const GridGeometry<Real>& g, const Real* __restrict__ u, int s,
                                              int x4, int y, int z, int lane, Real& west, Real& east) {
  const bool w = lane == 0, e = lane == 31 || x4 + 4 >= g.nx;
  if (x4 >= 4 && x4 + 4 < g.nx && y >= 0 && y < g.ny && z >= 0 && z < g.nz) {
    const Real* row = u + g.index(x4, y, z);
    if (w) west = __ldg(row - 1);
    if (e) east = __ldg(row + 4);
  } else {
    if (w) west = g.sample(u, s, x4 - 1, y, z);
    if (e) east = g.sample(u, s, x4 + 4, y, z);
  }
}

/// Completes the outer neighbours of a requested strip from the neighbouring lanes (every lane of the
/// warp calls it).
template <class Real>
__device__ __forceinline__ void complete_strip(const GridGeometry<Real>& g, int x4, int lane,
                                               Strip<Real>& r) {
  const Real w = __shfl_up_sync(0xffffffffu, r.q.v[3], 1), e = __shfl_down_sync(0xffffffffu, r.q.v[0], 1);
  if (lane != 0) r.west = w;
  if (!(lane == 31 || x4 + 4 >= g.nx)) r.east = e;
}

/// Euler update of four nodes from their values and Laplacians; stores them when `active`.
template <class Real, class Reaction>
__device__ __forceinline__ void update_quad(const RdParams<Real>& p, const Reaction& reaction, Real dt,
                                            const Quad<Real> (&c)[2], const Real (&lap)[2][4], Real* out,
                                            std::size_t o, bool active) {
  Real na[4], nb[4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
    euler_node(p, reaction, dt, c[0].v[i], c[1].v[i], lap[0][i], lap[1][i], na[i], nb[i]);
  if (active) {
    store_quad(out + o, na);
    store_quad(out + p.grid.cells() + o, nb);
  }
}

/// March state of one species: the rows (planes) behind, at and ahead of the one computed, and the D - 1
/// requested further ahead (arrays of one element stand in for D = 1).
template <class T, int D>
struct Ring {
  T behind, middle, ahead;
  T queue[D > 1 ? D - 1 : 1];
  /// After an iteration: every strip moves one place back, `fresh` (requested D iterations before it is
  /// needed as `ahead`) joins at the end of the queue.
  __device__ __forceinline__ void advance(const T& fresh) {
    behind = middle;
    middle = ahead;
    if constexpr (D == 1) {
      ahead = fresh;
    } else {
      ahead = queue[0];
#pragma unroll
      for (int i = 0; i + 1 < D - 1; ++i) queue[i] = queue[i + 1];
      queue[D - 2] = fresh;
    }
  }
};

// ---------------------------------------------------------------------------------------------------
// 3D (seven): block (32, W); warp w owns columns (bx 32 + lane) 4 + 0..3 of row by W + w and marches the
// RZ planes of chunk blockIdx.z. Slot k of the march is plane first + step (k - 1): at iteration r the
// planes behind, at and ahead are slots r, r + 1 and r + 2, and slot r + 2 + D is requested. The march
// loop is not unrolled: fully unrolled marches of 16-64 planes overflow the instruction cache (warps at
// different planes then stall on instruction fetch, 3x slower).

template <class Real, class Reaction, int W, int RZ, int D>
__global__ void __launch_bounds__(32 * W) rd_stream_3d(RdParams<Real> p, Reaction reaction, Real dt,
                                                       const Real* __restrict__ in, Real* __restrict__ out) {
  static_assert(D >= 1, "planes are requested at least one iteration ahead");
  const GridGeometry<Real>& g = p.grid;
  cuda::pdl_prologue();
  const int lane = static_cast<int>(threadIdx.x);
  const int x4 = (static_cast<int>(blockIdx.x) * 32 + lane) * 4;
  const int y = static_cast<int>(blockIdx.y) * W + static_cast<int>(threadIdx.y);
  if (y >= g.ny) return;  // the whole warp is past the grid
  const bool active = x4 < g.nx;
  const Chunk ch = chunk_of(static_cast<int>(blockIdx.z), RZ, g.nz);
  const std::size_t n = g.cells();
  const auto request = [&](int k, int s) {
    Quad<Real> q{};
    if (active && k <= ch.count + 1)
      q = row_quad(g, in + s * n, s, x4, y, max(min(ch.first + ch.step * (k - 1), g.nz), -1));
    return q;
  };
  Ring<Quad<Real>, D> ring[2];
#pragma unroll
  for (int s = 0; s < 2; ++s) {
    ring[s].behind = request(0, s);
    ring[s].middle = request(1, s);
    ring[s].ahead = request(2, s);
#pragma unroll
    for (int i = 0; i + 1 < D; ++i) ring[s].queue[i] = request(3 + i, s);
  }
#pragma unroll 1
  for (int r = 0; r < ch.count; ++r) {
    const int z = ch.first + ch.step * r;
    Quad<Real> fresh[2];
#pragma unroll
    for (int s = 0; s < 2; ++s) fresh[s] = request(r + 2 + D, s);
    Real lap[2][4];
    Quad<Real> c[2];
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      const Real* u = in + s * n;
      Quad<Real> no{}, so{};
      Strip<Real> m{ring[s].middle, Real(0), Real(0)};
      if (active) {
        no = row_quad(g, u, s, x4, y + 1, z);
        so = row_quad(g, u, s, x4, y - 1, z);
        request_edges(g, u, s, x4, y, z, lane, m.west, m.east);
      }
      complete_strip(g, x4, lane, m);
      const Quad<Real>&a = ring[s].ahead, &b = ring[s].behind;
      c[s] = m.q;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const Real mw = i > 0 ? m.q.v[i - 1] : m.west, me = i < 3 ? m.q.v[i + 1] : m.east;
        lap[s][i] = seven_point(no.v[i], mw, m.q.v[i], me, so.v[i], a.v[i], b.v[i], p.inv_h2);
      }
    }
    update_quad(p, reaction, dt, c, lap, out, g.index(x4, y, z), active);
#pragma unroll
    for (int s = 0; s < 2; ++s) ring[s].advance(fresh[s]);
  }
}

template <class Real, class Reaction, int W, int RZ, int D>
void launch_3d(const RdParams<Real>& p, const Reaction& r, Real dt, const Real* in, Real* out) {
  const dim3 grid((p.grid.nx + 127) / 128, (p.grid.ny + W - 1) / W, (p.grid.nz + RZ - 1) / RZ);
  cuda::launch_pdl("rd_stream_3d", rd_stream_3d<Real, Reaction, W, RZ, D>, grid, dim3(32, W), 0, nullptr, p,
                   r, dt, in, out);
  cuda::check_last_launch("rd_stream_3d");
}

[[noreturn]] void unknown_shape(int warps, int chunk, int depth) {
  throw std::invalid_argument("no streaming grid-RD kernel compiled for " + std::to_string(warps) +
                              " warps, " + std::to_string(chunk) + " per chunk, " + std::to_string(depth) +
                              " ahead");
}

}  // namespace

template <class Real, class Reaction>
void rd_stream_3d(const StreamShape& t, const RdParams<Real>& p, const Reaction& r, Real dt, const Real* in,
                  Real* out) {
  const StreamShape d{};
  const bool is_default = t.warps_3d == d.warps_3d && t.planes_3d == d.planes_3d && t.depth_3d == d.depth_3d;
  if constexpr (kSweepShapes<Reaction>) {
    if (!is_default) {
      const auto is = [&](int w, int rz, int dd) {
        return t.warps_3d == w && t.planes_3d == rz && t.depth_3d == dd;
      };
      if (is(8, 32, 1)) return launch_3d<Real, Reaction, 8, 32, 1>(p, r, dt, in, out);
      if (is(8, 32, 2)) return launch_3d<Real, Reaction, 8, 32, 2>(p, r, dt, in, out);
      if (is(4, 32, 2)) return launch_3d<Real, Reaction, 4, 32, 2>(p, r, dt, in, out);
      if (is(4, 32, 3)) return launch_3d<Real, Reaction, 4, 32, 3>(p, r, dt, in, out);
      if (is(4, 64, 2)) return launch_3d<Real, Reaction, 4, 64, 2>(p, r, dt, in, out);
      if (is(16, 32, 1)) return launch_3d<Real, Reaction, 16, 32, 1>(p, r, dt, in, out);
      unknown_shape(t.warps_3d, t.planes_3d, t.depth_3d);
    }
  }
  launch_3d<Real, Reaction, 4, 32, 1>(p, r, dt, in, out);
}

#define TISSUE_STREAM_INSTANTIATE(Real, Reaction)                                                           \
  template void rd_stream_3d(const StreamShape&, const RdParams<Real>&, const Reaction&, Real, const Real*, \
                             Real*);
TISSUE_GRID_RD_REACTIONS(TISSUE_STREAM_INSTANTIATE)
#undef TISSUE_STREAM_INSTANTIATE

}  // namespace tissue::grid_rd
