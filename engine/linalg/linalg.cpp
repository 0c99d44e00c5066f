// Sparse matrix products and conjugate gradients on the active backend. Compiled as CUDA in CUDA builds.
#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/error.hpp"
#include "engine/exec/parallel_for.hpp"
#include "engine/linalg/conjugate_gradient.hpp"
#include "engine/linalg/sparse_matrix.hpp"

#if defined(TISSUE_BACKEND_CUDA)
#include "cuda/sparse.hpp"
#endif

namespace tissue::linalg {

namespace {

/// y_i = sum_k A_ik x_k, one row per index (the CPU backend's product).
struct CsrRowProduct {
  Span<const std::int32_t> offsets, columns;
  Span<const double> values, x;
  Span<double> y;
  TISSUE_HD void operator()(std::size_t i) const {
    double sum = 0.0;
    for (std::int32_t k = offsets[i]; k < offsets[i + 1]; ++k)
      sum += values[static_cast<std::size_t>(k)] *
             x[static_cast<std::size_t>(columns[static_cast<std::size_t>(k)])];
    y[i] = sum;
  }
};

struct Products {
  Span<const double> x, y;
  Span<double> out;
  TISSUE_HD void operator()(std::size_t i) const { out[i] = x[i] * y[i]; }
};

/// 1 / A_ii per row (0 where the row has no positive diagonal: the solve then reports a breakdown).
struct InverseDiagonal {
  Span<const std::int32_t> offsets, columns;
  Span<const double> values;
  Span<double> inverse;
  TISSUE_HD void operator()(std::size_t i) const {
    double d = 0.0;
    for (std::int32_t k = offsets[i]; k < offsets[i + 1]; ++k)
      if (static_cast<std::size_t>(columns[static_cast<std::size_t>(k)]) == i)
        d = values[static_cast<std::size_t>(k)];
    inverse[i] = d > 0.0 ? 1.0 / d : 0.0;
  }
};

/// r = b - A x, z = M^-1 r, p = z; products r.r and r.z into scratch[i], scratch[n + i].
struct CgStart {
  Span<const double> b, ax, inverse_diagonal;
  Span<double> r, z, p, scratch;
  TISSUE_HD void operator()(std::size_t i) const {
    const double ri = b[i] - ax[i];
    const double zi = inverse_diagonal[i] * ri;
    r[i] = ri;
    z[i] = zi;
    p[i] = zi;
    scratch[i] = ri * ri;
    scratch[r.size() + i] = ri * zi;
  }
};

/// x += alpha p, r -= alpha A p, z = M^-1 r; products r.r and r.z into scratch.
struct CgUpdate {
  double alpha;
  Span<const double> p, ap, inverse_diagonal;
  Span<double> x, r, z, scratch;
  TISSUE_HD void operator()(std::size_t i) const {
    x[i] += alpha * p[i];
    const double ri = r[i] - alpha * ap[i];
    const double zi = inverse_diagonal[i] * ri;
    r[i] = ri;
    z[i] = zi;
    scratch[i] = ri * ri;
    scratch[r.size() + i] = ri * zi;
  }
};

/// p = z + beta p.
struct CgDirection {
  double beta;
  Span<const double> z;
  Span<double> p;
  TISSUE_HD void operator()(std::size_t i) const { p[i] = z[i] + beta * p[i]; }
};

}  // namespace

void CsrMatrix::set_pattern(std::int32_t n, const std::vector<std::int32_t>& row_offsets,
                            const std::vector<std::int32_t>& column_indices) {
  if (row_offsets.size() != static_cast<std::size_t>(n) + 1 ||
      static_cast<std::size_t>(row_offsets.back()) != column_indices.size())
    throw std::invalid_argument("CsrMatrix::set_pattern: offsets and columns disagree");
  rows = n;
  offsets.assign(row_offsets);
  columns.assign(column_indices);
  values.resize(column_indices.size());
  values.zero();
}

std::vector<double> CsrMatrix::to_dense() const {
  const auto n = static_cast<std::size_t>(rows);
  const auto o = offsets.to_host();
  const auto c = columns.to_host();
  const auto v = values.to_host();
  std::vector<double> dense(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (auto k = static_cast<std::size_t>(o[i]); k < static_cast<std::size_t>(o[i + 1]); ++k)
      dense[i * n + static_cast<std::size_t>(c[k])] += v[k];
  return dense;
}

void SparseProduct::apply(const CsrMatrix& a, Span<const double> x, Span<double> y) {
  const auto n = static_cast<std::size_t>(a.rows);
#if defined(TISSUE_BACKEND_CUDA)
  if (exec::backend() == exec::Backend::cuda) {
    const auto nnz = static_cast<std::int64_t>(a.nonzeros());
    if (buffer_.size() == 0) {
      const std::size_t bytes =
          cuda::csr_spmv_buffer_bytes(a.rows, nnz, a.offsets.data(), a.columns.data(), a.values.data());
      buffer_.resize(bytes > 0 ? bytes : 1);
    }
    cuda::csr_spmv(a.rows, nnz, a.offsets.data(), a.columns.data(), a.values.data(), x.data(), y.data(),
                   buffer_.data(), buffer_.size());
    return;
  }
#endif
  exec::parallel_for(n, CsrRowProduct{a.offsets.span(), a.columns.span(), a.values.span(), x, y});
}

double dot(Span<const double> x, Span<const double> y, DeviceBuffer<double>& scratch) {
  scratch.ensure(x.size());
  exec::parallel_for(x.size(), Products{x, y, scratch.span()});
  return exec::sum(Span<const double>(scratch.data(), x.size()));
}

CgResult ConjugateGradient::solve(const CsrMatrix& a, Span<const double> b, Span<double> x,
                                  const CgSettings& settings) {
  const auto n = static_cast<std::size_t>(a.rows);
  for (auto* v : {&r_, &z_, &p_, &ap_, &inverse_diagonal_}) v->ensure(n);
  scratch_.ensure(2 * n);
  const Span<double> r(r_.data(), n), z(z_.data(), n), p(p_.data(), n), ap(ap_.data(), n),
      dinv(inverse_diagonal_.data(), n), scratch(scratch_.data(), 2 * n);
  const auto sum_half = [&](std::size_t h) {
    return exec::sum(Span<const double>(scratch_.data() + h * n, n));
  };

  CgResult result;
  const double b_norm = std::sqrt(dot(b, b, ap_));
  if (b_norm == 0.0) {
    exec::fill(x, 0.0);
    result.converged = true;
    return result;
  }
  exec::parallel_for(n, InverseDiagonal{a.offsets.span(), a.columns.span(), a.values.span(), dinv});
  product_.apply(a, x, ap);
  exec::parallel_for(n, CgStart{b, ap, dinv, r, z, p, scratch});
  double rr = sum_half(0), rz = sum_half(1);
  const double target = settings.relative_tolerance * b_norm;
  while (true) {
    result.relative_residual = std::sqrt(rr) / b_norm;
    if (std::sqrt(rr) <= target) {
      result.converged = true;
      break;
    }
    if (result.iterations >= settings.max_iterations) break;
    product_.apply(a, p, ap);
    const double pap = dot(p, ap, scratch_);
    if (!(pap > 0.0))
      throw NumericalError("conjugate gradients broke down (p . A p = " + std::to_string(pap) +
                           "): the matrix is not positive definite");
    const double alpha = rz / pap;
    exec::parallel_for(n, CgUpdate{alpha, p, ap, dinv, x, r, z, scratch});
    rr = sum_half(0);
    const double rz_next = sum_half(1);
    exec::parallel_for(n, CgDirection{rz_next / rz, z, p});
    rz = rz_next;
    ++result.iterations;
  }
  return result;
}

}  // namespace tissue::linalg
