#pragma once
/// @file sparse_matrix.hpp
/// Square sparse matrices in compressed sparse rows on the active backend and vector helpers for the
/// solvers (engine/linalg/conjugate_gradient.hpp, engine/linalg/sparse_cholesky.hpp).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/exec/device_buffer.hpp"
#include "engine/exec/span.hpp"

namespace tissue::linalg {

/// A rows x rows matrix in zero-based CSR: the entries of row i are columns[offsets[i] .. offsets[i + 1])
/// (ascending) with values at the same positions. Double precision; int32 indices (nonzeros < 2^31).
struct CsrMatrix {
  std::int32_t rows = 0;
  DeviceBuffer<std::int32_t> offsets;  ///< rows + 1
  DeviceBuffer<std::int32_t> columns;  ///< nonzeros
  DeviceBuffer<double> values;         ///< nonzeros

  std::size_t nonzeros() const { return columns.size(); }
  /// Allocates the pattern from host arrays; values are zeroed.
  void set_pattern(std::int32_t n, const std::vector<std::int32_t>& row_offsets,
                   const std::vector<std::int32_t>& column_indices);
  /// A dense row-major host copy (tests and small matrices only).
  std::vector<double> to_dense() const;
};

/// Unknowns per block of the solvers' block kernels: the conjugate-gradient kernels and the multigrid
/// kernel that fuses r . z write one partial sum per block of this many consecutive unknowns.
constexpr std::size_t kSolverBlockUnknowns = 128;

/// Reads a plain vector: the `x(k)` of an operator's row(j, x), and the `x(k, e)` of its item_partial
/// (e: the pattern entry whose column k belongs to, unused here) (conjugate_gradient.hpp).
struct VectorRead {
  const double* v;
  TISSUE_HD double operator()(std::size_t j) const { return v[j]; }
  TISSUE_HD double operator()(std::size_t j, std::int32_t) const { return v[j]; }
};

/// x . y over the first x.size() entries, with `scratch` (grown as needed) for the products.
/// Deterministic for a given backend and size. Synchronises on the CUDA backend.
double dot(Span<const double> x, Span<const double> y, DeviceBuffer<double>& scratch);

}  // namespace tissue::linalg
