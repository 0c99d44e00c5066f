#pragma once
// Helpers shared by the tests: small worlds, and independent double-precision reference evaluations
// (no engine kernels), used to check the engine's kernels.

#include <omp.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/core/world.hpp"

namespace tissue::test {

/// Sets the host's OpenMP thread count for a scope (tests that results do not depend on it).
class ThreadCount {
 public:
  explicit ThreadCount(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~ThreadCount() { omp_set_num_threads(saved_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int saved_;
};

/// An lx x ly box [length], periodic along x and y as asked.
inline Box make_box(float lx, float ly, bool periodic_x = true, bool periodic_y = true) {
  Box box;
  box.lx = lx;
  box.ly = ly;
  box.periodic_x = periodic_x;
  box.periodic_y = periodic_y;
  return box;
}

/// Minimum image of d for period L (no-op when L <= 0).
inline double min_image(double d, double period) {
  return period > 0 ? d - period * std::floor(d / period + 0.5) : d;
}

/// Host copy of element positions (download first).
struct Positions {
  std::vector<double> x, y, z;
};
inline Positions positions(World& w) {
  w.download();
  Positions p;
  for (std::size_t e = 0; e < w.elements.size(); ++e) {
    p.x.push_back(w.x.host(e));
    p.y.push_back(w.y.host(e));
    p.z.push_back(w.z.host(e));
  }
  return p;
}

/// Centre of cell c (host mirror), periodic-aware, in double.
inline std::vector<double> centre_of(World& w, std::size_t c) {
  const auto f = static_cast<std::size_t>(w.first.host(c));
  const auto n = static_cast<std::size_t>(w.count.host(c));
  const double lx = w.box.periodic_x ? w.box.lx : 0.0, ly = w.box.periodic_y ? w.box.ly : 0.0;
  double sx = 0, sy = 0, sz = 0;
  for (std::size_t e = f; e < f + n; ++e) {
    sx += min_image(w.x.host(e) - w.x.host(f), lx);
    sy += min_image(w.y.host(e) - w.y.host(f), ly);
    sz += w.z.host(e);
  }
  return {w.x.host(f) + sx / static_cast<double>(n), w.y.host(f) + sy / static_cast<double>(n),
          sz / static_cast<double>(n)};
}

}  // namespace tissue::test
