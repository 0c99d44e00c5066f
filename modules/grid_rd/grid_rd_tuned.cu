#include <cuda_pipeline_primitives.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda/pdl.cuh"
#include "cuda/runtime.hpp"
#include "engine/exec/error.hpp"
#include "modules/grid_rd/grid_rd_common.cuh"
#include "modules/grid_rd/grid_rd_tuned.hpp"
#include "modules/grid_rd/step_chain.cuh"

namespace tissue::grid_rd {

namespace {

// ---------------------------------------------------------------------------------------------------
// One step per launch, 2D: thread (lane, warp) owns column x = block x + lane and RY consecutive rows. It
// requests the RY + 2 rows it reads (x - 1, x, x + 1 of both species, through the read-only cache) before
// computing anything, so a warp keeps 6 (RY + 2) 128-byte lines in flight and every thread issues its
// loads independently of the others (no shuffles, no barriers). The x-neighbours of one row hit lines the
// warp already requested, the rows shared with the warps above and below hit L1/L2: DRAM sees each byte
// once. Blocks away from every face use raw indices; the others go through GridGeometry::sample.

constexpr int kRowWarps = 8;  ///< warps per block (stacked in y), 2D and 3D one-step kernels

template <class Real, bool kFast>
__device__ __forceinline__ Real load2(const GridGeometry<Real>& g, const Real* __restrict__ u, int s, int x,
                                      int y) {
  if constexpr (kFast)
    return __ldg(u + static_cast<std::size_t>(y) * static_cast<std::size_t>(g.nx) + x);
  else
    return g.sample(u, s, x, y, 0);
}

template <int RY, class Real, class Reaction, Stencil S, bool kFast>
__device__ __forceinline__ void rows_2d(const RdParams<Real>& p, const Reaction& reaction, Real dt,
                                        const Real* __restrict__ in, Real* __restrict__ out, int x, int y0) {
  const GridGeometry<Real>& g = p.grid;
  const std::size_t n = g.cells();
  Real v[2][RY + 2][3];  // [species][row y0 - 1 + r][x - 1 + c]
#pragma unroll
  for (int s = 0; s < 2; ++s)
#pragma unroll
    for (int r = 0; r < RY + 2; ++r) {
      const int y = kFast || y0 - 1 + r <= g.ny ? y0 - 1 + r : g.ny;  // rows past y = ny are never used
#pragma unroll
      for (int c = 0; c < 3; ++c) v[s][r][c] = load2<Real, kFast>(g, in + s * n, s, x - 1 + c, y);
    }
#pragma unroll
  for (int r = 0; r < RY; ++r) {
    const int y = y0 + r;
    if (!kFast && y >= g.ny) break;
    Real lap[2];
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      const Real(*w)[3] = v[s] + r;  // rows y - 1, y, y + 1
      if constexpr (S == Stencil::five)
        lap[s] = five_point(w[2][1], w[1][0], w[1][1], w[1][2], w[0][1], p.inv_h2);
      else
        lap[s] = seed9(w[2][0], w[2][1], w[2][2], w[1][0], w[1][1], w[1][2], w[0][0], w[0][1], w[0][2]);
    }
    const std::size_t o = static_cast<std::size_t>(y) * static_cast<std::size_t>(g.nx) + x;
    euler_node(p, reaction, dt, v[0][r + 1][1], v[1][r + 1][1], lap[0], lap[1], out[o], out[n + o]);
  }
}

template <class Real, class Reaction, Stencil S, int RY>
__global__ void __launch_bounds__(32 * kRowWarps)
    rd_rows_2d(RdParams<Real> p, Reaction reaction, Real dt, const Real* __restrict__ in,
               Real* __restrict__ out) {
  const GridGeometry<Real>& g = p.grid;
  cuda::pdl_prologue();
  const int bx = static_cast<int>(blockIdx.x) * 32, by = static_cast<int>(blockIdx.y) * (kRowWarps * RY);
  const int x = bx + static_cast<int>(threadIdx.x), y0 = by + static_cast<int>(threadIdx.y) * RY;
  const bool fast =
      bx >= 1 && bx + 33 <= g.nx && by >= 1 && by + kRowWarps * RY + 1 <= g.ny;  // block-uniform
  if (fast)
    rows_2d<RY, Real, Reaction, S, true>(p, reaction, dt, in, out, x, y0);
  else if (x < g.nx && y0 < g.ny)
    rows_2d<RY, Real, Reaction, S, false>(p, reaction, dt, in, out, x, y0);
}

// ---------------------------------------------------------------------------------------------------
// One step per launch, 3D (seven-point): thread (lane, warp) owns column (x, y) and RZ consecutive planes;
// it requests the RZ + 2 centre values along z and the four in-plane neighbours of each of its planes up
// front. With kZMiddle the launch order is x, z, y (blockIdx.y walks z), so that the planes shared by
// z-neighbouring blocks are still in L2 when the second block reads them.

template <class Real, bool kFast>
__device__ __forceinline__ Real load3(const GridGeometry<Real>& g, const Real* __restrict__ u, int s, int x,
                                      int y, int z) {
  if constexpr (kFast)
    return __ldg(u + g.index(x, y, z));
  else
    return g.sample(u, s, x, y, z);
}

template <int RZ, class Real, class Reaction, bool kFast>
__device__ __forceinline__ void rows_3d(const RdParams<Real>& p, const Reaction& reaction, Real dt,
                                        const Real* __restrict__ in, Real* __restrict__ out, int x, int y,
                                        int z0) {
  const GridGeometry<Real>& g = p.grid;
  const std::size_t n = g.cells();
  Real c[2][RZ + 2];  // centre values of planes z0 - 1 .. z0 + RZ
#pragma unroll
  for (int s = 0; s < 2; ++s)
#pragma unroll
    for (int r = 0; r < RZ + 2; ++r) {
      const int z = kFast || z0 - 1 + r <= g.nz ? z0 - 1 + r : g.nz;
      c[s][r] = load3<Real, kFast>(g, in + s * n, s, x, y, z);
    }
#pragma unroll
  for (int r = 0; r < RZ; ++r) {
    const int z = z0 + r;
    if (!kFast && z >= g.nz) break;
    Real lap[2];
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      const Real* u = in + s * n;
      const Real e = load3<Real, kFast>(g, u, s, x + 1, y, z), w = load3<Real, kFast>(g, u, s, x - 1, y, z);
      const Real no = load3<Real, kFast>(g, u, s, x, y + 1, z), so = load3<Real, kFast>(g, u, s, x, y - 1, z);
      lap[s] = seven_point(no, w, c[s][r + 1], e, so, c[s][r + 2], c[s][r], p.inv_h2);
    }
    const std::size_t o = g.index(x, y, z);
    euler_node(p, reaction, dt, c[0][r + 1], c[1][r + 1], lap[0], lap[1], out[o], out[n + o]);
  }
}

