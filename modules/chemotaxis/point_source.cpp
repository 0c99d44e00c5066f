#include "modules/chemotaxis/point_source.hpp"

#include <cmath>
#include <stdexcept>

#include "engine/exec/parallel_for.hpp"
#include "modules/chemotaxis/chemotaxis_kernels.hpp"

namespace tissue::chemotaxis {

PointSourceParams read_point_source_params(const io::ScenarioTable& t) {
  PointSourceParams p;
  p.field = t.string("field", "");
  if (p.field.empty()) t.fail("field", "name the grid field the source releases into (a [signal.<name>])");
  p.position[0] = t.require_number("x");
  p.position[1] = t.require_number("y");
  p.position[2] = t.require_number("z");
  p.rate = t.require_number("rate", io::Range::non_negative());
  return p;
}

template <class Real>
int axis_outside_grid(const GridField<Real>& field, const double position[3]) {
  const GridShape& s = field.shape();
  const int n[3] = {s.nx, s.ny, s.nz};
  for (int d = 0; d < 3; ++d) {
    const bool periodic = field.geometry().face[2 * d] == GridBoundary::periodic;
    if (!periodic && n[d] > 1 && (position[d] < 0.0 || position[d] > n[d] * s.h)) return d;
  }
  return -1;
}
template int axis_outside_grid<float>(const GridField<float>&, const double[3]);
template int axis_outside_grid<double>(const GridField<double>&, const double[3]);

template <class Real>
PointSourceSystem<Real>::PointSourceSystem(const PointSourceParams& params, GridField<Real>& field)
    : params_(params), field_(field) {
  if (field_.species_count() != 1)
    throw std::invalid_argument("a point source needs a field of one species; '" + field_.name() + "' has " +
                                std::to_string(field_.species_count()) +
                                " (a field with exclude_cells = true is not supported)");
  const int axis = axis_outside_grid(field_, params_.position);
  if (axis >= 0)
    throw std::invalid_argument(std::string("the point source's ") + "xyz"[axis] +
                                " is outside the grid of '" + field_.name() + "'");
  const GridShape& s = field_.shape();
  stencil_ = grid::cic_stencil(field_.geometry(), s.h, params_.position[0], params_.position[1],
                               params_.position[2]);
}

template <class Real>
AccessList PointSourceSystem<Real>::access() const {
  // an increment in place of the field as the previous step left it: the first writer of the field in the
  // step (the transport that follows reads the sum)
  return AccessList().read_previous("grid", field_.name()).write("grid", field_.name());
}

template <class Real>
void PointSourceSystem<Real>::run(World&, const StepContext& ctx) {
  const GridShape& s = field_.shape();
  const double node_volume = std::pow(s.h, s.dims());
  exec::parallel_for(
      8, PointSourceDeposit<Real>{field_.geometry(), stencil_, params_.rate * ctx.dt / node_volume,
                                  field_.current().data()});
}

template class PointSourceSystem<float>;
template class PointSourceSystem<double>;

}  // namespace tissue::chemotaxis
