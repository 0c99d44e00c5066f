#pragma once
/// @file operator_pattern.hpp
/// The sparsity pattern of vertex-vertex operators assembled per entry from face corners (the cotangent
/// Laplacian and the quaternionic Dirac operator of the conformal Willmore flow, modules/curvature_flow):
/// vertex adjacency plus the diagonal, with, per entry, the face corners an assembly thread gathers from
/// (the transpose of seed 002's precomputed per-face entry positions: gathering needs no atomics and gives
/// the same bits whatever the thread order). Depends on the connectivity only, not on the positions.

#include <cstdint>
#include <vector>

#include "engine/mesh/triangle_mesh.hpp"

namespace tissue::mesh {

/// The pattern of a mesh of n vertices: row v holds v's neighbours and v itself, columns ascending.
struct OperatorPattern {
  std::vector<std::int32_t> offsets;         ///< n + 1
  std::vector<std::int32_t> columns, rows;   ///< per entry
  std::vector<std::int32_t> diagonal;        ///< entry index of (v, v), per vertex (n)
  std::vector<std::int32_t> sources;         ///< 2 per entry: 9 f + 3 ci + cj (face f, row vertex at corner
                                             ///< ci, column vertex at corner cj), or -1 (none; diagonal)
  std::vector<std::int32_t> corner_offsets;  ///< n + 1 (equal to the topology's face_offsets)
  std::vector<std::int32_t> vertex_corners;  ///< 3 f + c for every corner of vertex v, faces ascending
};

/// Builds the pattern of a valid mesh (mesh::build_topology accepts it) from its topology. Throws nothing.
OperatorPattern operator_pattern(const TriangleMesh& mesh, const MeshTopology& topology);

}  // namespace tissue::mesh