template <class Real, class Reaction, int RZ, bool kZMiddle>
__global__ void __launch_bounds__(32 * kRowWarps)
    rd_rows_3d(RdParams<Real> p, Reaction reaction, Real dt, const Real* __restrict__ in,
               Real* __restrict__ out) {
  const GridGeometry<Real>& g = p.grid;
  cuda::pdl_prologue();
  const int bx = static_cast<int>(blockIdx.x) * 32;
  const int by = static_cast<int>(kZMiddle ? blockIdx.z : blockIdx.y) * kRowWarps;
  const int bz = static_cast<int>(kZMiddle ? blockIdx.y : blockIdx.z) * RZ;
  const int x = bx + static_cast<int>(threadIdx.x), y = by + static_cast<int>(threadIdx.y);
  const bool fast = bx >= 1 && bx + 33 <= g.nx && by >= 1 && by + kRowWarps + 1 <= g.ny && bz >= 1 &&
                    bz + RZ + 1 <= g.nz;  // block-uniform
  if (fast)
    rows_3d<RZ, Real, Reaction, true>(p, reaction, dt, in, out, x, y, bz);
  else if (x < g.nx && y < g.ny && bz < g.nz)
    rows_3d<RZ, Real, Reaction, false>(p, reaction, dt, in, out, x, y, bz);
}

// ---------------------------------------------------------------------------------------------------
// 2D, T > 1 steps per launch (temporal blocking). A window of kTileWidth x WY nodes (the output tile plus
// a halo of T nodes per side) is copied into shared memory once, the T steps run there (two buffers), the
// last step writes the TX x TY interior to global memory.
//
// Fast tiles (the window inside the grid, or crossing only periodic faces): asynchronous copies
// (cp.async, 16 bytes where aligned) fill the window; thread (lane, warp) owns column lane + 32 (warp % 4)
// and half of the rows, marching up with a 3 x 3 register window per species (three shared loads per
// species and node). Steps 1 .. T - 1 update every row 1 .. WY - 2 and every column: values within s of
// the window's edge are wrong after step s but never reach the interior, so no node needs a bounds
// check and the loops unroll completely. Tiles touching a non-periodic face take the general path: ghost
// positions are classified and refreshed from the boundary rules after every step.

/// Elements per 16-byte copy.
template <class Real>
constexpr int chunk_elements() {
  return 16 / static_cast<int>(sizeof(Real));
}

