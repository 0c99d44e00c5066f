// Conformal Willmore flow by spin transformations (conformal_willmore.hpp). Compiled as CUDA in CUDA builds.
#include "modules/curvature_flow/conformal_willmore.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/error.hpp"
#include "engine/exec/parallel_for.hpp"
#include "modules/curvature_flow/conformal_willmore_kernels.hpp"

namespace tissue::curvature_flow {

namespace {

/// Iteration cap of the conjugate-gradient solves (the bunny's Laplacian needs about 1000).
constexpr int kCgMaxIterations = 20000;

/// The multigrid of E and L (engine/linalg/aggregation_multigrid.hpp): aggregated down to at most 512
/// vertices (the bunny: 34 834 -> 3 709 -> 383), solved there exactly, and corrected with alpha = 1.85.
/// On the bunny (CPU, steps 2-9 at tau 0.05) against 39 vertices solved by 8 Jacobi sweeps and alpha = 1.5:
/// 100-260 CG iterations on E per step instead of 108-292, 50-52 on L instead of 76-81; alpha = 1.85 alone
/// gave 104-263 and 68-70 (modules/curvature_flow/README.md).
linalg::AmgSettings multigrid_settings(bool constant_null_space) {
  linalg::AmgSettings s;
  s.coarsest_nodes = 512;
  s.direct_coarsest = true;
  s.constant_null_space = constant_null_space;  // L annihilates constants; E is definite
  s.over_correction = 1.85;
  s.coarsest_refresh = 10;  // inverted every 10 steps: as few iterations as at every step (bunny, CPU)
  return s;
}

/// Per-vertex products whose sums step() needs (see kSum*), one column of n values each.
enum : std::size_t {
  kSumGram = 0,         ///< 10 columns: M B_a B_b for a <= b, B = (1, N_x, N_y, N_z)
  kSumProjection = 10,  ///< 4 columns: M B_a H
  kSumWillmore = 14,    ///< M H^2
  kSumArea = 15,        ///< M
  kSumVolume = 16,      ///< the vertex's third of its faces' signed volumes p0 . (p1 x p2) / 6
  kSumCentroid = 17,    ///< 3 columns: M x, M y, M z
  kSumCount = 20
};

/// Vertex mass M_i = sum of incident face areas / 3 [length^2] and the area-weighted unit normal.
struct VertexGeometry {
  SurfaceView surface;
  Span<const std::int32_t> corner_offsets, vertex_corners;
  Span<double> mass, normal;  ///< normal: 3 columns of n

  TISSUE_HD void operator()(std::size_t v) const {
    const std::size_t n = mass.size();
    double m = 0.0, nx = 0.0, ny = 0.0, nz = 0.0;
    for (std::int32_t q = corner_offsets[v]; q < corner_offsets[v + 1]; ++q) {
      const std::int32_t f = vertex_corners[static_cast<std::size_t>(q)] / 3;
      const Quaternion a = surface.point(surface.corner(f, 0));
      const Quaternion b = surface.point(surface.corner(f, 1));
      const Quaternion c = surface.point(surface.corner(f, 2));
      const double ux = b.x - a.x, uy = b.y - a.y, uz = b.z - a.z;
      const double wx = c.x - a.x, wy = c.y - a.y, wz = c.z - a.z;
      const double cx = uy * wz - uz * wy, cy = uz * wx - ux * wz, cz = ux * wy - uy * wx;
      m += math::sqrt(cx * cx + cy * cy + cz * cz) / 6.0;
      nx += cx;
      ny += cy;
      nz += cz;
    }
    const double len = math::sqrt(nx * nx + ny * ny + nz * nz);
    mass[v] = m;
    normal[v] = len > 0.0 ? nx / len : 0.0;
    normal[n + v] = len > 0.0 ? ny / len : 0.0;
    normal[2 * n + v] = len > 0.0 ? nz / len : 1.0;
  }
};

/// H_i = N_i . (L x)_i / (2 M_i) and the per-vertex products of kSum*.
struct MeanCurvature {
  SurfaceView surface;
  Span<const std::int32_t> offsets, columns, corner_offsets, vertex_corners;
  Span<const double> laplacian, mass, normal;
  Span<double> h, sums;

