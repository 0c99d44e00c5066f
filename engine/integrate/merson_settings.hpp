#pragma once
/// @file merson_settings.hpp
/// Settings and counts of the adaptive Runge-Kutta-Merson integrator (runge_kutta_merson.hpp), in a plain
/// C++ header for code that configures the integrator without launching kernels.

#include <cstdint>

namespace tissue::integrate {

/// Settings of the adaptive integrator.
struct MersonSettings {
  double tolerance = 1e-6;    ///< eps in (27)-(29), absolute, in the unit of u; > 0
  double initial_step = 0.0;  ///< first tau tried; 0: (t_end - t0) / 100
  double min_step =
      0.0;            ///< a step proposed below this stops the run with NumericalError; 0: 1e-14 (t_end - t0)
  bool fused = true;  ///< stage combinations inside the right-hand side's store()
};

/// Counts of one integrate() call.
struct MersonStats {
  std::int64_t accepted = 0, rejected = 0, iterations = 0;
  double last_step = 0.0;  ///< the step proposed for the next call
  double time = 0.0;       ///< time reached (t1 exactly on success)
};

}  // namespace tissue::integrate
