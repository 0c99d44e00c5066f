#include "engine/core/cell_centres.hpp"

#include "engine/exec/parallel_for.hpp"

namespace tissue {

namespace {
struct CentreFunctor {
  Span<const float> x, y, z;
  Span<const std::int32_t> first, count;
  Box box;
  Span<float> cx, cy, cz;
  TISSUE_HD void operator()(std::size_t c) const {
    const auto centre = cell_centre(x.data(), y.data(), z.data(), first[c], count[c], box);
    cx[c] = centre.x;
    cy[c] = centre.y;
    cz[c] = centre.z;
  }
};
}  // namespace

void update_cell_centres(World& w) {
  exec::parallel_for(w.cells.size(),
                     CentreFunctor{w.x.span(), w.y.span(), w.z.span(), w.first.span(), w.count.span(), w.box,
                                   w.cx.span(), w.cy.span(), w.cz.span()});
}

void CellCentreSystem::run(World& world, const StepContext&) {
  update_cell_centres(world);
}

}  // namespace tissue
