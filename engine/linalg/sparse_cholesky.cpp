// Direct sparse solves: Eigen on the CPU backend, cuSOLVER on the CUDA backend (sparse_cholesky.hpp).
#include "engine/linalg/sparse_cholesky.hpp"

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"

#if defined(TISSUE_BACKEND_CUDA)
#include "cuda/sparse.hpp"
#endif

namespace tissue::linalg {

struct SparseCholesky::Impl {
  using Matrix = Eigen::SparseMatrix<double, Eigen::ColMajor, std::int32_t>;
  Eigen::SimplicialLDLT<Matrix, Eigen::Lower, Eigen::AMDOrdering<std::int32_t>> ldlt;
  std::vector<std::int32_t> analysed_offsets, analysed_columns;  ///< the pattern ldlt was analysed for
  const CsrMatrix* matrix = nullptr;
  Matrix host;
};

SparseCholesky::SparseCholesky() : impl_(std::make_unique<Impl>()) {}
SparseCholesky::~SparseCholesky() = default;

void SparseCholesky::factorize(const CsrMatrix& a) {
  impl_->matrix = &a;
#if defined(TISSUE_BACKEND_CUDA)
  if (exec::backend() == exec::Backend::cuda) return;  // cuSOLVER factorizes in solve()
#endif
  // A symmetric matrix's CSR arrays are its CSC arrays: map them without copying
  const Eigen::Map<const Impl::Matrix> map(a.rows, a.rows, static_cast<std::int32_t>(a.nonzeros()),
                                           a.offsets.data(), a.columns.data(), a.values.data());
  const auto n = static_cast<std::size_t>(a.rows);
  const bool same_pattern =
      impl_->analysed_offsets.size() == n + 1 &&
      std::equal(impl_->analysed_offsets.begin(), impl_->analysed_offsets.end(), a.offsets.data()) &&
      impl_->analysed_columns.size() == a.nonzeros() &&
      std::equal(impl_->analysed_columns.begin(), impl_->analysed_columns.end(), a.columns.data());
  if (!same_pattern) {
    impl_->ldlt.analyzePattern(map);
    impl_->analysed_offsets.assign(a.offsets.data(), a.offsets.data() + n + 1);
    impl_->analysed_columns.assign(a.columns.data(), a.columns.data() + a.nonzeros());
  }
  impl_->ldlt.factorize(map);
  if (impl_->ldlt.info() != Eigen::Success || (impl_->ldlt.vectorD().array() <= 0.0).any())
    throw NumericalError("sparse Cholesky (Eigen SimplicialLDLT): the matrix is not positive definite");
}

void SparseCholesky::solve(Span<const double> b, Span<double> x) {
  const CsrMatrix* a = impl_->matrix;
  if (a == nullptr) throw std::logic_error("SparseCholesky::solve before factorize");
#if defined(TISSUE_BACKEND_CUDA)
  if (exec::backend() == exec::Backend::cuda) {
    cuda::csr_cholesky_solve(a->rows, static_cast<std::int64_t>(a->nonzeros()), a->offsets.data(),
                             a->columns.data(), a->values.data(), b.data(), x.data());
    return;
  }
#endif
  const Eigen::Map<const Eigen::VectorXd> rhs(b.data(), a->rows);
  Eigen::Map<Eigen::VectorXd> out(x.data(), a->rows);
  out = impl_->ldlt.solve(rhs);
}

}  // namespace tissue::linalg
