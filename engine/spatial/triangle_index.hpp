#pragma once
/// @file triangle_index.hpp
/// Closest point on a triangle mesh from any point within a fixed reach: the spatial index behind
/// adhesion to curved substrates (an element's distance to the basement membrane and the direction to it).
///
/// A uniform grid of cubic bins over the mesh's bounding box grown by the reach; every triangle is listed
/// in each bin its bounding box overlaps (CSR, built once on the host and uploaded). A query searches
/// shells of bins outwards from its own until no unvisited bin can hold a closer triangle, so that points
/// near the mesh test a few bins whatever the reach. Ties keep the lower triangle index, so results do not
/// depend on the visiting order or threads. Positions in float, as the elements'.

#include <cstddef>
#include <cstdint>
#include <vector>

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

/// Signed distance of p from the mesh at a hit (hit.triangle >= 0): positive on the side the triangle's
/// normal points to. (p - q) . n when the closest point is inside the face (exact in float however close p
/// is), else sign((p - q) . n) |p - q|. [length]
TISSUE_HD inline float signed_distance(const SurfaceHit& hit, float px, float py, float pz) {
  const float side = (px - hit.point[0]) * hit.normal[0] + (py - hit.point[1]) * hit.normal[1] +
                     (pz - hit.point[2]) * hit.normal[2];
  if (hit.on_face) return side;
  return side < 0.0f ? -hit.distance : hit.distance;
}

