// The operator pattern of vertex-vertex operators (operator_pattern.hpp), moved here from the conformal
// Willmore flow so that every module on a mesh takes it from mesh::DeviceMesh.
#include "engine/mesh/operator_pattern.hpp"

#include <algorithm>

namespace tissue::mesh {

OperatorPattern operator_pattern(const TriangleMesh& mesh, const MeshTopology& topology) {
  OperatorPattern p;
  const std::size_t n = mesh.vertex_count();
  p.offsets.assign(n + 1, 0);
  p.diagonal.assign(n, 0);
  for (std::size_t v = 0; v < n; ++v) p.offsets[v + 1] = p.offsets[v] + topology.degree(v) + 1;
  p.columns.resize(static_cast<std::size_t>(p.offsets[n]));
  p.rows.resize(p.columns.size());
  for (std::size_t v = 0; v < n; ++v) {
    auto out = static_cast<std::size_t>(p.offsets[v]);
    bool placed = false;
    for (auto k = static_cast<std::size_t>(topology.vertex_offsets[v]);
         k < static_cast<std::size_t>(topology.vertex_offsets[v + 1]); ++k) {
      const std::int32_t w = topology.vertex_neighbours[k];
      if (!placed && w > static_cast<std::int32_t>(v)) {
        p.diagonal[v] = static_cast<std::int32_t>(out);
        p.rows[out] = static_cast<std::int32_t>(v);
        p.columns[out++] = static_cast<std::int32_t>(v);
        placed = true;
      }
      p.rows[out] = static_cast<std::int32_t>(v);
      p.columns[out++] = w;
    }
    if (!placed) {
      p.diagonal[v] = static_cast<std::int32_t>(out);
      p.rows[out] = static_cast<std::int32_t>(v);
      p.columns[out] = static_cast<std::int32_t>(v);
    }
  }
  p.sources.assign(2 * p.columns.size(), -1);
  const auto entry = [&](std::int32_t i, std::int32_t j) {
    const auto first = p.columns.begin() + p.offsets[static_cast<std::size_t>(i)];
    const auto last = p.columns.begin() + p.offsets[static_cast<std::size_t>(i) + 1];
    return static_cast<std::size_t>(std::lower_bound(first, last, j) - p.columns.begin());
  };
  for (std::size_t f = 0; f < mesh.face_count(); ++f)
    for (int ci = 0; ci < 3; ++ci)
      for (int cj = 0; cj < 3; ++cj) {
        if (ci == cj) continue;
        const std::size_t k = entry(mesh.corner(f, ci), mesh.corner(f, cj));
        const auto code = static_cast<std::int32_t>(9 * f + 3 * static_cast<std::size_t>(ci) +
                                                    static_cast<std::size_t>(cj));
        if (p.sources[2 * k] < 0)
          p.sources[2 * k] = code;
        else
          p.sources[2 * k + 1] = code;
      }
  p.corner_offsets = topology.face_offsets;
  p.vertex_corners.resize(topology.vertex_faces.size());
  for (std::size_t v = 0; v < n; ++v)
    for (auto q = static_cast<std::size_t>(topology.face_offsets[v]);
         q < static_cast<std::size_t>(topology.face_offsets[v + 1]); ++q) {
      const auto f = static_cast<std::size_t>(topology.vertex_faces[q]);
      int c = 0;
      while (mesh.corner(f, c) != static_cast<std::int32_t>(v)) ++c;
      p.vertex_corners[q] = static_cast<std::int32_t>(3 * f) + c;
    }
  return p;
}

}  // namespace tissue::mesh
