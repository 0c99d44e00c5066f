#pragma once
/// @file random.hpp
/// Counter-based random numbers (Philox4x32-10, Salmon et al. SC'11, via Random123): a value is a pure
/// function of (seed, stream, entity, counter), so results do not depend on thread scheduling or on
/// the backend, and a restarted run continues the same sequence.

#include <cstdint>

#include <Random123/philox.h>

#include "engine/exec/config.hpp"

namespace tissue::random {

/// Purposes of random draws; each gets its own stream so that adding draws elsewhere never shifts them.
enum Stream : std::uint32_t {
  kInitialLayout = 1,  ///< initial element positions
  kNoise = 2,          ///< stochastic terms in time stepping
  kCellType = 3,       ///< initial cell types (entity = the cell's stable id)
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

}  // namespace tissue::random
