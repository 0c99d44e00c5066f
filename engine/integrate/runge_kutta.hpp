#pragma once
/// @file runge_kutta.hpp
/// Explicit integrators over a field state u (n values on the active backend), for du/dt = f(u) where
/// the caller supplies f as rhs(Span<const Real> u, Span<Real> dudt). Stage combinations are fused
/// into one kernel each; workspace buffers are kept between steps.
///
/// Include only from translation units compiled as CUDA in CUDA builds (tissue_kernel_sources).

#include <cstddef>

#include "engine/exec/device_buffer.hpp"
#include "engine/exec/parallel_for.hpp"

namespace tissue::integrate {

namespace detail {
template <class Real>
struct Rk4First {  // acc = u + c1 k; tmp = u + c2 k
  Span<const Real> u, k;
  Span<Real> acc, tmp;
  Real c1, c2;
  TISSUE_HD void operator()(std::size_t i) const {
    acc[i] = u[i] + c1 * k[i];
    tmp[i] = u[i] + c2 * k[i];
  }
};
template <class Real>
struct Rk4Middle {  // acc += c1 k; tmp = u + c2 k
  Span<const Real> u, k;
  Span<Real> acc, tmp;
  Real c1, c2;
  TISSUE_HD void operator()(std::size_t i) const {
    acc[i] += c1 * k[i];
    tmp[i] = u[i] + c2 * k[i];
  }
};
template <class Real>
struct Rk4Last {  // u = acc + c k
  Span<const Real> acc, k;
  Span<Real> u;
  Real c;
  TISSUE_HD void operator()(std::size_t i) const { u[i] = acc[i] + c * k[i]; }
};
}  // namespace detail

/// Classic fourth-order Runge-Kutta (Kutta 1901): k1 = f(u), k2 = f(u + dt/2 k1), k3 = f(u + dt/2 k2),
/// k4 = f(u + dt k3), u <- u + dt/6 (k1 + 2 k2 + 2 k3 + k4). Three workspace arrays of n values.
template <class Real>
class RungeKutta4 {
 public:
  /// Advances u (n values) by dt in place.
  template <class Rhs>
  void step(Span<Real> u, Real dt, Rhs&& rhs) {
    const std::size_t n = u.size();
    k_.ensure(n);
    acc_.ensure(n);
    tmp_.ensure(n);
    const Span<Real> k = k_.span().subspan(0, n), acc = acc_.span().subspan(0, n),
                     tmp = tmp_.span().subspan(0, n);
    const Span<const Real> uc = u;
    rhs(uc, k);
    exec::parallel_for(n, detail::Rk4First<Real>{uc, k, acc, tmp, dt / 6, dt / 2});
    rhs(Span<const Real>(tmp), k);
    exec::parallel_for(n, detail::Rk4Middle<Real>{uc, k, acc, tmp, dt / 3, dt / 2});
    rhs(Span<const Real>(tmp), k);
    exec::parallel_for(n, detail::Rk4Middle<Real>{uc, k, acc, tmp, dt / 3, dt});
    rhs(Span<const Real>(tmp), k);
    exec::parallel_for(n, detail::Rk4Last<Real>{acc, k, u, dt / 6});
  }

 private:
  DeviceBuffer<Real> k_, acc_, tmp_;
};

/// Explicit Euler: u <- u + dt f(u). One workspace array.
template <class Real>
class ExplicitEuler {
 public:
  template <class Rhs>
  void step(Span<Real> u, Real dt, Rhs&& rhs) {
    const std::size_t n = u.size();
    k_.ensure(n);
    const Span<Real> k = k_.span().subspan(0, n);
    rhs(Span<const Real>(u), k);
    exec::parallel_for(n, detail::Rk4Last<Real>{Span<const Real>(u), Span<const Real>(k), u, dt});
  }

 private:
  DeviceBuffer<Real> k_;
};

}  // namespace tissue::integrate
