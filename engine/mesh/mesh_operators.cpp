#include "engine/mesh/mesh_operators.hpp"

#include <algorithm>
#include <cmath>

#include "engine/mesh/vec3.hpp"

namespace tissue::mesh {

namespace {

/// Cotangent of the angle between u and v.
double cot(const Vec3& u, const Vec3& v) {
  return dot(u, v) / norm(cross(u, v));
}

/// Position of `neighbour` in the CSR row of vertex v.
std::size_t entry(const MeshTopology& t, std::int32_t v, std::int32_t neighbour) {
  const auto first = t.vertex_neighbours.begin() + t.vertex_offsets[static_cast<std::size_t>(v)];
  const auto last = t.vertex_neighbours.begin() + t.vertex_offsets[static_cast<std::size_t>(v) + 1];
  return static_cast<std::size_t>(std::lower_bound(first, last, neighbour) - t.vertex_neighbours.begin());
}

}  // namespace

CotangentLaplacian cotangent_laplacian(const TriangleMesh& mesh, const MeshTopology& topology) {
  CotangentLaplacian L;
  L.offsets = topology.vertex_offsets;
  L.neighbours = topology.vertex_neighbours;
  L.weights.assign(L.neighbours.size(), 0.0);
  L.area.assign(mesh.vertex_count(), 0.0);
  for (std::size_t f = 0; f < mesh.face_count(); ++f) {
    const std::int32_t v[3] = {mesh.corner(f, 0), mesh.corner(f, 1), mesh.corner(f, 2)};
    const Vec3 p[3] = {position(mesh, v[0]), position(mesh, v[1]), position(mesh, v[2])};
    const double area = 0.5 * norm(cross(sub(p[1], p[0]), sub(p[2], p[0])));
    double cotangent[3];  // at each corner
    for (int k = 0; k < 3; ++k) cotangent[k] = cot(sub(p[(k + 1) % 3], p[k]), sub(p[(k + 2) % 3], p[k]));
    for (int k = 0; k < 3; ++k) {
      // edge opposite corner k joins corners k+1 and k+2: half its cotangent to both directions
      const std::int32_t a = v[(k + 1) % 3], b = v[(k + 2) % 3];
      L.weights[entry(topology, a, b)] += 0.5 * cotangent[k];
      L.weights[entry(topology, b, a)] += 0.5 * cotangent[k];
    }
    const bool obtuse = cotangent[0] < 0.0 || cotangent[1] < 0.0 || cotangent[2] < 0.0;
    for (int k = 0; k < 3; ++k) {
      double& A = L.area[static_cast<std::size_t>(v[k])];
      if (!obtuse) {  // Voronoi region: 1/8 (|PR|^2 cot Q + |PQ|^2 cot R)
        const int q = (k + 1) % 3, r = (k + 2) % 3;
        const Vec3 pq = sub(p[q], p[k]), pr = sub(p[r], p[k]);
        A += 0.125 * (dot(pr, pr) * cotangent[q] + dot(pq, pq) * cotangent[r]);
      } else {
        A += cotangent[k] < 0.0 ? 0.5 * area : 0.25 * area;
      }
    }
  }
  return L;
}

void CotangentLaplacian::apply(const std::vector<double>& f, std::vector<double>& out) const {
  const std::size_t n = area.size();
  out.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (auto k = static_cast<std::size_t>(offsets[i]); k < static_cast<std::size_t>(offsets[i + 1]); ++k)
      s += weights[k] * (f[static_cast<std::size_t>(neighbours[k])] - f[i]);
    out[i] = s / area[i];
  }
}

double CotangentLaplacian::spectral_radius_bound() const {
  double bound = 0.0;
  for (std::size_t i = 0; i < area.size(); ++i) {
    double row = 0.0;
    for (auto k = static_cast<std::size_t>(offsets[i]); k < static_cast<std::size_t>(offsets[i + 1]); ++k)
      row += std::abs(weights[k]);
    bound = std::max(bound, 2.0 * row / area[i]);
  }
  return bound;
}

