#pragma once
/// @file conformal_willmore.hpp
/// Conformal Willmore flow of closed triangle meshes by spin transformations (Crane, Pinkall, Schröder
/// 2013, "Robust fairing via conformal curvature flow", ACM TOG 32(4); the spin transformation of Crane,
/// Pinkall, Schröder 2011, ACM TOG 30(4); seed 002). One step of time step tau:
///
///   1. vertex masses M_i (a third of the incident face areas), area-weighted unit normals N_i, and the
///      cotangent Laplacian L on the sparsity pattern shared with the Dirac operator;
///   2. mean curvature H_i = N_i . (L x)_i / (2 M_i) (so H = 1/R on a sphere of radius R), the Willmore
///      energy W = sum_i M_i H_i^2 (4 pi on a round sphere);
///   3. the Willmore gradient step in curvature space, rho = -tau P(H) (2013, §4-5: the flow of the
///      curvature half-density is d rho/dt = -rho), with P the M-orthogonal projection that removes
///      span{1, N_x, N_y, N_z}, the changes that would open the surface (2013, §5.4);
///   4. the similarity transforms lambda (one quaternion per vertex): the eigenvector of the smallest
///      eigenvalue of E = (D - rho)^* A (D - rho) by inverse iteration (2011, §5.2), until the eigen-residual
///      is below eigen_tolerance; with conjugate gradients shifted by the Rayleigh quotient less twice the
///      residual, and started from the last step's lambda;
///   5. the transformed edges and their divergence omega_i = -sum_j w_ij etilde_ij (2011, §5.3);
///   6. the new positions from the Poisson problem L xtilde = omega (one vertex pinned), translated back to
///      the old centroid and, optionally, scaled back to the old area.
///
/// Linear solves: a direct sparse Cholesky (Eigen on the CPU backend, cuSOLVER on the GPU) or Jacobi
/// conjugate gradients with their iterations on the device (engine/linalg/conjugate_gradient.hpp), chosen
/// per problem. For CG, E is kept as a quaternion matrix (4 values per pattern entry instead of the 16 of
/// its real form) and the three coordinates of the Poisson problem are solved together against the
/// unpinned Laplacian (its right-hand side has zero sum, so it lies in L's range). Double precision.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/exec/device_buffer.hpp"
#include "engine/linalg/aggregation_multigrid.hpp"
#include "engine/linalg/conjugate_gradient.hpp"
#include "engine/linalg/sparse_cholesky.hpp"
#include "engine/linalg/sparse_matrix.hpp"
#include "engine/mesh/device_mesh.hpp"
#include "engine/mesh/operator_pattern.hpp"
#include "engine/mesh/triangle_mesh.hpp"
#include "modules/curvature_flow/conformal_willmore_kernels.hpp"

