#pragma once
/// @file conjugate_gradient.hpp
/// Jacobi-preconditioned conjugate gradients for symmetric positive definite CSR matrices on the active
/// backend (Saad, "Iterative methods for sparse linear systems", 2nd ed., Algorithm 9.1), with the matrix
/// product from linalg::SparseProduct (cuSPARSE on the GPU). Vectors stay on the device; the scalars of
/// each iteration are reduced to the host (one synchronisation per dot product).

#include <cstdint>

#include "engine/exec/device_buffer.hpp"
#include "engine/linalg/sparse_matrix.hpp"

namespace tissue::linalg {

/// Stopping rule: ||b - A x||_2 <= relative_tolerance ||b||_2, or max_iterations.
struct CgSettings {
  double relative_tolerance = 1e-10;
  int max_iterations = 20000;
};

/// What a solve did.
struct CgResult {
  int iterations = 0;
  double relative_residual = 0.0;  ///< ||b - A x|| / ||b|| at the end (0 for b = 0)
  bool converged = false;
};

/// A solver that keeps its work vectors across calls (no allocation once warm).
class ConjugateGradient {
 public:
  /// Solves A x = b starting from the x given (a warm start). A must be symmetric positive definite with
  /// a positive diagonal (the Jacobi preconditioner); b and x have A.rows entries on the active backend.
  /// Returns unconverged results instead of throwing: the caller decides.
  /// @throws NumericalError when a breakdown (p . A p <= 0 or NaN) shows A is not positive definite.
  CgResult solve(const CsrMatrix& a, Span<const double> b, Span<double> x, const CgSettings& settings);

 private:
  DeviceBuffer<double> r_, z_, p_, ap_, inverse_diagonal_, scratch_;
  SparseProduct product_;
};

}  // namespace tissue::linalg
