#pragma once
/// @file box.hpp
/// The simulation domain: periodic or open in x and y, a no-flux floor at z = 0, open top.

#include <cmath>

#include "engine/exec/config.hpp"

namespace tissue {

/// Domain geometry. Periodic axes span [0, L) and positions on them are kept wrapped into that range;
/// distances use the minimum-image convention. Open axes are unbounded.
/// Units: length units of the scenario.
struct Box {
  float lx = 1.0f;         ///< period in x [length] (used when periodic_x)
  float ly = 1.0f;         ///< period in y [length] (used when periodic_y)
  bool periodic_x = true;  ///< x periodic (else open)
  bool periodic_y = true;  ///< y periodic (else open)
  bool floor = true;       ///< no-flux floor at z = 0 (positions are projected to z >= 0)

  /// Minimum-image displacement along x: dx shifted by a multiple of lx into [-lx/2, lx/2]. (Written with
  /// the reciprocal so that compilers hoist the division out of neighbour loops.)
  TISSUE_HD float min_image_x(float dx) const {
    return periodic_x ? dx - lx * floorf(dx * (1.0f / lx) + 0.5f) : dx;
  }
  TISSUE_HD float min_image_y(float dy) const {
    return periodic_y ? dy - ly * floorf(dy * (1.0f / ly) + 0.5f) : dy;
  }
  /// Position wrapped into [0, lx) on a periodic axis (unchanged otherwise).
  TISSUE_HD float wrap_x(float x) const { return periodic_x ? wrap(x, lx) : x; }
  TISSUE_HD float wrap_y(float y) const { return periodic_y ? wrap(y, ly) : y; }
  /// Applies the floor: z projected onto z >= 0.
  TISSUE_HD float clamp_z(float z) const { return (floor && z < 0.0f) ? 0.0f : z; }

  /// x - L floor(x / L), with the rounding case x -> L mapped to 0 so that the result is in [0, L).
  TISSUE_HD static float wrap(float x, float length) {
    float w = x - length * floorf(x / length);
    if (w >= length) w -= length;
    if (w < 0.0f) w = 0.0f;
    return w;
  }
};

}  // namespace tissue
