#pragma once
/// @file sparse.hpp
/// cuSOLVER calls of the CUDA backend (plain C++ interface; implemented in sparse.cu): a direct sparse
/// Cholesky solve. Sparse products are the engine's own kernels (engine/linalg/conjugate_gradient.hpp).
/// Memory is owned by the caller (engine/linalg), so this layer allocates nothing; the library handles are
/// created once per process.
///
/// Matrices are square, double precision, zero-based int32 CSR in device memory.

#include <cstddef>
#include <cstdint>

namespace tissue::cuda {

/// Solves A x = b for a symmetric positive definite A by sparse Cholesky on the device
/// (cusolverSpDcsrlsvchol with the symmetric approximate minimum degree ordering; the factorization is
/// redone in every call: the toolkit's reusable factorization API is deprecated in favour of cuDSS, which
/// CUDA 13 does not ship). Synchronous. @throws NumericalError when A is not positive definite
/// (cuSOLVER's `singularity`), BackendError on other failures.
void csr_cholesky_solve(int rows, std::int64_t nonzeros, const std::int32_t* offsets,
                        const std::int32_t* columns, const double* values, const double* b, double* x);

}  // namespace tissue::cuda
