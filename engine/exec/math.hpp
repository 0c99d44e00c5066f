#pragma once
/// @file math.hpp
/// Overloads of the math functions kernels need, callable on host and device for float and double.

#include <cmath>

#include "engine/exec/config.hpp"

namespace tissue::math {

TISSUE_HD inline float exp(float x) {
  return ::expf(x);
}
TISSUE_HD inline double exp(double x) {
  return ::exp(x);
}
/// 2^x: one special-function instruction on the GPU (exp() scales its argument by log2(e) first).
TISSUE_HD inline float exp2(float x) {
  return ::exp2f(x);
}
TISSUE_HD inline double exp2(double x) {
  return ::exp2(x);
}
/// Angle of (x, y) from the positive x axis [rad], in [-pi, pi].
TISSUE_HD inline float atan2(float y, float x) {
  return ::atan2f(y, x);
}
TISSUE_HD inline double atan2(double y, double x) {
  return ::atan2(y, x);
}
TISSUE_HD inline float log(float x) {
  return ::logf(x);
}
TISSUE_HD inline double log(double x) {
  return ::log(x);
}
TISSUE_HD inline float abs(float x) {
  return ::fabsf(x);
}
TISSUE_HD inline double abs(double x) {
  return ::fabs(x);
}
TISSUE_HD inline float sqrt(float x) {
  return ::sqrtf(x);
}
TISSUE_HD inline double sqrt(double x) {
  return ::sqrt(x);
}
/// 1 / sqrt(x): the hardware approximation on the device (2 ulp), 1 / sqrtf(x) on the host.
TISSUE_HD inline float rsqrt(float x) {
#if TISSUE_ON_DEVICE
  return ::rsqrtf(x);
#else
  return 1.0f / ::sqrtf(x);
#endif
}
TISSUE_HD inline double rsqrt(double x) {
  return 1.0 / ::sqrt(x);
}
/// 2^x with subnormal results flushed to zero: on the device the bare special-function instruction
/// (ex2.approx.ftz.f32; exp2f adds a range test and two multiplies around it for results below 2^-126), on the
/// host exp2f. Equal to exp2() wherever 2^x >= 2^-126. For sums to which a term below 2^-126 adds nothing
/// (the Morse forces of the SEM).
TISSUE_HD inline float exp2_ftz(float x) {
#if TISSUE_ON_DEVICE
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return ::exp2f(x);
#endif
}
/// rsqrt() for x >= 2^-126 (a subnormal x reads as 0): on the device the bare special-function instruction
/// (rsqrt.approx.ftz.f32; rsqrtf rescales subnormal arguments around it), on the host 1 / sqrtf(x). Equal to
/// rsqrt() wherever x >= 2^-126, e.g. squared distances of points at least 1.1e-19 apart.
TISSUE_HD inline float rsqrt_ftz(float x) {
#if TISSUE_ON_DEVICE
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return 1.0f / ::sqrtf(x);
#endif
}
TISSUE_HD inline float cos(float x) {
  return ::cosf(x);
}
TISSUE_HD inline double cos(double x) {
  return ::cos(x);
}
TISSUE_HD inline float sin(float x) {
  return ::sinf(x);
}
TISSUE_HD inline double sin(double x) {
  return ::sin(x);
}
TISSUE_HD inline float pow(float x, float y) {
  return ::powf(x, y);
}
TISSUE_HD inline double pow(double x, double y) {
  return ::pow(x, y);
}
TISSUE_HD inline float floor(float x) {
  return ::floorf(x);
}
TISSUE_HD inline double floor(double x) {
  return ::floor(x);
}

template <class T>
TISSUE_HD constexpr T max(T a, T b) {
  return a < b ? b : a;
}
template <class T>
TISSUE_HD constexpr T min(T a, T b) {
  return b < a ? b : a;
}

/// A 3-vector for kernel arithmetic.
template <class Real>
struct Vec3 {
  Real x{}, y{}, z{};
  TISSUE_HD Vec3& operator+=(const Vec3& o) {
    x += o.x;
    y += o.y;
    z += o.z;
    return *this;
  }
};

}  // namespace tissue::math
