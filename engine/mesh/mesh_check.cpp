#include "engine/mesh/mesh_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "engine/exec/error.hpp"
#include "engine/mesh/vec3.hpp"

namespace tissue::mesh {

namespace {

constexpr std::size_t kListed = 5;
constexpr double kPi = 3.14159265358979323846;
/// Two faces whose normals are further apart than this across their shared edge are folded onto each other.
constexpr double kFoldDegrees = 160.0;

/// Up to kListed items of one kind of defect, then a count of the rest.
struct DefectList {
  std::string what;
  std::vector<std::string> items;
  std::size_t count = 0;
  explicit DefectList(std::string w) : what(std::move(w)) {}
  void add(std::string item) {
    if (items.size() < kListed) items.push_back(std::move(item));
    ++count;
  }
  void flush(std::vector<std::string>& out) const {
    if (count == 0) return;
    std::string text = what + ": ";
    for (std::size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + items[i];
    if (count > items.size()) text += " (and " + std::to_string(count - items.size()) + " more)";
    out.push_back(text);
  }
};

std::uint64_t edge_key(std::int32_t a, std::int32_t b) {
  const auto lo = static_cast<std::uint32_t>(std::min(a, b)), hi = static_cast<std::uint32_t>(std::max(a, b));
  return (std::uint64_t{lo} << 32) | hi;
}

std::string edge_name(std::int32_t a, std::int32_t b) {
  return std::to_string(std::min(a, b)) + "-" + std::to_string(std::max(a, b));
}

std::string fixed(double v, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

/// The faces around each vertex (CSR: faces[offsets[v] .. offsets[v + 1]), ascending) and, for each, the
/// fan it belongs to: faces around v are in one fan when they are joined through edges (v, w) they share.
/// fan_count[v] is the number of fans (0 for a vertex no face uses). Indices must be in range.
struct VertexFans {
  std::vector<std::int32_t> offsets, faces, fan;
  std::vector<std::int32_t> fan_count;
};

VertexFans vertex_fans(const TriangleMesh& m) {
  const std::size_t n = m.vertex_count(), nf = m.face_count();
  VertexFans r;
  r.offsets.assign(n + 1, 0);
  for (const auto v : m.faces) ++r.offsets[static_cast<std::size_t>(v) + 1];
  std::partial_sum(r.offsets.begin(), r.offsets.end(), r.offsets.begin());
  r.faces.resize(m.faces.size());
  std::vector<std::int32_t> cursor(r.offsets.begin(), r.offsets.end() - 1);
  for (std::size_t f = 0; f < nf; ++f)
    for (int k = 0; k < 3; ++k)
      r.faces[static_cast<std::size_t>(cursor[static_cast<std::size_t>(m.corner(f, k))]++)] =
          static_cast<std::int32_t>(f);
  r.fan.assign(r.faces.size(), 0);
  r.fan_count.assign(n, 0);
  std::vector<std::int32_t> parent;
  std::vector<std::pair<std::int32_t, std::int32_t>> across;  // (other vertex w, local face)
  const auto find = [&](std::int32_t i) {
    while (parent[static_cast<std::size_t>(i)] != i)
      i = parent[static_cast<std::size_t>(i)] =
          parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(i)])];
    return i;
  };
  for (std::size_t v = 0; v < n; ++v) {
    const auto begin = static_cast<std::size_t>(r.offsets[v]),
               end = static_cast<std::size_t>(r.offsets[v + 1]);
    const auto degree = static_cast<std::int32_t>(end - begin);
    parent.resize(static_cast<std::size_t>(degree));
    std::iota(parent.begin(), parent.end(), 0);
    across.clear();
    for (std::int32_t i = 0; i < degree; ++i) {
      const auto f = static_cast<std::size_t>(r.faces[begin + static_cast<std::size_t>(i)]);
      for (int k = 0; k < 3; ++k)
        if (m.corner(f, k) != static_cast<std::int32_t>(v)) across.emplace_back(m.corner(f, k), i);
    }
    std::sort(across.begin(), across.end());
    for (std::size_t j = 1; j < across.size(); ++j)
      if (across[j].first == across[j - 1].first)
        parent[static_cast<std::size_t>(find(across[j].second))] = find(across[j - 1].second);
    // fans numbered in the order of their first face
    std::vector<std::int32_t> label(static_cast<std::size_t>(degree), -1);
    std::int32_t fans = 0;
    for (std::int32_t i = 0; i < degree; ++i) {
      const auto root = static_cast<std::size_t>(find(i));
      if (label[root] < 0) label[root] = fans++;
      r.fan[begin + static_cast<std::size_t>(i)] = label[root];
    }
    r.fan_count[v] = fans;
  }
  return r;
}

}  // namespace

