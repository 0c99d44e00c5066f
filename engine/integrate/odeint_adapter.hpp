#pragma once
/// @file odeint_adapter.hpp
/// Boost.Odeint's steppers over engine field states, on either backend: the state type FieldState (an
/// array of n values on the active backend), the algebra FieldAlgebra (every element-wise odeint
/// operation is one exec::parallel_for; the infinity norm is a device reduction) and the operations
/// FieldOperations (odeint's scale_sum and rel_error as functors that also run in device code).
///
///   using State = integrate::FieldState<double>;
///   boost::numeric::odeint::runge_kutta4<State, double, State, double, integrate::FieldAlgebra,
///                                        integrate::FieldOperations> rk4;
///   rk4.do_step(system, x, t, dt);  // system(const State& x, State& dxdt, double t) launches kernels
///
/// Adaptive: integrate::OdeintDopri5<double> (odeint's controlled Dormand-Prince 5(4)) with
/// boost::numeric::odeint::make_controlled(abs, rel, stepper) and integrate_adaptive. Steps are chosen on
/// the host (odeint reads the error norm every step), so this suits small systems and checks against the
/// engine's own integrators; the engine's RungeKuttaMerson keeps its step control on the device.
///
/// Only the element-wise parts of odeint are used: none of its Thrust headers (they clash with CUDA 13's
/// CCCL), see ../shared/DESIGN.md, Integrators. Include only from translation units compiled as CUDA in
/// CUDA builds (tissue_kernel_sources).

#include <boost/numeric/odeint/stepper/controlled_runge_kutta.hpp>
#include <boost/numeric/odeint/stepper/generation.hpp>
#include <boost/numeric/odeint/stepper/runge_kutta4.hpp>
#include <boost/numeric/odeint/stepper/runge_kutta_dopri5.hpp>
#include <boost/numeric/odeint/util/is_resizeable.hpp>
#include <boost/numeric/odeint/util/resize.hpp>
#include <boost/numeric/odeint/util/same_size.hpp>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/config.hpp"
#include "engine/exec/device_buffer.hpp"
#include "engine/exec/memory.hpp"
#include "engine/exec/parallel_for.hpp"

namespace tissue::integrate {

/// An odeint state: n values of Real on the active backend. Copies are deep (device to device), as odeint
/// expects of a state; a default-constructed state is empty until odeint resizes it.
template <class Real>
class FieldState {
 public:
  using value_type = Real;

  FieldState() = default;
  explicit FieldState(std::size_t n) : buffer_(n) {}
  FieldState(const FieldState& o) { *this = o; }
  FieldState& operator=(const FieldState& o) {
    if (this != &o) {
      buffer_.resize(o.size());
      exec::copy_bytes(buffer_.data(), buffer_.backend(), o.buffer_.data(), o.buffer_.backend(),
                       o.size() * sizeof(Real));
    }
    return *this;
  }
  FieldState(FieldState&&) noexcept = default;
  FieldState& operator=(FieldState&&) noexcept = default;

  std::size_t size() const { return buffer_.size(); }
  void resize(std::size_t n) { buffer_.resize(n); }
  Span<Real> span() { return buffer_.span(); }
  Span<const Real> span() const { return buffer_.span(); }
  DeviceBuffer<Real>& buffer() { return buffer_; }
  const DeviceBuffer<Real>& buffer() const { return buffer_; }

 private:
  DeviceBuffer<Real> buffer_;
};

/// odeint operations whose functors run in device code too: out = sum_k a_k in_k, and the relative error
/// of the controlled steppers. Factors are kept in double; each element is combined in its own type.
struct FieldOperations {
  template <int N>
  struct ScaleSum {
    double a[N];
    template <class... F>
    explicit ScaleSum(F... f) : a{static_cast<double>(f)...} {
      static_assert(sizeof...(F) == N, "one factor per input");
    }
    template <class Out, class... In>
    TISSUE_HD void operator()(Out& out, const In&... in) const {
      static_assert(sizeof...(In) == N, "one input per factor");
      int k = 0;
      double s = 0.0;
      ((s += a[k++] * static_cast<double>(in)), ...);  // left to right, as odeint's default operations
      out = static_cast<Out>(s);
    }
  };
  // odeint names them with one factor type per input, defaulting to the previous one
  template <class F1, class F2 = F1>
  using scale_sum2 = ScaleSum<2>;
  template <class F1, class F2 = F1, class F3 = F2>
  using scale_sum3 = ScaleSum<3>;
  template <class F1, class F2 = F1, class F3 = F2, class F4 = F3>
  using scale_sum4 = ScaleSum<4>;
  template <class F1, class F2 = F1, class F3 = F2, class F4 = F3, class F5 = F4>
  using scale_sum5 = ScaleSum<5>;
  template <class F1, class F2 = F1, class F3 = F2, class F4 = F3, class F5 = F4, class F6 = F5>
  using scale_sum6 = ScaleSum<6>;
  template <class F1, class F2 = F1, class F3 = F2, class F4 = F3, class F5 = F4, class F6 = F5,
            class F7 = F6>
  using scale_sum7 = ScaleSum<7>;