/// Copies the WX x WY window with origin (ox, oy), inside the grid, of both species into `buf` ([species
/// 2][WX * WY]) with cp.async (16-byte copies where the rows allow, else one element each), and waits for
/// it. Called by every thread of a block of kThreads; the caller synchronises the block. The 16-byte
/// copies read through L2 only (cp.async.cg); `coherent` makes the element-wise copies do so too (loads
/// through L1 may return lines cached before another kernel wrote them: a chained launch, StepChain).
template <class Real, int WX, int WY, int kThreads>
__device__ __forceinline__ void copy_window_async(const GridGeometry<Real>& g, const Real* __restrict__ in,
                                                  Real* buf, int ox, int oy, int tid, bool coherent = false) {
  constexpr int kChunk = chunk_elements<Real>(), AREA = WX * WY;
  const std::size_t n = g.cells();
  const auto source = [&](int s, int row, int c) {
    return in + s * n + static_cast<std::size_t>(oy + row) * static_cast<std::size_t>(g.nx) + ox + c;
  };
  if (WX % kChunk == 0 && ox % kChunk == 0 && g.nx % kChunk == 0) {
    constexpr int kPerRow = WX / kChunk, kPerSpecies = WY * kPerRow;
    for (int i = tid; i < 2 * kPerSpecies; i += kThreads) {
      const int s = i / kPerSpecies, k = i - s * kPerSpecies, row = k / kPerRow,
                c = (k - row * kPerRow) * kChunk;
      __pipeline_memcpy_async(buf + s * AREA + row * WX + c, source(s, row, c), 16);
    }
  } else if (coherent) {
    for (int i = tid; i < 2 * AREA; i += kThreads) {
      const int s = i / AREA, k = i - s * AREA, row = k / WX, c = k - row * WX;
      buf[i] = __ldcg(source(s, row, c));
    }
  } else {
    for (int i = tid; i < 2 * AREA; i += kThreads) {
      const int s = i / AREA, k = i - s * AREA, row = k / WX, c = k - row * WX;
      __pipeline_memcpy_async(buf + i, source(s, row, c), sizeof(Real));
    }
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
}

constexpr int kTileWidth = 128;                       ///< window columns: 4 warps x 32 lanes
constexpr int kTileThreadsX = 32, kTileThreadsY = 8;  ///< 256 threads

/// Kind of a window position with global coordinates (gx, gy): a real node (inside, or a periodic image
/// within R of the domain), a ghost within R of a non-periodic face, or far (more than R outside the
/// domain: never needed by the tile's interior, neither loaded nor computed).
enum : int { kReal = 0, kGhost = 1, kFar = 2 };
template <class Real>
__device__ int classify(const GridGeometry<Real>& g, int gx, int gy, int r) {
  if (gx < -r || gx >= g.nx + r || gy < -r || gy >= g.ny + r) return kFar;
  const bool ghost = (gx < 0 && g.face[0] != GridBoundary::periodic) ||
                     (gx >= g.nx && g.face[1] != GridBoundary::periodic) ||
                     (gy < 0 && g.face[2] != GridBoundary::periodic) ||
                     (gy >= g.ny && g.face[3] != GridBoundary::periodic);
  return ghost ? kGhost : kReal;
}

/// Ghost value at (gx, gy) from window buffer t (width wx, origin (ox, oy)) of species s: the rules and
/// axis order of GridGeometry::sample; the mirror of a ghost within R of a face lies in the window.
template <class Real>
__device__ Real ghost_value(const GridGeometry<Real>& g, const Real* t, int wx, int s, int gx, int gy, int ox,
                            int oy) {
  if (gx < 0 || gx >= g.nx) {
    const int f = gx < 0 ? 0 : 1;
    if (g.face[f] == GridBoundary::dirichlet) return g.dirichlet[f][s];
    if (g.face[f] == GridBoundary::neumann) gx = gx < 0 ? -1 - gx : 2 * g.nx - 1 - gx;
  }
  if (gy < 0 || gy >= g.ny) {
    const int f = gy < 0 ? 2 : 3;
    if (g.face[f] == GridBoundary::dirichlet) return g.dirichlet[f][s];
    if (g.face[f] == GridBoundary::neumann) gy = gy < 0 ? -1 - gy : 2 * g.ny - 1 - gy;
  }
  return t[(gy - oy) * wx + (gx - ox)];
}

/// Laplacian of the 3 x 3 window w (rows y - 1, y, y + 1; columns x - 1, x, x + 1).
template <class Real, Stencil S>
__device__ __forceinline__ Real window_laplacian(const Real (&w)[3][3], Real inv_h2) {
  if constexpr (S == Stencil::five)
    return five_point(w[2][1], w[1][0], w[1][1], w[1][2], w[0][1], inv_h2);
  else
    return seed9(w[2][0], w[2][1], w[2][2], w[1][0], w[1][1], w[1][2], w[0][0], w[0][1], w[0][2]);
}

/// One step of both species for column x, rows y0 .. y0 + kRows - 1 of a window (width WX, species
/// `area` apart): reads src, writes dst (shared) or, with kGlobal, the grid node (gx, gy0 + k) of `out`.
template <int kRows, bool kGlobal, int WX, class Real, class Reaction, Stencil S>
__device__ __forceinline__ void march_window(const RdParams<Real>& p, const Reaction& reaction, Real dt,
                                             const Real* src, Real* dst, int area, int x, int y0, Real* out,
                                             int gx, int gy0) {
  const GridGeometry<Real>& g = p.grid;
  Real w[2][3][3];
#pragma unroll
  for (int s = 0; s < 2; ++s)
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
      for (int c = 0; c < 3; ++c) w[s][r][c] = src[s * area + (y0 - 1 + r) * WX + x - 1 + c];
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const int y = y0 + k;
#pragma unroll
    for (int s = 0; s < 2; ++s)
#pragma unroll
      for (int c = 0; c < 3; ++c) w[s][2][c] = src[s * area + (y + 1) * WX + x - 1 + c];
    const Real la = window_laplacian<Real, S>(w[0], p.inv_h2), lb = window_laplacian<Real, S>(w[1], p.inv_h2);
    Real na, nb;
    euler_node(p, reaction, dt, w[0][1][1], w[1][1][1], la, lb, na, nb);
    if constexpr (kGlobal) {
      if (gx < g.nx && gy0 + k < g.ny) {
        const std::size_t o = static_cast<std::size_t>(gy0 + k) * static_cast<std::size_t>(g.nx) + gx;
        out[o] = na;
        out[g.cells() + o] = nb;
      }
    } else {
      dst[y * WX + x] = na;
      dst[area + y * WX + x] = nb;
    }
#pragma unroll
    for (int s = 0; s < 2; ++s)
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        w[s][0][c] = w[s][1][c];
        w[s][1][c] = w[s][2][c];
      }
  }
}

