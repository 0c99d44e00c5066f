// GridWindow (engine/grid/grid_window.hpp): one rank's block of a grid with its ghost frame, addressed by
// whole-grid node indices. The stencil and the trilinear sample read through a window must give, to the
// bit, what they give on the whole grid, wherever the window holds the nodes they read.

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "engine/grid/grid.hpp"
#include "engine/grid/grid_window.hpp"
#include "engine/grid/point_sampling.hpp"
#include "engine/grid/stencils.hpp"

namespace tissue {
namespace {

/// 12 x 10 x 3 nodes: x periodic, y zero-flux, z zero-flux below and Dirichlet 1.5 above.
GridGeometry<double> mixed_grid() {
  const std::array<GridBoundary, 6> faces{GridBoundary::periodic, GridBoundary::periodic,
                                          GridBoundary::neumann,  GridBoundary::neumann,
                                          GridBoundary::neumann,  GridBoundary::dirichlet};
  return make_grid_geometry<double>(GridShape{12, 10, 3, 0.5}, faces, 1,
                                    [](int face, int) { return face == 5 ? 1.5 : 0.0; });
}

/// The window's local array filled from the whole grid at every node it holds that lies in the grid; the
/// frame's nodes beyond a non-periodic face are NaN (a read of one would show).
std::vector<double> fill_window(const GridWindow<double>& w, const std::vector<double>& whole) {
  std::vector<double> local(w.cells(), std::numeric_limits<double>::quiet_NaN());
  const GridGeometry<double>& g = w.grid;
  for (int k = 0; k < g.nz; ++k)
    for (int lj = -w.wy; lj < w.by + w.wy; ++lj)
      for (int li = -w.wx; li < w.bx + w.wx; ++li) {
        const int i = ((w.i0 + li) % g.nx + g.nx) % g.nx;  // x is periodic
        const int j = w.j0 + lj;
        if (j < 0 || j >= g.ny) continue;
        local[w.local_index(li, lj, k)] = whole[g.index(i, j, k)];
      }
  return local;
}

}  // namespace

TEST_CASE("a grid window's stencil and samples equal the whole grid's to the bit", "[grid]") {
  const GridGeometry<double> g = mixed_grid();
  const double h = 0.5;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> whole(g.cells());
  for (double& v : whole) v = value(rng);

  // a block at the high x end (its frame wraps across the periodic face) and the low y face (its frame
  // below lies beyond the zero-flux face); one whose block spans x (no x frame); one in the middle
  const std::vector<GridWindow<double>> windows{
      {g, 8, 0, 4, 5, 3, 2}, {g, 0, 4, 12, 3, 0, 2}, {g, 4, 3, 3, 4, 2, 2}};
  for (const GridWindow<double>& w : windows) {
    INFO("block x " << w.i0 << " + " << w.bx << " (frame " << w.wx << "), y " << w.j0 << " + " << w.by
                    << " (frame " << w.wy << ")");
    const std::vector<double> local = fill_window(w, whole);
    std::size_t differ = 0, checked = 0;
    for (int k = 0; k < g.nz; ++k)
      for (int j = w.j0; j < w.j0 + w.by; ++j)
        for (int i = w.i0; i < w.i0 + w.bx; ++i) {
          const double a = grid::laplacian(grid::Stencil::seven, w, local.data(), 0, i, j, k, 4.0);
          const double b = grid::laplacian(grid::Stencil::seven, g, whole.data(), 0, i, j, k, 4.0);
          differ += !(a == b);  // NaN counts as a difference
          ++checked;
        }
    CHECK(checked == static_cast<std::size_t>(w.bx * w.by * g.nz));
    CHECK(differ == 0);

    // points whose trilinear nodes the window holds: within the block and up to frame - 1 nodes beyond it
    // along x and y (on the y faces' side, anywhere up to the face)
    std::size_t sample_differ = 0;
    for (int p = 0; p < 400; ++p) {
      const double x =
          (w.i0 - w.wx + 0.5 + (w.bx + 2 * w.wx - 1) * std::uniform_real_distribution<>(0, 1)(rng)) * h;
      double y =
          (w.j0 - w.wy + 0.5 + (w.by + 2 * w.wy - 1) * std::uniform_real_distribution<>(0, 1)(rng)) * h;
      y = std::min(std::max(y, 0.0), g.ny * h);
      const double z = std::uniform_real_distribution<>(0.0, g.nz * h)(rng);
      const grid::CicStencil st = grid::cic_stencil(w, h, x, y, z);
      double ga[3], gb[3];
      const double a = grid::cic_sample(w, st, local.data(), 0, ga);
      const double b = grid::cic_sample(g, grid::cic_stencil(g, h, x, y, z), whole.data(), 0, gb);
      sample_differ += !(a == b && ga[0] == gb[0] && ga[1] == gb[1] && ga[2] == gb[2]);
    }
    CHECK(sample_differ == 0);

    // the Dirichlet face's value, and 0 for an in-grid node the window does not hold
    CHECK(w.sample(local.data(), 0, w.i0, w.j0, g.nz) == 1.5);
    if (w.j0 + w.by + w.wy < g.ny) CHECK(w.sample(local.data(), 0, w.i0, w.j0 + w.by + w.wy, 0) == 0.0);
  }
}

}  // namespace tissue
