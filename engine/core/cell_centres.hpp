#pragma once
/// @file cell_centres.hpp
/// Cell centres as the periodic-aware mean of their elements, and the system that keeps the centre
/// columns current.

#include <cstddef>
#include <cstdint>

#include "engine/core/box.hpp"
#include "engine/exec/math.hpp"
#include "engine/exec/span.hpp"
#include "engine/schedule/schedule.hpp"

namespace tissue {

/// Centre of the elements [first, first + count): the mean of their minimum-image displacements
/// from the first element, added to it and wrapped into the box. Exact for cells smaller than half
/// the box, independent of where the cell straddles a periodic boundary.
/// @return (0, 0, 0) for count == 0.
TISSUE_HD inline math::Vec3<float> cell_centre(const float* x, const float* y, const float* z,
                                               std::int32_t first, std::int32_t count, const Box& box) {
  math::Vec3<float> c;
  if (count <= 0) return c;
  const float x0 = x[first], y0 = y[first];
  float sx = 0.f, sy = 0.f, sz = 0.f;
  for (std::int32_t k = first; k < first + count; ++k) {
    sx += box.min_image_x(x[k] - x0);
    sy += box.min_image_y(y[k] - y0);
    sz += z[k];
  }
  const float inv = 1.0f / static_cast<float>(count);
  c.x = box.wrap_x(x0 + sx * inv);
  c.y = box.wrap_y(y0 + sy * inv);
  c.z = sz * inv;
  return c;
}

/// System "cell_centres": writes cells.cx/cy/cz from the element positions.
class CellCentreSystem final : public System {
 public:
  std::string name() const override { return "cell_centres"; }
  bool replayable() const override { return true; }
  AccessList access() const override {
    return AccessList()
        .read("elements", "x", "y", "z")
        .read("cells", "first", "count")
        .write("cells", "cx", "cy", "cz");
  }
  void run(World& world, const StepContext& ctx) override;
};

/// Computes the centre columns now (what the system does).
void update_cell_centres(World& world);

}  // namespace tissue