/// General path of a window touching a non-periodic face (or a grid smaller than the window): loads
/// through the boundary rules, computes only real positions of the shrinking region, refreshes ghosts.
template <class Real, class Reaction, int WY, int T, Stencil S>
__device__ void tile_general(const RdParams<Real>& p, const Reaction& reaction, Real dt, const Real* in,
                             Real* out, Real* smem, int ox, int oy) {
  constexpr int R = T, WX = kTileWidth, TX = WX - 2 * R, TY = WY - 2 * R, AREA = WX * WY;
  const GridGeometry<Real>& g = p.grid;
  const std::size_t n = g.cells();
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  for (int y = ty; y < WY; y += kTileThreadsY)
    for (int x = tx; x < WX; x += kTileThreadsX) {
      const int gx = ox + x, gy = oy + y, at = y * WX + x;
      if (classify(g, gx, gy, R) == kFar) {
        smem[at] = smem[AREA + at] = Real(0);
      } else {
        smem[at] = g.sample(in, 0, gx, gy, 0);
        smem[AREA + at] = g.sample(in + n, 1, gx, gy, 0);
      }
    }
  __syncthreads();
  for (int step = 1; step <= T; ++step) {
    const Real* src = smem + ((step - 1) & 1) * 2 * AREA;
    Real* dst = smem + (step & 1) * 2 * AREA;
    const bool last = step == T;
    const int lo = last ? R : step;  // the last step computes the interior only
    const int hx = last ? R + TX : WX - step, hy = last ? R + TY : WY - step;
    for (int y = lo + ty; y < hy; y += kTileThreadsY)
      for (int x = lo + tx; x < hx; x += kTileThreadsX) {
        const int gx = ox + x, gy = oy + y;
        if (last ? (gx >= g.nx || gy >= g.ny) : classify(g, gx, gy, R) != kReal) continue;
        Real w[2][3][3];
#pragma unroll
        for (int s = 0; s < 2; ++s)
#pragma unroll
          for (int r = 0; r < 3; ++r)
#pragma unroll
            for (int c = 0; c < 3; ++c) w[s][r][c] = src[s * AREA + (y - 1 + r) * WX + x - 1 + c];
        const Real la = window_laplacian<Real, S>(w[0], p.inv_h2),
                   lb = window_laplacian<Real, S>(w[1], p.inv_h2);
        Real na, nb;
        euler_node(p, reaction, dt, w[0][1][1], w[1][1][1], la, lb, na, nb);
        if (last) {
          const std::size_t o = static_cast<std::size_t>(gy) * static_cast<std::size_t>(g.nx) + gx;
          out[o] = na;
          out[n + o] = nb;
        } else {
          dst[y * WX + x] = na;
          dst[AREA + y * WX + x] = nb;
        }
      }
    if (last) break;
    __syncthreads();
    for (int y = step + ty; y < WY - step; y += kTileThreadsY)
      for (int x = step + tx; x < WX - step; x += kTileThreadsX) {
        if (classify(g, ox + x, oy + y, R) != kGhost) continue;
        dst[y * WX + x] = ghost_value(g, dst, WX, 0, ox + x, oy + y, ox, oy);
        dst[AREA + y * WX + x] = ghost_value(g, dst + AREA, WX, 1, ox + x, oy + y, ox, oy);
      }
    __syncthreads();
  }
}

/// Shared memory of one window: two buffers of both species plus 16 bytes before and after (the fast
/// path's edge columns read one element past their row).
template <class Real, int WY>
constexpr std::size_t tile_smem_bytes() {
  return (4 * static_cast<std::size_t>(kTileWidth) * WY + 2 * (16 / sizeof(Real))) * sizeof(Real);
}

template <class Real, class Reaction, int WY, int T, Stencil S>
__global__ void __launch_bounds__(kTileThreadsX* kTileThreadsY)
    rd_tile_2d(RdParams<Real> p, Reaction reaction, Real dt, const Real* __restrict__ in,
               Real* __restrict__ out) {
  constexpr int R = T, WX = kTileWidth, TX = WX - 2 * R, TY = WY - 2 * R, AREA = WX * WY;
  static_assert(WY % 2 == 0 && TY > 0, "two row groups need an even window height");
  constexpr int kChunk = chunk_elements<Real>();  // 16 bytes of padding before the buffers
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  Real* smem = reinterpret_cast<Real*>(smem_bytes) + kChunk;  // buffers [2][species 2][AREA]
  const GridGeometry<Real>& g = p.grid;
  cuda::pdl_prologue();
  const std::size_t n = g.cells();
  const int ox = static_cast<int>(blockIdx.x) * TX - R, oy = static_cast<int>(blockIdx.y) * TY - R;
  const bool inside = ox >= 0 && oy >= 0 && ox + WX <= g.nx && oy + WY <= g.ny;  // block-uniform
  const bool periodic_images = g.nx >= WX && g.ny >= WY && (ox >= 0 || g.face[0] == GridBoundary::periodic) &&
                               (ox + WX <= g.nx || g.face[1] == GridBoundary::periodic) &&
                               (oy >= 0 || g.face[2] == GridBoundary::periodic) &&
                               (oy + WY <= g.ny || g.face[3] == GridBoundary::periodic);
  if (!inside && !periodic_images) {
    tile_general<Real, Reaction, WY, T, S>(p, reaction, dt, in, out, smem, ox, oy);
    return;
  }
  const int tid = static_cast<int>(threadIdx.y) * kTileThreadsX + static_cast<int>(threadIdx.x);
  if (inside) {
    copy_window_async<Real, WX, WY, kTileThreadsX * kTileThreadsY>(g, in, smem, ox, oy, tid);
  } else {  // window crosses periodic faces only: every position is a real node or its image
    for (int i = tid; i < AREA; i += kTileThreadsX * kTileThreadsY) {
      const int row = i / WX, c = i - row * WX;
      smem[i] = g.sample(in, 0, ox + c, oy + row, 0);
      smem[AREA + i] = g.sample(in + n, 1, ox + c, oy + row, 0);
    }
  }
  __syncthreads();
  const int x = static_cast<int>(threadIdx.x) + 32 * (static_cast<int>(threadIdx.y) & 3);
  const int group = static_cast<int>(threadIdx.y) >> 2;
  for (int step = 1; step < T; ++step) {
    constexpr int kRows = (WY - 2) / 2;
    march_window<kRows, false, WX, Real, Reaction, S>(p, reaction, dt, smem + ((step - 1) & 1) * 2 * AREA,
                                                      smem + (step & 1) * 2 * AREA, AREA, x,
                                                      1 + group * kRows, nullptr, 0, 0);
    __syncthreads();
  }
  constexpr int kLastRows = TY / 2;
  if (x >= R && x < R + TX) {
    const int y0 = R + group * kLastRows;
    march_window<kLastRows, true, WX, Real, Reaction, S>(p, reaction, dt, smem + ((T - 1) & 1) * 2 * AREA,
                                                         nullptr, AREA, x, y0, out, ox + x, oy + y0);
  }
}

