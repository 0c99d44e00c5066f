// Dense cuSOLVER wrappers of the CUDA backend (see dense.hpp).
#include <cusolverDn.h>

#include <algorithm>
#include <string>

#include "cuda/dense.hpp"
#include "cuda/runtime.hpp"
#include "engine/exec/error.hpp"

namespace tissue::cuda {

namespace {

void check(cusolverStatus_t status, const char* what) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw BackendError(std::string("cuSOLVER error in ") + what + ": status " +
                       std::to_string(static_cast<int>(status)));
}

cusolverDnHandle_t handle() {
  thread_local cusolverDnHandle_t h = [] {  // one per thread: each thread may have a stream of its own
    cusolverDnHandle_t created = nullptr;
    check(cusolverDnCreate(&created), "cusolverDnCreate");
    return created;
  }();
  check(cusolverDnSetStream(h, static_cast<cudaStream_t>(current_stream())), "cusolverDnSetStream");
  return h;
}

}  // namespace

std::size_t dense_cholesky_inverse_workspace(int n, double* a) {
  int factor = 0, inverse = 0;
  check(cusolverDnDpotrf_bufferSize(handle(), CUBLAS_FILL_MODE_LOWER, n, a, n, &factor),
        "cusolverDnDpotrf_bufferSize");
  check(cusolverDnDpotri_bufferSize(handle(), CUBLAS_FILL_MODE_LOWER, n, a, n, &inverse),
        "cusolverDnDpotri_bufferSize");
  return static_cast<std::size_t>(std::max(factor, inverse));
}

void dense_cholesky_inverse(int n, double* a, double* work, std::size_t work_size, int* info) {
  const cusolverDnHandle_t h = handle();
  note_enqueue();
  const int lwork = static_cast<int>(work_size);
  check(cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, work, lwork, info), "cusolverDnDpotrf");
  // after a failed factorization potri works on a partial factor: harmless, the caller reads info[0]
  check(cusolverDnDpotri(h, CUBLAS_FILL_MODE_LOWER, n, a, n, work, lwork, info + 1), "cusolverDnDpotri");
}

}  // namespace tissue::cuda
