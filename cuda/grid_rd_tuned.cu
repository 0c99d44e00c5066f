#include <cuda_runtime.h>

#include <string>

#include "cuda/grid_rd_tuned.hpp"
#include "cuda/runtime.hpp"
#include "engine/exec/error.hpp"

namespace tissue::cuda {

namespace {

using grid_rd::RdParams;
using grid_rd::Stencil;

// ---------------------------------------------------------------------------------------------------
// 2D, one step per launch: each thread owns V consecutive x (one 16-byte vector) and marches along y over
// a strip of rows, keeping a 3-row window of both species (V + 2 values per row) in registers. The x
// neighbours of the vector's ends come from the neighbouring lanes (shuffles), the warp's edge lanes
// load one extra value; the next row is loaded before the current one is computed (prefetch), so that
// every warp has several 16-byte loads in flight. Warps away from every face use raw indices.

constexpr int kStripRows = 64;  ///< rows per warp
constexpr int kWarps2d = 4;     ///< warps per block (stacked in y)

/// Rows per burst: the next kBurst rows of both species are requested before the current kBurst rows are
/// computed, so every thread keeps 2 kBurst independent loads in flight while it computes.

/// Value at (x, y) of species s: raw index on the fast path, the boundary rules otherwise.
template <class Real, bool kFast>
__device__ __forceinline__ Real fetch2(const GridGeometry<Real>& g, const Real* u, int s, int x, int y) {
  if constexpr (kFast) {
    return u[static_cast<std::size_t>(y) * static_cast<std::size_t>(g.nx) + static_cast<std::size_t>(x)];
  } else {
    return g.sample(u, s, x, y, 0);
  }
}

/// Requests rows y_first .. y_first + kBurst - 1 (clamped to y_last) of one species at column x: centre
/// values for every lane, x - 1 for lane 0 and x + 1 for the lane owning the right edge.
template <int kBurst, class Real, bool kFast>
__device__ __forceinline__ void fetch_burst(const GridGeometry<Real>& g, const Real* u, int s, int x,
                                            int y_first, int y_last, int lane, bool own_right,
                                            Real (&c)[kBurst], Real (&l)[kBurst], Real (&r)[kBurst]) {
#pragma unroll
  for (int k = 0; k < kBurst; ++k) {
    const int y = y_first + k < y_last ? y_first + k : y_last;
    c[k] = fetch2<Real, kFast>(g, u, s, x, y);
    if (lane == 0) l[k] = fetch2<Real, kFast>(g, u, s, x - 1, y);
    if (own_right) r[k] = fetch2<Real, kFast>(g, u, s, x + 1, y);
  }
}

template <int kBurst, class Real, class Reaction, Stencil S, bool kFast>
__device__ void march_strip(const RdParams<Real>& p, const Reaction& reaction, Real dt, const Real* in,
                            Real* out, int x, int y0, int y1, int lane) {
  constexpr unsigned kAll = 0xffffffffu;
  const GridGeometry<Real>& g = p.grid;
  const std::size_t n = g.cells();
  const bool in_x = x < g.nx;
  const int xc = in_x ? x : g.nx - 1;  // lanes past the right edge read valid memory and store nothing
  const bool own_right = lane == 31 || xc + 1 >= g.nx;
  const Real* u[2] = {in, in + n};
  // ring of rows y - 1 .. y + kBurst: left, centre, right values of this lane's column
  Real wl[2][kBurst + 2], wc[2][kBurst + 2], wr[2][kBurst + 2];
  Real nc[2][kBurst], nl[2][kBurst], nr[2][kBurst];  // the next burst, in flight
  const auto share = [&](Real c, Real l_own, Real r_own, Real& l, Real& r) {
    const Real left = __shfl_up_sync(kAll, c, 1), right = __shfl_down_sync(kAll, c, 1);
    l = lane == 0 ? l_own : left;
    r = own_right ? r_own : right;
  };
  // rows y0 - 1, y0 (ring slots 0, 1), then the first burst y0 + 1 .. y0 + kBurst (slots 2 ..)
#pragma unroll
  for (int s = 0; s < 2; ++s) {
    Real c0 = fetch2<Real, kFast>(g, u[s], s, xc, y0 - 1), l0 = 0, r0 = 0;
    Real c1 = fetch2<Real, kFast>(g, u[s], s, xc, y0), l1 = 0, r1 = 0;
    if (lane == 0)
      l0 = fetch2<Real, kFast>(g, u[s], s, xc - 1, y0 - 1), l1 = fetch2<Real, kFast>(g, u[s], s, xc - 1, y0);
    if (own_right)
      r0 = fetch2<Real, kFast>(g, u[s], s, xc + 1, y0 - 1), r1 = fetch2<Real, kFast>(g, u[s], s, xc + 1, y0);
    fetch_burst<kBurst, Real, kFast>(g, u[s], s, xc, y0 + 1, y1, lane, own_right, nc[s], nl[s], nr[s]);
    wc[s][0] = c0;
    wc[s][1] = c1;
    share(c0, l0, r0, wl[s][0], wr[s][0]);
    share(c1, l1, r1, wl[s][1], wr[s][1]);
  }
  for (int y = y0; y < y1; y += kBurst) {
    // the burst requested last round becomes ring slots 2 .. kBurst + 1
#pragma unroll
    for (int s = 0; s < 2; ++s)
#pragma unroll
      for (int k = 0; k < kBurst; ++k) {
        wc[s][k + 2] = nc[s][k];
        share(nc[s][k], nl[s][k], nr[s][k], wl[s][k + 2], wr[s][k + 2]);
      }
    if (y + kBurst < y1)  // request the following burst before computing this one
#pragma unroll
      for (int s = 0; s < 2; ++s)
        fetch_burst<kBurst, Real, kFast>(g, u[s], s, xc, y + kBurst + 1, y1, lane, own_right, nc[s], nl[s],
                                         nr[s]);
#pragma unroll
    for (int k = 0; k < kBurst; ++k) {
      if (y + k >= y1) break;
      Real lap[2];
#pragma unroll
      for (int s = 0; s < 2; ++s) {
        if constexpr (S == Stencil::five)
          lap[s] =
              grid_rd::five_point(wc[s][k + 2], wl[s][k + 1], wc[s][k + 1], wr[s][k + 1], wc[s][k], p.inv_h2);
        else
          lap[s] = grid_rd::seed9(wl[s][k + 2], wc[s][k + 2], wr[s][k + 2], wl[s][k + 1], wc[s][k + 1],
                                  wr[s][k + 1], wl[s][k], wc[s][k], wr[s][k]);
      }
      const Real a = wc[0][k + 1], b = wc[1][k + 1];
      Real fa, fb;
      reaction(a, b, fa, fb);
      if (in_x) {
        const std::size_t o =
            static_cast<std::size_t>(y + k) * static_cast<std::size_t>(g.nx) + static_cast<std::size_t>(x);
        out[o] = grid_rd::rd_update(a, lap[0], fa, p.diffusion_a, dt);
        out[n + o] = grid_rd::rd_update(b, lap[1], fb, p.diffusion_b, dt);
      }
    }
    // slots kBurst, kBurst + 1 are the next round's rows y - 1, y
#pragma unroll
    for (int s = 0; s < 2; ++s)
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        wc[s][k] = wc[s][kBurst + k];
        wl[s][k] = wl[s][kBurst + k];
        wr[s][k] = wr[s][kBurst + k];
      }
  }
}

template <class Real, class Reaction, Stencil S, int kBurst, int kMinBlocks>
__global__ void __launch_bounds__(32 * kWarps2d, kMinBlocks)
    rd_strip_2d(RdParams<Real> p, Reaction reaction, Real dt, const Real* in, Real* out) {
  const GridGeometry<Real>& g = p.grid;
  const int lane = static_cast<int>(threadIdx.x);
  const int xw = static_cast<int>(blockIdx.x) * 32;  // first x of the warp
  const int x0 = xw + lane;
  const int y0 = (static_cast<int>(blockIdx.y) * kWarps2d + static_cast<int>(threadIdx.y)) * kStripRows;
  if (y0 >= g.ny) return;  // whole warp
  const int y1 = y0 + kStripRows < g.ny ? y0 + kStripRows : g.ny;
  const bool fast = xw >= 1 && xw + 32 < g.nx && y0 >= 1 && y1 + kBurst < g.ny;  // warp-uniform
  if (fast)
    march_strip<kBurst, Real, Reaction, S, true>(p, reaction, dt, in, out, x0, y0, y1, lane);
  else
    march_strip<kBurst, Real, Reaction, S, false>(p, reaction, dt, in, out, x0, y0, y1, lane);
}

// ---------------------------------------------------------------------------------------------------
// 2D, T > 1 steps per launch (temporal blocking): a TX x TY tile plus a halo of T nodes in shared memory.

constexpr int kTileThreadsX = 32, kTileThreadsY = 8;

/// Kind of a tile position with global coordinates (gx, gy): a real node (inside, or a periodic image
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

/// Ghost value at (gx, gy) from tile buffer t (width wx, origin (ox, oy)) of species s: the rules and
/// axis order of GridGeometry::sample; the mirror of a ghost within R of a face lies in the tile.
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

/// Laplacian at tile position (x, y) of buffer t (width wx), the argument order of grid_rd::laplacian.
template <class Real, Stencil S>
__device__ Real tile_laplacian(const Real* t, int wx, int x, int y, Real inv_h2) {
  const Real* row = t + y * wx + x;
  const Real c = row[0], e = row[1], w = row[-1], n = row[wx], so = row[-wx];
  if constexpr (S == Stencil::five) {
    return grid_rd::five_point(n, w, c, e, so, inv_h2);
  } else {
    return grid_rd::seed9(row[wx - 1], n, row[wx + 1], w, c, e, row[-wx - 1], so, row[-wx + 1]);
  }
}

template <class Real, class Reaction, int TX, int TY, int T, Stencil S>
__global__ void __launch_bounds__(kTileThreadsX* kTileThreadsY)
    rd_tile_2d(RdParams<Real> p, Reaction reaction, Real dt, const Real* in, Real* out) {
  constexpr int R = T, WX = TX + 2 * R, WY = TY + 2 * R, AREA = WX * WY;
  extern __shared__ unsigned char smem_bytes[];
  Real* smem = reinterpret_cast<Real*>(smem_bytes);
  const GridGeometry<Real>& g = p.grid;
  const std::size_t n = g.cells();
  const int ox = static_cast<int>(blockIdx.x) * TX - R, oy = static_cast<int>(blockIdx.y) * TY - R;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  // block-uniform: does the tile reach outside the domain (then positions need classifying)?
  const bool edge = ox < 0 || oy < 0 || ox + WX > g.nx || oy + WY > g.ny;

  for (int y = ty; y < WY; y += kTileThreadsY)
    for (int x = tx; x < WX; x += kTileThreadsX) {
      const int gx = ox + x, gy = oy + y, at = y * WX + x;
      if (!edge) {
        const std::size_t o =
            static_cast<std::size_t>(gy) * static_cast<std::size_t>(g.nx) + static_cast<std::size_t>(gx);
        smem[at] = in[o];
        smem[AREA + at] = in[n + o];
      } else if (classify(g, gx, gy, R) == kFar) {
        smem[at] = smem[AREA + at] = Real(0);
      } else {
        smem[at] = g.sample(in, 0, gx, gy, 0);
        smem[AREA + at] = g.sample(in + n, 1, gx, gy, 0);
      }
    }
  __syncthreads();

  // Steps in shared memory. Thread (tx, ty) computes columns tx, tx + 32, ... of the region, over a run
  // of consecutive rows (ty's share), with a 3-row window of each column in registers: three shared loads
  // per species and node instead of nine.
  for (int step = 1; step <= T; ++step) {
    const Real* src = smem + ((step - 1) & 1) * 2 * AREA;
    Real* dst = smem + (step & 1) * 2 * AREA;
    const bool last = step == T;
    const int lo = last ? R : step;  // the last step computes the interior only
    const int hx = last ? R + TX : WX - step, hy = last ? R + TY : WY - step;
    const int rows = hy - lo, run = (rows + kTileThreadsY - 1) / kTileThreadsY;
    const int ya = lo + ty * run, yb = ya + run < hy ? ya + run : hy;
    for (int x = lo + tx; x < hx; x += kTileThreadsX) {
      if (ya >= yb) break;
      Real win[2][3][3];
#pragma unroll
      for (int s = 0; s < 2; ++s)
        for (int r = 0; r < 2; ++r)
          for (int c = 0; c < 3; ++c) win[s][r][c] = src[s * AREA + (ya - 1 + r) * WX + x - 1 + c];
      for (int y = ya; y < yb; ++y) {
#pragma unroll
        for (int s = 0; s < 2; ++s)
          for (int c = 0; c < 3; ++c) win[s][2][c] = src[s * AREA + (y + 1) * WX + x - 1 + c];
        const int gx = ox + x, gy = oy + y;
        const bool compute = last ? (gx < g.nx && gy < g.ny) : (!edge || classify(g, gx, gy, R) == kReal);
        if (compute) {
          Real lap[2];
#pragma unroll
          for (int s = 0; s < 2; ++s) {
            const Real(*w)[3] = win[s];
            if constexpr (S == Stencil::five)
              lap[s] = grid_rd::five_point(w[2][1], w[1][0], w[1][1], w[1][2], w[0][1], p.inv_h2);
            else
              lap[s] = grid_rd::seed9(w[2][0], w[2][1], w[2][2], w[1][0], w[1][1], w[1][2], w[0][0], w[0][1],
                                      w[0][2]);
          }
          const Real a = win[0][1][1], b = win[1][1][1];
          Real fa, fb;
          reaction(a, b, fa, fb);
          const Real na = grid_rd::rd_update(a, lap[0], fa, p.diffusion_a, dt);
          const Real nb = grid_rd::rd_update(b, lap[1], fb, p.diffusion_b, dt);
          if (last) {
            const std::size_t o =
                static_cast<std::size_t>(gy) * static_cast<std::size_t>(g.nx) + static_cast<std::size_t>(gx);
            out[o] = na;
            out[n + o] = nb;
          } else {
            dst[y * WX + x] = na;
            dst[AREA + y * WX + x] = nb;
          }
        }
#pragma unroll
        for (int s = 0; s < 2; ++s)
          for (int c = 0; c < 3; ++c) {
            win[s][0][c] = win[s][1][c];
            win[s][1][c] = win[s][2][c];
          }
      }
    }
    if (last) break;
    __syncthreads();
    if (edge) {
      for (int y = step + ty; y < WY - step; y += kTileThreadsY)
        for (int x = step + tx; x < WX - step; x += kTileThreadsX) {
          if (classify(g, ox + x, oy + y, R) != kGhost) continue;
          dst[y * WX + x] = ghost_value(g, dst, WX, 0, ox + x, oy + y, ox, oy);
          dst[AREA + y * WX + x] = ghost_value(g, dst + AREA, WX, 1, ox + x, oy + y, ox, oy);
        }
      __syncthreads();
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// 3D, one step per launch (seven-point): thread (lane, ty) owns column (x, y) of a 32 x kTile3y tile and the
// block marches along z over a chunk of planes. Centre values of planes z - 1 .. z + 3 stay in registers
// (two planes requested ahead), the x neighbours come from the adjacent lanes, the y neighbours from a
// double-buffered shared row of each plane; halo values of plane z + 1 are requested one plane ahead.

constexpr int kTile3y = 8, kZChunk = 32;

template <class Real, bool kFast>
__device__ __forceinline__ Real fetch3(const GridGeometry<Real>& g, const Real* u, int s, int x, int y,
                                       int z) {
  if constexpr (kFast) {
    return u[(static_cast<std::size_t>(z) * static_cast<std::size_t>(g.ny) + static_cast<std::size_t>(y)) *
                 static_cast<std::size_t>(g.nx) +
             static_cast<std::size_t>(x)];
  } else {
    return g.sample(u, s, x, y, z);
  }
}

template <class Real, class Reaction, bool kFast>
__device__ void march_column(const RdParams<Real>& p, const Reaction& reaction, Real dt, const Real* in,
                             Real* out, Real (&plane)[2][2][kTile3y + 2][32], int lane, int ty, int z0,
                             int z1) {
  constexpr unsigned kAll = 0xffffffffu;
  const GridGeometry<Real>& g = p.grid;
  const std::size_t n = g.cells();
  const int ox = static_cast<int>(blockIdx.x) * 32, oy = static_cast<int>(blockIdx.y) * kTile3y;
  const bool inside = ox + lane < g.nx && oy + ty < g.ny;
  const int x = ox + lane < g.nx ? ox + lane : g.nx - 1;
  const int y = oy + ty < g.ny ? oy + ty : g.ny - 1;
  const bool own_left = lane == 0, own_right = lane == 31 || x + 1 >= g.nx;
  const bool low_row = ty == 0, high_row = ty == kTile3y - 1 || y + 1 >= g.ny;
  const Real* u[2] = {in, in + n};
  Real down[2], centre[2], up[2], ahead[2], ahead2[2];                // planes z - 1 .. z + 3
  Real hx[2][2] = {}, hy[2][2] = {}, nhx[2][2] = {}, nhy[2][2] = {};  // halos of plane z / z + 1
  const auto halos = [&](int s, int z, Real(&h_x)[2][2], Real(&h_y)[2][2]) {
    if (own_left) h_x[s][0] = fetch3<Real, kFast>(g, u[s], s, x - 1, y, z);
    if (own_right) h_x[s][1] = fetch3<Real, kFast>(g, u[s], s, x + 1, y, z);
    if (low_row) h_y[s][0] = fetch3<Real, kFast>(g, u[s], s, x, oy - 1, z);
    if (high_row) h_y[s][1] = fetch3<Real, kFast>(g, u[s], s, x, y + 1, z);
  };
#pragma unroll
  for (int s = 0; s < 2; ++s) {
    down[s] = fetch3<Real, kFast>(g, u[s], s, x, y, z0 - 1);
    centre[s] = fetch3<Real, kFast>(g, u[s], s, x, y, z0);
    up[s] = fetch3<Real, kFast>(g, u[s], s, x, y, z0 + 1);
    ahead[s] = fetch3<Real, kFast>(g, u[s], s, x, y, z0 + 2);
    halos(s, z0, hx, hy);
  }
  for (int z = z0; z < z1; ++z) {
    // requests for later planes first, so that they are in flight while this one is computed
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      if (z + 2 < z1) ahead2[s] = fetch3<Real, kFast>(g, u[s], s, x, y, z + 3);
      if (z + 1 < z1) halos(s, z + 1, nhx, nhy);
    }
    Real(&row)[2][kTile3y + 2][32] = plane[z & 1];
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      if (inside) row[s][ty + 1][lane] = centre[s];
      if (low_row) row[s][0][lane] = hy[s][0];
      if (high_row) row[s][ty + 2][lane] = hy[s][1];
    }
    Real west[2], east[2];
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      const Real left = __shfl_up_sync(kAll, centre[s], 1), right = __shfl_down_sync(kAll, centre[s], 1);
      west[s] = own_left ? hx[s][0] : left;
      east[s] = own_right ? hx[s][1] : right;
    }
    __syncthreads();
    Real lap[2];
#pragma unroll
    for (int s = 0; s < 2; ++s)
      lap[s] = grid_rd::seven_point(row[s][ty + 2][lane], west[s], centre[s], east[s], row[s][ty][lane],
                                    up[s], down[s], p.inv_h2);
    Real fa, fb;
    reaction(centre[0], centre[1], fa, fb);
    if (inside) {
      const std::size_t o = g.index(x, y, z);
      out[o] = grid_rd::rd_update(centre[0], lap[0], fa, p.diffusion_a, dt);
      out[n + o] = grid_rd::rd_update(centre[1], lap[1], fb, p.diffusion_b, dt);
    }
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      down[s] = centre[s];
      centre[s] = up[s];
      up[s] = ahead[s];
      ahead[s] = ahead2[s];
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        hx[s][k] = nhx[s][k];
        hy[s][k] = nhy[s][k];
      }
    }
  }
}

