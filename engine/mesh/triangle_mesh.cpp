#include "engine/mesh/triangle_mesh.hpp"

#include <tiny_obj_loader.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "engine/exec/error.hpp"
#include "engine/mesh/mesh_check.hpp"
#include "engine/mesh/vec3.hpp"

namespace tissue::mesh {

namespace {

/// Adds vertex (x, y, z) and returns its index.
std::int32_t add_vertex(TriangleMesh& m, double x, double y, double z) {
  m.x.push_back(x);
  m.y.push_back(y);
  m.z.push_back(z);
  return static_cast<std::int32_t>(m.x.size() - 1);
}

void add_face(TriangleMesh& m, std::int32_t a, std::int32_t b, std::int32_t c) {
  m.faces.insert(m.faces.end(), {a, b, c});
}

/// The lines of an OBJ file as tinyobjloader splits them: at "\n", "\r\n" or a lone "\r" (std::getline would
/// keep "x\rv abc" as one line and let its second record past the check below).
std::vector<std::string> obj_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n' || text[i] == '\r') {
      lines.push_back(text.substr(begin, i - begin));
      if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      begin = i + 1;
    }
  if (begin < text.size()) lines.push_back(text.substr(begin));
  return lines;
}

/// True for a finite number whose decimal exponent, if any, has at most 4 digits after leading zeros:
/// tinyobjloader 2.0.0rc10 overflows an int on an exponent of 10 digits (undefined behaviour), and no
/// coordinate needs more than 3.
bool obj_number(const std::string& t) {
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || *end != '\0' || !std::isfinite(v)) return false;
  const auto e = t.find_first_of("eE");
  if (e == std::string::npos) return true;
  auto digits = t.find_first_not_of("+-", e + 1);
  digits = t.find_first_not_of('0', digits);
  return digits == std::string::npos || t.size() - digits <= 4;
}

/// The OBJ records tinyobjloader reads leniently, checked strictly first: a vertex `v x y z [w]` (or with
/// colours `v x y z r g b`) must have 3, 4 or 6 finite numbers (tinyobjloader reads `v abc`, `v nan` and
/// `v 1` as 0 or NaN), texture coordinates, normals and parameter-space vertices (`vt`, `vn`, `vp`) finite
/// numbers, and a face `f a b c ...` at least 3 corners whose vertex index is a non-zero integer (it drops
/// `f 1 2` silently). @throws InputError with file:line and what was expected.
void check_obj_records(const std::string& text, const std::string& source) {
  const std::vector<std::string> lines = obj_lines(text);
  for (std::size_t number = 1; number <= lines.size(); ++number) {
    const std::string& line = lines[number - 1];
    std::istringstream tokens(line);
    std::string keyword;
    tokens >> keyword;
    const auto fail = [&](const std::string& what) {
      std::string shown = line;
      while (!shown.empty() && (shown.back() == '\r' || shown.back() == ' ')) shown.pop_back();
      if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
      throw InputError(source + ":" + std::to_string(number) + ": " + what + ", got '" + shown + "'");
    };
    if (keyword == "v" || keyword == "vt" || keyword == "vn" || keyword == "vp") {
      std::size_t values = 0;
      const std::string record = keyword == "v" ? "a vertex" : "a " + keyword + " record";
      for (std::string t; tokens >> t; ++values)
        if (!obj_number(t)) fail(record + " needs finite numbers (exponents of at most 4 digits)");
      if (keyword == "v" && values != 3 && values != 4 && values != 6)
        fail("a vertex needs 3 coordinates (v x y z, optionally w or r g b)");
    } else if (keyword == "f") {
      int corners = 0;
      for (std::string t; tokens >> t; ++corners) {
        const std::string index = t.substr(0, t.find('/'));
        char* end = nullptr;
        const long v = std::strtol(index.c_str(), &end, 10);
        if (index.empty() || *end != '\0' || v == 0)
          fail("a face corner needs a non-zero vertex index (f a b c)");
      }
      if (corners < 3) fail("a face needs at least 3 corners (f a b c)");
    }
  }
}
}  // namespace