  /// err <- |err| / (eps_abs + eps_rel (a_x |x_old| + a_dxdt |dxdt_old|)), odeint's default_error_checker.
  template <class Fac>
  struct rel_error {
    double eps_abs, eps_rel, a_x, a_dxdt;
    rel_error(Fac eps_abs_, Fac eps_rel_, Fac a_x_, Fac a_dxdt_)
        : eps_abs(eps_abs_), eps_rel(eps_rel_), a_x(a_x_), a_dxdt(a_dxdt_) {}
    template <class T3, class T1, class T2>
    TISSUE_HD void operator()(T3& err, const T1& x_old, const T2& dxdt_old) const {
      const double e = static_cast<double>(err), x = static_cast<double>(x_old),
                   d = static_cast<double>(dxdt_old);
      err = static_cast<T3>((e < 0 ? -e : e) /
                            (eps_abs + eps_rel * (a_x * (x < 0 ? -x : x) + a_dxdt * (d < 0 ? -d : d))));
    }
  };
};

namespace detail {
template <class Op, class Real, std::size_t N>
struct OdeintElementwise {  // op(s0[i], s1[i], ...) at every element; op's signature keeps inputs const
  Op op;
  Real* ptr[N];
  TISSUE_HD void operator()(std::size_t i) const { call(i, std::make_index_sequence<N>()); }
  template <std::size_t... K>
  TISSUE_HD void call(std::size_t i, std::index_sequence<K...>) const {
    op(ptr[K][i]...);
  }
};
template <class Real>
struct OdeintMagnitude {  // out = |x|
  const Real* x;
  Real* out;
  TISSUE_HD void operator()(std::size_t i) const { out[i] = x[i] < Real(0) ? -x[i] : x[i]; }
};
}  // namespace detail

/// odeint algebra over FieldState: for_eachN runs the operation at every element in one kernel;
/// norm_inf is the maximum of |x| (a device reduction and one download).
struct FieldAlgebra {
  template <class Op, class... S>
  static void for_each_n(Op op, S&... s) {
    using Real = typename std::remove_const_t<std::tuple_element_t<0, std::tuple<S...>>>::value_type;
    const std::size_t n = first_size(s...);
    exec::parallel_for(
        n, detail::OdeintElementwise<Op, Real, sizeof...(S)>{op, {const_cast<Real*>(s.span().data())...}});
  }
  template <class S1, class S2, class Op>
  static void for_each2(S1& s1, S2& s2, Op op) {
    for_each_n(op, s1, s2);
  }
  template <class S1, class S2, class S3, class Op>
  static void for_each3(S1& s1, S2& s2, S3& s3, Op op) {
    for_each_n(op, s1, s2, s3);
  }
  template <class S1, class S2, class S3, class S4, class Op>
  static void for_each4(S1& s1, S2& s2, S3& s3, S4& s4, Op op) {
    for_each_n(op, s1, s2, s3, s4);
  }
  template <class S1, class S2, class S3, class S4, class S5, class Op>
  static void for_each5(S1& s1, S2& s2, S3& s3, S4& s4, S5& s5, Op op) {
    for_each_n(op, s1, s2, s3, s4, s5);
  }
  template <class S1, class S2, class S3, class S4, class S5, class S6, class Op>
  static void for_each6(S1& s1, S2& s2, S3& s3, S4& s4, S5& s5, S6& s6, Op op) {
    for_each_n(op, s1, s2, s3, s4, s5, s6);
  }
  template <class S1, class S2, class S3, class S4, class S5, class S6, class S7, class Op>
  static void for_each7(S1& s1, S2& s2, S3& s3, S4& s4, S5& s5, S6& s6, S7& s7, Op op) {
    for_each_n(op, s1, s2, s3, s4, s5, s6, s7);
  }
  template <class S1, class S2, class S3, class S4, class S5, class S6, class S7, class S8, class Op>
  static void for_each8(S1& s1, S2& s2, S3& s3, S4& s4, S5& s5, S6& s6, S7& s7, S8& s8, Op op) {
    for_each_n(op, s1, s2, s3, s4, s5, s6, s7, s8);
  }

  /// max_i |x_i| (0 for an empty state).
  template <class S>
  static typename S::value_type norm_inf(const S& s) {
    using Real = typename S::value_type;
    if (s.size() == 0) return Real(0);
    DeviceBuffer<Real> magnitude(s.size()), result(1);
    exec::parallel_for(s.size(), detail::OdeintMagnitude<Real>{s.span().data(), magnitude.data()});
    DeviceBuffer<unsigned char> temp;
    exec::max_into(Span<const Real>(magnitude.span()), result.span(), temp);
    Real out;
    result.download(&out, 1);
    return out;
  }

 private:
  template <class S, class... Rest>
  static std::size_t first_size(const S& s, const Rest&...) {
    return s.size();
  }
};

/// odeint's Dormand-Prince 5(4) stepper over FieldState (wrap with make_controlled for adaptive steps).
template <class Real>
using OdeintDopri5 = boost::numeric::odeint::runge_kutta_dopri5<FieldState<Real>, Real, FieldState<Real>,
                                                                Real, FieldAlgebra, FieldOperations>;
/// odeint's classic Runge-Kutta 4 over FieldState.
template <class Real>
using OdeintRk4 = boost::numeric::odeint::runge_kutta4<FieldState<Real>, Real, FieldState<Real>, Real,
                                                       FieldAlgebra, FieldOperations>;

}  // namespace tissue::integrate

namespace boost::numeric::odeint {

/// FieldState is resized by odeint's steppers to the size of the state they are given.
template <class Real>
struct is_resizeable<tissue::integrate::FieldState<Real>> {
  typedef boost::true_type type;
  static const bool value = type::value;
};
template <class Real>
struct same_size_impl<tissue::integrate::FieldState<Real>, tissue::integrate::FieldState<Real>> {
  static bool same_size(const tissue::integrate::FieldState<Real>& a,
                        const tissue::integrate::FieldState<Real>& b) {
    return a.size() == b.size();
  }
};
template <class Real>
struct resize_impl<tissue::integrate::FieldState<Real>, tissue::integrate::FieldState<Real>> {
  static void resize(tissue::integrate::FieldState<Real>& a, const tissue::integrate::FieldState<Real>& b) {
    a.resize(b.size());
  }
};

}  // namespace boost::numeric::odeint
