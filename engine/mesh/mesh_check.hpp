#pragma once
/// @file mesh_check.hpp
/// Validation and repair of triangle meshes, one function for every module that reads a mesh (through
/// read_scenario_mesh()): every defect is listed with 0-based vertex and face indices (the order of the `v`
/// and `f` records of an OBJ file, counted from 0), not only the first one found.
///
/// Errors (the mesh is refused): an index out of range or a non-finite coordinate; a degenerate face
/// (a repeated vertex, or zero area); a vertex no face uses; a non-manifold edge (more than two faces); faces
/// that traverse an edge in the same direction (inconsistent orientation); a non-manifold ("pinched")
/// vertex, whose faces form more than one fan; two faces folded onto each other across their edge (inverted
/// triangles: normals more than 160 degrees apart); a boundary where the model requires a closed surface; a
/// closed surface oriented inward (negative enclosed volume). Warning: skinny triangles (an angle below
/// MeshRequirements::skinny_degrees), with the smallest and largest angles and where they are.

#include <cstddef>
#include <string>
#include <vector>

#include "engine/mesh/triangle_mesh.hpp"

namespace tissue::mesh {

/// What a model, or the scenario's mesh table, requires of a surface mesh.
struct MeshRequirements {
  bool closed = false;           ///< refuse boundary edges (a closed surface is required)
  double skinny_degrees = 10.0;  ///< warn about triangles with an angle below this [degrees]
};

/// What check_mesh() found. Messages name 0-based indices; at most five of each kind are listed, then a
/// count.
struct MeshReport {
  std::vector<std::string> errors;                     ///< defects that refuse the mesh
  std::vector<std::string> warnings;                   ///< what a model can run on, but should know of
  double min_angle_degrees = 180.0;                    ///< the smallest angle of any non-degenerate triangle
  double max_angle_degrees = 0.0;                      ///< the largest
  std::size_t min_angle_face = 0, max_angle_face = 0;  ///< where they are
  std::size_t boundary_edges = 0;
  std::size_t pinched_vertices = 0;  ///< non-manifold vertices (more than one fan of faces)
  std::size_t unreferenced_vertices = 0;
  bool ok() const { return errors.empty(); }
  /// "defect; defect; ...", one line.
  std::string error_text() const;
};

/// Checks a mesh against `requirements`: every defect of the list in this file's comment. Never throws on a
/// bad mesh (that is what the report says); O(faces) time and memory.
MeshReport check_mesh(const TriangleMesh& mesh, const MeshRequirements& requirements = {});

/// check_mesh() and, if it found errors, throws; warnings go to `warnings` (when given) prefixed with
/// `source`. @throws InputError "SOURCE: the mesh is refused (vertex and face indices from 0): ...".
void require_valid_mesh(const TriangleMesh& mesh, const std::string& source,
                        const MeshRequirements& requirements = {},
                        std::vector<std::string>* warnings = nullptr);

/// Repairs what can be repaired without changing the surface: drops vertices no face uses (renumbering the
/// rest), then splits each non-manifold ("pinched") vertex into one vertex per fan of its faces (the copies
/// appended, at the same position; the first fan keeps the index). Faces with indices out of range are left
/// for check_mesh() to report. @return one line per kind of repair done ("split 1 pinched vertices (vertex 12
/// into 12, 3001)"), empty when nothing was done.
std::vector<std::string> repair_mesh(TriangleMesh& mesh);

}  // namespace tissue::mesh
