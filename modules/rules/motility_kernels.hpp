#pragma once
/// @file motility_kernels.hpp
/// Random motility of whole cells as pure TISSUE_HD code (equations: modules/rules/README.md, "Motility").
///
/// Each step of length h every element of cell c moves by the same displacement sqrt(2 D_c h) xi_c, xi_c a
/// standard normal 3-vector drawn for (seed, step, cell's stable id) on the counter-based RNG
/// (random::kMotility; Box-Muller on the four Philox words). The cell's centre then performs Brownian motion
/// with diffusion coefficient D_c (mean square displacement 2 D_c t per axis) on top of its deterministic
/// motion: the Euler-Maruyama step of the additive noise, Lie-split after the SEM's step.

#include <cmath>
#include <cstdint>

#include "engine/core/box.hpp"
#include "engine/exec/config.hpp"
#include "engine/exec/span.hpp"
#include "engine/util/random.hpp"

namespace tissue::rules {

/// A standard normal 3-vector for (seed, step, cell id): Box-Muller on the four uniforms of one Philox call.
TISSUE_HD inline void motility_normals(std::uint64_t seed, std::int64_t step, std::int64_t cell_id,
                                       double n[3]) {
  const std::uint64_t entity = (static_cast<std::uint64_t>(step) << 32) ^ static_cast<std::uint64_t>(cell_id);
  const auto r = random::philox(seed, random::kMotility, entity, 0);
  const double u0 = random::to_unit_float(r.v[0]), u1 = random::to_unit_float(r.v[1]);
  const double u2 = random::to_unit_float(r.v[2]), u3 = random::to_unit_float(r.v[3]);
  const double two_pi = 6.283185307179586;
  const double a = sqrt(-2.0 * log(u0)), b = sqrt(-2.0 * log(u2));
  n[0] = a * cos(two_pi * u1);
  n[1] = a * sin(two_pi * u1);
  n[2] = b * cos(two_pi * u3);
}

/// Per element: x_e <- x_e + sqrt(2 D_c h) xi_c for its cell c (D_c from `diffusion` per cell, or `uniform`
/// when that span is empty), wrapped into the box and above the floor. Each index writes only its element.
struct ElementMotilityStep {
  Span<float> x, y, z;               ///< element positions [length], #elements, updated in place
  Span<const std::int32_t> cell;     ///< owning cell, #elements
  Span<const std::int64_t> cell_id;  ///< stable ids, #cells
  Span<const float> diffusion;       ///< D per cell [length^2/time], #cells (empty: `uniform` for all)
  double uniform = 0.0;              ///< D of every cell when `diffusion` is empty [length^2/time]
  Box box;
  std::uint64_t seed = 1;
  std::int64_t step = 0;
  double h = 0.0;  ///< step length [time]

  TISSUE_HD void operator()(std::size_t e) const {
    const auto c = static_cast<std::size_t>(cell[e]);
    const double d = diffusion.size() > 0 ? static_cast<double>(diffusion[c]) : uniform;
    if (!(d > 0.0)) return;
    double n[3];
    motility_normals(seed, step, cell_id[c], n);
    const double s = sqrt(2.0 * d * h);
    x[e] = box.wrap_x(static_cast<float>(static_cast<double>(x[e]) + s * n[0]));
    y[e] = box.wrap_y(static_cast<float>(static_cast<double>(y[e]) + s * n[1]));
    z[e] = box.clamp_z(static_cast<float>(static_cast<double>(z[e]) + s * n[2]));
  }
};

}  // namespace tissue::rules