// ---------------------------------------------------------------------------------------------------
// 2D, one step per launch, shared-memory tile: a window of W + 2 HX columns (HX = one 16-byte chunk, so
// that every row copy is aligned) by TY + 2 rows is copied asynchronously (cp.async) into shared memory:
// a block has its whole window in flight at once, several blocks per SM overlap their copies with the
// others' compute. Threads then march their column as in the temporal kernel. Windows crossing a face
// load through GridGeometry::sample (positions beyond the one ghost layer are clamped onto it: the
// interior never reads them).

template <class Real, int W, int WY>
constexpr std::size_t tile1_smem_bytes() {
  return 2 * static_cast<std::size_t>(W + 2 * chunk_elements<Real>()) * WY * sizeof(Real);
}

template <class Real, class Reaction, int W, int WY, int kThreads, Stencil S>
__global__ void __launch_bounds__(kThreads)
    rd_tile1_2d(RdParams<Real> p, Reaction reaction, Real dt, const Real* __restrict__ in,
                Real* __restrict__ out, ChainArgs chain) {
  constexpr int HX = chunk_elements<Real>(), WX = W + 2 * HX, TY = WY - 2, AREA = WX * WY;
  constexpr int kGroups = kThreads / W;  // row groups
  static_assert(kThreads % W == 0 && TY % kGroups == 0, "the row groups must split the tile evenly");
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  Real* smem = reinterpret_cast<Real*>(smem_bytes);  // [species 2][AREA]
  const GridGeometry<Real>& g = p.grid;
  if (chain.wait_grid) cuda::pdl_wait();
  cuda::pdl_launch_dependents();  // first, on every path: the next launch's blocks wait only on started ones
  const std::size_t n = g.cells();
  const int tid = static_cast<int>(threadIdx.y) * kTileThreadsX + static_cast<int>(threadIdx.x);
  const int rows = static_cast<int>(gridDim.y);
  const int row = (static_cast<int>(blockIdx.y) + chain.shift) % rows;
  if (!chain.wait_grid) {
    if (tid == 0) {  // the rows the window reads: row - 1, row, row + 1 (periodic in the tile rows)
      for (int d = -1; d <= 1; ++d)
        wait_for_count(chain.counters[periodic_index(row + d, rows)], chain.target);
      acquire_counted();
    }
    __syncthreads();
  }
  const int ox = static_cast<int>(blockIdx.x) * W - HX, oy = row * TY - 1;
  const bool inside = ox >= 0 && oy >= 0 && ox + WX <= g.nx && oy + WY <= g.ny;  // block-uniform
  const bool coherent = chain.counters != nullptr;
  if (inside) {
    copy_window_async<Real, WX, WY, kThreads>(g, in, smem, ox, oy, tid, coherent);
  } else {
    const auto load_l2 = [](const Real* u) { return __ldcg(u); };
    for (int i = tid; i < AREA; i += kThreads) {
      const int r = i / WX, c = i - r * WX;
      const int gx = min(max(ox + c, -1), g.nx), gy = min(max(oy + r, -1), g.ny);
      smem[i] = coherent ? g.sample(in, 0, gx, gy, 0, load_l2) : g.sample(in, 0, gx, gy, 0);
      smem[AREA + i] = coherent ? g.sample(in + n, 1, gx, gy, 0, load_l2) : g.sample(in + n, 1, gx, gy, 0);
    }
  }
  __syncthreads();
  const int x = HX + tid % W, y0 = 1 + tid / W * (TY / kGroups);
  march_window<TY / kGroups, true, WX, Real, Reaction, S>(p, reaction, dt, smem, nullptr, AREA, x, y0, out,
                                                          ox + x, oy + y0);
  if (chain.counters) {  // the tile is written: release it to the next launch
    __syncthreads();
    if (tid == 0) release_count(chain.counters[row]);
  }
}

