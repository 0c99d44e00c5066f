#pragma once
/// @file triangle_mesh.hpp
/// Triangle meshes: vertex positions and faces, their connectivity (vertex-vertex and vertex-face, CSR),
/// boundary detection, validation, OBJ import (tinyobjloader) and generated test meshes.
///
/// Faces are vertex-index triples, counter-clockwise seen from outside on closed meshes. A valid mesh has
/// every index in range, no degenerate face (repeated vertex or zero area), every edge shared by one face
/// (boundary) or two (interior), and every vertex used by a face.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tissue::mesh {

/// Positions (SoA, [length]) and faces (3 vertex indices per face).
struct TriangleMesh {
  std::vector<double> x, y, z;
  std::vector<std::int32_t> faces;

  std::size_t vertex_count() const { return x.size(); }
  std::size_t face_count() const { return faces.size() / 3; }
  /// Vertex k (0, 1, 2) of face f.
  std::int32_t corner(std::size_t f, int k) const { return faces[3 * f + static_cast<std::size_t>(k)]; }
};

/// Connectivity of a valid mesh in compressed sparse rows: the neighbours of vertex v are
/// vertex_neighbours[vertex_offsets[v] .. vertex_offsets[v + 1]) (sorted ascending), its incident faces
/// vertex_faces[face_offsets[v] .. face_offsets[v + 1]) (ascending).
struct MeshTopology {
  std::vector<std::int32_t> vertex_offsets, vertex_neighbours;
  std::vector<std::int32_t> face_offsets, vertex_faces;
  std::vector<std::uint8_t> boundary_vertex;  ///< 1 for a vertex on a boundary edge
  std::size_t boundary_edges = 0;             ///< edges with one incident face
  std::size_t edges = 0;                      ///< all edges

  /// Neighbour count of vertex v.
  std::int32_t degree(std::size_t v) const { return vertex_offsets[v + 1] - vertex_offsets[v]; }
};

/// Number of connected pieces of a mesh (vertices joined by edges), from its topology.
std::size_t connected_components(const MeshTopology& topology);

/// The neighbours of every vertex in counter-clockwise order around it (the one-ring), CSR: ring[offsets[v]
/// .. offsets[v + 1]). Consecutive neighbours (n_k, n_k+1) span the face (v, n_k, n_k+1); on a closed fan
/// (closed[v] = 1) also (n_last, n_0); on a boundary fan n_0 and n_last are the two boundary neighbours.
struct OneRing {
  std::vector<std::int32_t> offsets, ring;
  std::vector<std::uint8_t> closed;
};

/// Orders each vertex's neighbours around it from the faces of a valid, consistently oriented mesh.
/// @throws InputError naming `source` and the vertex (from 0) when a vertex's faces do not form one fan (a
/// non-manifold, pinched vertex).
OneRing one_ring(const TriangleMesh& mesh, const MeshTopology& topology, const std::string& source = "mesh");

/// Builds the connectivity. @throws InputError (naming `source` and the edge, indices from 0) for a
/// non-manifold edge (more than two incident faces) or faces that disagree on orientation across an edge.
MeshTopology build_topology(const TriangleMesh& mesh, const std::string& source = "mesh");

/// Checks indices (in range) and faces (three distinct vertices, non-zero area); check_mesh()
/// (mesh_check.hpp) lists every defect instead of the first.
/// @throws InputError naming `source` and the first bad face (indices from 0) and why.
void validate(const TriangleMesh& mesh, const std::string& source = "mesh");

/// Drops vertices no face uses and renumbers the faces; returns how many were dropped.
std::size_t drop_unreferenced_vertices(TriangleMesh& mesh);

/// Reads a Wavefront OBJ file with tinyobjloader: positions and faces of every shape, polygons
/// triangulated; texture coordinates, normals and materials ignored (an `mtllib` line opens no file).
/// Unreferenced vertices are dropped (with a line in `warnings`, when given); then, with `check`, the mesh is
/// checked (check_mesh(): every defect listed, indices from 0). Vertex and face records are checked strictly
/// first (a vertex needs 3 finite numbers, a face 3 corners with non-zero indices), since tinyobjloader reads
/// `v abc` or `v 1` as zeros and drops `f 1 2`. Lines end at "\n", "\r\n" or a lone "\r", for the check as
/// for tinyobjloader.
/// @throws InputError naming the file (and file:line for a bad record): missing or unreadable, a malformed
/// record, a parse error, no faces, or a bad face/edge.
TriangleMesh read_obj(const std::filesystem::path& path, std::vector<std::string>* warnings = nullptr,
                      bool check = true);

/// A regular rectangle [0, lx] x [0, ly] in the plane z = 0 with nx x ny vertices (>= 2 each), every
/// grid square split into two triangles along alternating diagonals (the seed's R1/R2 meshes).
/// @throws std::invalid_argument for nx or ny < 2 or a non-positive size.
TriangleMesh rectangle_mesh(int nx, int ny, double lx, double ly);

/// The icosahedron subdivided `subdivisions` times (each triangle into four), vertices projected onto
/// the sphere of `radius` about the origin: 10 * 4^s + 2 vertices. @throws std::invalid_argument.
TriangleMesh icosphere(int subdivisions, double radius);

/// A latitude-longitude sphere: `rings` >= 2 bands between the poles, `segments` >= 3 around.
/// @throws std::invalid_argument.
TriangleMesh uv_sphere(int rings, int segments, double radius);

}  // namespace tissue::mesh
