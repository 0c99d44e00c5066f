#pragma once
/// @file random.hpp
/// Counter-based random numbers (Philox4x32-10, Salmon et al. SC'11, via Random123): a value is a pure
/// function of (seed, stream, entity, counter), so results do not depend on thread scheduling or on
/// the backend, and a restarted run continues the same sequence.

#include <cmath>
#include <cstdint>

#include <Random123/philox.h>

#include "engine/exec/config.hpp"

namespace tissue::random {

/// Purposes of random draws; each gets its own stream so that adding draws elsewhere never shifts them.
enum Stream : std::uint32_t {
  kInitialLayout = 1,  ///< initial element positions
  kNoise = 2,          ///< stochastic terms in time stepping
  kCellType = 3,       ///< initial cell types (entity = the cell's stable id)
  kCellCycle = 4,      ///< cell-cycle durations (entity = the cell's stable id and the step it was born)
  kTransition = 5,  ///< behaviour rules' stochastic transitions (entity = the step and the cell's stable id)
  kMotility = 6,    ///< random motility (entity = the step and the cell's stable id)
  kGeneNoise = 7,   ///< gene-network noise (entity = step << 32 ^ cell id, counter = species / 4)
};

/// Four independent 32-bit words for (seed, stream, entity, counter).
TISSUE_HD inline r123::Philox4x32::ctr_type philox(std::uint64_t seed, std::uint32_t stream,
                                                   std::uint64_t entity, std::uint32_t counter) {
  r123::Philox4x32 rng;
  const r123::Philox4x32::key_type key = {
      {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
  const r123::Philox4x32::ctr_type ctr = {
      {static_cast<std::uint32_t>(entity), static_cast<std::uint32_t>(entity >> 32), stream, counter}};
  return rng(ctr, key);
}

/// Maps a 32-bit word to a float in (0, 1] (never 0, so log() is safe).
TISSUE_HD inline float to_unit_float(std::uint32_t u) {
  return (static_cast<float>(u >> 8) + 1.0f) * (1.0f / 16777216.0f);
}

/// Four uniform floats in (0, 1] for (seed, stream, entity, counter).
struct Uniform4 {
  float v[4];
};
TISSUE_HD inline Uniform4 uniform4(std::uint64_t seed, std::uint32_t stream, std::uint64_t entity,
                                   std::uint32_t counter) {
  const auto r = philox(seed, stream, entity, counter);
  return Uniform4{
      {to_unit_float(r.v[0]), to_unit_float(r.v[1]), to_unit_float(r.v[2]), to_unit_float(r.v[3])}};
}

/// Four independent standard normals (double) for (seed, stream, entity, counter): Box-Muller on the two
/// pairs of Philox words, each word mapped to (k + 1) / 2^32 in (0, 1] (so |value| <= sqrt(64 ln 2) = 6.66):
/// (v[0], v[1]) = sqrt(-2 ln u0) (cos, sin)(2 pi u1) with u0, u1 from words 0 and 1, (v[2], v[3]) likewise
/// from words 2 and 3.
struct Normal4 {
  double v[4];
};
TISSUE_HD inline Normal4 normal4(std::uint64_t seed, std::uint32_t stream, std::uint64_t entity,
                                 std::uint32_t counter) {
  const auto r = philox(seed, stream, entity, counter);
  const double scale = 1.0 / 4294967296.0, two_pi = 6.283185307179586;
  const double u0 = (static_cast<double>(r.v[0]) + 1.0) * scale,
               u1 = (static_cast<double>(r.v[1]) + 1.0) * scale;
  const double u2 = (static_cast<double>(r.v[2]) + 1.0) * scale,
               u3 = (static_cast<double>(r.v[3]) + 1.0) * scale;
  const double r01 = sqrt(-2.0 * log(u0)), r23 = sqrt(-2.0 * log(u2));
  return Normal4{
      {r01 * cos(two_pi * u1), r01 * sin(two_pi * u1), r23 * cos(two_pi * u3), r23 * sin(two_pi * u3)}};
}

/// Maps two 32-bit words to a double in (0, 1] with 53 random bits.
TISSUE_HD inline double to_unit_double(std::uint32_t hi, std::uint32_t lo) {
  const std::uint64_t bits = (static_cast<std::uint64_t>(hi >> 5) << 26) | (lo >> 6);
  return (static_cast<double>(bits) + 1.0) * (1.0 / 9007199254740992.0);
}

/// A Gamma(shape k, scale 1) variate for (seed, stream, entity), k > 0: Marsaglia and Tsang's squeeze method
/// (ACM TOMS 26:363, 2000) for k >= 1, each trial drawing counters 0, 1, 2, ... (a standard normal by
/// Box-Muller and a uniform); for k < 1, Gamma(k + 1) U^(1/k) (their section 6). Mean k, variance k: scale
/// by theta for mean k theta. A pure function of its arguments, like every draw here.
TISSUE_HD inline double gamma_variate(std::uint64_t seed, std::uint32_t stream, std::uint64_t entity,
                                      double k) {
  double boost = 1.0;
  std::uint32_t counter = 0;
  if (k < 1.0) {
    const auto r = philox(seed, stream, entity, counter++);
    boost = pow(to_unit_double(r.v[0], r.v[1]), 1.0 / k);
    k += 1.0;
  }
  const double d = k - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    const auto r = philox(seed, stream, entity, counter++);
    const double u1 = to_unit_double(r.v[0], r.v[1]), u2 = to_unit_double(r.v[2], r.v[3]);
    const double x = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    const double t = 1.0 + c * x;
    if (t <= 0.0) continue;
    const double v = t * t * t;
    const auto r2 = philox(seed, stream, entity, counter++);
    const double u = to_unit_double(r2.v[0], r2.v[1]);
    if (log(u) < 0.5 * x * x + d - d * v + d * log(v)) return d * v * boost;
  }
}

}  // namespace tissue::random