namespace tissue::curvature_flow {

/// How a linear problem of the flow is solved.
enum class LinearSolver { direct, conjugate_gradient };

/// Parses "direct" or "cg". @throws std::invalid_argument otherwise.
LinearSolver linear_solver_from_string(const std::string& name);
std::string to_string(LinearSolver s);

/// The preconditioner of the conjugate-gradient solves: Jacobi, or one V-cycle of unsmoothed aggregation
/// multigrid (engine/linalg/aggregation_multigrid.hpp) on the mesh's vertex graph.
enum class Preconditioner { jacobi, multigrid };

/// Parses "jacobi" or "multigrid". @throws std::invalid_argument otherwise.
Preconditioner preconditioner_from_string(const std::string& name);
std::string to_string(Preconditioner p);

/// Settings of the flow.
struct ConformalWillmoreSettings {
  LinearSolver similarity_solver = LinearSolver::direct;      ///< for the inverse iteration on E
  LinearSolver positions_solver = LinearSolver::direct;       ///< for the Poisson problem of the positions
  Preconditioner preconditioner = Preconditioner::multigrid;  ///< of both problems' CG solves
  int inverse_iterations = 3;     ///< most solves per eigenvector (the seed converges in 3 or fewer)
  double eigen_tolerance = 2e-4;  ///< the inverse iteration stops once ||E l - mu l|| <= eigen_tolerance mu
                                  ///< (mu the Rayleigh quotient of lambda, ||.|| the 2-norm)
  double cg_tolerance = 1e-10;    ///< relative residual of the conjugate-gradient Poisson solve
  double similarity_tolerance = 1e-11;  ///< normwise backward error of the conjugate-gradient solves of the
                                        ///< inverse iteration (linalg::CgSettings): E is nearly singular
                                        ///< there, so its relative residual cannot reach 1e-10 in rounding
  double first_solve_tolerance = 3e-9;  ///< the same for the first solve of a step when it is unshifted:
                                        ///< it only has to bring lambda near enough for the next solves,
                                        ///< whose backward error sets the result's (bunny, steps 2-10:
                                        ///< 79-164 CG iterations on E against 80-256 at 1e-10)
  double eigen_shift = 1e-8;    ///< added to E's diagonal, relative to its mean diagonal: rounding grows
                                ///< like 1e-16 / shift, the inverse iteration's error like shift / gap
  int start_extrapolation = 2;  ///< the CG inverse iteration starts from the last steps' transforms
                                ///< extrapolated in time by a polynomial of this degree (0: the last
                                ///< step's; 1: 2 l_n - l_n-1; 2: 3 l_n - 3 l_n-1 + l_n-2); E changes
                                ///< smoothly along the flow, and a start nearer its eigenvector shortens
                                ///< the solves (bunny: about 260 -> 110 CG iterations per step)
  bool preserve_area = true;    ///< scale each new surface back to the area before the step
};

/// The sparsity pattern shared by the cotangent Laplacian and the Dirac operator, with the face corners
/// each entry's assembly thread gathers from (engine/mesh/operator_pattern.hpp; the flow takes it from its
/// mesh::DeviceMesh).
using mesh::operator_pattern;
using mesh::OperatorPattern;

/// Scalar measures of the current surface.
struct SurfaceMeasures {
  double area = 0.0;      ///< total area [length^2]
  double willmore = 0.0;  ///< W = sum_i M_i H_i^2 [dimensionless]
  double volume = 0.0;    ///< enclosed volume (divergence theorem) [length^3]
};

/// What the last step's solvers did.
struct StepReport {
  int similarity_iterations = 0;  ///< conjugate-gradient iterations summed over the inverse iteration
  int positions_iterations = 0;   ///< of the one solve for the three coordinates
  int inverse_iterations = 0;     ///< solves of the inverse iteration
  double eigenvalue = 0.0;        ///< Rayleigh quotient of lambda for E (shift removed)
  double eigen_residual = 0.0;    ///< ||E lambda - mu lambda|| / (mu ||lambda||), mu with the shift
};

/// The flow of one closed mesh on the active backend.
class ConformalWillmoreFlow {
 public:
  /// The flow is meant for closed surfaces (the constraints of step 3 are theirs); on a mesh with boundary
  /// (the Stanford bunny's holes) the boundary is free: natural boundary conditions of the operators.
  /// The flow takes from `mesh` (a valid mesh, mesh::validate) its operator pattern and faces on the device
  /// (mesh::DeviceMesh::require_device_operator_pattern, require_device_topology) and moves the mesh's
  /// device positions (require_device_positions), calling positions_changed() whenever it does, so other
  /// users of the mesh see the new surface.
  /// @throws std::invalid_argument for bad settings.
  ConformalWillmoreFlow(std::shared_ptr<mesh::DeviceMesh> mesh, const ConformalWillmoreSettings& settings);
  /// The same on a mesh::DeviceMesh of its own over a copy of `mesh`.
  /// @throws InputError for an invalid mesh; std::invalid_argument for bad settings.
  ConformalWillmoreFlow(const mesh::TriangleMesh& mesh, const ConformalWillmoreSettings& settings);

