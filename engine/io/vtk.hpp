#pragma once
/// @file vtk.hpp
/// VTK XML writers for ParaView/VisIt: point clouds as unstructured grids (.vtu, VTK_VERTEX cells,
/// inline base64 binary arrays with UInt64 headers) and .pvd time-series indices, written atomically.
///
/// Inline base64 rather than appended raw data: meshio (7.0) converts raw appended data by rewriting
/// each array's offset in place, and a rewritten offset can equal a raw offset not yet converted, which
/// silently assigns data to the wrong array (seen with our cells files). Inline arrays have no offsets.
///
/// Why our own writer: the format is a documented XML container (VTK File Formats, "XML File
/// Formats"), what we write is ~150 lines, and the VTK library would add ~250 Debian packages to CI
/// and its shared libraries would not fit the 64 MiB that may travel to the GPU machine. Every file
/// is checked by an independent reader (meshio) in the test suite.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/exec/host_for.hpp"

#include "engine/io/output_piece.hpp"
#include "engine/io/paraview_state.hpp"

namespace tissue::io {

/// `s` with XML's special characters (& < > ") as entities, for attribute values and text.
std::string xml_escape(const std::string& s);

/// One named per-point array.
/// An allocator whose resize() leaves new values default-initialised (bytes: uninitialised), for buffers
/// that are filled right after on the host's threads: zeroing 10^9 bytes first on one thread costs more
/// than the parallel fill.
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() noexcept = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

struct VtkArray {
  std::string name;
  std::string type;  ///< VTK type name: Float32, Float64, Int32, Int64, UInt8
  int components = 1;
  std::vector<unsigned char, DefaultInitAllocator<unsigned char>> bytes;

