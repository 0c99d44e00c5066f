#include "engine/domain/centre_moves.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/parallel_for.hpp"

namespace tissue::domain {
namespace {

/// Squared x-y distance of each point from where it was recorded; a NaN counts as infinite.
struct SquaredMoves {
  Span<const float> x, y, x0, y0;
  Span<float> out;
  TISSUE_HD void operator()(std::size_t c) const {
    const float dx = x[c] - x0[c], dy = y[c] - y0[c];
    const float d2 = dx * dx + dy * dy;
    out[c] = d2 == d2 ? d2 : 3.0e38f;
  }
};

}  // namespace

void CentreMoves::reset(Span<const float> x, Span<const float> y, std::size_t n) {
  x0_.resize(n);
  y0_.resize(n);
  moved_.resize(n);
  exec::copy(Span<const float>(x.data(), n), x0_.span(), n);
  exec::copy(Span<const float>(y.data(), n), y0_.span(), n);
}

double CentreMoves::largest(Span<const float> x, Span<const float> y, std::size_t n) {
  if (n == 0) return 0.0;
  if (n > moved_.size())
    throw std::logic_error("centre moves: " + std::to_string(n) + " points, " +
                           std::to_string(moved_.size()) + " recorded");
  exec::parallel_for(n, SquaredMoves{x, y, x0_.span(), y0_.span(), moved_.span()});
  return std::sqrt(static_cast<double>(exec::max_value(Span<const float>(moved_.span().data(), n))));
}

}  // namespace tissue::domain
