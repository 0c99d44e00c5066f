#pragma once
/// @file surface_initial_field.hpp
/// Per-vertex initial fields of surface reaction-diffusion ([initial] of surface_rd, [membrane.rd.initial]
/// of membrane_rd): `type = "file"` loads one array per species from a .vtu (VTK point data), .ply (vertex
/// properties) or .h5 file (datasets; a tissue checkpoint of a previous run among them); `type =
/// "expression"` evaluates an expression of the vertex position per species. Keys: docs/scenarios.md.

#include <string>
#include <vector>

#include "engine/io/scenario.hpp"
#include "engine/mesh/triangle_mesh.hpp"

namespace tissue::surface_rd {

/// Reads the per-vertex initial values of `species` on `mesh` as [initial] `table` asks: type "file" (keys
/// file, arrays, check_points, point_tolerance) or "expression" (one key per species). Returns one vector of
/// mesh.vertex_count() values per species, in the order of `species`. `field` is the field's name (the
/// default HDF5 datasets are /fields/<field>/<species>, as checkpoints store them); relative file names are
/// resolved against `scenario_path`'s folder. `non_negative`: values below 0 are refused (the model's
/// densities). The file is recorded as an input of the scenario (checkpoints hash it).
/// @throws InputError (one line naming the key, file, array or dataset and vertex) for a missing file, a
/// directory, an unreadable or malformed file, a vertex count other than the mesh's, positions farther than
/// point_tolerance from the mesh's (the first such vertex), a missing array, a non-finite or (with
/// `non_negative`) negative value, or an invalid expression.
std::vector<std::vector<double>> read_initial_field(const io::ScenarioTable& table, const std::string& type,
                                                    const mesh::TriangleMesh& mesh,
                                                    const std::vector<std::string>& species,
                                                    const std::string& field,
                                                    const std::string& scenario_path, bool non_negative);

/// Values of expression `expr` of x, y, z, r = |(x, y, z)|, theta = acos(z / r) (0 at the origin) and
/// phi = atan2(y, x) at the mesh's vertices: the gene-network expression language (hill, exp, log, sqrt,
/// abs, pow, min, max, comparisons, ?:) with sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh and the
/// constant pi. @throws InputError "<where>: <what> in "<expr>"" for a syntax error or an unknown name.
std::vector<double> evaluate_vertex_expression(const std::string& expr, const mesh::TriangleMesh& mesh,
                                               const std::string& where);

}  // namespace tissue::surface_rd