FaceGradients face_gradients(const TriangleMesh& mesh) {
  FaceGradients g;
  const std::size_t nf = mesh.face_count();
  g.area.resize(nf);
  g.gj.resize(nf);
  g.gk.resize(nf);
  g.angle.resize(3 * nf);
  for (std::size_t f = 0; f < nf; ++f) {
    const Vec3 xi = position(mesh, mesh.corner(f, 0)), xj = position(mesh, mesh.corner(f, 1)),
               xk = position(mesh, mesh.corner(f, 2));
    const Vec3 normal2 = cross(sub(xj, xi), sub(xk, xi));  // 2 A_T n
    const double twice_area = norm(normal2);
    const Vec3 n = {normal2[0] / twice_area, normal2[1] / twice_area, normal2[2] / twice_area};
    g.area[f] = 0.5 * twice_area;
    // e^perp = n x e: the edge rotated by +90 degrees in the triangle plane
    const Vec3 ej = cross(n, sub(xi, xk)), ek = cross(n, sub(xj, xi));
    for (int c = 0; c < 3; ++c) {
      g.gj[f][static_cast<std::size_t>(c)] = ej[static_cast<std::size_t>(c)] / twice_area;
      g.gk[f][static_cast<std::size_t>(c)] = ek[static_cast<std::size_t>(c)] / twice_area;
    }
    const Vec3 p[3] = {xi, xj, xk};
    for (int c = 0; c < 3; ++c) {
      const Vec3 u = sub(p[(c + 1) % 3], p[c]), w = sub(p[(c + 2) % 3], p[c]);
      g.angle[3 * f + static_cast<std::size_t>(c)] = std::atan2(norm(cross(u, w)), dot(u, w));
    }
  }
  return g;
}

std::array<double, 3> FaceGradients::face_gradient(const TriangleMesh& mesh, const std::vector<double>& f,
                                                   std::size_t t) const {
  const double fi = f[static_cast<std::size_t>(mesh.corner(t, 0))];
  const double dj = f[static_cast<std::size_t>(mesh.corner(t, 1))] - fi;
  const double dk = f[static_cast<std::size_t>(mesh.corner(t, 2))] - fi;
  return {dj * gj[t][0] + dk * gk[t][0], dj * gj[t][1] + dk * gk[t][1], dj * gj[t][2] + dk * gk[t][2]};
}

std::array<double, 3> FaceGradients::vertex_gradient(const TriangleMesh& mesh, const MeshTopology& topology,
                                                     const std::vector<double>& f, std::size_t v) const {
  std::array<double, 3> sum{0.0, 0.0, 0.0};
  double weight = 0.0;
  for (auto k = static_cast<std::size_t>(topology.face_offsets[v]);
       k < static_cast<std::size_t>(topology.face_offsets[v + 1]); ++k) {
    const auto t = static_cast<std::size_t>(topology.vertex_faces[k]);
    int corner = 0;
    while (mesh.corner(t, corner) != static_cast<std::int32_t>(v)) ++corner;
    const double theta = angle[3 * t + static_cast<std::size_t>(corner)];
    const auto g = face_gradient(mesh, f, t);
    for (int c = 0; c < 3; ++c) sum[static_cast<std::size_t>(c)] += theta * g[static_cast<std::size_t>(c)];
    weight += theta;
  }
  for (auto& s : sum) s /= weight;
  return sum;
}

