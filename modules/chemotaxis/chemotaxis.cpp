#include "modules/chemotaxis/chemotaxis.hpp"

#include "engine/exec/parallel_for.hpp"

namespace tissue::chemotaxis {

ChemotaxisParams read_chemotaxis_params(const io::ScenarioTable& t) {
  ChemotaxisParams p;
  p.field = t.string("field", "");
  if (p.field.empty()) t.fail("field", "name the grid field the cells climb (a [signal.<name>])");
  p.chi.chi = t.require_number("chi");
  p.chi.saturation = t.number("saturation", 0.0, io::Range::non_negative());
  return p;
}

template <class Real>
ChemotaxisSystem<Real>::ChemotaxisSystem(const ChemotaxisParams& params, GridField<Real>& field)
    : params_(params), field_(field) {}

template <class Real>
AccessList ChemotaxisSystem<Real>::access() const {
  return AccessList()
      .read_previous("elements", "x", "y", "z")
      .read_previous("grid", field_.name())
      .read("elements", "cell")
      .read("cells",
            cell_factor_.empty() ? std::vector<std::string>{} : std::vector<std::string>{cell_factor_})
      .write("elements", "x", "y", "z");
}

template <class Real>
void ChemotaxisSystem<Real>::run(World& w, const StepContext& ctx) {
  const std::size_t n = w.elements.size();
  if (n == 0) return;
  ElementChemotaxisStep<Real> step{field_.geometry(),
                                   field_.shape().h,
                                   field_.current().data(),
                                   params_.chi,
                                   w.box,
                                   ctx.dt,
                                   w.x.span(),
                                   w.y.span(),
                                   w.z.span(),
                                   {},
                                   {}};
  if (!cell_factor_.empty()) {
    step.cell_factor = w.cells.column<float>(cell_factor_).span();
    step.cell = w.cell.span();
  }
  exec::parallel_for(n, step);
}

template <class Real>
void ChemotaxisSystem<Real>::velocities(World& w, Span<float> vx, Span<float> vy, Span<float> vz) const {
  const std::size_t n = w.elements.size();
  if (n == 0) return;
  exec::parallel_for(n, ElementVelocity<Real>{field_.geometry(), field_.shape().h, field_.current().data(),
                                              params_.chi, w.x.span(), w.y.span(), w.z.span(), vx, vy, vz});
}

template class ChemotaxisSystem<float>;
template class ChemotaxisSystem<double>;

}  // namespace tissue::chemotaxis
