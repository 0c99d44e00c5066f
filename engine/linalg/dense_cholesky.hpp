#pragma once
/// @file dense_cholesky.hpp
/// The inverse of a small dense symmetric positive definite matrix on the active backend, by Cholesky:
/// cuSOLVER's potrf and potri on the CUDA backend (cuda/dense.hpp), Eigen's LLT on the CPU backend. Used
/// for the coarsest level of a multigrid hierarchy (aggregation_multigrid.hpp), whose few hundred nodes
/// are solved exactly by one dense product per cycle.

#include <cstddef>
#include <cstdint>

#include "engine/exec/device_buffer.hpp"
#include "engine/exec/span.hpp"

namespace tissue::linalg {

/// Copies the lower triangle of the n x n column-major matrix a onto its upper triangle (a kernel on the
/// active backend; asynchronous on CUDA).
void copy_lower_to_upper(std::size_t n, Span<double> a);

/// a = I, n x n (a kernel on the active backend; asynchronous on CUDA).
void set_identity(std::size_t n, Span<double> a);

/// Keeps the workspace of repeated inversions of matrices of one size.
class DenseCholeskyInverse {
 public:
  /// a (n x n, column-major, symmetric positive definite, n * n doubles on the active backend) is replaced
  /// by A^-1, both triangles. Synchronous (it reads whether the factorization succeeded).
  /// @throws NumericalError when A is not positive definite; BackendError on a library failure.
  void invert(std::size_t n, Span<double> a);
  /// On the CUDA backend, sets up the library and the workspace for n x n matrices by inverting the
  /// identity in a (n * n doubles, overwritten), so that the first invert() of a run does not pay for them:
  /// the solver library's start and the loading of its kernels take tenths of a second. Nothing on the CPU
  /// backend. Optional. @throws BackendError on a library failure.
  void prepare(std::size_t n, Span<double> a);

 private:
  DeviceBuffer<double> work_;
  DeviceBuffer<std::int32_t> info_;
};

}  // namespace tissue::linalg