std::string MeshReport::error_text() const {
  std::string text;
  for (std::size_t i = 0; i < errors.size(); ++i) text += (i ? "; " : "") + errors[i];
  return text;
}

MeshReport check_mesh(const TriangleMesh& m, const MeshRequirements& req) {
  MeshReport report;
  if (m.faces.size() % 3 != 0) {
    report.errors.push_back("the face index count is not a multiple of 3");
    return report;
  }
  if (m.y.size() != m.x.size() || m.z.size() != m.x.size()) {
    report.errors.push_back("x, y, z have different lengths");
    return report;
  }
  if (m.faces.empty()) {
    report.errors.push_back("no faces");
    return report;
  }
  const std::size_t n = m.vertex_count(), nf = m.face_count();
  DefectList range("faces referring to vertices outside 0.." + std::to_string(n == 0 ? 0 : n - 1));
  for (std::size_t f = 0; f < nf; ++f)
    for (int k = 0; k < 3; ++k)
      if (m.corner(f, k) < 0 || static_cast<std::size_t>(m.corner(f, k)) >= n)
        range.add("face " + std::to_string(f) + " (vertex " + std::to_string(m.corner(f, k)) + ")");
  DefectList finite("vertices with a non-finite coordinate");
  for (std::size_t v = 0; v < n; ++v)
    if (!std::isfinite(m.x[v]) || !std::isfinite(m.y[v]) || !std::isfinite(m.z[v]))
      finite.add(std::to_string(v));
  range.flush(report.errors);
  finite.flush(report.errors);
  if (!report.errors.empty()) return report;  // nothing below can be measured

  // faces: repeated vertices, zero area (relative to the longest edge), angles
  double longest = 0.0;
  for (std::size_t f = 0; f < nf; ++f)
    for (int k = 0; k < 3; ++k)
      longest =
          std::max(longest, norm(sub(position(m, m.corner(f, k)), position(m, m.corner(f, (k + 1) % 3)))));
  DefectList repeated("degenerate faces (a vertex repeated)"), flat("degenerate faces (zero area)");
  std::vector<Vec3> normal(nf, Vec3{0.0, 0.0, 0.0});
  std::vector<std::uint8_t> degenerate(nf, 0);
  std::size_t skinny = 0;
  for (std::size_t f = 0; f < nf; ++f) {
    const std::int32_t a = m.corner(f, 0), b = m.corner(f, 1), c = m.corner(f, 2);
    const std::string name = "face " + std::to_string(f) + " (vertices " + std::to_string(a) + ", " +
                             std::to_string(b) + ", " + std::to_string(c) + ")";
    if (a == b || b == c || a == c) {
      repeated.add(name);
      degenerate[f] = 1;
      continue;
    }
    const Vec3 pa = position(m, a), pb = position(m, b), pc = position(m, c);
    const Vec3 n2 = cross(sub(pb, pa), sub(pc, pa));
    const double twice_area = norm(n2);
    if (!(twice_area > 1e-14 * longest * longest)) {
      flat.add(name);
      degenerate[f] = 1;
      continue;
    }
    normal[f] = Vec3{n2[0] / twice_area, n2[1] / twice_area, n2[2] / twice_area};
    const Vec3 p[3] = {pa, pb, pc};
    double smallest = 180.0;
    for (int k = 0; k < 3; ++k) {
      const Vec3 u = sub(p[(k + 1) % 3], p[k]), w = sub(p[(k + 2) % 3], p[k]);
      const double cosine = std::clamp(dot(u, w) / (norm(u) * norm(w)), -1.0, 1.0);
      const double angle = std::acos(cosine) * 180.0 / kPi;
      smallest = std::min(smallest, angle);
      if (angle < report.min_angle_degrees) report.min_angle_degrees = angle, report.min_angle_face = f;
      if (angle > report.max_angle_degrees) report.max_angle_degrees = angle, report.max_angle_face = f;
    }
    if (smallest < req.skinny_degrees) ++skinny;
  }
  repeated.flush(report.errors);
  flat.flush(report.errors);

  // vertices no face uses; non-manifold (pinched) vertices
  const VertexFans fans = vertex_fans(m);
  DefectList unused("vertices no face uses"),
      pinched("non-manifold (pinched) vertices, whose faces form more than one fan");
  for (std::size_t v = 0; v < n; ++v) {
    if (fans.fan_count[v] == 0) {
      unused.add(std::to_string(v));
      ++report.unreferenced_vertices;
    } else if (fans.fan_count[v] > 1) {
      pinched.add(std::to_string(v) + " (" + std::to_string(fans.fan_count[v]) + " fans)");
      ++report.pinched_vertices;
    }
  }

  // edges: more than two faces, orientation, folds, boundary
  std::unordered_map<std::uint64_t, std::int32_t> first_face;  // undirected edge -> first face
  std::unordered_map<std::uint64_t, int> face_count;
  first_face.reserve(3 * nf);
  face_count.reserve(3 * nf);
  DefectList non_manifold("non-manifold edges (more than two faces)"),
      orientation("edges traversed in the same direction by both faces (inconsistent orientation)"),
      folded("faces folded onto each other (inverted: normals more than " + fixed(kFoldDegrees, 0) +
             " degrees apart across their edge)");
  for (std::size_t f = 0; f < nf; ++f)
    for (int k = 0; k < 3; ++k) {
      const std::int32_t a = m.corner(f, k), b = m.corner(f, (k + 1) % 3);
      if (a == b) continue;
      const std::uint64_t key = edge_key(a, b);
      const int count = ++face_count[key];
      if (count == 1) {
        first_face[key] = static_cast<std::int32_t>(f);
        continue;
      }
      if (count == 3) non_manifold.add(edge_name(a, b));
      if (count != 2) continue;
      const auto g = static_cast<std::size_t>(first_face[key]);
      int j = 0;
      while (j < 3 && !(m.corner(g, j) == a && m.corner(g, (j + 1) % 3) == b)) ++j;
      if (j < 3) {
        orientation.add(edge_name(a, b) + " (faces " + std::to_string(g) + ", " + std::to_string(f) + ")");
      } else if (!degenerate[f] && !degenerate[g] &&
                 dot(normal[f], normal[g]) < std::cos(kFoldDegrees * kPi / 180.0)) {
        folded.add("faces " + std::to_string(g) + ", " + std::to_string(f) + " across edge " +
                   edge_name(a, b));
      }
    }
  DefectList boundary("boundary edges (the model requires a closed surface)");
  for (const auto& [key, count] : face_count)
    if (count == 1) {
      ++report.boundary_edges;
      if (req.closed)
        boundary.add(
            edge_name(static_cast<std::int32_t>(key >> 32), static_cast<std::int32_t>(key & 0xffffffffu)));
    }
  non_manifold.flush(report.errors);
  pinched.flush(report.errors);
  orientation.flush(report.errors);
  folded.flush(report.errors);
  unused.flush(report.errors);
  if (req.closed && report.boundary_edges > 0) {
    boundary.items.clear();  // the hash map's order: list the smallest edges instead
    std::vector<std::uint64_t> edges;
    for (const auto& [key, count] : face_count)
      if (count == 1) edges.push_back(key);
    std::sort(edges.begin(), edges.end());
    for (std::size_t i = 0; i < edges.size() && i < kListed; ++i)
      boundary.items.push_back(edge_name(static_cast<std::int32_t>(edges[i] >> 32),
                                         static_cast<std::int32_t>(edges[i] & 0xffffffffu)));
    boundary.flush(report.errors);
  }
  // a closed, consistently oriented surface encloses a positive volume when its faces turn counter-clockwise
  // seen from outside
  if (report.errors.empty() && report.boundary_edges == 0) {
    double volume = 0.0;
    for (std::size_t f = 0; f < nf; ++f)
      volume +=
          dot(position(m, m.corner(f, 0)), cross(position(m, m.corner(f, 1)), position(m, m.corner(f, 2)))) /
          6.0;
    if (volume < 0.0)
      report.errors.push_back("the closed surface is oriented inward (enclosed volume " + fixed(volume, 6) +
                              " < 0): reverse the order of every face's vertices");
  }
  if (skinny > 0)
    report.warnings.push_back(
        std::to_string(skinny) + " skinny triangles (an angle below " + fixed(req.skinny_degrees, 1) +
        " degrees); smallest angle " + fixed(report.min_angle_degrees, 2) + " degrees at face " +
        std::to_string(report.min_angle_face) + ", largest " + fixed(report.max_angle_degrees, 2) +
        " degrees at face " + std::to_string(report.max_angle_face));
  return report;
}