void validate(const TriangleMesh& mesh, const std::string& source) {
  if (mesh.faces.size() % 3 != 0) throw InputError(source + ": face index count is not a multiple of 3");
  if (mesh.y.size() != mesh.x.size() || mesh.z.size() != mesh.x.size())
    throw InputError(source + ": x, y, z have different lengths");
  const auto n = static_cast<std::int64_t>(mesh.vertex_count());
  double longest = 0.0;  // scale for the zero-area test
  for (std::size_t f = 0; f < mesh.face_count(); ++f)
    for (int k = 0; k < 3; ++k) {
      const std::int32_t v = mesh.corner(f, k);
      if (v < 0 || v >= n)
        throw InputError(source + ": face " + std::to_string(f) + " refers to vertex " + std::to_string(v) +
                         ", outside 0.." + std::to_string(n - 1) + " (indices from 0)");
      if (!std::isfinite(mesh.x[static_cast<std::size_t>(v)]) ||
          !std::isfinite(mesh.y[static_cast<std::size_t>(v)]) ||
          !std::isfinite(mesh.z[static_cast<std::size_t>(v)]))
        throw InputError(source + ": vertex " + std::to_string(v) + " (from 0) has a non-finite coordinate");
      longest = std::max(longest, norm(sub(position(mesh, v), position(mesh, mesh.corner(f, (k + 1) % 3)))));
    }
  for (std::size_t f = 0; f < mesh.face_count(); ++f) {
    const std::int32_t a = mesh.corner(f, 0), b = mesh.corner(f, 1), c = mesh.corner(f, 2);
    if (a == b || b == c || a == c)
      throw InputError(source + ": face " + std::to_string(f) + " is degenerate (vertices " +
                       std::to_string(a) + ", " + std::to_string(b) + ", " + std::to_string(c) +
                       " repeat one; indices from 0)");
    const Vec3 pa = position(mesh, a);
    const double twice_area = norm(cross(sub(position(mesh, b), pa), sub(position(mesh, c), pa)));
    if (!(twice_area > 1e-14 * longest * longest))
      throw InputError(source + ": face " + std::to_string(f) + " is degenerate (zero area: vertices " +
                       std::to_string(a) + ", " + std::to_string(b) + ", " + std::to_string(c) +
                       " are collinear; indices from 0)");
  }
}

MeshTopology build_topology(const TriangleMesh& mesh, const std::string& source) {
  const std::size_t n = mesh.vertex_count(), nf = mesh.face_count();
  MeshTopology t;
  // directed half-edges (from, to) -> face; an undirected edge has at most one of each direction
  std::map<std::pair<std::int32_t, std::int32_t>, std::int32_t> half_edges;
  std::map<std::pair<std::int32_t, std::int32_t>, int> edge_faces;
  for (std::size_t f = 0; f < nf; ++f)
    for (int k = 0; k < 3; ++k) {
      const std::int32_t a = mesh.corner(f, k), b = mesh.corner(f, (k + 1) % 3);
      const auto key = std::make_pair(std::min(a, b), std::max(a, b));
      if (++edge_faces[key] > 2)
        throw InputError(source + ": edge " + std::to_string(key.first) + "-" + std::to_string(key.second) +
                         " is shared by more than two faces (non-manifold), face " + std::to_string(f) +
                         " among them (indices from 0)");
      if (!half_edges.emplace(std::make_pair(a, b), static_cast<std::int32_t>(f)).second)
        throw InputError(source + ": faces " + std::to_string(half_edges[{a, b}]) + " and " +
                         std::to_string(f) + " traverse edge " + std::to_string(a) + "-" + std::to_string(b) +
                         " in the same direction (inconsistent orientation; indices from 0)");
    }
  t.edges = edge_faces.size();
  t.boundary_vertex.assign(n, 0);
  std::vector<std::vector<std::int32_t>> neighbours(n);
  for (const auto& [edge, count] : edge_faces) {
    neighbours[static_cast<std::size_t>(edge.first)].push_back(edge.second);
    neighbours[static_cast<std::size_t>(edge.second)].push_back(edge.first);
    if (count == 1) {
      ++t.boundary_edges;
      t.boundary_vertex[static_cast<std::size_t>(edge.first)] = 1;
      t.boundary_vertex[static_cast<std::size_t>(edge.second)] = 1;
    }
  }
  t.vertex_offsets.assign(n + 1, 0);
  for (std::size_t v = 0; v < n; ++v) {
    std::sort(neighbours[v].begin(), neighbours[v].end());
    t.vertex_offsets[v + 1] = t.vertex_offsets[v] + static_cast<std::int32_t>(neighbours[v].size());
    t.vertex_neighbours.insert(t.vertex_neighbours.end(), neighbours[v].begin(), neighbours[v].end());
  }
  t.face_offsets.assign(n + 1, 0);
  for (std::size_t f = 0; f < nf; ++f)
    for (int k = 0; k < 3; ++k) ++t.face_offsets[static_cast<std::size_t>(mesh.corner(f, k)) + 1];
  std::partial_sum(t.face_offsets.begin(), t.face_offsets.end(), t.face_offsets.begin());
  t.vertex_faces.resize(3 * nf);
  std::vector<std::int32_t> cursor(t.face_offsets.begin(), t.face_offsets.end() - 1);
  for (std::size_t f = 0; f < nf; ++f)  // faces in ascending order per vertex
    for (int k = 0; k < 3; ++k)
      t.vertex_faces[static_cast<std::size_t>(cursor[static_cast<std::size_t>(mesh.corner(f, k))]++)] =
          static_cast<std::int32_t>(f);
  return t;
}

