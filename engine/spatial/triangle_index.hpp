#pragma once
/// @file triangle_index.hpp
/// Closest point on a triangle mesh from any point within a fixed reach: the spatial index behind
/// adhesion to curved substrates (an element's distance to the basement membrane and the direction to it).
///
/// A uniform grid of bins over the mesh's bounding box grown by the reach; every triangle is listed in
/// each bin its own bounding box grown by the reach overlaps (CSR, built once on the host and uploaded).
/// A query visits only its own bin, which therefore holds every triangle within the reach of any point in
/// it. Triangles are tested in ascending index order and ties keep the lower index, so results do not
/// depend on threads. Positions in float, as the elements'.

#include <cstddef>
#include <cstdint>

#include "engine/exec/device_buffer.hpp"
#include "engine/exec/math.hpp"
#include "engine/mesh/triangle_mesh.hpp"

namespace tissue {

/// Closest point of one triangle (a, b, c) to p, by the Voronoi regions of its vertices, edges and face
/// (Ericson, Real-Time Collision Detection, 2005, sec. 5.1.5). Writes the point to q; returns true when it
/// lies inside the face (p - q is then along the face normal), false on an edge or a vertex.
TISSUE_HD inline bool closest_point_on_triangle(const float p[3], const float a[3], const float b[3],
                                                const float c[3], float q[3]) {
  float ab[3], ac[3], ap[3], bp[3], cp[3];
  for (int k = 0; k < 3; ++k) {
    ab[k] = b[k] - a[k];
    ac[k] = c[k] - a[k];
    ap[k] = p[k] - a[k];
    bp[k] = p[k] - b[k];
    cp[k] = p[k] - c[k];
  }
  const auto dot = [](const float* u, const float* v) { return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]; };
  const auto set = [&](const float* o, const float* d, float t) {
    for (int k = 0; k < 3; ++k) q[k] = o[k] + t * d[k];
    return false;
  };
  const float d1 = dot(ab, ap), d2 = dot(ac, ap);
  if (d1 <= 0.0f && d2 <= 0.0f) return set(a, ab, 0.0f);  // vertex a
  const float d3 = dot(ab, bp), d4 = dot(ac, bp);
  if (d3 >= 0.0f && d4 <= d3) return set(b, ab, 0.0f);  // vertex b
  const float vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0f && d1 >= 0.0f && d3 <= 0.0f) return set(a, ab, d1 / (d1 - d3));  // edge ab
  const float d5 = dot(ab, cp), d6 = dot(ac, cp);
  if (d6 >= 0.0f && d5 <= d6) return set(c, ac, 0.0f);  // vertex c
  const float vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0f && d2 >= 0.0f && d6 <= 0.0f) return set(a, ac, d2 / (d2 - d6));  // edge ac
  const float va = d3 * d6 - d5 * d4;
  if (va <= 0.0f && d4 - d3 >= 0.0f && d5 - d6 >= 0.0f) {  // edge bc
    const float bc[3] = {c[0] - b[0], c[1] - b[1], c[2] - b[2]};
    return set(b, bc, (d4 - d3) / ((d4 - d3) + (d5 - d6)));
  }
  const float denom = 1.0f / (va + vb + vc);  // inside the face
  const float v = vb * denom, w = vc * denom;
  for (int k = 0; k < 3; ++k) q[k] = a[k] + ab[k] * v + ac[k] * w;
  return true;
}

/// Result of a closest-point query.
struct SurfaceHit {
  std::int32_t triangle = -1;   ///< closest triangle, -1 when none lies within the reach
  float distance = 0.0f;        ///< |p - point| [length]
  float point[3] = {0, 0, 0};   ///< closest point on the mesh [length]
  float normal[3] = {0, 0, 0};  ///< unit normal of that triangle, (b - a) x (c - a) (outward on a closed,
                                ///< counter-clockwise mesh)
  bool on_face = false;         ///< the point is inside the triangle (not on an edge or a vertex)
};

class TriangleIndex {
 public:
  /// What kernels hold (by value).
  struct View {
    float origin[3] = {0, 0, 0};
    float inv_width[3] = {1, 1, 1};
    int n[3] = {1, 1, 1};
    float reach = 0.0f;
    Span<const float> corners;           ///< 9 floats per triangle: a, b, c
    Span<const float> normals;           ///< 3 floats per triangle (unit)
    Span<const std::int32_t> bin_start;  ///< bins + 1 entries
    Span<const std::int32_t> bin_triangles;

    /// The closest point of the mesh to (x, y, z) if one lies within the reach (hit.triangle >= 0).
    TISSUE_HD SurfaceHit closest(float x, float y, float z) const {
      SurfaceHit hit;
      const float p[3] = {x, y, z};
      int cell[3];
      for (int k = 0; k < 3; ++k) {
        const float f = math::floor((p[k] - origin[k]) * inv_width[k]);
        if (!(f >= 0.0f && f < static_cast<float>(n[k]))) return hit;  // outside: nothing within reach
        cell[k] = static_cast<int>(f);
      }
      const std::size_t b = (static_cast<std::size_t>(cell[2]) * static_cast<std::size_t>(n[1]) +
                             static_cast<std::size_t>(cell[1])) *
                                static_cast<std::size_t>(n[0]) +
                            static_cast<std::size_t>(cell[0]);
      float best2 = reach * reach;
      for (std::int32_t s = bin_start[b]; s < bin_start[b + 1]; ++s) {
        const auto t = static_cast<std::size_t>(bin_triangles[static_cast<std::size_t>(s)]);
        const float* v = corners.data() + 9 * t;
        float q[3];
        const bool on_face = closest_point_on_triangle(p, v, v + 3, v + 6, q);
        const float dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
        const float d2 = dx * dx + dy * dy + dz * dz;
        if (d2 > best2 || (d2 == best2 && hit.triangle >= 0)) continue;
        best2 = d2;
        hit.triangle = static_cast<std::int32_t>(t);
        hit.on_face = on_face;
        for (int k = 0; k < 3; ++k) {
          hit.point[k] = q[k];
          hit.normal[k] = normals[3 * t + static_cast<std::size_t>(k)];
        }
      }
      if (hit.triangle >= 0) hit.distance = math::sqrt(best2);
      return hit;
    }
  };

  /// Indexes `mesh` (a valid mesh, mesh::validate) for queries up to `reach` from it [length].
  /// @throws std::invalid_argument when reach <= 0 or the mesh has no faces.
  void build(const mesh::TriangleMesh& mesh, float reach);
  View view() const { return view_; }
  std::size_t bin_count() const;
  /// Mean number of triangles listed per non-empty bin (what a query tests).
  double mean_triangles_per_bin() const { return mean_per_bin_; }

 private:
  View view_;
  DeviceBuffer<float> corners_, normals_;
  DeviceBuffer<std::int32_t> bin_start_, bin_triangles_;
  double mean_per_bin_ = 0.0;
};

}  // namespace tissue
