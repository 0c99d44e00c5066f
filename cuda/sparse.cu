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

}  // namespace

void csr_cholesky_solve(int rows, std::int64_t nonzeros, const std::int32_t* offsets,
                        const std::int32_t* columns, const double* values, const double* b, double* x) {
  thread_local cusolverSpHandle_t handle = [] {  // one per thread: each may have a stream of its own
    cusolverSpHandle_t h = nullptr;
    check(cusolverSpCreate(&h), "cusolverSpCreate");
    return h;
  }();
  thread_local cusparseMatDescr_t descr = [] {
    cusparseMatDescr_t d = nullptr;
    check(cusparseCreateMatDescr(&d), "cusparseCreateMatDescr");
    cusparseSetMatType(d, CUSPARSE_MATRIX_TYPE_GENERAL);
    cusparseSetMatIndexBase(d, CUSPARSE_INDEX_BASE_ZERO);
    return d;
  }();
  check(cusolverSpSetStream(handle, static_cast<cudaStream_t>(current_stream())), "cusolverSpSetStream");
  int singularity = -1;
  constexpr int kSymamd = 2;
  note_enqueue();
  check(cusolverSpDcsrlsvchol(handle, rows, static_cast<int>(nonzeros), descr, values, offsets, columns, b,
                              0.0, kSymamd, x, &singularity),
        "cusolverSpDcsrlsvchol");
  synchronize();
  if (singularity >= 0)
    throw NumericalError("sparse Cholesky: the matrix is not positive definite (pivot " +
                         std::to_string(singularity) + ")");
}

}  // namespace tissue::cuda
