#pragma once
/// @file mesh_operators.hpp
/// Discrete differential operators on triangle meshes (Meyer, Desbrun, Schröder, Barr 2003, "Discrete
/// differential-geometry operators for triangulated 2-manifolds"; seed 000, eqs. 2-4), computed once per
/// geometry in double precision on the host; modules copy the weights to the device in their precision.
///
///   Laplace-Beltrami (eq. 2):  (L f)_i = 1 / (2 A_i) sum_{j in N(i)} (cot a_ij + cot b_ij) (f_j - f_i)
///   face gradient    (eq. 3):  grad f(T) = (f_j - f_i) (x_i - x_k)^perp / (2 A_T) + (f_k - f_i) (x_j -
///   x_i)^perp / (2 A_T) vertex gradient  (eq. 4):  grad f(v) = sum_T theta_T grad f(T) / sum_T theta_T
///   (incident angles theta_T)
///
/// A_i is the mixed Voronoi area (Meyer et al., Fig. 4): the Voronoi region inside non-obtuse triangles,
/// half (at the obtuse corner) or a quarter (elsewhere) of an obtuse triangle's area. On an open mesh a
/// boundary edge has one cotangent only, which is the natural zero-flux (Neumann) boundary condition of
/// the finite-element form; sum_i A_i (L f)_i = 0 for every f, the discrete conservation law.

#include <array>
#include <cstdint>
#include <vector>

#include "engine/mesh/triangle_mesh.hpp"

namespace tissue::mesh {

/// The cotangent Laplacian in CSR over the topology's vertex neighbours:
/// (L f)_i = (1 / area[i]) sum_k weight[k] (f[neighbour[k]] - f[i]) for k in [offsets[i], offsets[i + 1]),
/// with weight = (cot a + cot b) / 2 (symmetric: w_ij = w_ji) [dimensionless] and area [length^2].
struct CotangentLaplacian {
  std::vector<std::int32_t> offsets, neighbours;
  std::vector<double> weights;
  std::vector<double> area;  ///< mixed Voronoi area per vertex [length^2]

  /// out = L f on the host (reference evaluation; f and out have one value per vertex).
  void apply(const std::vector<double>& f, std::vector<double>& out) const;
  /// Gershgorin bound on the spectral radius of L: max_i 2 sum_j |w_ij| / A_i [1/length^2] (explicit
  /// time steps of diffusion are stable below 2 / (D times this)).
  double spectral_radius_bound() const;
};

/// Builds the operator. Throws nothing for a valid mesh (mesh::validate).
CotangentLaplacian cotangent_laplacian(const TriangleMesh& mesh, const MeshTopology& topology);

/// Per-face quantities of eq. 3: area and the two rotated edge vectors divided by twice the area, so that
/// grad f(T) = (f_j - f_i) gi + (f_k - f_i) gk for face (i, j, k).
struct FaceGradients {
  std::vector<double> area;               ///< face area [length^2]
  std::vector<std::array<double, 3>> gj;  ///< (x_i - x_k)^perp / (2 A_T) [1/length]
  std::vector<std::array<double, 3>> gk;  ///< (x_j - x_i)^perp / (2 A_T) [1/length]
  std::vector<double> angle;              ///< 3 per face: interior angle at each corner [rad]

  /// Gradient of f (one value per vertex) on face t [f/length].
  std::array<double, 3> face_gradient(const TriangleMesh& mesh, const std::vector<double>& f,
                                      std::size_t t) const;
  /// Angle-weighted average of the incident face gradients at vertex v (eq. 4) [f/length].
  std::array<double, 3> vertex_gradient(const TriangleMesh& mesh, const MeshTopology& topology,
                                        const std::vector<double>& f, std::size_t v) const;
};

/// Builds the face quantities of eqs. 3 and 4.
FaceGradients face_gradients(const TriangleMesh& mesh);

/// Unit vertex normals: the area-weighted sum of the incident faces' normals (b - a) x (c - a), outward on
/// a closed counter-clockwise mesh; (0, 0, 1) for a vertex without faces of nonzero area. One per vertex.
std::vector<std::array<double, 3>> vertex_normals(const TriangleMesh& mesh);

/// The vertex gradient of eq. 4 as one linear stencil over the vertex-vertex CSR of the topology:
/// grad f(v) = sum_k weights[k] (f[neighbours[k]] - f[v]) for k in [offsets[v], offsets[v + 1]), where
/// weights[k] = sum over the faces T holding both v and j = neighbours[k] of theta_T(v) / sum_T theta_T(v)
/// times grad phi_j(T), the gradient of j's hat function on T [1/length]. Equal to
/// FaceGradients::vertex_gradient to rounding; a kernel then needs no positions nor face loop.
struct VertexGradientOperator {
  std::vector<std::int32_t> offsets, neighbours;
  std::vector<std::array<double, 3>> weights;
};

/// Builds the operator from the face quantities (face_gradients(mesh)). Throws nothing for a valid mesh.
VertexGradientOperator vertex_gradient_operator(const TriangleMesh& mesh, const MeshTopology& topology,
                                                const FaceGradients& gradients);

/// The zero-flux projection of the vertex gradient at every boundary vertex (seed 000 states zero-flux
/// boundaries; surface_rd's README says how the gradient meets them): with e1, e2 the unit directions of the
/// vertex's two boundary edges, a = (e1 . e2) / 2 e1 and b = e2, so that g -> (a . g) b + (b . g) a is the
/// derivative along a straight boundary and 0 at a corner. 6 values per vertex (a, then b) [dimensionless];
/// zeros for an interior vertex and for one where several boundary loops touch (left unprojected).
std::vector<double> boundary_projections(const TriangleMesh& mesh, const MeshTopology& topology);

}  // namespace tissue::mesh