template <class Real, class Reaction, int kMinBlocks>
__global__ void __launch_bounds__(32 * kTile3y, kMinBlocks)
    rd_march_3d(RdParams<Real> p, Reaction reaction, Real dt, const Real* in, Real* out) {
  __shared__ Real plane[2][2][kTile3y + 2][32];  // [z parity][species][row][x]
  const GridGeometry<Real>& g = p.grid;
  const int lane = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int z0 = static_cast<int>(blockIdx.z) * kZChunk;
  const int z1 = z0 + kZChunk < g.nz ? z0 + kZChunk : g.nz;
  const int ox = static_cast<int>(blockIdx.x) * 32, oy = static_cast<int>(blockIdx.y) * kTile3y;
  const bool fast = ox >= 1 && ox + 32 < g.nx && oy >= 1 && oy + kTile3y < g.ny && z0 >= 1 && z1 + 2 < g.nz;
  if (fast)
    march_column<Real, Reaction, true>(p, reaction, dt, in, out, plane, lane, ty, z0, z1);
  else
    march_column<Real, Reaction, false>(p, reaction, dt, in, out, plane, lane, ty, z0, z1);
}

void check_launch(const char* what) {
  check_last_launch(what);
}

template <class Real, class Reaction, Stencil S>
void launch_strip_2d(const RdParams<Real>& p, const Reaction& r, Real dt, const Real* in, Real* out) {
  const dim3 block(32, kWarps2d);
  const dim3 grid((p.grid.nx + 31) / 32, (p.grid.ny + kStripRows * kWarps2d - 1) / (kStripRows * kWarps2d));
  // burst of 4 rows, at most 80 registers (6 blocks per SM): the best of the variants measured on an H100
  // (BENCHMARKS.md, grid RD history)
  rd_strip_2d<Real, Reaction, S, 4, 6><<<grid, block>>>(p, r, dt, in, out);
  check_launch("rd_strip_2d");
}