std::size_t connected_components(const MeshTopology& topology) {
  const std::size_t n = topology.vertex_offsets.empty() ? 0 : topology.vertex_offsets.size() - 1;
  std::vector<std::uint8_t> seen(n, 0);
  std::vector<std::int32_t> stack;
  std::size_t pieces = 0;
  for (std::size_t v = 0; v < n; ++v) {
    if (seen[v]) continue;
    ++pieces;
    seen[v] = 1;
    stack.assign(1, static_cast<std::int32_t>(v));
    while (!stack.empty()) {
      const auto u = static_cast<std::size_t>(stack.back());
      stack.pop_back();
      for (auto k = topology.vertex_offsets[u]; k < topology.vertex_offsets[u + 1]; ++k) {
        const auto w = static_cast<std::size_t>(topology.vertex_neighbours[static_cast<std::size_t>(k)]);
        if (!seen[w]) seen[w] = 1, stack.push_back(static_cast<std::int32_t>(w));
      }
    }
  }
  return pieces;
}

OneRing one_ring(const TriangleMesh& mesh, const MeshTopology& topology, const std::string& source) {
  const std::size_t n = mesh.vertex_count();
  OneRing r;
  r.offsets.assign(n + 1, 0);
  r.closed.assign(n, 0);
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs;  // (a, b): face (v, a, b) counter-clockwise
  for (std::size_t v = 0; v < n; ++v) {
    pairs.clear();
    for (auto k = static_cast<std::size_t>(topology.face_offsets[v]);
         k < static_cast<std::size_t>(topology.face_offsets[v + 1]); ++k) {
      const auto t = static_cast<std::size_t>(topology.vertex_faces[k]);
      int c = 0;
      while (mesh.corner(t, c) != static_cast<std::int32_t>(v)) ++c;
      pairs.emplace_back(mesh.corner(t, (c + 1) % 3), mesh.corner(t, (c + 2) % 3));
    }
    // start at the neighbour that no pair ends in (a boundary fan), or anywhere on a closed fan
    std::size_t start = 0;
    bool open = false;
    for (std::size_t i = 0; i < pairs.size() && !open; ++i) {
      bool ends_somewhere = false;
      for (const auto& p : pairs) ends_somewhere = ends_somewhere || p.second == pairs[i].first;
      if (!ends_somewhere) start = i, open = true;
    }
    const std::size_t first = r.ring.size();
    std::int32_t current = pairs[start].first;
    r.ring.push_back(current);
    for (std::size_t step = 0; step < pairs.size(); ++step) {
      auto it = std::find_if(pairs.begin(), pairs.end(), [&](const auto& p) { return p.first == current; });
      if (it == pairs.end()) break;
      current = it->second;
      if (!open && current == r.ring[first]) break;
      r.ring.push_back(current);
    }
    const std::size_t count = r.ring.size() - first;
    if (count != static_cast<std::size_t>(topology.degree(v)))
      throw InputError(
          source + ": the faces around vertex " + std::to_string(v) +
          " (from 0) do not form a single fan: a non-manifold (pinched) vertex; [mesh] repair = true "
          "splits it");
    r.closed[v] = open ? 0 : 1;
    r.offsets[v + 1] = static_cast<std::int32_t>(r.ring.size());
  }
  return r;
}