/// Barycentric coordinates (of a, b, c; summing to 1) of a point q of the triangle (a, b, c), by areas
/// projected on the triangle's plane; a degenerate triangle gives (1, 0, 0).
TISSUE_HD inline void barycentric(const float q[3], const float a[3], const float b[3], const float c[3],
                                  float w[3]) {
  float v0[3], v1[3], v2[3];
  for (int k = 0; k < 3; ++k) {
    v0[k] = b[k] - a[k];
    v1[k] = c[k] - a[k];
    v2[k] = q[k] - a[k];
  }
  const auto dot = [](const float* u, const float* v) { return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]; };
  const float d00 = dot(v0, v0), d01 = dot(v0, v1), d11 = dot(v1, v1), d20 = dot(v2, v0), d21 = dot(v2, v1);
  const float denom = d00 * d11 - d01 * d01;
  if (!(denom > 0.0f)) {
    w[0] = 1.0f;
    w[1] = w[2] = 0.0f;
    return;
  }
  w[1] = (d11 * d20 - d01 * d21) / denom;
  w[2] = (d00 * d21 - d01 * d20) / denom;
  w[0] = 1.0f - w[1] - w[2];
}

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
    Span<const std::int32_t> faces;      ///< 3 vertex indices per triangle (the mesh's)
    Span<const std::int32_t> bin_start;  ///< bins + 1 entries
    Span<const std::int32_t> bin_triangles;

    /// The closest point of the mesh to (x, y, z) if one lies within the reach (hit.triangle >= 0).
    /// Visits shells of bins around the point's bin (Chebyshev radius 0, 1, ...) and stops when the best
    /// distance found is no larger than the gap between the point and the unvisited bins, or that gap
    /// exceeds the reach.
    TISSUE_HD SurfaceHit closest(float x, float y, float z) const { return search(x, y, z, reach, false); }

    /// The closest point of the whole mesh, however far (hit.triangle < 0 only for a non-finite point): the
    /// same shell search without the reach, started from the grid's bin nearest to the point when it lies
    /// outside the grid. O(bins visited): for host-side queries of points that may be far from the mesh
    /// (summaries, division axes), never a scan of every triangle per query.
    TISSUE_HD SurfaceHit closest_anywhere(float x, float y, float z) const {
      return search(x, y, z, 3.0e38f, true);
    }

    /// closest() within `limit` [length]; `clamp`: a point outside the grid starts from the nearest bin
    /// (else nothing is found for it).
    TISSUE_HD SurfaceHit search(float x, float y, float z, float limit, bool clamp) const {
      SurfaceHit hit;
      const float p[3] = {x, y, z};
      int cell[3];
      for (int k = 0; k < 3; ++k) {
        float f = math::floor((p[k] - origin[k]) * inv_width[k]);
        if (!(f == f)) return hit;  // NaN
        if (clamp)
          f = f < 0.0f ? 0.0f : (f > static_cast<float>(n[k] - 1) ? static_cast<float>(n[k] - 1) : f);
        if (!(f >= 0.0f && f < static_cast<float>(n[k]))) return hit;  // outside: nothing within reach
        cell[k] = static_cast<int>(f);
      }
      float best2 = limit < 1.0e19f ? limit * limit : 3.0e38f;
      const float width = 1.0f / inv_width[0];
      const int max_shell = n[0] > n[1] ? (n[0] > n[2] ? n[0] : n[2]) : (n[1] > n[2] ? n[1] : n[2]);
      for (int r = 0; r < max_shell; ++r) {
        for (int iz = cell[2] - r; iz <= cell[2] + r; ++iz) {
          if (iz < 0 || iz >= n[2]) continue;
          const bool z_face = iz == cell[2] - r || iz == cell[2] + r;
          for (int iy = cell[1] - r; iy <= cell[1] + r; ++iy) {
            if (iy < 0 || iy >= n[1]) continue;
            const bool yz_face = z_face || iy == cell[1] - r || iy == cell[1] + r;
            // inside the shell's box only its faces are new: step across the interior in x
            const int step = yz_face ? 1 : (r > 0 ? 2 * r : 1);
            for (int ix = cell[0] - r; ix <= cell[0] + r; ix += step) {
              if (ix < 0 || ix >= n[0]) continue;
              // skip a bin farther from p than the best so far
              const int idx[3] = {ix, iy, iz};
              float d2 = 0.0f;
              for (int k = 0; k < 3; ++k) {
                const float lo = origin[k] + static_cast<float>(idx[k]) * width;
                const float d = p[k] < lo ? lo - p[k] : (p[k] > lo + width ? p[k] - lo - width : 0.0f);
                d2 += d * d;
              }
              if (d2 > best2) continue;
              const std::size_t b = (static_cast<std::size_t>(iz) * static_cast<std::size_t>(n[1]) +
                                     static_cast<std::size_t>(iy)) *
                                        static_cast<std::size_t>(n[0]) +
                                    static_cast<std::size_t>(ix);
              for (std::int32_t s = bin_start[b]; s < bin_start[b + 1]; ++s)
                test(p, bin_triangles[static_cast<std::size_t>(s)], best2, hit);
            }
          }
        }
        // distance from p to the bins not yet visited (a lower bound, also for a point outside the grid)
        float gap = 3.0e38f;
        for (int k = 0; k < 3; ++k) {
          const float lo = p[k] - (origin[k] + static_cast<float>(cell[k] - r) * width);
          const float hi = origin[k] + static_cast<float>(cell[k] + r + 1) * width - p[k];
          if (cell[k] - r > 0) gap = lo < gap ? lo : gap;
          if (cell[k] + r + 1 < n[k]) gap = hi < gap ? hi : gap;
        }
        if (gap > limit || (hit.triangle >= 0 && best2 <= gap * gap)) break;
      }
      if (hit.triangle >= 0) hit.distance = math::sqrt(best2);
      return hit;
    }

    /// Tests triangle t against the best so far (ties keep the lower index, whatever the visiting order).
    TISSUE_HD void test(const float p[3], std::int32_t t, float& best2, SurfaceHit& hit) const {
      const auto tu = static_cast<std::size_t>(t);
      const float* v = corners.data() + 9 * tu;
      float box2 = 0.0f;  // distance to the triangle's bounding box: a cheap lower bound
      for (int k = 0; k < 3; ++k) {
        const float lo = math::min(v[k], math::min(v[3 + k], v[6 + k]));
        const float hi = math::max(v[k], math::max(v[3 + k], v[6 + k]));
        const float d = p[k] < lo ? lo - p[k] : (p[k] > hi ? p[k] - hi : 0.0f);
        box2 += d * d;
      }
      if (box2 > best2) return;
      float q[3];
      const bool on_face = closest_point_on_triangle(p, v, v + 3, v + 6, q);
      const float d2 =
          (p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]);
      const bool better = hit.triangle < 0 ? d2 <= best2 : (d2 < best2 || (d2 == best2 && t < hit.triangle));
      if (!better) return;
      best2 = d2;
      hit.triangle = t;
      hit.on_face = on_face;
      for (int k = 0; k < 3; ++k) {
        hit.point[k] = q[k];
        hit.normal[k] = normals[3 * tu + static_cast<std::size_t>(k)];
      }
    }
  };

  /// Indexes `mesh` (a valid mesh, mesh::validate) for queries up to `reach` from it [length].
  /// @throws std::invalid_argument when reach <= 0 or the mesh has no faces.
  void build(const mesh::TriangleMesh& mesh, float reach);
  /// The index on the active backend (for kernels).
  View view() const { return view_; }
  /// The same index in host memory (for CPU hooks and summaries on either backend).
  View host_view() const;
  float reach() const { return view_.reach; }
  std::size_t bin_count() const;
  /// Mean number of triangles listed per non-empty bin (what a query tests).
  double mean_triangles_per_bin() const { return mean_per_bin_; }

 private:
  View view_;
  DeviceBuffer<float> corners_, normals_;
  DeviceBuffer<std::int32_t> bin_start_, bin_triangles_, faces_;
  std::vector<float> host_corners_, host_normals_;
  std::vector<std::int32_t> host_bin_start_, host_bin_triangles_, host_faces_;
  double mean_per_bin_ = 0.0;
};

}  // namespace tissue
