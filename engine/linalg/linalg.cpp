// CSR matrices and vector helpers on the active backend. Compiled as CUDA in CUDA builds.
#include <stdexcept>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/parallel_for.hpp"
#include "engine/linalg/dense_cholesky.hpp"
#include "engine/linalg/sparse_matrix.hpp"

namespace tissue::linalg {

namespace {

struct Products {
  Span<const double> x, y;
  Span<double> out;
  TISSUE_HD void operator()(std::size_t i) const { out[i] = x[i] * y[i]; }
};

/// a_ij = a_ji for i < j, one entry per index t = i + j n (column-major; the writes coalesce).
struct LowerToUpper {
  std::size_t n;
  Span<double> a;
  TISSUE_HD void operator()(std::size_t t) const {
    const std::size_t i = t % n, j = t / n;
    if (i < j) a[t] = a[j + i * n];
  }
};

/// a = I, one entry per index t = i + j n.
struct Identity {
  std::size_t n;
  Span<double> a;
  TISSUE_HD void operator()(std::size_t t) const { a[t] = t % (n + 1) == 0 ? 1.0 : 0.0; }
};

}  // namespace

void set_identity(std::size_t n, Span<double> a) {
  if (a.size() != n * n) throw std::invalid_argument("set_identity: n * n values expected");
  exec::parallel_for(n * n, Identity{n, a});
}

void copy_lower_to_upper(std::size_t n, Span<double> a) {
  if (a.size() != n * n) throw std::invalid_argument("copy_lower_to_upper: n * n values expected");
  exec::parallel_for(n * n, LowerToUpper{n, a});
}

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

double dot(Span<const double> x, Span<const double> y, DeviceBuffer<double>& scratch) {
  scratch.ensure(x.size());
  exec::parallel_for(x.size(), Products{x, y, scratch.span()});
  return exec::sum(Span<const double>(scratch.data(), x.size()));
}

}  // namespace tissue::linalg
