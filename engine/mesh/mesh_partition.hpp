#pragma once
/// @file mesh_partition.hpp
/// Patches of a triangle mesh for kernels that give one patch to one thread block (seed 000, section on
/// mesh partitioning: METIS patches with halos): the vertices are split into patches by METIS's k-way
/// partition of the vertex graph (libmetis), and each patch is grown by `levels` rings of halo vertices,
/// so that a block holding a patch and its halo can advance the patch's vertices by `levels` explicit
/// steps of a one-ring stencil without reading any other block's data.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/mesh/triangle_mesh.hpp"

namespace tissue::mesh {

/// METIS k-way partition of the vertex graph into `parts` (>= 1) parts of about equal size, minimising
/// the edges cut. Deterministic (fixed METIS seed). @return the part of every vertex, in [0, parts).
/// @throws std::runtime_error when METIS fails; std::invalid_argument for parts == 0.
std::vector<std::int32_t> partition_vertices(const MeshTopology& topology, std::size_t parts);

/// Patches with their halos. Patch p's local vertices are vertices[offsets[p] .. offsets[p + 1]), in
/// order of level (0: the patch's own vertices, l: halo vertices at graph distance l from the patch), each
/// level by ascending global index; level_ends[p * (levels + 1) + l] is the number of local vertices of
/// level <= l. Every vertex is level 0 of exactly one patch.
struct MeshPatches {
  int levels = 0;
  std::vector<std::int32_t> offsets;     ///< patches + 1
  std::vector<std::int32_t> vertices;    ///< global index per local vertex
  std::vector<std::int32_t> level_ends;  ///< (levels + 1) per patch

  std::size_t patches() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  /// Local vertex count of patch p (its own vertices and its halo).
  std::size_t local_count(std::size_t p) const {
    return static_cast<std::size_t>(offsets[p + 1] - offsets[p]);
  }
  /// Number of local vertices of patch p at level <= l.
  std::size_t level_end(std::size_t p, int l) const {
    return static_cast<std::size_t>(
        level_ends[p * static_cast<std::size_t>(levels + 1) + static_cast<std::size_t>(l)]);
  }
};

/// Patches from a partition (`part`: one part index per vertex, as from partition_vertices; empty parts
/// are dropped) with `levels` (>= 0) halo rings. @throws std::invalid_argument for a size mismatch or a
/// negative level count.
MeshPatches mesh_patches(const MeshTopology& topology, const std::vector<std::int32_t>& part, int levels);

}  // namespace tissue::mesh
