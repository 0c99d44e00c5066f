// What the chemotaxis folder registers: the modules "chemotaxis" (the tissue's elements climb a grid field's
// gradient) and "point_source" (a fixed point releasing into a grid field). Both act on fields the entity
// set "signals" creates and touch no other module: the proof that a model composes from outside the engine.

#include <memory>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "engine/schedule/module_registry.hpp"
#include "modules/chemotaxis/chemotaxis.hpp"
#include "modules/chemotaxis/point_source.hpp"

namespace tissue::chemotaxis {

namespace {

/// The precision of a grid field type.
template <class Field>
struct PrecisionOf;
template <class Real>
struct PrecisionOf<GridField<Real>> {
  using type = Real;
};
template <class Field>
using precision_of = typename PrecisionOf<std::remove_reference_t<Field>>::type;

/// "'a', 'b'" for the World's grid fields (float or double), or "none".
std::string grid_field_names(World& w) {
  std::ostringstream out;
  bool any = false;
  for (auto& f : w.fields)
    if (dynamic_cast<GridField<float>*>(f.get()) || dynamic_cast<GridField<double>*>(f.get())) {
      out << (any ? ", '" : "'") << f->name() << "'";
      any = true;
    }
  return any ? out.str() : "none";
}

/// Calls make(field) with the grid field named `name` (float, else double), or fails at `table.field`.
template <class Make>
void with_grid_field(Composition& comp, const io::ScenarioTable& table, const std::string& name, Make make) {
  World& w = comp.world();
  if (auto* f = find_grid_field<float>(w, name)) return make(*f);
  if (auto* d = find_grid_field<double>(w, name)) return make(*d);
  table.fail("field", "no grid field named '" + name + "' (grid fields: " + grid_field_names(w) +
                          "; a [signal.<name>] table of the entity set \"signals\" creates one)");
}

/// [cell_chemotaxis]: the system "chemotaxis" on the named field ([chemotaxis] is surface_rd's kinetics).
void install_chemotaxis(Composition& comp) {
  const auto table = comp.root().table("cell_chemotaxis");
  const ChemotaxisParams params = read_chemotaxis_params(table);
  with_grid_field(comp, table, params.field, [&](auto& field) {
    using Real = precision_of<decltype(field)>;
    auto system = std::make_unique<ChemotaxisSystem<Real>>(params, field);
    auto* raw = system.get();  // the schedule owns the system for the composition's life
    comp.share("chemotaxis.system",
               std::make_shared<ChemotaxisHandle>(
                   ChemotaxisHandle{[raw](std::string column) { raw->set_cell_factor(std::move(column)); }}));
    comp.add_system(std::move(system));
  });
  std::ostringstream d;
  d << "chemotaxis up grad " << params.field << " (chi = " << params.chi.chi;
  if (params.chi.saturation > 0.0) d << ", receptor saturation c_sat = " << params.chi.saturation;
  d << ")";
  comp.add_description(d.str());
}

/// [point_source]: the system "point_source.<field>" on the named field.
void install_point_source(Composition& comp) {
  const auto table = comp.root().table("point_source");
  const PointSourceParams params = read_point_source_params(table);
  with_grid_field(comp, table, params.field, [&](auto& field) {
    using Real = precision_of<decltype(field)>;
    if (field.species_count() != 1)
      table.fail("field", "'" + params.field +
                              "' keeps its free fraction beside the concentration (exclude_cells = true): a "
                              "point source into it is not supported");
    const int axis = axis_outside_grid(field, params.position);
    if (axis >= 0) {
      std::ostringstream msg;
      msg << "the source's "
          << "xyz"[axis] << " = " << params.position[axis] << " is outside the grid of '" << params.field
          << "', which spans [0, "
          << (axis == 0   ? field.shape().nx
              : axis == 1 ? field.shape().ny
                          : field.shape().nz) *
                 field.shape().h
          << "] on that axis";
      table.fail(std::string(1, "xyz"[axis]), msg.str());
    }
    comp.add_system(std::make_unique<PointSourceSystem<Real>>(params, field));
  });
  std::ostringstream d;
  d << "point source of " << params.field << " at (" << params.position[0] << ", " << params.position[1]
    << ", " << params.position[2] << "), rate " << params.rate;
  comp.add_description(d.str());
}

}  // namespace

}  // namespace tissue::chemotaxis

namespace tissue::modules {

/// Registers chemotaxis up a grid field and the point source of a grid field.
void register_chemotaxis(ModuleRegistry& registry) {
  registry.add(
      ModuleInfo{"chemotaxis",
                 "the elements of every cell climb a grid field's gradient, velocity chi(c) grad c "
                 "(receptor-law saturation optional; Lapidus & Schiller 1976); list it before \"sem\"",
                 {"cell_chemotaxis"},
                 {"tissue", "signals"},
                 0.0,
                 chemotaxis::install_chemotaxis});
  registry.add(ModuleInfo{"point_source",
                          "a fixed point releasing into a grid field at a constant rate (cloud-in-cell "
                          "deposit); list it before \"signal_transport\"",
                          {"point_source"},
                          {"signals"},
                          0.0,
                          chemotaxis::install_point_source});
}

}  // namespace tissue::modules
