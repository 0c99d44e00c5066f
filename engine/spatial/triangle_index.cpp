#include "engine/spatial/triangle_index.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "engine/mesh/vec3.hpp"

namespace tissue {

void TriangleIndex::build(const mesh::TriangleMesh& m, float reach) {
  if (!(reach > 0.0f)) throw std::invalid_argument("triangle index: the reach must be > 0");
  const std::size_t faces = m.face_count();
  if (faces == 0) throw std::invalid_argument("triangle index: the mesh has no faces");
  std::vector<float> corners(9 * faces), normals(3 * faces);
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  for (std::size_t f = 0; f < faces; ++f) {
    const mesh::Vec3 a = mesh::position(m, m.corner(f, 0)), b = mesh::position(m, m.corner(f, 1)),
                     c = mesh::position(m, m.corner(f, 2));
    const mesh::Vec3 n = mesh::cross(mesh::sub(b, a), mesh::sub(c, a));
    const double len = mesh::norm(n);
    double flo[3], fhi[3];
    for (int k = 0; k < 3; ++k) {
      corners[9 * f + static_cast<std::size_t>(k)] = static_cast<float>(a[static_cast<std::size_t>(k)]);
      corners[9 * f + 3 + static_cast<std::size_t>(k)] = static_cast<float>(b[static_cast<std::size_t>(k)]);
      corners[9 * f + 6 + static_cast<std::size_t>(k)] = static_cast<float>(c[static_cast<std::size_t>(k)]);
      normals[3 * f + static_cast<std::size_t>(k)] =
          static_cast<float>(len > 0.0 ? n[static_cast<std::size_t>(k)] / len : 0.0);
      const auto kk = static_cast<std::size_t>(k);
      flo[k] = std::min({a[kk], b[kk], c[kk]});
      fhi[k] = std::max({a[kk], b[kk], c[kk]});
      lo[k] = std::min(lo[k], flo[k]);
      hi[k] = std::max(hi[k], fhi[k]);
    }
  }
  // cubic bins of twice the mean triangle extent (a few triangles per bin on a regular mesh), at least a
  // sixteenth of the reach (bins farther than the best triangle found are skipped), at most 2^24 bins
  double mean_extent = 0.0;
  for (std::size_t f = 0; f < faces; ++f) {
    double e = 0.0;
    for (std::size_t k = 0; k < 3; ++k) {
      const float a = corners[9 * f + k], b = corners[9 * f + 3 + k], c = corners[9 * f + 6 + k];
      e = std::max(e, static_cast<double>(std::max({a, b, c}) - std::min({a, b, c})));
    }
    mean_extent += e / static_cast<double>(faces);
  }
  View v;
  v.reach = reach;
  double width = std::max({2.0 * mean_extent, static_cast<double>(reach) / 16.0, 1e-6});
  const auto bins_for = [&](double w) {
    double total = 1.0;
    for (int k = 0; k < 3; ++k) total *= std::floor((hi[k] - lo[k] + 2.0 * reach) / w) + 1.0;
    return total;
  };
  while (bins_for(width) > static_cast<double>(1 << 24)) width *= 1.25;
  for (int k = 0; k < 3; ++k) {
    v.origin[k] = static_cast<float>(lo[k] - reach);
    v.n[k] = static_cast<int>(std::floor((hi[k] - lo[k] + 2.0 * reach) / width)) + 1;
    v.inv_width[k] = static_cast<float>(1.0 / width);
  }
  const std::size_t bins =
      static_cast<std::size_t>(v.n[0]) * static_cast<std::size_t>(v.n[1]) * static_cast<std::size_t>(v.n[2]);
  // the bin range each triangle's bounding box covers, grown by a margin for the rounding of closest points
  // computed in float
  const float margin = static_cast<float>(1e-4 * width);
  const auto range = [&](std::size_t f, int k, int& first, int& last) {
    float flo = corners[9 * f + static_cast<std::size_t>(k)], fhi = flo;
    for (int j = 1; j < 3; ++j) {
      flo = std::min(flo, corners[9 * f + 3 * static_cast<std::size_t>(j) + static_cast<std::size_t>(k)]);
      fhi = std::max(fhi, corners[9 * f + 3 * static_cast<std::size_t>(j) + static_cast<std::size_t>(k)]);
    }
    first = std::max(0, static_cast<int>(std::floor((flo - margin - v.origin[k]) * v.inv_width[k])));
    last = std::min(v.n[k] - 1, static_cast<int>(std::floor((fhi + margin - v.origin[k]) * v.inv_width[k])));
  };
  std::vector<std::int32_t> start(bins + 1, 0);
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<std::int32_t> fill;
    std::vector<std::int32_t> list;
    if (pass == 1) {
      for (std::size_t b = 0; b < bins; ++b) start[b + 1] += start[b];
      fill.assign(start.begin(), start.end() - 1);
      list.resize(static_cast<std::size_t>(start[bins]));
    }
    for (std::size_t f = 0; f < faces; ++f) {
      int r[3][2];
      for (int k = 0; k < 3; ++k) range(f, k, r[k][0], r[k][1]);
      for (int iz = r[2][0]; iz <= r[2][1]; ++iz)
        for (int iy = r[1][0]; iy <= r[1][1]; ++iy)
          for (int ix = r[0][0]; ix <= r[0][1]; ++ix) {
            const std::size_t b = (static_cast<std::size_t>(iz) * static_cast<std::size_t>(v.n[1]) +
                                   static_cast<std::size_t>(iy)) *
                                      static_cast<std::size_t>(v.n[0]) +
                                  static_cast<std::size_t>(ix);
            if (pass == 0)
              ++start[b + 1];
            else
              list[static_cast<std::size_t>(fill[b]++)] = static_cast<std::int32_t>(f);
          }
    }
    if (pass == 1) host_bin_triangles_ = std::move(list);
  }
  std::size_t non_empty = 0;
  for (std::size_t b = 0; b < bins; ++b) non_empty += start[b + 1] > start[b] ? 1 : 0;
  mean_per_bin_ = non_empty ? static_cast<double>(start[bins]) / static_cast<double>(non_empty) : 0.0;
  host_corners_ = std::move(corners);
  host_normals_ = std::move(normals);
  host_bin_start_ = std::move(start);
  host_faces_ = m.faces;
  corners_.assign(host_corners_);
  normals_.assign(host_normals_);
  bin_start_.assign(host_bin_start_);
  bin_triangles_.assign(host_bin_triangles_);
  faces_.assign(host_faces_);
  v.corners = corners_.span();
  v.normals = normals_.span();
  v.bin_start = bin_start_.span();
  v.bin_triangles = bin_triangles_.span();
  v.faces = faces_.span();
  view_ = v;
}

TriangleIndex::View TriangleIndex::host_view() const {
  View v = view_;
  v.corners = Span<const float>(host_corners_.data(), host_corners_.size());
  v.normals = Span<const float>(host_normals_.data(), host_normals_.size());
  v.bin_start = Span<const std::int32_t>(host_bin_start_.data(), host_bin_start_.size());
  v.bin_triangles = Span<const std::int32_t>(host_bin_triangles_.data(), host_bin_triangles_.size());
  v.faces = Span<const std::int32_t>(host_faces_.data(), host_faces_.size());
  return v;
}

std::size_t TriangleIndex::bin_count() const {
  return static_cast<std::size_t>(view_.n[0]) * static_cast<std::size_t>(view_.n[1]) *
         static_cast<std::size_t>(view_.n[2]);
}

}  // namespace tissue
