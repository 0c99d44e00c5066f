#pragma once
/// @file dense.hpp
/// Dense cuSOLVER calls of the CUDA backend (plain C++ interface; implemented in dense.cu): the inverse of
/// a symmetric positive definite matrix by Cholesky. Memory is owned by the caller (engine/linalg), so this
/// layer allocates nothing; the library handle is created once per process.
///
/// Matrices are square, double precision, column-major, in device memory.

#include <cstddef>

namespace tissue::cuda {

/// Doubles of workspace dense_cholesky_inverse needs for an n x n matrix at `a`.
/// @throws BackendError on a cuSOLVER failure.
std::size_t dense_cholesky_inverse_workspace(int n, double* a);

/// The lower triangle of a (n x n, symmetric positive definite) replaced by that of A^-1: Cholesky
/// factorization A = L L^T (cusolverDnDpotrf), then L^-T L^-1 (cusolverDnDpotri), on the engine's stream.
/// The upper triangle is left as it was. info: two ints of device memory, the factorization's and the
/// inversion's: 0, or i > 0 when the leading minor of order i is not positive definite (info[0]) or the
/// factor's i-th diagonal entry is zero (info[1]). Asynchronous. @throws BackendError when a call is
/// refused.
void dense_cholesky_inverse(int n, double* a, double* work, std::size_t work_size, int* info);

}  // namespace tissue::cuda
