#pragma once
/// @file vertex_arrays.hpp
/// Readers of per-vertex scalar arrays of a surface, for initial fields (surface_rd `[initial] type =
/// "file"`): the point data of a VTK XML UnstructuredGrid (.vtu: the project's own output and ParaView's,
/// ASCII, inline binary and appended raw or base64 data, uncompressed), the vertex properties of a PLY file
/// (ASCII or binary little-endian) and datasets of an HDF5 file (the project's checkpoints among them). Every
/// value is returned as double (exact for float and double sources). Errors are InputError with one line that
/// names the file and what is wrong.

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace tissue::io {

/// The vertices of a file: their count, positions (x0 y0 z0 x1 ..., empty when the file has none) and the
/// scalar arrays with one value per vertex, by name (arrays of several components are left out; `skipped`
/// names them, for messages).
struct VertexArrays {
  std::size_t vertices = 0;
  std::vector<double> points;                         ///< 3 * vertices, or empty
  std::map<std::string, std::vector<double>> arrays;  ///< name -> `vertices` values
  std::vector<std::string> skipped;                   ///< arrays with more than one component
};

/// Point data and points of the first Piece of a VTK XML UnstructuredGrid or PolyData file (header_type
/// UInt32 or UInt64, little-endian; data ascii, binary (base64) or appended (raw or base64)).
/// @throws InputError for a missing or unreadable file, a directory, a compressed or big-endian file, or a
/// malformed file (the first problem found).
VertexArrays read_vtu_point_data(const std::filesystem::path& path);

/// The `vertex` element of a PLY file (format ascii or binary_little_endian): x, y, z as points when all
/// three are present, every scalar property as an array (x, y, z included). Elements before `vertex` must
/// have no list properties.
/// @throws InputError for a missing or unreadable file, a directory, a big-endian file, a malformed header
/// or too few data.
VertexArrays read_ply_vertices(const std::filesystem::path& path);

/// True when `path` (an HDF5 file) has a dataset at `dataset` (an absolute path such as
/// "/fields/surface/fn"). @throws InputError when the file is missing, a directory or not HDF5.
bool hdf5_has_dataset(const std::filesystem::path& path, const std::string& dataset);

/// The dataset's values converted to double, row-major, with its dimensions in `dims`.
/// @throws InputError when the file or dataset is missing or cannot be read (a checksum failure included).
std::vector<double> read_hdf5_dataset(const std::filesystem::path& path, const std::string& dataset,
                                      std::vector<std::size_t>& dims);

}  // namespace tissue::io
