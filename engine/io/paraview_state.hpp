#pragma once
/// @file paraview_state.hpp
/// The run directory's ParaView state file, view.pvsm: one render view that opens every .pvd series of the
/// run with defaults that show the model (element and cell point clouds as spheres coloured by cell type or
/// state, surfaces coloured by their first species, 2D grids as a surface, 3D grids as a slice), time steps
/// snapped to the snapshots and the camera fitted to the data. Each writer says how its series is best shown
/// (SeriesView, kept by the PvdSeries); write_paraview_state() turns that into the XML.
///
/// The XML is the subset of what ParaView 5.11's SaveState() writes that its LoadState() needs (properties
/// left out keep their defaults), checked by loading it in pvpython
/// (tests/scenarios/paraview_state_test.py). File names in it are relative to the run directory, so the
/// directory can be moved; ParaView resolves relative names against its working directory, so open the state
/// from the run directory
/// (`cd RUN_DIR && paraview --state=view.pvsm`), or in File > Load State choose "Search files under specified
/// directory" with the run directory, or in pvpython `LoadState("RUN_DIR/view.pvsm",
/// data_directory="RUN_DIR")` (docs/runs.md). The file holds no time stamp and no absolute path: identical
/// runs write identical files.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

namespace tissue::io {

class PvdSeries;

/// The state file's name in a run directory.
inline constexpr const char* kParaviewStateFileName = "view.pvsm";

/// How a viewer shows a .pvd series by default. Set by the writer that owns the series (PvdSeries::set_view)
/// from the snapshot it wrote last; a series without one is shown as a plain surface.
struct SeriesView {
  enum class Shape {
    unknown,  ///< not described: a surface, not coloured, not in the camera's bounds
    points,   ///< a point cloud: a sphere of `point_radius` per point ("Point Gaussian")
    surface,  ///< a surface mesh (triangles, or a structured grid one point thick)
    grid_2d,  ///< image data one point thick: its surface
    grid_3d   ///< image data: the slice normal to z at grid layer `layers` / 2 (layer 0 under a tissue)
  };
  Shape shape = Shape::unknown;
  std::string color_by;                         ///< point array that colours the series; "" = one colour
  std::array<double, 2> color_range{0.0, 1.0};  ///< initial colour range [units of the array]
  double point_radius = 0.0;                    ///< points: sphere radius [length]
  std::array<double, 6> bounds{1,  -1, 1,
                               -1, 1,  -1};  ///< xmin xmax ymin ymax zmin zmax [length]; min > max: none
  int layers = 1;                            ///< grid_3d: grid points along z
  bool visible = true;                       ///< shown when the state is opened (else listed, hidden)

  /// A point cloud of spheres of `radius` [length] coloured by `color_by` over `range`.
  static SeriesView points(std::string color_by, std::array<double, 2> range, double radius,
                           std::array<double, 6> bounds);
  /// A surface mesh coloured by `color_by` over `range`.
  static SeriesView surface(std::string color_by, std::array<double, 2> range, std::array<double, 6> bounds);
  /// Image data of `layers` points along z (1: a 2D grid) coloured by `color_by` over `range`.
  static SeriesView grid(int layers, std::string color_by, std::array<double, 2> range,
                         std::array<double, 6> bounds);
};

/// Bounds (xmin xmax ymin ymax zmin zmax) of 3 * n interleaved coordinates x0 y0 z0 x1 ...; empty (min > max)
/// for none.
template <class T>
std::array<double, 6> point_bounds(const std::vector<T>& xyz) {
  std::array<double, 6> b{1, -1, 1, -1, 1, -1};
  for (std::size_t i = 0; i + 2 < xyz.size(); i += 3)
    for (std::size_t k = 0; k < 3; ++k) {
      const double v = static_cast<double>(xyz[i + k]);
      if (!std::isfinite(v)) continue;
      if (b[2 * k] > b[2 * k + 1]) {
        b[2 * k] = b[2 * k + 1] = v;
      } else {
        b[2 * k] = std::min(b[2 * k], v);
        b[2 * k + 1] = std::max(b[2 * k + 1], v);
      }
    }
  return b;
}

/// The smallest and largest finite value of values[0, n); {0, 1} when there is none.
template <class T>
std::array<double, 2> value_range(const T* values, std::size_t n) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(values[i]);
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo > hi) return {0.0, 1.0};
  return {lo, hi};
}

/// Writes DIR/view.pvsm atomically: one reader per series that has snapshots (file names relative to `dir`,
/// series in the order given), shown as its SeriesView says, a colour map per array coloured by, the
/// animation snapping to the snapshots' times, and the camera looking down -z at the bounds of the visible
/// series (legends are left to the viewer: ParaView places them well itself, `tissue render` shows them). A
/// colour range of one value v is widened to [0, v] ([0, 1] for 0); the colour maps grow to every time step's
/// data as the time steps are visited ("Grow and update every timestep").
/// @param dir     the run directory (holds the .pvd files)
/// @param series  the run's series (SnapshotWriter::series()); a series of a file type other than .vtu,
///                .vti, .vts or .vtp is left out
/// @throws std::runtime_error on I/O failure.
void write_paraview_state(const std::filesystem::path& dir, const std::vector<PvdSeries*>& series);

/// The XML write_paraview_state() writes, for the same arguments (no file is touched; `dir` is only used to
/// make the series' file names relative).
std::string paraview_state_xml(const std::filesystem::path& dir, const std::vector<PvdSeries*>& series);

}  // namespace tissue::io
