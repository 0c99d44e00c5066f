#pragma once
/// @file sparse_cholesky.hpp
/// Direct solves with symmetric positive definite CSR matrices: Eigen's SimplicialLDLT (approximate
/// minimum degree ordering) on the CPU backend, whose symbolic analysis is kept while the sparsity pattern
/// stays the same and whose numeric factorization is reused for every right-hand side until the next
/// factorize(); cuSOLVER's sparse Cholesky on the CUDA backend (cuda/sparse.hpp), which factorizes inside
/// each solve.

#include <memory>

#include "engine/exec/span.hpp"
#include "engine/linalg/sparse_matrix.hpp"

namespace tissue::linalg {

class SparseCholesky {
 public:
  SparseCholesky();
  ~SparseCholesky();
  SparseCholesky(const SparseCholesky&) = delete;
  SparseCholesky& operator=(const SparseCholesky&) = delete;

  /// Factorizes A (kept by reference until the next call: A must outlive the solves).
  /// @throws NumericalError when A is not positive definite (CPU backend; the CUDA backend reports it
  /// from solve()).
  void factorize(const CsrMatrix& a);
  /// x = A^-1 b for the last factorized A; b and x on the active backend, A.rows entries each.
  /// @throws std::logic_error before factorize(); NumericalError as above.
  void solve(Span<const double> b, Span<double> x);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tissue::linalg
