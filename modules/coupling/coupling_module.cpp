// What the coupling folder registers: the entity set "signals" (diffusible fields on grids over the tissue)
// and the coupling modules "signal_sampling" (fields -> cells), "signal_transport" (cells -> fields:
// diffusion, decay, secretion, uptake) and "membrane_sampling" (a membrane surface field -> cells).

#include <algorithm>
#include <sstream>

#include "engine/io/grid_output.hpp"
#include "engine/schedule/module_registry.hpp"
#include "modules/coupling/signal_field.hpp"
#include "modules/coupling/surface_sampling.hpp"

namespace tissue::coupling {

namespace {

/// The signal fields of a scenario, shared by the entity set with the modules as "signals".
struct Signals {
  std::vector<SignalFieldParams> params;
  std::vector<GridField<float>*> fields;
};

/// One line about a signal field: total amount, grid range, and the mean sampled value over cells without
/// and with the state flag (host mirrors of the cells must be current).
std::string summarize_signal(World& w, GridField<float>& field) {
  const double amount = field_amount(field);
  field.download();
  const auto& v = field.host();  // species 0: the signal (species 1, when present, its free fraction)
  const auto [lo, hi] =
      std::minmax_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(field.cells()));
  auto& sample = w.cells.column<float>(field.name());
  const auto& flags = w.flag_names();
  const bool has_state = std::find(flags.begin(), flags.end(), kStateFlag) != flags.end();
  const std::uint32_t bit = has_state ? w.flag_bit(kStateFlag) : 0u;
  double sum[2] = {0.0, 0.0};
  std::size_t count[2] = {0, 0};
  for (std::size_t c = 0; c < w.cells.size(); ++c) {
    const int state = (w.flags.host(c) & bit) ? 1 : 0;
    sum[state] += static_cast<double>(sample.host(c));
    ++count[state];
  }
  std::ostringstream out;
  out << "signal " << field.name() << ": amount " << amount << ", grid min " << *lo << " max " << *hi
      << "; mean at cells: basal state " << (count[0] ? sum[0] / static_cast<double>(count[0]) : 0.0) << " ("
      << count[0] << " cells), suprabasal state " << (count[1] ? sum[1] / static_cast<double>(count[1]) : 0.0)
      << " (" << count[1] << " cells)";
  return out.str();
}

/// [signal.<name>]: one grid field per sub-table over the tissue's box, with the cells' sample columns
/// `<name>` (offered as an input) and `<name>_gradient`, their grid writers ([output] signal_grids) and
/// summary lines.
void create_signals(Composition& comp) {
  const auto table = comp.root().table("signal");
  if (!comp.has_world() || comp.world().cells.size() == 0)
    table.fail("", "signal fields span the tissue's box: list the entity set \"tissue\" before \"signals\"");
  World& w = comp.world();
  auto signals = std::make_shared<Signals>();
  for (const auto& name : table.keys()) {
    if (!w.box.floor)
      table.fail(
          name,
          "signal fields over a tissue seeded on a membrane mesh are not supported (the grid spans the "
          "periodic box of the monolayer layout)");
    signals->params.push_back(read_signal_field_params(table.table(name), name, w.box));
  }
  for (const auto& p : signals->params) {
    auto& field = add_signal_field<float>(w, p);
    signals->fields.push_back(&field);
    comp.offer_cell_input(p.name);
    w.add_output({TissueOutput::Kind::cell_column, p.name, p.name});
    w.add_output({TissueOutput::Kind::cell_column, p.name + "_gradient", p.name + "_gradient"});
    std::ostringstream d;
    d << "signal " << p.name << " on a " << p.shape.nx << " x " << p.shape.ny << " x " << p.shape.nz
      << " grid (h = " << std::to_string(p.shape.h) << ")";
    comp.add_description(d.str());
  }
  if (comp.root().table("output").boolean("signal_grids", true) && !signals->fields.empty()) {
    const auto fields = signals->fields;
    comp.add_writer([fields](const std::filesystem::path& dir,
                             const io::OutputPiece& piece) -> std::unique_ptr<SnapshotWriter> {
      std::vector<std::unique_ptr<SnapshotWriter>> parts;
      for (auto* f : fields)
        parts.push_back(std::make_unique<io::GridWriter<float>>(dir, *f, io::GridOutputOptions{}, piece));
      return std::make_unique<io::CompositeWriter>(std::move(parts));
    });
  }
  for (auto* f : signals->fields) comp.add_summary([f](World& world) { return summarize_signal(world, *f); });
  comp.share("signals", signals);
}

std::shared_ptr<Signals> signals_of(Composition& comp) {
  auto signals = comp.find<Signals>("signals");
  if (!signals) throw std::logic_error("the entity set \"signals\" shares no signal fields");
  return signals;
}

void install_signal_sampling(Composition& comp) {
  for (auto* f : signals_of(comp)->fields) comp.add_system(std::make_unique<FieldSamplingSystem<float>>(*f));
}

void install_signal_transport(Composition& comp) {
  const auto signals = signals_of(comp);
  for (std::size_t i = 0; i < signals->fields.size(); ++i)
    comp.add_system(std::make_unique<SignalFieldSystem<float>>(signals->params[i], *signals->fields[i]));
}

/// Samples the membrane's surface field ("membrane.field", shared by the module membrane_rd) at the cells
/// into the columns membrane_<species>, offered as inputs.
void install_membrane_sampling(Composition& comp) {
  auto field = comp.find<SurfaceField<float>>("membrane.field");
  if (!field)
    comp.root()
        .table("simulation")
        .fail("modules", "membrane_sampling samples the membrane's field: list \"membrane_rd\" before it");
  World& w = comp.world();
  for (const auto& column : add_surface_sample_columns(w, *field)) {
    comp.offer_cell_input(column);
    w.add_output({TissueOutput::Kind::cell_column, column, column});
  }
  comp.add_system(std::make_unique<SurfaceSamplingSystem<float>>(
      *field, comp.find<const TriangleIndex>("membrane.index")));
}

}  // namespace

}  // namespace tissue::coupling

namespace tissue::modules {

/// Registers the signal fields over the tissue and the couplings between fields and cells.
void register_coupling(ModuleRegistry& registry) {
  registry.add(EntitySetInfo{"signals",
                             "diffusible signals on 3D grids over the tissue's box ([signal.<name>]; after "
                             "\"tissue\"), sampled into the cells' <name> and <name>_gradient columns",
                             {"signal"},
                             coupling::create_signals});
  registry.add(
      ModuleInfo{"signal_sampling",
                 "each cell's value and gradient of every signal at its centre (trilinear), from the "
                 "previous step's field",
                 {},
                 {"tissue", "signals"},
                 0.0,
                 coupling::install_signal_sampling});
  registry.add(ModuleInfo{"signal_transport",
                          "one explicit step of every signal: diffusion, decay, the cells' secretion and "
                          "uptake (by state), optional exclusion by cell volume",
                          {},
                          {"tissue", "signals"},
                          0.0,
                          coupling::install_signal_transport});
  registry.add(ModuleInfo{"membrane_sampling",
                          "each cell's sample of the membrane field at the closest point of the membrane "
                          "(columns membrane_<species>)",
                          {},
                          {"tissue", "membrane"},
                          0.0,
                          coupling::install_membrane_sampling});
}

}  // namespace tissue::modules