template <class Real, class Reaction, int TX, int TY, int T, Stencil S>
void launch_tile_2d(const RdParams<Real>& p, const Reaction& r, Real dt, const Real* in, Real* out) {
  constexpr int WX = TX + 2 * T, WY = TY + 2 * T;
  const std::size_t bytes = static_cast<std::size_t>(WX) * WY * 2 * 2 * sizeof(Real);
  auto kernel = rd_tile_2d<Real, Reaction, TX, TY, T, S>;
  static bool configured = false;  // per instantiation
  if (!configured) {
    const cudaError_t err =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
    if (err != cudaSuccess)
      throw BackendError(std::string("cudaFuncSetAttribute: ") + cudaGetErrorString(err));
    configured = true;
  }
  const dim3 grid((p.grid.nx + TX - 1) / TX, (p.grid.ny + TY - 1) / TY);
  kernel<<<grid, dim3(kTileThreadsX, kTileThreadsY), bytes>>>(p, r, dt, in, out);
  check_launch("rd_tile_2d");
}

/// One launch of `t` steps (1, 2, 4 or 8).
template <class Real, class Reaction, Stencil S>
void launch_steps_2d(int t, const RdParams<Real>& p, const Reaction& r, Real dt, const Real* in, Real* out) {
  switch (t) {
    case 1:
      launch_strip_2d<Real, Reaction, S>(p, r, dt, in, out);
      break;
    case 2:
      launch_tile_2d<Real, Reaction, 64, 32, 2, S>(p, r, dt, in, out);
      break;
    case 4:
      launch_tile_2d<Real, Reaction, 64, 32, 4, S>(p, r, dt, in, out);
      break;
    default:
      launch_tile_2d<Real, Reaction, 64, 32, 8, S>(p, r, dt, in, out);
      break;
  }
}

}  // namespace

