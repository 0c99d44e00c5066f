#pragma once
/// @file sparse.hpp
/// cuSPARSE and cuSOLVER calls of the CUDA backend (plain C++ interface; implemented in sparse.cu): the
/// product of a CSR matrix with a vector, and a direct sparse Cholesky solve. Memory is owned by the caller
/// (engine/linalg), so this layer allocates nothing; the library handles are created once per process.
///
/// Matrices are square, double precision, zero-based int32 CSR in device memory.

#include <cstddef>
#include <cstdint>

namespace tissue::cuda {

/// Bytes of workspace csr_spmv needs for this matrix (cusparseSpMV_bufferSize, CUSPARSE_SPMV_CSR_ALG1).
std::size_t csr_spmv_buffer_bytes(int rows, std::int64_t nonzeros, const std::int32_t* offsets,
                                  const std::int32_t* columns, const double* values);

/// y = A x (cusparseSpMV, CSR, deterministic algorithm ALG1) on the engine stream, asynchronous.
/// `buffer` holds at least csr_spmv_buffer_bytes bytes. @throws BackendError on failure.
void csr_spmv(int rows, std::int64_t nonzeros, const std::int32_t* offsets, const std::int32_t* columns,
              const double* values, const double* x, double* y, void* buffer, std::size_t buffer_bytes);

/// Solves A x = b for a symmetric positive definite A by sparse Cholesky on the device
/// (cusolverSpDcsrlsvchol with the symmetric approximate minimum degree ordering; the factorization is
/// redone in every call: the toolkit's reusable factorization API is deprecated in favour of cuDSS, which
/// CUDA 13 does not ship). Synchronous. @throws NumericalError when A is not positive definite
/// (cuSOLVER's `singularity`), BackendError on other failures.
void csr_cholesky_solve(int rows, std::int64_t nonzeros, const std::int32_t* offsets,
                        const std::int32_t* columns, const double* values, const double* b, double* x);

}  // namespace tissue::cuda
