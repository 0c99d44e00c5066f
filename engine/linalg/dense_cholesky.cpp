// Dense Cholesky inverses: Eigen on the CPU backend, cuSOLVER on the CUDA backend (dense_cholesky.hpp).
#include "engine/linalg/dense_cholesky.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include <stdexcept>
#include <string>

#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"

#if defined(TISSUE_BACKEND_CUDA)
#include "cuda/dense.hpp"
#endif

namespace tissue::linalg {

void DenseCholeskyInverse::prepare(std::size_t n, Span<double> a) {
  if (a.size() != n * n) throw std::invalid_argument("DenseCholeskyInverse::prepare: n * n values expected");
#if defined(TISSUE_BACKEND_CUDA)
  if (exec::backend() == exec::Backend::cuda && n > 0) {
    set_identity(n, a);
    invert(n, a);
  }
#endif
}

void DenseCholeskyInverse::invert(std::size_t n, Span<double> a) {
  if (a.size() != n * n) throw std::invalid_argument("DenseCholeskyInverse::invert: n * n values expected");
  if (n == 0) return;
#if defined(TISSUE_BACKEND_CUDA)
  if (exec::backend() == exec::Backend::cuda) {
    const int order = static_cast<int>(n);
    work_.ensure(cuda::dense_cholesky_inverse_workspace(order, a.data()));
    info_.ensure(2);
    cuda::dense_cholesky_inverse(order, a.data(), work_.data(), work_.size(), info_.data());
    std::int32_t info[2] = {0, 0};
    info_.download(info, 2);
    if (info[0] != 0 || info[1] != 0)
      throw NumericalError("dense Cholesky (cuSOLVER): the matrix is not positive definite (minor " +
                           std::to_string(info[0] != 0 ? info[0] : info[1]) + ")");
    copy_lower_to_upper(n, a);
    return;
  }
#endif
  const auto size = static_cast<Eigen::Index>(n);
  Eigen::Map<Eigen::MatrixXd> m(a.data(), size, size);
  const Eigen::LLT<Eigen::MatrixXd> llt(m);
  if (llt.info() != Eigen::Success)
    throw NumericalError("dense Cholesky (Eigen LLT): the matrix is not positive definite");
  m = llt.solve(Eigen::MatrixXd::Identity(size, size));
  copy_lower_to_upper(n, a);  // exactly symmetric, as on the CUDA backend
}

}  // namespace tissue::linalg