template <class Real, class Reaction>
bool rd_euler_tuned(const RdParams<Real>& p, const Reaction& reaction, Real dt, Real* in, Real* out,
                    int steps) {
  const GridGeometry<Real>& g = p.grid;
  if (steps < 1) return false;
  const std::size_t bytes = 2 * g.cells() * sizeof(Real);
  if (g.nz == 1) {
    if (p.stencil == Stencil::seven || g.nx < 64 || g.ny < 32) return false;
    // chunks of 8, 4, 2, 1 steps, ping-ponging between the buffers; the result must end in `out`
    int chunks[16], count = 0;
    for (int left = steps; left > 0;) {
      const int t = left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
      chunks[count++] = t;
      left -= t;
      if (count == 16) return false;
    }
    // each launch reads its halos from global memory, so chunks alternate out, in, out, ...
    const Real* src = in;
    Real* bufs[2] = {out, in};
    for (int c = 0; c < count; ++c) {
      Real* dst = bufs[c & 1];
      if (p.stencil == Stencil::five)
        launch_steps_2d<Real, Reaction, Stencil::five>(chunks[c], p, reaction, dt, src, dst);
      else
        launch_steps_2d<Real, Reaction, Stencil::seed9>(chunks[c], p, reaction, dt, src, dst);
      src = dst;
    }
    if (src != out) copy(out, true, src, true, bytes);
    return true;
  }
  if (p.stencil != Stencil::seven || g.nx < 32 || g.ny < kTile3y) return false;
  const dim3 grid((g.nx + 31) / 32, (g.ny + kTile3y - 1) / kTile3y, (g.nz + kZChunk - 1) / kZChunk);
  const Real* src = in;
  Real* bufs[2] = {out, in};
  for (int s = 0; s < steps; ++s) {
    Real* dst = bufs[s & 1];
    rd_march_3d<Real, Reaction, 4>
        <<<grid, dim3(32, kTile3y)>>>(p, reaction, dt, src, dst);  // <= 64 registers
    check_launch("rd_march_3d");
    src = dst;
  }
  if (src != out) copy(out, true, src, true, bytes);
  return true;
}

template bool rd_euler_tuned(const RdParams<float>&, const reactions::GrayScott<float>&, float, float*,
                             float*, int);
template bool rd_euler_tuned(const RdParams<double>&, const reactions::GrayScott<double>&, double, double*,
                             double*, int);
template bool rd_euler_tuned(const RdParams<float>&, const reactions::Polynomial<float>&, float, float*,
                             float*, int);
template bool rd_euler_tuned(const RdParams<double>&, const reactions::Polynomial<double>&, double, double*,
                             double*, int);

}  // namespace tissue::cuda
