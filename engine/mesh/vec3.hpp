#pragma once
/// @file vec3.hpp
/// Host-side 3-vector arithmetic in double for mesh geometry (positions, edges, normals) [length].

#include <array>
#include <cmath>
#include <cstdint>

#include "engine/mesh/triangle_mesh.hpp"

namespace tissue::mesh {

using Vec3 = std::array<double, 3>;

/// Position of vertex v.
inline Vec3 position(const TriangleMesh& m, std::int32_t v) {
  const auto i = static_cast<std::size_t>(v);
  return {m.x[i], m.y[i], m.z[i]};
}
inline Vec3 sub(const Vec3& a, const Vec3& b) {
  return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
inline Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
inline double dot(const Vec3& a, const Vec3& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
inline double norm(const Vec3& a) {
  return std::sqrt(dot(a, a));
}

}  // namespace tissue::mesh
