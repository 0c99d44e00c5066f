#include "engine/spatial/verlet_list.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/exec/parallel_for.hpp"

namespace tissue {

namespace {

/// Point i's list: the candidates of the 27 bins around it of another tag within R, in the search's order.
struct BuildVerletList {
  CellList::View bins;  ///< untrimmed (reach 0)
  Span<const float> x, y, z;
  Span<const std::int32_t> tag;
  Box box;
  float radius2;
  Span<std::int32_t> slots;
  Span<std::uint8_t> count;
  std::size_t stride;

  TISSUE_HD void operator()(std::size_t i) const {
    const float px = x[i], py = y[i], pz = z[i];
    const std::int32_t own = tag[i];
    int found = 0;
    bins.for_each_built_candidate(px, py, pz, [&](int s, const PointTag& q) {
      if (q.tag == own) return;
      const float dx = box.min_image_x(px - q.x);
      const float dy = box.min_image_y(py - q.y);
      const float dz = pz - q.z;
      if (!(dx * dx + dy * dy + dz * dz < radius2)) return;
      if (found < VerletList::kCapacity) slots[static_cast<std::size_t>(found) * stride + i] = s;
      ++found;
    });
    count[i] = static_cast<std::uint8_t>(found <= VerletList::kCapacity ? found : VerletList::kCapacity + 1);
  }
};

}  // namespace

void VerletList::build(const CellList::View& bins, Span<const float> x, Span<const float> y,
                       Span<const float> z, Span<const std::int32_t> tag, std::size_t n, const Box& box,
                       float radius, float cutoff) {
  if (!(cutoff > 0.0f && cutoff < radius))
    throw std::invalid_argument("Verlet list needs 0 < cutoff < radius, got cutoff " +
                                std::to_string(cutoff) + " and radius " + std::to_string(radius));
  n_ = n;
  skin_ = radius - cutoff;
  radius_ = radius;
  slots_.ensure(static_cast<std::size_t>(kCapacity) * n);
  count_.ensure(n);
  if (n == 0) return;
  CellList::View all = bins;
  all.reach = 0.0f;
  all.moved = Span<const float>();
  exec::parallel_for(n, BuildVerletList{all, x, y, z, tag, box, radius * radius, slots_.span(),
                                        count_.span().subspan(0, n), n});
}

std::size_t VerletList::overflowed() const {
  std::vector<std::uint8_t> count(n_);
  if (n_ > 0) count_.download(count.data(), n_);
  std::size_t over = 0;
  for (const std::uint8_t c : count) over += c > kCapacity ? 1 : 0;
  return over;
}

VerletList::View VerletList::view() const {
  if (n_ == 0) return View{};
  return View{std::as_const(slots_).span().subspan(0, static_cast<std::size_t>(kCapacity) * n_),
              std::as_const(count_).span().subspan(0, n_), n_, skin_, radius_};
}

}  // namespace tissue