// ---------------------------------------------------------------------------------------------------
// 3D, one step per launch, shared-memory block: a window of (64 + 2 HX) x (8 + 2) x (D + 2) nodes (a
// 64 x 8 x D block plus its halo, rows padded to 16-byte chunks) is copied with cp.async into shared
// memory, then each thread computes two columns of D planes from it. Windows crossing a face load
// through GridGeometry::sample (clamped onto the ghost layer).

constexpr int kBlock3W = 64, kBlock3H = 8;

template <class Real, int D>
constexpr std::size_t block3_smem_bytes() {
  return 2 * static_cast<std::size_t>(kBlock3W + 2 * chunk_elements<Real>()) * (kBlock3H + 2) * (D + 2) *
         sizeof(Real);
}

template <class Real, class Reaction, int D>
__global__ void __launch_bounds__(kTileThreadsX* kTileThreadsY)
    rd_block_3d(RdParams<Real> p, Reaction reaction, Real dt, const Real* __restrict__ in,
                Real* __restrict__ out) {
  constexpr int HX = chunk_elements<Real>(), WX = kBlock3W + 2 * HX, WY = kBlock3H + 2, WZ = D + 2;
  constexpr int PLANE = WX * WY, VOL = PLANE * WZ, kThreads = kTileThreadsX * kTileThreadsY;
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  Real* smem = reinterpret_cast<Real*>(smem_bytes);  // [species 2][VOL]
  const GridGeometry<Real>& g = p.grid;
  cuda::pdl_prologue();
  const std::size_t n = g.cells();
  const int tid = static_cast<int>(threadIdx.y) * kTileThreadsX + static_cast<int>(threadIdx.x);
  const int ox = static_cast<int>(blockIdx.x) * kBlock3W - HX,
            oy = static_cast<int>(blockIdx.y) * kBlock3H - 1;
  const int oz = static_cast<int>(blockIdx.z) * D - 1;
  const bool inside = ox >= 0 && oy >= 0 && oz >= 0 && ox + WX <= g.nx && oy + WY <= g.ny &&
                      oz + WZ <= g.nz;  // block-uniform
  if (inside) {
    constexpr int kRows = WY * WZ;  // window rows, y fastest
    if (g.nx % HX == 0) {           // ox is a multiple of HX
      constexpr int kPerRow = WX / HX, kPerSpecies = kRows * kPerRow;
      for (int i = tid; i < 2 * kPerSpecies; i += kThreads) {
        const int s = i / kPerSpecies, k = i - s * kPerSpecies, r = k / kPerRow, c = (k - r * kPerRow) * HX;
        __pipeline_memcpy_async(smem + s * VOL + r * WX + c,
                                in + s * n + g.index(ox + c, oy + r % WY, oz + r / WY), 16);
      }
    } else {
      for (int i = tid; i < 2 * VOL; i += kThreads) {
        const int s = i / VOL, k = i - s * VOL, r = k / WX, c = k - r * WX;
        __pipeline_memcpy_async(smem + i, in + s * n + g.index(ox + c, oy + r % WY, oz + r / WY),
                                sizeof(Real));
      }
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
  } else {
    for (int i = tid; i < VOL; i += kThreads) {
      const int r = i / WX, c = i - r * WX;
      const int gx = min(max(ox + c, -1), g.nx), gy = min(max(oy + r % WY, -1), g.ny);
      const int gz = min(max(oz + r / WY, -1), g.nz);
      smem[i] = g.sample(in, 0, gx, gy, gz);
      smem[VOL + i] = g.sample(in + n, 1, gx, gy, gz);
    }
  }
  __syncthreads();
  const int x = tid % kBlock3W, gx = ox + HX + x;
#pragma unroll
  for (int yr = 0; yr < 2; ++yr) {
    const int y = tid / kBlock3W + yr * (kBlock3H / 2), gy = oy + 1 + y;
#pragma unroll
    for (int z = 0; z < D; ++z) {
      const int gz = oz + 1 + z, at = (z + 1) * PLANE + (y + 1) * WX + HX + x;
      Real v[2], lap[2];
#pragma unroll
      for (int s = 0; s < 2; ++s) {
        const Real* c = smem + s * VOL + at;
        v[s] = c[0];
        lap[s] = seven_point(c[WX], c[-1], c[0], c[1], c[-WX], c[PLANE], c[-PLANE], p.inv_h2);
      }
      Real na, nb;
      euler_node(p, reaction, dt, v[0], v[1], lap[0], lap[1], na, nb);
      if (gx < g.nx && gy < g.ny && gz < g.nz) {
        const std::size_t o = g.index(gx, gy, gz);
        out[o] = na;
        out[n + o] = nb;
      }
    }
  }
}

void check_launch(const char* what) {
  cuda::check_last_launch(what);
}

template <class Real, class Reaction, int W, int WY, int kThreads, Stencil S>
void launch_tile1_2d(const RdParams<Real>& p, const Reaction& r, Real dt, const Real* in, Real* out,
                     StepChain* chain, bool counted) {
  constexpr std::size_t bytes = tile1_smem_bytes<Real, W, WY>();
  constexpr auto kernel = rd_tile1_2d<Real, Reaction, W, WY, kThreads, S>;
  allow_dynamic_smem<kernel>(bytes);
  const dim3 grid((p.grid.nx + W - 1) / W, (p.grid.ny + WY - 3) / (WY - 2));
  const ChainArgs args =  // a counter per tile row
      counted ? join_chain(chain, grid.y, grid.x, grid.y, in, out) : ChainArgs{};
  cuda::launch_pdl("rd_tile1_2d", kernel, grid, dim3(32, kThreads / 32), bytes, nullptr, p, r, dt, in, out,
                   args);
  check_launch("rd_tile1_2d");
  count_launch(chain, args, in, out);
}

template <class Real, class Reaction, Stencil S>
void launch_rows_2d(int rows, const RdParams<Real>& p, const Reaction& r, Real dt, const Real* in,
                    Real* out) {
  const auto launch = [&](auto kernel, int ry) {
    const dim3 grid((p.grid.nx + 31) / 32, (p.grid.ny + kRowWarps * ry - 1) / (kRowWarps * ry));
    cuda::launch_pdl("rd_rows_2d", kernel, grid, dim3(32, kRowWarps), 0, nullptr, p, r, dt, in, out);
    check_launch("rd_rows_2d");
  };
  if constexpr (std::is_same_v<Real, float>) {  // alternatives for bench_grid_rd --sweep
    if (rows == 1) return launch(rd_rows_2d<Real, Reaction, S, 1>, 1);
    if (rows == 4) return launch(rd_rows_2d<Real, Reaction, S, 4>, 4);
  }
  launch(rd_rows_2d<Real, Reaction, S, 2>, 2);
}

template <class Real, class Reaction>
void launch_rows_3d(int rows, bool z_middle, const RdParams<Real>& p, const Reaction& r, Real dt,
                    const Real* in, Real* out) {
  const auto launch = [&](auto kernel, int rz, bool zm) {
    const unsigned bx = (p.grid.nx + 31) / 32, by = (p.grid.ny + kRowWarps - 1) / kRowWarps,
                   bz = (p.grid.nz + rz - 1) / rz;
    cuda::launch_pdl("rd_rows_3d", kernel, zm ? dim3(bx, bz, by) : dim3(bx, by, bz), dim3(32, kRowWarps), 0,
                     nullptr, p, r, dt, in, out);
    check_launch("rd_rows_3d");
  };
  if constexpr (std::is_same_v<Real, float>) {  // alternatives for bench_grid_rd --sweep
    if (rows == 1)
      return z_middle ? launch(rd_rows_3d<Real, Reaction, 1, true>, 1, true)
                      : launch(rd_rows_3d<Real, Reaction, 1, false>, 1, false);
    if (rows == 4)
      return z_middle ? launch(rd_rows_3d<Real, Reaction, 4, true>, 4, true)
                      : launch(rd_rows_3d<Real, Reaction, 4, false>, 4, false);
    if (z_middle) return launch(rd_rows_3d<Real, Reaction, 2, true>, 2, true);
  }
  launch(rd_rows_3d<Real, Reaction, 2, false>, 2, false);
}

template <class Real, class Reaction, int D>
void launch_block_3d(const RdParams<Real>& p, const Reaction& r, Real dt, const Real* in, Real* out) {
  constexpr std::size_t bytes = block3_smem_bytes<Real, D>();
  constexpr auto kernel = rd_block_3d<Real, Reaction, D>;
  allow_dynamic_smem<kernel>(bytes);
  const dim3 grid((p.grid.nx + kBlock3W - 1) / kBlock3W, (p.grid.ny + kBlock3H - 1) / kBlock3H,
                  (p.grid.nz + D - 1) / D);
  cuda::launch_pdl("rd_block_3d", kernel, grid, dim3(kTileThreadsX, kTileThreadsY), bytes, nullptr, p, r, dt,
                   in, out);
  check_launch("rd_block_3d");
}

template <class Real, class Reaction, int WY, int T, Stencil S>
void launch_tile_2d(const RdParams<Real>& p, const Reaction& r, Real dt, const Real* in, Real* out) {
  constexpr std::size_t bytes = tile_smem_bytes<Real, WY>();
  constexpr auto kernel = rd_tile_2d<Real, Reaction, WY, T, S>;
  allow_dynamic_smem<kernel>(bytes);
  constexpr int TX = kTileWidth - 2 * T, TY = WY - 2 * T;
  const dim3 grid((p.grid.nx + TX - 1) / TX, (p.grid.ny + TY - 1) / TY);
  cuda::launch_pdl("rd_tile_2d", kernel, grid, dim3(kTileThreadsX, kTileThreadsY), bytes, nullptr, p, r, dt,
                   in, out);
  check_launch("rd_tile_2d");
}

template <class Real, class Reaction, int WY, Stencil S>
void launch_steps_2d(int t, const RdParams<Real>& p, const Reaction& r, Real dt, const Real* in, Real* out) {
  if (t == 2) return launch_tile_2d<Real, Reaction, WY, 2, S>(p, r, dt, in, out);
  if (t == 4) return launch_tile_2d<Real, Reaction, WY, 4, S>(p, r, dt, in, out);
  launch_tile_2d<Real, Reaction, WY, 8, S>(p, r, dt, in, out);
}

/// One launch of `t` steps (1, 2, 4 or 8) of the 2D stencil S; one-step tile launches join `chain`.
template <class Real, class Reaction, Stencil S>
void launch_2d(int t, const TunedShape& shape, const RdParams<Real>& p, const Reaction& r, Real dt,
               const Real* in, Real* out, StepChain* chain) {
  if (t == 1) {
    if (shape.rows_2d > 0) return launch_rows_2d<Real, Reaction, S>(shape.rows_2d, p, r, dt, in, out);
    // after anything but the chain's last launch: the tiling that is fastest without the overlap
    const bool chained = continues_chain(chain, in, out);
    const int rows = chained ? shape.tile1_rows : shape.tile1_rows_unchained;
    const auto tile = [&](auto kernel_rows, auto threads) {
      launch_tile1_2d<Real, Reaction, 128, decltype(kernel_rows)::value, decltype(threads)::value, S>(
          p, r, dt, in, out, chain, chained);
    };
    using R8 = std::integral_constant<int, 8>;
    using R16 = std::integral_constant<int, 16>;
    using R32 = std::integral_constant<int, 32>;
    using R64 = std::integral_constant<int, 64>;
    using T128 = std::integral_constant<int, 128>;
    using T256 = std::integral_constant<int, 256>;
    if constexpr (kSweepShapes<Reaction>) {  // alternatives for bench_grid_rd --sweep
      const bool narrow = shape.tile1_threads == 128;
      if (rows == 8) return narrow ? tile(R8{}, T128{}) : tile(R8{}, T256{});
      if (rows == 64) return narrow ? tile(R64{}, T128{}) : tile(R64{}, T256{});
      if (narrow) return rows == 16 ? tile(R16{}, T128{}) : tile(R32{}, T128{});
    }
    // float: the fastest measured (32 rows chained, 16 unchained); double: 16 rows (a 33 KB window, as
    // float's 32 rows)
    if constexpr (std::is_same_v<Real, float>)
      return rows == 16 ? tile(R16{}, T256{}) : tile(R32{}, T256{});
    else
      return tile(R16{}, T256{});
  }
  if constexpr (std::is_same_v<Real, float>)
    if (shape.tile_rows == 32 || (shape.tile_rows == 0 && t <= 4))  // 0: the faster one measured
      return launch_steps_2d<Real, Reaction, 32, S>(t, p, r, dt, in, out);
  launch_steps_2d<Real, Reaction, 48, S>(t, p, r, dt, in, out);
}

}  // namespace