VertexGradientOperator vertex_gradient_operator(const TriangleMesh& mesh, const MeshTopology& topology,
                                                const FaceGradients& gradients) {
  VertexGradientOperator op;
  op.offsets = topology.vertex_offsets;
  op.neighbours = topology.vertex_neighbours;
  op.weights.assign(op.neighbours.size(), {0.0, 0.0, 0.0});
  for (std::size_t v = 0; v < mesh.vertex_count(); ++v) {
    const auto first = static_cast<std::size_t>(topology.face_offsets[v]),
               last = static_cast<std::size_t>(topology.face_offsets[v + 1]);
    double total = 0.0;
    for (std::size_t k = first; k < last; ++k) {
      const auto t = static_cast<std::size_t>(topology.vertex_faces[k]);
      for (int c = 0; c < 3; ++c)
        if (mesh.corner(t, c) == static_cast<std::int32_t>(v))
          total += gradients.angle[3 * t + static_cast<std::size_t>(c)];
    }
    const auto row_first = op.neighbours.begin() + op.offsets[v],
               row_last = op.neighbours.begin() + op.offsets[v + 1];
    for (std::size_t k = first; k < last; ++k) {
      const auto t = static_cast<std::size_t>(topology.vertex_faces[k]);
      int corner = 0;
      while (mesh.corner(t, corner) != static_cast<std::int32_t>(v)) ++corner;
      const double w = gradients.angle[3 * t + static_cast<std::size_t>(corner)] / total;
      // hat-function gradients of the face's corners: phi_1 = gj, phi_2 = gk, phi_0 = -(gj + gk)
      const std::array<double, 3> g1 = gradients.gj[t], g2 = gradients.gk[t];
      const std::array<double, 3> g0{-(g1[0] + g2[0]), -(g1[1] + g2[1]), -(g1[2] + g2[2])};
      const std::array<double, 3>* hat[3] = {&g0, &g1, &g2};
      for (int c = 0; c < 3; ++c) {
        if (c == corner) continue;
        const auto at = static_cast<std::size_t>(std::lower_bound(row_first, row_last, mesh.corner(t, c)) -
                                                 op.neighbours.begin());
        for (std::size_t d = 0; d < 3; ++d) op.weights[at][d] += w * (*hat[c])[d];
      }
    }
  }
  return op;
}

std::vector<std::array<double, 3>> vertex_normals(const TriangleMesh& m) {
  std::vector<Vec3> n(m.vertex_count(), Vec3{0.0, 0.0, 0.0});
  for (std::size_t f = 0; f < m.face_count(); ++f) {
    const Vec3 a = position(m, m.corner(f, 0));
    const Vec3 face = cross(sub(position(m, m.corner(f, 1)), a), sub(position(m, m.corner(f, 2)), a));
    for (int k = 0; k < 3; ++k) {
      auto& v = n[static_cast<std::size_t>(m.corner(f, k))];
      for (std::size_t i = 0; i < 3; ++i) v[i] += face[i];  // |face| = twice the area: area weighting
    }
  }
  for (auto& v : n) {
    const double len = norm(v);
    v = len > 0.0 ? Vec3{v[0] / len, v[1] / len, v[2] / len} : Vec3{0.0, 0.0, 1.0};
  }
  return n;
}

std::vector<double> boundary_projections(const TriangleMesh& m, const MeshTopology& topology) {
  const std::size_t n = m.vertex_count();
  std::vector<double> projection(6 * n, 0.0);
  for (std::size_t v = 0; v < n; ++v) {
    if (!topology.boundary_vertex[v]) continue;
    std::vector<std::array<double, 3>> dirs;
    for (auto k = static_cast<std::size_t>(topology.vertex_offsets[v]);
         k < static_cast<std::size_t>(topology.vertex_offsets[v + 1]); ++k) {
      const auto w = topology.vertex_neighbours[k];
      int faces_on_edge = 0;  // an edge is on the boundary when one face holds both ends
      for (auto j = static_cast<std::size_t>(topology.face_offsets[v]);
           j < static_cast<std::size_t>(topology.face_offsets[v + 1]); ++j) {
        const auto t = static_cast<std::size_t>(topology.vertex_faces[j]);
        if (m.corner(t, 0) == w || m.corner(t, 1) == w || m.corner(t, 2) == w) ++faces_on_edge;
      }
      if (faces_on_edge != 1) continue;
      const auto wi = static_cast<std::size_t>(w);
      std::array<double, 3> e{m.x[wi] - m.x[v], m.y[wi] - m.y[v], m.z[wi] - m.z[v]};
      const double len = std::sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
      for (auto& c : e) c /= len;
      dirs.push_back(e);
    }
    if (dirs.size() != 2) continue;  // a vertex where several boundary loops touch: left unprojected
    const double cosine = dirs[0][0] * dirs[1][0] + dirs[0][1] * dirs[1][1] + dirs[0][2] * dirs[1][2];
    for (std::size_t c = 0; c < 3; ++c) {
      projection[6 * v + c] = 0.5 * cosine * dirs[0][c];
      projection[6 * v + 3 + c] = dirs[1][c];
    }
  }
  return projection;
}

}  // namespace tissue::mesh