  /// One flow step of time step tau > 0 (steps 1-6 above). @throws NumericalError when a solve fails.
  void step(double tau);

  // The stages of step(), public for the benchmark and the tests, in the order step() runs them.
  /// Vertex masses and normals.
  void update_geometry();
  /// Fills laplacian() from the current positions.
  void assemble_laplacian();
  /// H per vertex and the sums of the projection; returns (and keeps for normalize_positions()) the
  /// measures of the surface.
  SurfaceMeasures mean_curvature();
  /// rho = -tau P(H) from the last mean_curvature().
  void project_curvature_change(double tau);
  /// Fills dirac() (E with the current rho).
  void assemble_dirac();
  /// lambda from E by inverse iteration.
  void similarity_transform();
  /// omega from lambda.
  void transformed_edges();
  /// New positions from omega (the direct solver pins laplacian(): assemble again before using it).
  void spin_positions();
  /// Translation and optional area rescaling of the new positions.
  void normalize_positions();

  /// Measures of the current surface (runs the first three stages).
  SurfaceMeasures measures();

  std::size_t vertex_count() const { return n_; }
  /// The faces (3 vertex indices per face).
  const std::vector<std::int32_t>& faces() const { return mesh_->faces(); }
  /// The mesh the flow moves (its positions on the device are the flow's).
  mesh::DeviceMesh& device_mesh() const { return *mesh_; }
  const OperatorPattern& pattern() const { return *pattern_; }
  const linalg::CsrMatrix& laplacian() const { return laplacian_; }
  /// E in real 4n x 4n form; assemble_dirac() fills it only for the direct similarity solver.
  const linalg::CsrMatrix& dirac() const { return dirac_; }
  /// E as a quaternion matrix on pattern() (4 values per entry), from the last assemble_dirac().
  QuaternionMatrix dirac_quaternions() const { return {offsets_, columns_, dirac_quaternions_.span()}; }
  /// E x for x with 4 n values (w x y z per vertex), by the quaternion matrix (the conjugate-gradient
  /// product); host vectors, for the tests.
  std::vector<double> dirac_product(const std::vector<double>& x);
  const StepReport& report() const { return report_; }
  const ConformalWillmoreSettings& settings() const { return settings_; }

  /// Sets rho directly (one value per vertex, [1/length]); for tests of the spin transformation.
  void set_curvature_change(const std::vector<double>& rho);
  /// Replaces the positions (3 n values, x y z interleaved per vertex).
  /// @throws std::invalid_argument for another size.
  void set_positions(const std::vector<double>& xyz);
  /// The multigrids' coarsest inverses are kept for up to 10 steps (linalg::AmgSettings::coarsest_refresh),
  /// so they are state the positions do not determine: preconditioner_state() gives it (for E, then L:
  /// the steps since the inversion and the coarsest operator's values it inverted;
  /// preconditioner_state_size() values, 0 with Jacobi or direct solvers), and set_preconditioner_state()
  /// makes the next step continue as the saved flow's next step would (a restart from a checkpoint continues
  /// exactly).
  /// @throws std::invalid_argument for a state of another size.
  std::vector<double> preconditioner_state() const;
  std::size_t preconditioner_state_size() const;
  /// Device memory of the multigrids' dense coarsest levels [bytes] (the bunny: about 26 MB).
  std::size_t preconditioner_bytes() const {
    return dirac_multigrid_.direct_bytes() + laplacian_multigrid_.direct_bytes();
  }
  void set_preconditioner_state(const std::vector<double>& state);
  /// Positions, 3 n values (x y z per vertex).
  std::vector<double> positions() const;
  /// Mean curvature per vertex from the last mean_curvature() [1/length].
  std::vector<double> mean_curvature_values() const { return h_.to_host(); }
  /// lambda, 4 n values (w x y z per vertex); zero before the first step.
  std::vector<double> similarity_values() const { return lambda_.to_host(); }
  /// The transforms of the two steps before the last (lambda_n-1, then lambda_n-2; 8 n values), from
  /// which with lambda the next CG inverse iteration's start is extrapolated; zeros where not known.
  std::vector<double> similarity_history() const;
  /// Replaces lambda (4 n values) and the history (8 n values as similarity_history() gives them, or none):
  /// the start of the next conjugate-gradient inverse iteration, as after the step that computed them (a
  /// restart from a checkpoint continues exactly); lambda all zeros: no start, the next iteration begins
  /// at lambda = 1. @throws std::invalid_argument for other sizes.
  void set_similarity_values(const std::vector<double>& lambda, const std::vector<double>& history = {});

