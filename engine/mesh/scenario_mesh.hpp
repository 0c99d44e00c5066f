#pragma once
/// @file scenario_mesh.hpp
/// A triangle mesh named by a scenario table, shared by every module that reads one ([mesh] of the surface
/// and conformal-flow models, [membrane] of the epidermis), and simple measures of it.

#include <memory>
#include <string>

#include "engine/io/scenario.hpp"
#include "engine/mesh/device_mesh.hpp"
#include "engine/mesh/triangle_mesh.hpp"

namespace tissue::mesh {

/// The mesh a scenario table names: `file` (an OBJ, relative to the scenario file's folder) or `generate` =
/// "rectangle" (nx, ny, lx, ly) | "icosphere" (subdivisions, radius) | "uv_sphere" (rings, segments,
/// radius), then scaled by `scale`; with `repair = true` pinched vertices are split and unused ones dropped
/// (repair_mesh()); then checked (check_mesh(): `closed = true` requires a closed surface, `skinny_angle`
/// [degrees, default 10] is the angle below which triangles are reported). Every defect is listed, indices
/// from 0. Warnings (the OBJ reader's, the repairs, skinny triangles) go to stderr.
/// @param scenario_path     the scenario file (for relative paths)
/// @param bytes_per_vertex  memory the caller's model needs per vertex, host and device together [bytes]; a
///                          generated mesh that would need more than the active backend has is refused
///                          before it is generated
/// @throws InputError (file:line:column) for a bad file or value, or a generated mesh too large for memory.
TriangleMesh read_scenario_mesh(const io::ScenarioTable& table, const std::string& scenario_path,
                                double bytes_per_vertex);

/// read_scenario_mesh() as a DeviceMesh, checked as every module's mesh is: its topology, and one fan of
/// faces around each vertex (its one-ring, built now and cached). `source` names the mesh in messages.
/// @throws InputError at the table for a bad file, value or mesh.
std::shared_ptr<DeviceMesh> read_scenario_device_mesh(const io::ScenarioTable& table,
                                                      const std::string& scenario_path,
                                                      double bytes_per_vertex, const std::string& source);

/// Mean edge length of a mesh [length].
double mean_edge_length(const TriangleMesh& mesh, const MeshTopology& topology);

}  // namespace tissue::mesh
