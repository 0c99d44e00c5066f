#pragma once
/// @file state_checks.hpp
/// Numerical checks of the World's state that know no module: every floating-point column of the cells and
/// elements tables (a gene network's species, sampled fields, whatever modules added) must be finite.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/exec/algorithms.hpp"

namespace tissue {

/// Throws NumericalError when a float or double column of the cells or elements table holds a NaN or an
/// infinity in its rows [0, size): the step, the column, how many, and the first (row's cell id, component
/// name). Device-side reductions, one per column component; nothing is downloaded unless something is wrong.
void check_table_values(World& world);
/// check_table_values() that costs one download when every value is finite: each column component is
/// flagged on the device into `flag` (scratch, kept by the caller), and only a raised flag runs the
/// per-column pass that finds and reports the first bad value.
void check_table_values(World& world, DeviceBuffer<std::int32_t>& flag);

/// Limits on the magnitude of a field's values beyond finiteness: a blow-up that stays finite (a run to
/// |value| ~ 1e66 in double) is caught like a NaN. Modules read them from their table's keys `max_abs` and
/// `growth_checks`.
struct MagnitudeLimits {
  /// Largest |value| any species of the field may take [the field's units]; beyond it the run stops.
  double max_abs = 1e12;
  /// Growth that no physics of the shipped models allows: the field's largest |value| grew more than
  /// kGrowthFactor-fold between consecutive checks, growth_checks checks in a row (five orders of magnitude
  /// in five check intervals by default), from a largest |value| above zero. 0: no growth check.
  int growth_checks = 5;
  static constexpr double kGrowthFactor = 10.0;
};

/// The magnitude check of one field: call observe() at every check with the largest |value| of each
/// species. Host-side state (the last check's maxima, the run of growing checks); not checkpointed, so a
/// restarted run starts counting anew.
class MagnitudeGuard {
 public:
  /// @param field    the field's name for messages (e.g. "surface_rd")
  /// @param key      where the limits are set (e.g. "surface_rd"), named in messages
  MagnitudeGuard(std::string field, std::string key, MagnitudeLimits limits);

  /// @param step      the step of the check
  /// @param species   the species' names, #species
  /// @param max_abs   the largest |value| of each species now, #species; a non-finite one makes the call
  ///                  pass (the NaN check reports it, whether it runs before or after this one)
  /// @param where     for a species index, where its largest |value| lies (e.g. "at vertex 12"); called
  ///                  only on failure
  /// @throws NumericalError naming the field, species, value, step and the bound or the growth
  template <class Where>
  void observe(std::int64_t step, const std::vector<std::string>& species, const std::vector<double>& max_abs,
               Where&& where) {
    const std::size_t failed = failing_species(step, max_abs);
    if (failed < max_abs.size()) fail(step, species, max_abs, failed, where(failed));
  }

 private:
  std::size_t failing_species(std::int64_t step, const std::vector<double>& max_abs);
  [[noreturn]] void fail(std::int64_t step, const std::vector<std::string>& species,
                         const std::vector<double>& max_abs, std::size_t failed, const std::string& where);
  std::string field_, key_;
  MagnitudeLimits limits_;
  std::vector<double> last_;  ///< the previous check's maxima, per species
  std::vector<int> growing_;  ///< consecutive checks of more than kGrowthFactor-fold growth, per species
  std::vector<std::int64_t> since_;  ///< the step where the run of growing checks began, per species
  bool bound_ = false;               ///< what fail() reports: the bound (else the growth)
};

/// The largest |value| of each species of a species-major field (`species` blocks of `n` values, on the
/// active backend), for MagnitudeGuard::observe(): two device reductions per species, nothing downloaded.
template <class Real>
std::vector<double> species_max_abs(Span<const Real> values, std::size_t species, std::size_t n) {
  std::vector<double> out(species);
  for (std::size_t s = 0; s < species; ++s) {
    const Span<const Real> block = values.subspan(s * n, n);
    out[s] = std::max(std::fabs(static_cast<double>(exec::max_value(block))),
                      std::fabs(static_cast<double>(exec::min_value(block))));
  }
  return out;
}

/// Where species s's largest |value| lies within its block of `n` (host values, species-major): for the
/// message of a failed magnitude check.
template <class Real>
std::size_t species_argmax_abs(const Real* host, std::size_t s, std::size_t n) {
  std::size_t at = 0;
  for (std::size_t i = 1; i < n; ++i)
    if (std::fabs(host[s * n + i]) > std::fabs(host[s * n + at])) at = i;
  return at;
}

}  // namespace tissue