std::size_t drop_unreferenced_vertices(TriangleMesh& mesh) {
  const std::size_t n = mesh.vertex_count();
  std::vector<std::int32_t> new_index(n, -1);
  for (auto v : mesh.faces)
    if (v >= 0 && static_cast<std::size_t>(v) < n) new_index[static_cast<std::size_t>(v)] = 0;
  TriangleMesh kept;
  for (std::size_t v = 0; v < n; ++v)
    if (new_index[v] == 0) new_index[v] = add_vertex(kept, mesh.x[v], mesh.y[v], mesh.z[v]);
  for (auto& v : mesh.faces)
    if (v >= 0 && static_cast<std::size_t>(v) < n) v = new_index[static_cast<std::size_t>(v)];
  const std::size_t dropped = n - kept.vertex_count();
  mesh.x = std::move(kept.x);
  mesh.y = std::move(kept.y);
  mesh.z = std::move(kept.z);
  return dropped;
}

TriangleMesh read_obj(const std::filesystem::path& path, std::vector<std::string>* warnings, bool check) {
  const std::string source = path.string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(source + ": mesh file not found");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(source + ": cannot open the mesh file");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw InputError(source + ": cannot read the mesh file");
  check_obj_records(text, source);
  tinyobj::ObjReaderConfig config;
  config.triangulate = true;
  config.vertex_color = false;
  tinyobj::ObjReader reader;
  // from the text, with an empty material library: an `mtllib` line opens no file (from a file, tinyobjloader
  // would open whatever path it names, relative to the OBJ: /dev/zero or a FIFO never ends)
  if (!reader.ParseFromString(text, "", config)) {
    std::string why = reader.Error();
    while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) why.pop_back();
    throw InputError(source + ": cannot read the OBJ file: " + (why.empty() ? "parse error" : why));
  }
  const auto& attrib = reader.GetAttrib();
  TriangleMesh mesh;
  const std::size_t n = attrib.vertices.size() / 3;
  mesh.x.resize(n);
  mesh.y.resize(n);
  mesh.z.resize(n);
  for (std::size_t v = 0; v < n; ++v) {
    mesh.x[v] = attrib.vertices[3 * v];
    mesh.y[v] = attrib.vertices[3 * v + 1];
    mesh.z[v] = attrib.vertices[3 * v + 2];
  }
  for (const auto& shape : reader.GetShapes()) {
    std::size_t offset = 0;
    for (std::size_t f = 0; f < shape.mesh.num_face_vertices.size(); ++f) {
      const std::size_t corners = shape.mesh.num_face_vertices[f];
      if (corners != 3)
        throw InputError(source + ": face " + std::to_string(mesh.face_count() + 1) + " has " +
                         std::to_string(corners) + " corners after triangulation");
      for (std::size_t k = 0; k < 3; ++k) mesh.faces.push_back(shape.mesh.indices[offset + k].vertex_index);
      offset += corners;
    }
  }
  if (mesh.faces.empty()) throw InputError(source + ": the OBJ file has no faces");
  // range check before renumbering (an out-of-range index must not be mistaken for an unused vertex)
  for (std::size_t f = 0; f < mesh.face_count(); ++f)
    for (int k = 0; k < 3; ++k)
      if (mesh.corner(f, k) < 0 || static_cast<std::size_t>(mesh.corner(f, k)) >= n)
        throw InputError(source + ": face " + std::to_string(f) + " refers to vertex " +
                         std::to_string(mesh.corner(f, k)) + ", outside 0.." + std::to_string(n - 1) +
                         " (indices from 0)");
  const std::size_t dropped = drop_unreferenced_vertices(mesh);
  if (dropped > 0 && warnings != nullptr)
    warnings->push_back(source + ": dropped " + std::to_string(dropped) + " vertices that no face uses");
  if (check) {
    const MeshReport report = check_mesh(mesh);
    if (!report.ok())
      throw InputError(source +
                       ": the mesh is refused (vertex and face indices from 0): " + report.error_text());
  }
  return mesh;
}

TriangleMesh rectangle_mesh(int nx, int ny, double lx, double ly) {
  if (nx < 2 || ny < 2 || !(lx > 0.0) || !(ly > 0.0))
    throw std::invalid_argument("rectangle_mesh: needs nx, ny >= 2 and positive sizes");
  TriangleMesh m;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) add_vertex(m, lx * i / (nx - 1), ly * j / (ny - 1), 0.0);
  const auto id = [nx](int i, int j) { return static_cast<std::int32_t>(j * nx + i); };
  for (int j = 0; j + 1 < ny; ++j)
    for (int i = 0; i + 1 < nx; ++i) {
      const std::int32_t a = id(i, j), b = id(i + 1, j), c = id(i + 1, j + 1), d = id(i, j + 1);
      if ((i + j) % 2 == 0) {
        add_face(m, a, b, c);
        add_face(m, a, c, d);
      } else {
        add_face(m, a, b, d);
        add_face(m, b, c, d);
      }
    }
  return m;
}