 private:
  /// x = (E - sigma)^-1 b; `quotient` is b's Rayleigh quotient for E (the CG start is b / (quotient -
  /// sigma)), `tolerance` the CG's normwise backward error. The direct solver takes sigma = 0 (its
  /// factorization is of E) and solves exactly.
  void solve_dirac(Span<const double> b, Span<double> x, double sigma, double quotient, double tolerance);
  /// Throws NumericalError naming `what` unless r converged; returns its iterations.
  static int require_converged(const linalg::CgResult& r, const char* what);

  /// Checks the settings and the mesh, and makes a DeviceMesh over a copy of it.
  static std::shared_ptr<mesh::DeviceMesh> checked_mesh(const mesh::TriangleMesh& mesh,
                                                        const ConformalWillmoreSettings& settings);
  /// Tells the mesh that the flow moved its positions (drops its cached geometry; no device work).
  void positions_moved() { mesh_->positions_changed(); }

  std::shared_ptr<mesh::DeviceMesh> mesh_;  ///< faces, pattern, and the positions the flow moves
  ConformalWillmoreSettings settings_;
  std::size_t n_ = 0;
  const OperatorPattern* pattern_ = nullptr;  ///< mesh_'s
  DeviceBuffer<double>&x_, &y_, &z_;          ///< mesh_'s device positions [length]
  /// mesh_'s device connectivity and operator pattern (corner_offsets_: the topology's face_offsets)
  Span<const std::int32_t> faces_, diagonal_, offsets_, columns_, rows_, sources_, corner_offsets_,
      vertex_corners_;
  DeviceBuffer<double> mass_, normal_, h_, rho_, sums_, lambda_, omega_, work_, scratch_, dirac_quaternions_;
  linalg::CsrMatrix laplacian_, dirac_;
  linalg::SparseCholesky laplacian_factor_, dirac_factor_;
  linalg::ConjugateGradient<QuaternionMatrix> dirac_cg_;
  linalg::ConjugateGradient<linalg::CsrOperator<3>> laplacian_cg_;
  linalg::AggregationMultigrid<QuaternionMatrix> dirac_multigrid_;
  linalg::AggregationMultigrid<linalg::CsrOperator<3>> laplacian_multigrid_;
  std::vector<double> projection_;       ///< coefficients of H on {1, N_x, N_y, N_z}
  SurfaceMeasures before_;               ///< measures at the start of the step
  double shift_ = 0.0;                   ///< the shift on E's diagonal
  bool lambda_warm_ = false;             ///< lambda_ holds the last step's transforms (the CG start)
  DeviceBuffer<double> lambda_history_;  ///< 8 n: lambda_n-1, lambda_n-2 (start_extrapolation)
  int history_steps_ = 0;                ///< how many of them are known
  double dirac_norm_ = 0.0;              ///< ||E||_inf, for the backward error of the CG solves
  double centroid_before_[3] = {0.0, 0.0, 0.0};
  StepReport report_;
};

}  // namespace tissue::curvature_flow