  TISSUE_HD void operator()(std::size_t v) const {
    const std::size_t n = mass.size();
    double lx = 0.0, ly = 0.0, lz = 0.0;
    for (std::int32_t k = offsets[v]; k < offsets[v + 1]; ++k) {
      const auto j = static_cast<std::size_t>(columns[static_cast<std::size_t>(k)]);
      const double w = laplacian[static_cast<std::size_t>(k)];
      lx += w * surface.x[j];
      ly += w * surface.y[j];
      lz += w * surface.z[j];
    }
    const double m = mass[v];
    const double b[4] = {1.0, normal[v], normal[n + v], normal[2 * n + v]};
    const double hv = (b[1] * lx + b[2] * ly + b[3] * lz) / (2.0 * m);
    h[v] = hv;
    std::size_t col = kSumGram;
    for (int a = 0; a < 4; ++a)
      for (int c = a; c < 4; ++c) sums[(col++) * n + v] = m * b[a] * b[c];
    for (int a = 0; a < 4; ++a) sums[(kSumProjection + static_cast<std::size_t>(a)) * n + v] = m * b[a] * hv;
    sums[kSumWillmore * n + v] = m * hv * hv;
    sums[kSumArea * n + v] = m;
    double volume = 0.0;
    for (std::int32_t q = corner_offsets[v]; q < corner_offsets[v + 1]; ++q) {
      const std::int32_t f = vertex_corners[static_cast<std::size_t>(q)] / 3;
      const Quaternion p0 = surface.point(surface.corner(f, 0));
      const Quaternion p1 = surface.point(surface.corner(f, 1));
      const Quaternion p2 = surface.point(surface.corner(f, 2));
      volume += (p0.x * (p1.y * p2.z - p1.z * p2.y) + p0.y * (p1.z * p2.x - p1.x * p2.z) +
                 p0.z * (p1.x * p2.y - p1.y * p2.x)) /
                18.0;
    }
    sums[kSumVolume * n + v] = volume;
    sums[(kSumCentroid + 0) * n + v] = m * surface.x[v];
    sums[(kSumCentroid + 1) * n + v] = m * surface.y[v];
    sums[(kSumCentroid + 2) * n + v] = m * surface.z[v];
  }
};

/// rho_i = -tau (H_i - c . (1, N_i)).
struct CurvatureChange {
  double tau, c0, c1, c2, c3;
  Span<const double> h, normal;
  Span<double> rho;
  TISSUE_HD void operator()(std::size_t v) const {
    const std::size_t n = h.size();
    rho[v] = -tau * (h[v] - c0 - c1 * normal[v] - c2 * normal[n + v] - c3 * normal[2 * n + v]);
  }
};

/// lambda_i = 1 (the identity transform), 4 values per vertex.
struct IdentityTransform {
  Span<double> lambda;
  TISSUE_HD void operator()(std::size_t v) const {
    lambda[4 * v] = 1.0;
    lambda[4 * v + 1] = 0.0;
    lambda[4 * v + 2] = 0.0;
    lambda[4 * v + 3] = 0.0;
  }
};

/// The start of the inverse iteration, extrapolated in time from lambda_n (lambda, replaced) and the
/// history h0 = lambda_n-1, h1 = lambda_n-2 by the polynomial of degree `order` through the last order + 1
/// steps (0: lambda_n; 1: 2 l_n - l_n-1; 2: 3 l_n - 3 l_n-1 + l_n-2); the history then moves on by one
/// step (h1 = h0, h0 = lambda_n). One thread per value.
struct ExtrapolateTransforms {
  int order;
  Span<double> lambda, h0, h1;
  TISSUE_HD void operator()(std::size_t k) const {
    const double l = lambda[k], a = h0[k], b = h1[k];
    lambda[k] = order == 2 ? 3.0 * (l - a) + b : order == 1 ? 2.0 * l - a : l;
    h1[k] = a;
    h0[k] = l;
  }
};

/// The four components of M_i lambda_i, one column of n each (their sums: the mass-weighted mean transform).
struct WeightedTransform {
  Span<const double> lambda, mass;
  Span<double> out;
  TISSUE_HD void operator()(std::size_t v) const {
    const std::size_t n = mass.size();
    for (std::size_t c = 0; c < 4; ++c) out[c * n + v] = mass[v] * lambda[4 * v + c];
  }
};

/// lambda_i = lambda_i q for a constant quaternion q (right multiplication commutes with E).
struct RightMultiply {
  Quaternion q;
  Span<double> lambda;
  TISSUE_HD void operator()(std::size_t v) const {
    const Quaternion l{lambda[4 * v], lambda[4 * v + 1], lambda[4 * v + 2], lambda[4 * v + 3]};
    const Quaternion r = hamilton(l, q);
    lambda[4 * v] = r.w;
    lambda[4 * v + 1] = r.x;
    lambda[4 * v + 2] = r.y;
    lambda[4 * v + 3] = r.z;
  }
};

/// y = y - a x.
struct SubtractScaled {
  double a;
  Span<const double> x;
  Span<double> y;
  TISSUE_HD void operator()(std::size_t i) const { y[i] -= a * x[i]; }
};

/// out_i = M_i |y_i|^2 (quaternion per vertex).
struct WeightedNorm {
  Span<const double> y, mass;
  Span<double> out;
  TISSUE_HD void operator()(std::size_t v) const {
    double s = 0.0;
    for (std::size_t c = 0; c < 4; ++c) s += y[4 * v + c] * y[4 * v + c];
    out[v] = mass[v] * s;
  }
};

/// y = a x.
struct Scale {
  double a;
  Span<const double> x;
  Span<double> y;
  TISSUE_HD void operator()(std::size_t i) const { y[i] = a * x[i]; }
};

/// omega_i = -sum over i's faces of (cot at k / 2) etilde(i -> j) + (cot at j / 2) etilde(i -> k), the
/// divergence of the transformed edges (the right-hand side of L xtilde = omega). 3 columns of n.
struct TransformedEdgeDivergence {
  SurfaceView surface;
  Span<const std::int32_t> corner_offsets, vertex_corners;
  Span<const double> lambda;
  Span<double> omega;

