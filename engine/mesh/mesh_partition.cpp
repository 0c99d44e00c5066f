#include "engine/mesh/mesh_partition.hpp"

#include <metis.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tissue::mesh {

std::vector<std::int32_t> partition_vertices(const MeshTopology& topology, std::size_t parts) {
  if (parts == 0) throw std::invalid_argument("partition_vertices: zero parts");
  const std::size_t n = topology.vertex_offsets.empty() ? 0 : topology.vertex_offsets.size() - 1;
  std::vector<std::int32_t> part(n, 0);
  if (parts == 1 || n <= parts) {
    if (n <= parts)
      for (std::size_t v = 0; v < n; ++v) part[v] = static_cast<std::int32_t>(v);
    return part;
  }
  static_assert(sizeof(idx_t) == sizeof(std::int32_t), "Debian's METIS uses 32-bit indices");
  idx_t vertices = static_cast<idx_t>(n), constraints = 1, count = static_cast<idx_t>(parts), cut = 0;
  std::vector<idx_t> xadj(topology.vertex_offsets.begin(), topology.vertex_offsets.end());
  std::vector<idx_t> adjncy(topology.vertex_neighbours.begin(), topology.vertex_neighbours.end());
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_NUMBERING] = 0;
  options[METIS_OPTION_SEED] = 1;  // the same patches on every run
  std::vector<idx_t> result(n);
  const int status =
      METIS_PartGraphKway(&vertices, &constraints, xadj.data(), adjncy.data(), nullptr, nullptr, nullptr,
                          &count, nullptr, nullptr, options, &cut, result.data());
  if (status != METIS_OK)
    throw std::runtime_error("METIS_PartGraphKway failed (status " + std::to_string(status) + ") for " +
                             std::to_string(n) + " vertices in " + std::to_string(parts) + " parts");
  for (std::size_t v = 0; v < n; ++v) part[v] = static_cast<std::int32_t>(result[v]);
  return part;
}

MeshPatches mesh_patches(const MeshTopology& topology, const std::vector<std::int32_t>& part, int levels) {
  const std::size_t n = topology.vertex_offsets.empty() ? 0 : topology.vertex_offsets.size() - 1;
  if (part.size() != n) throw std::invalid_argument("mesh_patches: one part index per vertex expected");
  if (levels < 0) throw std::invalid_argument("mesh_patches: negative halo level count");
  // the vertices of each part, ascending (a counting sort), empty parts dropped
  const std::int32_t parts = n == 0 ? 0 : *std::max_element(part.begin(), part.end()) + 1;
  std::vector<std::int32_t> first(static_cast<std::size_t>(parts) + 1, 0), own(n);
  for (const auto p : part) {
    if (p < 0) throw std::invalid_argument("mesh_patches: negative part index");
    ++first[static_cast<std::size_t>(p) + 1];
  }
  for (std::size_t p = 0; p < static_cast<std::size_t>(parts); ++p) first[p + 1] += first[p];
  {
    std::vector<std::int32_t> next(first.begin(), first.end() - 1);
    for (std::size_t v = 0; v < n; ++v)
      own[static_cast<std::size_t>(next[static_cast<std::size_t>(part[v])]++)] = static_cast<std::int32_t>(v);
  }
  MeshPatches patches;
  patches.levels = levels;
  patches.offsets.push_back(0);
  // breadth-first rings around each part; `seen` holds the patch that last reached a vertex
  std::vector<std::int32_t> seen(n, -1), ring, next_ring;
  for (std::int32_t p = 0; p < parts; ++p) {
    const auto begin = own.begin() + first[static_cast<std::size_t>(p)],
               end = own.begin() + first[static_cast<std::size_t>(p) + 1];
    if (begin == end) continue;
    const auto id = static_cast<std::int32_t>(patches.patches());
    ring.assign(begin, end);
    for (const auto v : ring) seen[static_cast<std::size_t>(v)] = id;
    patches.vertices.insert(patches.vertices.end(), ring.begin(), ring.end());
    patches.level_ends.push_back(static_cast<std::int32_t>(ring.size()));
    for (int l = 1; l <= levels; ++l) {
      next_ring.clear();
      for (const auto v : ring)
        for (auto k = topology.vertex_offsets[static_cast<std::size_t>(v)];
             k < topology.vertex_offsets[static_cast<std::size_t>(v) + 1]; ++k) {
          const auto w = topology.vertex_neighbours[static_cast<std::size_t>(k)];
          if (seen[static_cast<std::size_t>(w)] == id) continue;
          seen[static_cast<std::size_t>(w)] = id;
          next_ring.push_back(w);
        }
      std::sort(next_ring.begin(), next_ring.end());
      patches.vertices.insert(patches.vertices.end(), next_ring.begin(), next_ring.end());
      patches.level_ends.push_back(patches.level_ends.back() + static_cast<std::int32_t>(next_ring.size()));
      ring.swap(next_ring);
    }
    patches.offsets.push_back(static_cast<std::int32_t>(patches.vertices.size()));
  }
  return patches;
}

}  // namespace tissue::mesh