template <class Real, class Reaction>
bool rd_euler_tuned(const RdParams<Real>& p, const Reaction& reaction, Real dt, Real* in, Real* out,
                    int steps, const TunedShape& shape, StepChain* chain) {
  const GridGeometry<Real>& g = p.grid;
  if (steps < 1) return false;
  const std::size_t bytes = 2 * g.cells() * sizeof(Real);
  const bool plane = g.nz == 1;
  if (plane == (p.stencil == Stencil::seven)) return false;
  // launches of 8, 4, 2 or 1 steps (2D; 3D one step each), ping-ponging between the buffers: each launch
  // reads its halos from global memory, so launches alternate out, in, out, ... Temporal blocking needs
  // the grid at least twice the halo wide (mirror images of ghosts must be real nodes).
  int t_max = 1;
  if (plane)
    for (int t : {8, 4, 2})
      if (g.nx >= 2 * t && g.ny >= 2 * t) {
        t_max = t;
        break;
      }
  // the streaming kernel loads and stores 16-byte vectors of four x nodes
  const auto aligned = [](const Real* a) { return reinterpret_cast<std::uintptr_t>(a) % 16 == 0; };
  const bool stream = g.nx % 4 == 0 && aligned(in) && aligned(out);
  // the bulk copies move 16-byte aligned row spans
  const bool bulk = (static_cast<std::size_t>(g.nx) * sizeof(Real)) % 16 == 0 && aligned(in) && aligned(out);
  const Real* src = in;
  Real* bufs[2] = {out, in};
  for (int left = steps, c = 0; left > 0; ++c) {
    int t = 1;
    while (2 * t <= t_max && 2 * t <= left) t *= 2;
    left -= t;
    Real* dst = bufs[c & 1];
    if (!plane)
      if (bulk && shape.bulk)
        rd_bulk_3d(shape.bulk_shape, p, reaction, dt, src, dst, chain);
      else if (stream && shape.streaming)
        rd_stream_3d(shape.stream, p, reaction, dt, src, dst);
      else if (shape.block_3d == 4)
        launch_block_3d<Real, Reaction, 4>(p, reaction, dt, src, dst);
      else if (shape.block_3d == 8)
        launch_block_3d<Real, Reaction, 8>(p, reaction, dt, src, dst);
      else
        launch_rows_3d<Real, Reaction>(shape.rows_3d, shape.z_middle, p, reaction, dt, src, dst);
    else if (p.stencil == Stencil::five)
      launch_2d<Real, Reaction, Stencil::five>(t, shape, p, reaction, dt, src, dst, chain);
    else
      launch_2d<Real, Reaction, Stencil::seed9>(t, shape, p, reaction, dt, src, dst, chain);
    src = dst;
  }
  if (src != out) cuda::copy(out, true, src, true, bytes);
  return true;
}

#define TISSUE_TUNED_INSTANTIATE(Real, Reaction)                                                \
  template bool rd_euler_tuned(const RdParams<Real>&, const Reaction&, Real, Real*, Real*, int, \
                               const TunedShape&, StepChain*);
TISSUE_GRID_RD_REACTIONS(TISSUE_TUNED_INSTANTIATE)
#undef TISSUE_TUNED_INSTANTIATE

}  // namespace tissue::grid_rd
