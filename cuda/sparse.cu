// cuSPARSE / cuSOLVER wrappers of the CUDA backend (see sparse.hpp).
#define DISABLE_CUSOLVER_DEPRECATED  // csrlsvchol: deprecated for cuDSS, which the toolkit does not ship
#include <cusolverSp.h>
#include <cusparse.h>

#include <string>

#include "cuda/runtime.hpp"
#include "cuda/sparse.hpp"
#include "engine/exec/error.hpp"

namespace tissue::cuda {

namespace {

void check(cusparseStatus_t status, const char* what) {
  if (status != CUSPARSE_STATUS_SUCCESS)
    throw BackendError(std::string("cuSPARSE error in ") + what + ": " + cusparseGetErrorString(status));
}
void check(cusolverStatus_t status, const char* what) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw BackendError(std::string("cuSOLVER error in ") + what + ": status " +
                       std::to_string(static_cast<int>(status)));
}

/// The process's cuSPARSE handle, bound to the engine stream at every call.
cusparseHandle_t sparse_handle() {
  static cusparseHandle_t handle = [] {
    cusparseHandle_t h = nullptr;
    check(cusparseCreate(&h), "cusparseCreate");
    return h;
  }();
  check(cusparseSetStream(handle, static_cast<cudaStream_t>(current_stream())), "cusparseSetStream");
  return handle;
}

/// The descriptors of one product, destroyed on scope exit.
struct SpmvDescriptors {
  cusparseSpMatDescr_t a = nullptr;
  cusparseDnVecDescr_t x = nullptr, y = nullptr;
  SpmvDescriptors(int rows, std::int64_t nonzeros, const std::int32_t* offsets, const std::int32_t* columns,
                  const double* values, const double* xv, double* yv) {
    check(cusparseCreateCsr(&a, rows, rows, nonzeros, const_cast<std::int32_t*>(offsets),
                            const_cast<std::int32_t*>(columns), const_cast<double*>(values),
                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
          "cusparseCreateCsr");
    check(cusparseCreateDnVec(&x, rows, const_cast<double*>(xv), CUDA_R_64F), "cusparseCreateDnVec");
    check(cusparseCreateDnVec(&y, rows, yv, CUDA_R_64F), "cusparseCreateDnVec");
  }
  ~SpmvDescriptors() {
    if (y) cusparseDestroyDnVec(y);
    if (x) cusparseDestroyDnVec(x);
    if (a) cusparseDestroySpMat(a);
  }
  SpmvDescriptors(const SpmvDescriptors&) = delete;
  SpmvDescriptors& operator=(const SpmvDescriptors&) = delete;
};

}  // namespace

std::size_t csr_spmv_buffer_bytes(int rows, std::int64_t nonzeros, const std::int32_t* offsets,
                                  const std::int32_t* columns, const double* values) {
  SpmvDescriptors d(rows, nonzeros, offsets, columns, values, nullptr, nullptr);
  const double one = 1.0, zero = 0.0;
  std::size_t bytes = 0;
  check(cusparseSpMV_bufferSize(sparse_handle(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, d.a, d.x, &zero, d.y,
                                CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, &bytes),
        "cusparseSpMV_bufferSize");
  return bytes;
}

void csr_spmv(int rows, std::int64_t nonzeros, const std::int32_t* offsets, const std::int32_t* columns,
              const double* values, const double* x, double* y, void* buffer, std::size_t /*buffer_bytes*/) {
  SpmvDescriptors d(rows, nonzeros, offsets, columns, values, x, y);
  const double one = 1.0, zero = 0.0;
  check(cusparseSpMV(sparse_handle(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, d.a, d.x, &zero, d.y,
                     CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, buffer),
        "cusparseSpMV");
}

void csr_cholesky_solve(int rows, std::int64_t nonzeros, const std::int32_t* offsets,
                        const std::int32_t* columns, const double* values, const double* b, double* x) {
  static cusolverSpHandle_t handle = [] {
    cusolverSpHandle_t h = nullptr;
    check(cusolverSpCreate(&h), "cusolverSpCreate");
    return h;
  }();
  static cusparseMatDescr_t descr = [] {
    cusparseMatDescr_t d = nullptr;
    check(cusparseCreateMatDescr(&d), "cusparseCreateMatDescr");
    cusparseSetMatType(d, CUSPARSE_MATRIX_TYPE_GENERAL);
    cusparseSetMatIndexBase(d, CUSPARSE_INDEX_BASE_ZERO);
    return d;
  }();
  check(cusolverSpSetStream(handle, static_cast<cudaStream_t>(current_stream())), "cusolverSpSetStream");
  int singularity = -1;
  constexpr int kSymamd = 2;
  check(cusolverSpDcsrlsvchol(handle, rows, static_cast<int>(nonzeros), descr, values, offsets, columns, b,
                              0.0, kSymamd, x, &singularity),
        "cusolverSpDcsrlsvchol");
  synchronize();
  if (singularity >= 0)
    throw NumericalError("sparse Cholesky: the matrix is not positive definite (pivot " +
                         std::to_string(singularity) + ")");
}

}  // namespace tissue::cuda