TriangleMesh icosphere(int subdivisions, double radius) {
  if (subdivisions < 0 || subdivisions > 10 || !(radius > 0.0))
    throw std::invalid_argument("icosphere: needs 0 <= subdivisions <= 10 and a positive radius");
  TriangleMesh m;
  const double p = (1.0 + std::sqrt(5.0)) / 2.0;
  const double v[12][3] = {{-1, p, 0},  {1, p, 0},  {-1, -p, 0}, {1, -p, 0}, {0, -1, p},  {0, 1, p},
                           {0, -1, -p}, {0, 1, -p}, {p, 0, -1},  {p, 0, 1},  {-p, 0, -1}, {-p, 0, 1}};
  for (const auto& c : v) add_vertex(m, c[0], c[1], c[2]);
  m.faces = {0, 11, 5,  0, 5,  1, 0, 1, 7, 0, 7,  10, 0, 10, 11, 1, 5, 9, 5, 11,
             4, 11, 10, 2, 10, 7, 6, 7, 1, 8, 3,  9,  4, 3,  4,  2, 3, 2, 6, 3,
             6, 8,  3,  8, 9,  4, 9, 5, 2, 4, 11, 6,  2, 10, 8,  6, 7, 9, 8, 1};
  for (int s = 0; s < subdivisions; ++s) {
    std::map<std::pair<std::int32_t, std::int32_t>, std::int32_t> midpoint;
    const auto mid = [&](std::int32_t a, std::int32_t b) {
      const auto key = std::make_pair(std::min(a, b), std::max(a, b));
      const auto it = midpoint.find(key);
      if (it != midpoint.end()) return it->second;
      const auto ia = static_cast<std::size_t>(a), ib = static_cast<std::size_t>(b);
      const std::int32_t c =
          add_vertex(m, 0.5 * (m.x[ia] + m.x[ib]), 0.5 * (m.y[ia] + m.y[ib]), 0.5 * (m.z[ia] + m.z[ib]));
      midpoint.emplace(key, c);
      return c;
    };
    std::vector<std::int32_t> faces;
    for (std::size_t f = 0; f < m.face_count(); ++f) {
      const std::int32_t a = m.corner(f, 0), b = m.corner(f, 1), c = m.corner(f, 2);
      const std::int32_t ab = mid(a, b), bc = mid(b, c), ca = mid(c, a);
      faces.insert(faces.end(), {a, ab, ca, b, bc, ab, c, ca, bc, ab, bc, ca});
    }
    m.faces = std::move(faces);
  }
  for (std::size_t i = 0; i < m.vertex_count(); ++i) {
    const double r = std::sqrt(m.x[i] * m.x[i] + m.y[i] * m.y[i] + m.z[i] * m.z[i]);
    m.x[i] *= radius / r;
    m.y[i] *= radius / r;
    m.z[i] *= radius / r;
  }
  return m;
}

TriangleMesh uv_sphere(int rings, int segments, double radius) {
  if (rings < 2 || segments < 3 || !(radius > 0.0))
    throw std::invalid_argument("uv_sphere: needs rings >= 2, segments >= 3 and a positive radius");
  TriangleMesh m;
  const double pi = std::acos(-1.0);
  const std::int32_t north = add_vertex(m, 0.0, 0.0, radius);
  for (int r = 1; r < rings; ++r) {
    const double theta = pi * r / rings;
    for (int s = 0; s < segments; ++s) {
      const double phi = 2.0 * pi * s / segments;
      add_vertex(m, radius * std::sin(theta) * std::cos(phi), radius * std::sin(theta) * std::sin(phi),
                 radius * std::cos(theta));
    }
  }
  const std::int32_t south = add_vertex(m, 0.0, 0.0, -radius);
  const auto id = [segments](int r, int s) {
    return static_cast<std::int32_t>(1 + (r - 1) * segments + s % segments);
  };
  for (int s = 0; s < segments; ++s) {
    add_face(m, north, id(1, s), id(1, s + 1));
    add_face(m, south, id(rings - 1, s + 1), id(rings - 1, s));
  }
  for (int r = 1; r + 1 < rings; ++r)
    for (int s = 0; s < segments; ++s) {
      add_face(m, id(r, s), id(r + 1, s), id(r + 1, s + 1));
      add_face(m, id(r, s), id(r + 1, s + 1), id(r, s + 1));
    }
  return m;
}

}  // namespace tissue::mesh