void require_valid_mesh(const TriangleMesh& mesh, const std::string& source,
                        const MeshRequirements& requirements, std::vector<std::string>* warnings) {
  const MeshReport report = check_mesh(mesh, requirements);
  if (!report.ok())
    throw InputError(source +
                     ": the mesh is refused (vertex and face indices from 0): " + report.error_text());
  if (warnings != nullptr)
    for (const auto& w : report.warnings) warnings->push_back(source + ": " + w);
}

std::vector<std::string> repair_mesh(TriangleMesh& m) {
  std::vector<std::string> done;
  if (m.faces.size() % 3 != 0) return done;
  for (const auto v : m.faces)
    if (v < 0 || static_cast<std::size_t>(v) >= m.vertex_count()) return done;  // check_mesh() reports it
  // first, so that the indices named below are the repaired mesh's
  const std::size_t dropped = drop_unreferenced_vertices(m);
  if (dropped > 0)
    done.push_back("dropped " + std::to_string(dropped) +
                   " vertices that no face uses (the others renumbered)");
  const std::size_t n = m.vertex_count();
  const VertexFans fans = vertex_fans(m);
  std::size_t split = 0;
  std::string examples;
  for (std::size_t v = 0; v < n; ++v) {
    if (fans.fan_count[v] < 2) continue;
    // fan 0 keeps v; every other fan gets a copy of v at the same position
    std::vector<std::int32_t> copy(static_cast<std::size_t>(fans.fan_count[v]), static_cast<std::int32_t>(v));
    std::string into = std::to_string(v);
    for (std::size_t k = 1; k < copy.size(); ++k) {
      copy[k] = static_cast<std::int32_t>(m.x.size());
      m.x.push_back(m.x[v]);
      m.y.push_back(m.y[v]);
      m.z.push_back(m.z[v]);
      into += ", " + std::to_string(copy[k]);
    }
    for (auto i = static_cast<std::size_t>(fans.offsets[v]);
         i < static_cast<std::size_t>(fans.offsets[v + 1]); ++i) {
      const auto f = static_cast<std::size_t>(fans.faces[i]);
      for (int k = 0; k < 3; ++k)
        if (m.faces[3 * f + static_cast<std::size_t>(k)] == static_cast<std::int32_t>(v))
          m.faces[3 * f + static_cast<std::size_t>(k)] = copy[static_cast<std::size_t>(fans.fan[i])];
    }
    if (split < kListed)
      examples += std::string(split ? "; " : "") + "vertex " + std::to_string(v) + " into " + into;
    ++split;
  }
  if (split > 0)
    done.push_back("split " + std::to_string(split) + " pinched vertices (" + examples +
                   (split > kListed ? "; ..." : "") + ")");
  return done;
}

}  // namespace tissue::mesh