  TISSUE_HD Quaternion lambda_of(std::int32_t v) const {
    const auto i = 4 * static_cast<std::size_t>(v);
    return {lambda[i], lambda[i + 1], lambda[i + 2], lambda[i + 3]};
  }
  TISSUE_HD void operator()(std::size_t v) const {
    const std::size_t n = omega.size() / 3;
    const auto vi = static_cast<std::int32_t>(v);
    const Quaternion li = lambda_of(vi);
    const Quaternion pi = surface.point(vi);
    Quaternion sum{0.0, 0.0, 0.0, 0.0};
    for (std::int32_t q = corner_offsets[v]; q < corner_offsets[v + 1]; ++q) {
      const std::int32_t fc = vertex_corners[static_cast<std::size_t>(q)];
      const std::int32_t f = fc / 3;
      const int c = fc % 3;
      const FaceGeometry g = face_geometry(surface, f);
      for (int s = 1; s <= 2; ++s) {
        const std::int32_t j = surface.corner(f, (c + s) % 3);
        const Quaternion pj = surface.point(j);
        const Quaternion e{0.0, pj.x - pi.x, pj.y - pi.y, pj.z - pi.z};
        const double w = 0.5 * g.cot[(c + 3 - s) % 3];  // the corner opposite edge (i, j)
        sum = sum + (-w) * transformed_edge(li, lambda_of(j), e);
      }
    }
    omega[v] = sum.x;
    omega[n + v] = sum.y;
    omega[2 * n + v] = sum.z;
  }
};

/// out_v = values[index_v].
struct GatherEntries {
  Span<const double> values;
  Span<const std::int32_t> index;
  Span<double> out;
  TISSUE_HD void operator()(std::size_t v) const { out[v] = values[static_cast<std::size_t>(index[v])]; }
};

/// values[index] += amount (one thread).
struct AddToEntry {
  Span<double> values;
  std::size_t index;
  double amount;
  TISSUE_HD void operator()(std::size_t) const { values[index] += amount; }
};

/// The real part of every diagonal block of a quaternion matrix += amount (E - sigma for sigma = -amount).
struct ShiftDiagonal {
  Span<const std::int32_t> diagonal;  ///< entry index of (v, v), per vertex
  Span<double> values;                ///< 4 per entry
  double amount;
  TISSUE_HD void operator()(std::size_t v) const {
    values[4 * static_cast<std::size_t>(diagonal[v])] += amount;
  }
};

/// out_i = the absolute row sum of block row i of a quaternion matrix in real form (its four real rows
/// share it).
struct QuaternionRowNorm {
  QuaternionMatrix a;
  Span<double> out;
  TISSUE_HD void operator()(std::size_t i) const { out[i] = a.absolute_row_sum(4 * i); }
};

/// y_i = x_i - shift.
struct Subtract {
  double shift;
  Span<double> y;
  TISSUE_HD void operator()(std::size_t i) const { y[i] -= shift; }
};

/// p = centre + scale (p - centroid), per coordinate.
struct Similarity {
  double scale, centroid, centre;
  Span<double> p;
  TISSUE_HD void operator()(std::size_t i) const { p[i] = centre + scale * (p[i] - centroid); }
};

}  // namespace

LinearSolver linear_solver_from_string(const std::string& name) {
  if (name == "direct") return LinearSolver::direct;
  if (name == "cg") return LinearSolver::conjugate_gradient;
  throw std::invalid_argument("unknown linear solver '" + name + "' (expected direct or cg)");
}

std::string to_string(LinearSolver s) {
  return s == LinearSolver::direct ? "direct" : "cg";
}

Preconditioner preconditioner_from_string(const std::string& name) {
  if (name == "jacobi") return Preconditioner::jacobi;
  if (name == "multigrid") return Preconditioner::multigrid;
  throw std::invalid_argument("unknown preconditioner '" + name + "' (expected jacobi or multigrid)");
}

std::string to_string(Preconditioner p) {
  return p == Preconditioner::jacobi ? "jacobi" : "multigrid";
}

namespace {
/// @throws std::invalid_argument for settings the flow cannot run with.
void check_settings(const ConformalWillmoreSettings& settings) {
  if (settings.inverse_iterations < 1) throw std::invalid_argument("inverse_iterations must be >= 1");
  if (!(settings.cg_tolerance > 0.0)) throw std::invalid_argument("cg_tolerance must be > 0");
  if (!(settings.similarity_tolerance > 0.0)) throw std::invalid_argument("similarity_tolerance must be > 0");
  if (!(settings.first_solve_tolerance > 0.0))
    throw std::invalid_argument("first_solve_tolerance must be > 0");
  if (!(settings.eigen_shift > 0.0)) throw std::invalid_argument("eigen_shift must be > 0");
  if (!(settings.eigen_tolerance > 0.0)) throw std::invalid_argument("eigen_tolerance must be > 0");
  if (settings.start_extrapolation < 0 || settings.start_extrapolation > 2)
    throw std::invalid_argument("start_extrapolation must be 0, 1 or 2");
}
}  // namespace

std::shared_ptr<mesh::DeviceMesh> ConformalWillmoreFlow::checked_mesh(
    const mesh::TriangleMesh& mesh, const ConformalWillmoreSettings& settings) {
  check_settings(settings);
  mesh::validate(mesh, "conformal Willmore flow");
  return std::make_shared<mesh::DeviceMesh>(mesh, "conformal Willmore flow");
}

ConformalWillmoreFlow::ConformalWillmoreFlow(const mesh::TriangleMesh& mesh,
                                             const ConformalWillmoreSettings& settings)
    : ConformalWillmoreFlow(checked_mesh(mesh, settings), settings) {}

ConformalWillmoreFlow::ConformalWillmoreFlow(std::shared_ptr<mesh::DeviceMesh> surface,
                                             const ConformalWillmoreSettings& settings)
    : mesh_(std::move(surface)),
      settings_(settings),
      n_(mesh_->vertex_count()),
      pattern_(&mesh_->require_operator_pattern()),
      x_(mesh_->require_device_positions().x),
      y_(mesh_->require_device_positions().y),
      z_(mesh_->require_device_positions().z) {
  check_settings(settings);
  // the connectivity on the device, the mesh's (shared with whatever else works on it)
  const mesh::DeviceTopology& topology = mesh_->require_device_topology();
  const mesh::DeviceOperatorPattern& pattern = mesh_->require_device_operator_pattern();
  faces_ = topology.faces.span();
  corner_offsets_ = topology.face_offsets.span();
  offsets_ = pattern.offsets.span();
  columns_ = pattern.columns.span();
  rows_ = pattern.rows.span();
  sources_ = pattern.sources.span();
  vertex_corners_ = pattern.vertex_corners.span();
  diagonal_ = pattern.diagonal.span();
  const OperatorPattern& pattern_host = *pattern_;
  for (auto* b : {&mass_, &h_, &rho_}) b->resize(n_);
  normal_.resize(3 * n_);
  omega_.resize(3 * n_);
  work_.resize(4 * n_);
  scratch_.resize(4 * n_);
  dirac_quaternions_.resize(4 * pattern_host.columns.size());
  lambda_.resize(4 * n_);
  lambda_.zero();  // no start yet (similarity_values() before the first step)
  lambda_history_.resize(8 * n_);
  lambda_history_.zero();
  sums_.resize(kSumCount * n_);
  rho_.zero();

  laplacian_.set_pattern(static_cast<std::int32_t>(n_), pattern_host.offsets, pattern_host.columns);
  // E: 4 x 4 blocks on the same pattern; row 4 i + r holds block columns in order, 4 values each
  std::vector<std::int32_t> offsets4(4 * n_ + 1, 0), columns4(16 * pattern_host.columns.size());
  for (std::size_t v = 0; v < n_; ++v) {
    const auto first = static_cast<std::size_t>(pattern_host.offsets[v]);
    const auto degree = static_cast<std::size_t>(pattern_host.offsets[v + 1]) - first;
    for (std::size_t r = 0; r < 4; ++r) {
      const std::size_t base = 16 * first + r * 4 * degree;
      offsets4[4 * v + r] = static_cast<std::int32_t>(base);
      for (std::size_t l = 0; l < degree; ++l)
        for (std::size_t c = 0; c < 4; ++c)
          columns4[base + 4 * l + c] = 4 * pattern_host.columns[first + l] + static_cast<std::int32_t>(c);
    }
  }
  offsets4[4 * n_] = static_cast<std::int32_t>(columns4.size());
  dirac_.set_pattern(static_cast<std::int32_t>(4 * n_), offsets4, columns4);
  projection_.assign(4, 0.0);
  // both operators live on the vertex graph: the same aggregates, once per operator type
  if (settings_.preconditioner == Preconditioner::multigrid) {
    if (settings_.similarity_solver == LinearSolver::conjugate_gradient)
      dirac_multigrid_.setup(pattern_host.offsets, pattern_host.columns, multigrid_settings(false));
    if (settings_.positions_solver == LinearSolver::conjugate_gradient)
      laplacian_multigrid_.setup(pattern_host.offsets, pattern_host.columns, multigrid_settings(true));
  }
}

namespace {
SurfaceView surface_view(const DeviceBuffer<double>& x, const DeviceBuffer<double>& y,
                         const DeviceBuffer<double>& z, Span<const std::int32_t> faces) {
  return {x.span(), y.span(), z.span(), faces};
}
}  // namespace

void ConformalWillmoreFlow::update_geometry() {
  exec::parallel_for(n_, VertexGeometry{surface_view(x_, y_, z_, faces_), corner_offsets_, vertex_corners_,
                                        mass_.span(), normal_.span()});
}

void ConformalWillmoreFlow::assemble_laplacian() {
  const PatternView pattern{offsets_, columns_, rows_, sources_, corner_offsets_, vertex_corners_};
  exec::parallel_for(laplacian_.nonzeros(), CotangentLaplacianEntries{surface_view(x_, y_, z_, faces_),
                                                                      pattern, laplacian_.values.span()});
}

SurfaceMeasures ConformalWillmoreFlow::mean_curvature() {
  exec::parallel_for(n_, MeanCurvature{surface_view(x_, y_, z_, faces_), offsets_, columns_, corner_offsets_,
                                       vertex_corners_, laplacian_.values.span(), mass_.span(),
                                       normal_.span(), h_.span(), sums_.span()});
  const std::vector<double> s =
      exec::column_sums(Span<const double>(sums_.data(), kSumCount * n_), kSumCount, scratch_);
  // the 4 x 4 Gram matrix of B = (1, N) under M and the right-hand side B^T M H: c = G^-1 B^T M H is the
  // M-orthogonal projection of H onto span B. Cholesky of G, dropping a basis vector that depends on the
  // earlier ones (a flat mesh has constant normals), which is Gram-Schmidt with the same span.
  double g[4][4];
  std::size_t col = kSumGram;
  for (int a = 0; a < 4; ++a)
    for (int b = a; b < 4; ++b) g[a][b] = g[b][a] = s[col++];
  double l[4][4] = {};
  bool kept[4] = {};
  for (int j = 0; j < 4; ++j) {
    double d = g[j][j];
    for (int k = 0; k < j; ++k) d -= l[j][k] * l[j][k];
    kept[j] = d > 1e-12 * g[j][j];
    if (!kept[j]) continue;
    l[j][j] = std::sqrt(d);
    for (int i = j + 1; i < 4; ++i) {
      double t = g[i][j];
      for (int k = 0; k < j; ++k) t -= l[i][k] * l[j][k];
      l[i][j] = t / l[j][j];
    }
  }
  double y[4];
  for (int i = 0; i < 4; ++i) {
    double t = s[kSumProjection + static_cast<std::size_t>(i)];
    for (int k = 0; k < i; ++k) t -= l[i][k] * y[k];
    y[i] = kept[i] ? t / l[i][i] : 0.0;
  }
  for (int i = 3; i >= 0; --i) {
    double t = y[i];
    for (int k = i + 1; k < 4; ++k) t -= l[k][i] * projection_[static_cast<std::size_t>(k)];
    projection_[static_cast<std::size_t>(i)] = kept[i] ? t / l[i][i] : 0.0;
  }
  SurfaceMeasures m;
  m.area = s[kSumArea];
  m.willmore = s[kSumWillmore];
  m.volume = s[kSumVolume];
  for (std::size_t c = 0; c < 3; ++c) centroid_before_[c] = s[kSumCentroid + c] / m.area;
  before_ = m;
  return m;
}

void ConformalWillmoreFlow::project_curvature_change(double tau) {
  exec::parallel_for(n_, CurvatureChange{tau, projection_[0], projection_[1], projection_[2], projection_[3],
                                         h_.span(), normal_.span(), rho_.span()});
}

void ConformalWillmoreFlow::assemble_dirac() {
  const PatternView pattern{offsets_, columns_, rows_, sources_, corner_offsets_, vertex_corners_};
  // the shift is relative to E's mean diagonal; at rho = 0 E_ii = sum_f |e_i|^2 / (4 A_f) = L_ii (cot b + cot
  // c = |a|^2 / (2 A) in every triangle), so the mean diagonal is trace(L) / n
  exec::parallel_for(n_, GatherEntries{laplacian_.values.span(), diagonal_, scratch_.span()});
  const double mean_diagonal = exec::sum(Span<const double>(scratch_.data(), n_)) / static_cast<double>(n_);
  shift_ = settings_.eigen_shift * mean_diagonal;
  exec::parallel_for(pattern_->columns.size(), DiracEntries{surface_view(x_, y_, z_, faces_), pattern,
                                                            rho_.span(), shift_, dirac_quaternions_.span()});
  if (settings_.similarity_solver == LinearSolver::direct)
    exec::parallel_for(pattern_->columns.size(),
                       QuaternionBlocks{offsets_, rows_, dirac_quaternions_.span(), dirac_.values.span()});
}

std::vector<double> ConformalWillmoreFlow::dirac_product(const std::vector<double>& x) {
  if (x.size() != 4 * n_) throw std::invalid_argument("dirac_product: 4 values per vertex");
  DeviceBuffer<double> in, out(4 * n_);
  in.assign(x);
  linalg::multiply(dirac_quaternions(), in.span(), out.span());
  return out.to_host();
}

void ConformalWillmoreFlow::solve_dirac(Span<const double> b, Span<double> x, double sigma, double quotient,
                                        double tolerance) {
  if (settings_.similarity_solver == LinearSolver::direct) {
    dirac_factor_.solve(b, x);
    return;
  }
  // E - sigma in place (the diagonal blocks' real parts), solved, and E restored
  if (sigma != 0.0) exec::parallel_for(n_, ShiftDiagonal{diagonal_, dirac_quaternions_.span(), -sigma});
  // warm start: b scaled by the inverse of its Rayleigh quotient, the eigenvalue it nearly belongs to
  exec::parallel_for(4 * n_, Scale{1.0 / (quotient - sigma), b, x});
  const linalg::CgSettings cg{tolerance, kCgMaxIterations, dirac_norm_};
  const linalg::CgResult r = settings_.preconditioner == Preconditioner::multigrid
                                 ? dirac_cg_.solve(dirac_quaternions(), b, x, cg, &dirac_multigrid_)
                                 : dirac_cg_.solve(dirac_quaternions(), b, x, cg);
  if (sigma != 0.0) exec::parallel_for(n_, ShiftDiagonal{diagonal_, dirac_quaternions_.span(), sigma});
  report_.similarity_iterations += require_converged(r, "the Dirac operator");
}

int ConformalWillmoreFlow::require_converged(const linalg::CgResult& r, const char* what) {
  if (!r.converged)
    throw NumericalError(std::string("conformal Willmore flow: conjugate gradients on ") + what +
                         " did not converge (relative residual " + std::to_string(r.relative_residual) + ")");
  return r.iterations;
}

void ConformalWillmoreFlow::similarity_transform() {
  report_.similarity_iterations = 0;
  report_.inverse_iterations = 0;
  const bool cg = settings_.similarity_solver == LinearSolver::conjugate_gradient;
  if (!cg) {
    dirac_factor_.factorize(dirac_);
  } else {  // ||E||_2 <= ||E||_inf (E symmetric): the scale of the backward error
    exec::parallel_for(n_, QuaternionRowNorm{dirac_quaternions(), scratch_.span()});
    dirac_norm_ = exec::max_value(Span<const double>(scratch_.data(), n_));
    if (settings_.preconditioner == Preconditioner::multigrid) dirac_multigrid_.update(dirac_quaternions());
  }
  // the conjugate-gradient iteration starts from the last steps' transforms, extrapolated in time: rho,
  // and with it E's eigenvector, changes smoothly from step to step
  if (!cg || !lambda_warm_) {
    exec::parallel_for(n_, IdentityTransform{lambda_.span()});
    history_steps_ = 0;
  } else {
    const int order = std::min(settings_.start_extrapolation, history_steps_);
    exec::parallel_for(
        4 * n_, ExtrapolateTransforms{order, lambda_.span(), Span<double>(lambda_history_.data(), 4 * n_),
                                      Span<double>(lambda_history_.data() + 4 * n_, 4 * n_)});
    history_steps_ = std::min(history_steps_ + 1, 2);
  }
  lambda_warm_ = false;  // until this inverse iteration has succeeded
  const Span<double> ys(work_.data(), 4 * n_);
  const double area = before_.area;  // sum M, from mean_curvature()
  for (;;) {
    // Rayleigh quotient mu and eigen-residual ||E l - mu l|| / ||l|| of the current lambda
    linalg::multiply(dirac_quaternions(), lambda_.span(), ys);
    const double ll = linalg::dot(lambda_.span(), lambda_.span(), scratch_);
    const double quotient = linalg::dot(lambda_.span(), ys, scratch_) / ll;
    exec::parallel_for(4 * n_, SubtractScaled{quotient, lambda_.span(), ys});
    const double residual = std::sqrt(linalg::dot(ys, ys, scratch_) / ll);
    report_.eigenvalue = quotient - shift_;
    report_.eigen_residual = residual / quotient;
    if (report_.eigen_residual <= settings_.eigen_tolerance ||
        report_.inverse_iterations == settings_.inverse_iterations)
      break;
    // an eigenvalue lies within `residual` of mu, and mu >= lambda_1: once lambda is close to the
    // eigenvector, sigma = mu - 2 residual stays below lambda_1 (E - sigma positive definite) while it cuts
    // the ratio (lambda_1 - sigma) / (lambda_2 - sigma) by which each solve reduces the other components
    const double sigma = cg ? std::max(0.0, quotient - 2.0 * residual) : 0.0;
    // the step's first, unshifted solve only has to bring lambda close enough for the shift of the next
    const double tolerance = report_.inverse_iterations == 0 && sigma == 0.0
                                 ? std::max(settings_.first_solve_tolerance, settings_.similarity_tolerance)
                                 : settings_.similarity_tolerance;
    // the solve starts from x = lambda / (mu - sigma), whose residual lambda - (E - sigma) x has the norm
    // residual ||lambda|| / (mu - sigma): at or below tolerance (||E|| + mu - sigma) it meets the backward
    // error at once, so no solve can reduce the eigen-residual further (the floor the solves' backward error
    // sets, about 1e-3 mu on the bunny)
    if (cg && residual <= tolerance * (dirac_norm_ + quotient - sigma)) break;
    solve_dirac(lambda_.span(), ys, sigma, quotient, tolerance);
    ++report_.inverse_iterations;
    // normalise so that sum M |lambda|^2 = sum M (the transform keeps the area to first order)
    exec::parallel_for(n_, WeightedNorm{ys, mass_.span(), Span<double>(sums_.data(), n_)});
    const double norm = exec::sum(Span<const double>(sums_.data(), n_));
    if (!(norm > 0.0) || !std::isfinite(norm))
      throw NumericalError("conformal Willmore flow: the similarity transform vanished or diverged");
    exec::parallel_for(4 * n_, Scale{std::sqrt(area / norm), ys, lambda_.span()});
  }
  // E commutes with right multiplication by a constant quaternion, so its eigenvectors are lambda q for any
  // unit q, and which one the iteration returns depends on where it started: a rigid rotation of the new
  // surface. The one with a real, positive mass-weighted mean sum M lambda is kept, whatever the start.
  exec::parallel_for(n_, WeightedTransform{lambda_.span(), mass_.span(), sums_.span()});
  const std::vector<double> mean = exec::column_sums(Span<const double>(sums_.data(), 4 * n_), 4, scratch_);
  const double length =
      std::sqrt(mean[0] * mean[0] + mean[1] * mean[1] + mean[2] * mean[2] + mean[3] * mean[3]);
  if (length > 0.0)
    exec::parallel_for(
        n_, RightMultiply{{mean[0] / length, -mean[1] / length, -mean[2] / length, -mean[3] / length},
                          lambda_.span()});
  lambda_warm_ = true;
}

void ConformalWillmoreFlow::transformed_edges() {
  exec::parallel_for(n_, TransformedEdgeDivergence{surface_view(x_, y_, z_, faces_), corner_offsets_,
                                                   vertex_corners_, lambda_.span(), omega_.span()});
}

void ConformalWillmoreFlow::spin_positions() {
  report_.positions_iterations = 0;
  DeviceBuffer<double>* coordinate[3] = {&x_, &y_, &z_};
  if (settings_.positions_solver == LinearSolver::direct) {
    // pin vertex 0: (L + e0 e0^T) x = omega has the solution of L x = omega with x_0 = 0
    exec::parallel_for(
        1, AddToEntry{laplacian_.values.span(), static_cast<std::size_t>(pattern_->diagonal[0]), 1.0});
    laplacian_factor_.factorize(laplacian_);
    for (std::size_t c = 0; c < 3; ++c)
      laplacian_factor_.solve(Span<const double>(omega_.data() + c * n_, n_), coordinate[c]->span());
    positions_moved();
    return;
  }
  // L x = omega for the three coordinates at once, from the current positions. L is singular (constants);
  // omega sums to zero up to rounding (each edge's transformed vector enters its two ends with opposite
  // signs), and removing the rest puts it in L's range, which CG then never leaves.
  for (std::size_t c = 0; c < 3; ++c) {
    const Span<double> b(omega_.data() + c * n_, n_);
    exec::parallel_for(n_, Subtract{exec::sum(Span<const double>(b)) / static_cast<double>(n_), b});
    exec::copy(Span<const double>(coordinate[c]->span()), Span<double>(work_.data() + c * n_, n_), n_);
  }
  const Span<double> x(work_.data(), 3 * n_);
  const linalg::CsrOperator<3> l(laplacian_);
  const linalg::CgSettings cg{settings_.cg_tolerance, kCgMaxIterations};
  linalg::CgResult r;
  if (settings_.preconditioner == Preconditioner::multigrid) {
    laplacian_multigrid_.update(l);
    r = laplacian_cg_.solve(l, omega_.span(), x, cg, &laplacian_multigrid_);
  } else {
    r = laplacian_cg_.solve(l, omega_.span(), x, cg);
  }
  report_.positions_iterations = require_converged(r, "the Laplacian");
  for (std::size_t c = 0; c < 3; ++c)
    exec::copy(Span<const double>(work_.data() + c * n_, n_), coordinate[c]->span(), n_);
  positions_moved();
}

void ConformalWillmoreFlow::normalize_positions() {
  update_geometry();
  // area and centroid of the new surface
  DeviceBuffer<double>* coordinate[3] = {&x_, &y_, &z_};
  const double area = exec::sum(mass_.span());
  double centroid[3];
  for (std::size_t c = 0; c < 3; ++c)
    centroid[c] = linalg::dot(mass_.span(), coordinate[c]->span(), scratch_) / area;
  const double scale = settings_.preserve_area ? std::sqrt(before_.area / area) : 1.0;
  for (std::size_t c = 0; c < 3; ++c)
    exec::parallel_for(n_, Similarity{scale, centroid[c], centroid_before_[c], coordinate[c]->span()});
  positions_moved();
}

void ConformalWillmoreFlow::step(double tau) {
  if (!(tau > 0.0)) throw std::invalid_argument("the time step tau must be > 0");
  update_geometry();
  assemble_laplacian();
  mean_curvature();
  project_curvature_change(tau);
  assemble_dirac();
  similarity_transform();
  transformed_edges();
  spin_positions();
  normalize_positions();
}

SurfaceMeasures ConformalWillmoreFlow::measures() {
  update_geometry();
  assemble_laplacian();
  return mean_curvature();
}

void ConformalWillmoreFlow::set_curvature_change(const std::vector<double>& rho) {
  if (rho.size() != n_) throw std::invalid_argument("set_curvature_change: one value per vertex");
  rho_.assign(rho);
}

std::vector<double> ConformalWillmoreFlow::similarity_history() const {
  std::vector<double> h = lambda_history_.to_host();
  std::fill(h.begin() + static_cast<std::ptrdiff_t>(4 * n_ * static_cast<std::size_t>(history_steps_)),
            h.end(), 0.0);
  return h;
}

void ConformalWillmoreFlow::set_similarity_values(const std::vector<double>& lambda,
                                                  const std::vector<double>& history) {
  if (lambda.size() != 4 * n_) throw std::invalid_argument("set_similarity_values: 4 values per vertex");
  if (!history.empty() && history.size() != 8 * n_)
    throw std::invalid_argument("set_similarity_values: a history of 8 values per vertex, or none");
  const auto nonzero = [](auto first, auto last) {
    return std::any_of(first, last, [](double v) { return v != 0.0; });
  };
  lambda_.assign(lambda);
  lambda_warm_ = nonzero(lambda.begin(), lambda.end());
  history_steps_ = 0;
  if (history.empty()) {
    lambda_history_.zero();
    return;
  }
  lambda_history_.assign(history);
  const auto step = static_cast<std::ptrdiff_t>(4 * n_);
  while (history_steps_ < 2 &&
         nonzero(history.begin() + history_steps_ * step, history.begin() + (history_steps_ + 1) * step))
    ++history_steps_;
}

void ConformalWillmoreFlow::set_positions(const std::vector<double>& xyz) {
  if (xyz.size() != 3 * n_) throw std::invalid_argument("set_positions: 3 values per vertex");
  std::vector<double> c(n_);
  DeviceBuffer<double>* coordinate[3] = {&x_, &y_, &z_};
  for (std::size_t k = 0; k < 3; ++k) {
    for (std::size_t v = 0; v < n_; ++v) c[v] = xyz[3 * v + k];
    coordinate[k]->assign(c);
  }
  positions_moved();
}

std::size_t ConformalWillmoreFlow::preconditioner_state_size() const {
  return dirac_multigrid_.coarsest_state_size() + laplacian_multigrid_.coarsest_state_size();
}

std::vector<double> ConformalWillmoreFlow::preconditioner_state() const {
  // before the first step the multigrids have no inverse yet: zeros, which set_preconditioner_state()
  // takes for "invert at the next step"
  std::vector<double> state(preconditioner_state_size(), 0.0);
  const std::vector<double> e = dirac_multigrid_.coarsest_state(), l = laplacian_multigrid_.coarsest_state();
  if (!e.empty()) std::copy(e.begin(), e.end(), state.begin());
  if (!l.empty())
    std::copy(l.begin(), l.end(),
              state.begin() + static_cast<std::ptrdiff_t>(dirac_multigrid_.coarsest_state_size()));
  return state;
}

void ConformalWillmoreFlow::set_preconditioner_state(const std::vector<double>& state) {
  if (state.size() != preconditioner_state_size())
    throw std::invalid_argument("set_preconditioner_state: " + std::to_string(preconditioner_state_size()) +
                                " values expected");
  const auto split = state.begin() + static_cast<std::ptrdiff_t>(dirac_multigrid_.coarsest_state_size());
  // a part whose count is 0 inverts at the next update anyway: restore it as "none"
  const auto part = [](auto first, auto last) {
    return first == last || *first == 0.0 ? std::vector<double>{} : std::vector<double>(first, last);
  };
  dirac_multigrid_.restore_coarsest(part(state.begin(), split));
  laplacian_multigrid_.restore_coarsest(part(split, state.end()));
}

std::vector<double> ConformalWillmoreFlow::positions() const {
  const auto x = x_.to_host(), y = y_.to_host(), z = z_.to_host();
  std::vector<double> xyz(3 * n_);
  for (std::size_t v = 0; v < n_; ++v) {
    xyz[3 * v] = x[v];
    xyz[3 * v + 1] = y[v];
    xyz[3 * v + 2] = z[v];
  }
  return xyz;
}

}  // namespace tissue::curvature_flow