  /// Array of n = values.size() / components points.
  template <class T>
  static VtkArray of(std::string name, const std::vector<T>& values, int components = 1) {
    return of(std::move(name), values.data(), values.size(), components);
  }
  /// Array of n = count / components points, copied from values[0, count).
  template <class T>
  static VtkArray of(std::string name, const T* values, std::size_t count, int components = 1) {
    VtkArray a;
    a.name = std::move(name);
    a.components = components;
    if constexpr (std::is_same_v<T, float>)
      a.type = "Float32";
    else if constexpr (std::is_same_v<T, double>)
      a.type = "Float64";
    else if constexpr (std::is_same_v<T, std::int32_t>)
      a.type = "Int32";
    else if constexpr (std::is_same_v<T, std::int64_t>)
      a.type = "Int64";
    else if constexpr (std::is_same_v<T, std::uint8_t>)
      a.type = "UInt8";
    else
      static_assert(!sizeof(T), "unsupported VTK array type");
    const auto* p = reinterpret_cast<const unsigned char*>(values);
    a.bytes.assign(p, p + count * sizeof(T));
    return a;
  }
  /// Array of n = count / components points whose value i is value(i), computed on the host's threads
  /// straight into the array (a snapshot's arrays hold 10^7 values and more: no intermediate copy).
  template <class T, class F>
  static VtkArray generated(std::string name, std::size_t count, int components, const F& value) {
    VtkArray a = of(std::move(name), static_cast<const T*>(nullptr), 0, components);
    a.bytes.resize(count * sizeof(T));
    T* v = reinterpret_cast<T*>(a.bytes.data());
    exec::host_for(count, [&](std::size_t i) { v[i] = value(i); });
    return a;
  }
};

/// Writes a point cloud as an unstructured grid of VTK_VERTEX cells.
/// @param path    output .vtu path
/// @param points  3 * n coordinates, interleaved x0 y0 z0 x1 ...
/// @param arrays  point data, each n points long
/// @throws std::invalid_argument on inconsistent sizes, std::runtime_error on I/O failure.
void write_vtu_points(const std::filesystem::path& path, const std::vector<float>& points,
                      const std::vector<VtkArray>& arrays);

/// Writes the .pvtu index of a point cloud written in pieces (one .vtu per rank of a decomposed run, each by
/// write_vtu_points() with the same arrays): ParaView and VTK's readers open it as one dataset.
/// @param arrays  the pieces' arrays, for their names, types and components (their values are not read)
/// @param pieces  the pieces' files, relative to the .pvtu's directory, in rank order
/// @throws std::runtime_error on I/O failure.
void write_pvtu_points(const std::filesystem::path& path, const std::vector<VtkArray>& arrays,
                       const std::vector<std::string>& pieces);

/// Writes a triangle mesh as an unstructured grid of VTK_TRIANGLE cells with per-point data.
/// @param triangles  3 point indices per triangle
/// @throws std::invalid_argument on inconsistent sizes or indices, std::runtime_error on I/O failure.
void write_vtu_triangles(const std::filesystem::path& path, const std::vector<float>& points,
                         const std::vector<std::int32_t>& triangles, const std::vector<VtkArray>& arrays);
/// Writes image data (.vti): an nx x ny x nz grid of points at origin + (i, j, k) * spacing with point
/// data `arrays` (each nx * ny * nz values, x fastest).
/// @throws std::invalid_argument on inconsistent sizes, std::runtime_error on I/O failure.
void write_vti(const std::filesystem::path& path, int nx, int ny, int nz, const double origin[3],
               double spacing, const std::vector<VtkArray>& arrays);

/// Writes one piece of image data written in pieces: the points `piece` of a grid whose points are `whole`
/// (origin, spacing as write_vti()), with point data `arrays` (each the piece's point count, x fastest).
/// @throws std::invalid_argument on inconsistent sizes or a piece outside the whole extent,
///         std::runtime_error on I/O failure.
void write_vti_piece(const std::filesystem::path& path, const ImageExtent& whole, const ImageExtent& piece,
                     const double origin[3], double spacing, const std::vector<VtkArray>& arrays);

/// Writes the .pvti index of image data written in pieces (write_vti_piece()): ParaView and VTK's readers
/// open it as one dataset.
/// @param arrays  the pieces' arrays, for their names, types and components (their values are not read)
/// @param pieces  each piece's file (relative to the .pvti's directory) and extent, in rank order
/// @throws std::runtime_error on I/O failure.
void write_pvti(const std::filesystem::path& path, const ImageExtent& whole, const double origin[3],
                double spacing, const std::vector<VtkArray>& arrays,
                const std::vector<std::pair<std::string, ImageExtent>>& pieces);

/// Writes a structured grid (.vts): nx x ny x nz points with explicit coordinates (a curvilinear grid, e.g.
/// the surface of a graph z = phi(x, y) with nz = 1), point data `arrays` (each nx * ny * nz values, x
/// fastest).
/// @param points  3 * nx * ny * nz coordinates, interleaved, x fastest
/// @throws std::invalid_argument on inconsistent sizes, std::runtime_error on I/O failure.
void write_vts(const std::filesystem::path& path, int nx, int ny, int nz, const std::vector<double>& points,
               const std::vector<VtkArray>& arrays);

/// A .pvd collection: one DataSet per (time, file). add() rewrites the index atomically, so the
/// series on disk is always complete up to its last entry.
class PvdSeries {
 public:
  explicit PvdSeries(std::filesystem::path path) : path_(std::move(path)) {}
  /// Appends `file` (relative to the .pvd's directory) at `time` and rewrites the index. A file equal to
  /// the last entry's replaces that entry (a restarted run rewrites the snapshot it restarted from).
  void add(double time, const std::string& file);
  /// add() without writing the index: the entry is in entries() (and in checkpoints) at once, and the
  /// caller writes index_xml() to path() once `file` is on disk (TissueWriter, from its background thread).
  void append(double time, const std::string& file);
  /// The .pvd index of the entries so far (what add() writes).
  std::string index_xml() const;
  /// Drops the entries whose file is not in the .pvd's directory (a snapshot that a killed run had queued
  /// but not written when its checkpoint recorded it); returns their file names.
  std::vector<std::string> drop_missing();
  const std::filesystem::path& path() const { return path_; }
  /// (time, file) of every DataSet so far, in order.
  const std::vector<std::pair<double, std::string>>& entries() const { return entries_; }
  /// Replaces the entries (a restarted run continues the series its checkpoint recorded); writes nothing.
  void restore(std::vector<std::pair<double, std::string>> entries) { entries_ = std::move(entries); }
  /// How a viewer shows the series by default (the run's view.pvsm); the owning writer sets it.
  void set_view(SeriesView view) { view_ = std::move(view); }
  const SeriesView& view() const { return view_; }

 private:
  std::filesystem::path path_;
  std::vector<std::pair<double, std::string>> entries_;
  SeriesView view_;
};

}  // namespace tissue::io
