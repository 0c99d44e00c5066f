#include "modules/rules/motility.hpp"

#include "engine/exec/parallel_for.hpp"
#include "modules/rules/motility_kernels.hpp"
#include "modules/rules/rules.hpp"

namespace tissue::rules {

AccessList MotilitySystem::access() const {
  AccessList a;
  a.read_previous("elements", "x", "y", "z").read("elements", "cell").read("cells", "id");
  if (per_cell_) a.read("cells", kMotilityColumn);
  return a.write("elements", "x", "y", "z");
}

void MotilitySystem::run(World& w, const StepContext& ctx) {
  const std::size_t n = w.elements.size();
  if (n == 0) return;
  ElementMotilityStep step{w.x.span(),       w.y.span(), w.z.span(), w.cell.span(),
                           w.cell_id.span(), {},         diffusion_, w.box,
                           w.seed,           ctx.step,   ctx.dt};
  if (per_cell_) step.diffusion = w.cells.column<float>(kMotilityColumn).span();
  exec::parallel_for(n, step);
}

}  // namespace tissue::rules
