// What the gene_network folder registers: the module "gene_network" (the seed's network, or one written in
// the scenario), acting on the tissue's cells.

#include <algorithm>
#include <cmath>
#include <memory>

#include "engine/core/state_checks.hpp"
#include "engine/schedule/module_registry.hpp"
#include "modules/gene_network/gene_network.hpp"
#include "modules/gene_network/network_events.hpp"
#include "modules/gene_network/network_expressions.hpp"
#include "modules/gene_network/sbml_network.hpp"
#include "modules/gene_network/typed_network.hpp"
#include "modules/gene_network/user_network.hpp"

namespace tissue::grn {

namespace {

std::string join(const std::vector<std::string>& names) {
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  return list;
}

/// [gene_network] element_volume: the volume one element stands for [length^3], > 0 (default 1).
double read_element_volume(const io::ScenarioTable& t) {
  return t.number("element_volume", 1.0, io::Range::positive());
}

/// The cell inputs a scenario or SBML network may read: those offered by earlier modules, and the cell's
/// volume (kVolumeInput) unless an earlier module offers a field of that name or the network names one of
/// its own species or parameters so (scenario networks: [[gene_network.species]] names, [parameters]).
std::vector<std::string> with_volume_input(const io::ScenarioTable& t, std::vector<std::string> inputs) {
  if (std::find(inputs.begin(), inputs.end(), kVolumeInput) != inputs.end()) return inputs;
  if (has_user_network(t)) {
    for (const auto& s : t.tables("species"))
      if (s.has("name") && s.string("name", "") == kVolumeInput) return inputs;
    if (t.table("parameters").has(kVolumeInput)) return inputs;
  } else {
    // an SBML network reads the volume only where [gene_network.inputs] binds an id to it
    bool bound = false;
    const auto in = t.table("inputs");
    for (const auto& key : in.keys()) bound = bound || in.string(key, "") == kVolumeInput;
    if (!bound) return inputs;
  }
  inputs.push_back(kVolumeInput);
  return inputs;
}

/// [gene_network]: adds the species column (initial values on every cell) and the suprabasal flag, and the
/// network system (with the optional noise of `noise`, `noise_kind`, on either network). A scenario-defined
/// network may read the cell inputs offered by modules installed before it (sampled fields); the adhesion
/// input is measured from the membrane mesh when one is shared for adhesion ("membrane.adhesion").
void install_gene_network(Composition& comp) {
  const auto table = comp.root().table("gene_network");
  World& w = comp.world();
  const auto adhesion = comp.find<const TriangleIndex>("membrane.adhesion");
  std::vector<std::string> names;
  std::vector<double> initial;
  double neighbour_distance = 0.0;
  std::unique_ptr<System> network;
  const NoiseParams noise = read_noise_params(table);
  MagnitudeLimits limits;  // the species' numerical check beyond NaN (check_table_values)
  limits.max_abs = table.number("max_abs", limits.max_abs, io::Range::positive());
  limits.growth_checks =
      static_cast<int>(table.integer("growth_checks", limits.growth_checks, io::Range::closed(0, 1000000)));
  std::vector<UserEvent> events;  // a network's SBML events: their previous trigger values are a column
  bool typed = false;             // the network is selected by the cell's type (typed_network.hpp)
  bool reads_volume = false;
  double element_volume = 1.0;
  if (has_typed_networks(comp.root())) {
    // a network per cell type ([cell_types.gene_network]), merged into one spec (without events and the
    // volume input: read_typed_networks refuses them)
    auto merged = read_typed_networks(comp.root(), table, comp.settings().scenario_path,
                                      comp.find<const std::vector<std::string>>("cell_types").get(),
                                      comp.cell_inputs());
    typed = merged.typed;
    for (const auto& sp : merged.spec.species) {
      names.push_back(sp.name);
      initial.push_back(sp.initial);
    }
    names.push_back("adhesion");
    neighbour_distance = merged.spec.neighbour_distance;
    auto user = std::make_unique<UserNetworkSystem>(std::move(merged.spec), noise);
    if (adhesion) user->set_membrane(adhesion);
    network = std::move(user);
  } else if (has_user_network(table) || has_sbml_network(table)) {
    // a network written in the scenario, or read from SBML: the same spec, compiled the same way; the
    // cell's volume is one more input ("volume": element count x element_volume)
    element_volume = read_element_volume(table);
    const auto inputs = with_volume_input(table, comp.cell_inputs());
    auto spec = has_sbml_network(table) ? read_sbml_network(table, comp.settings().scenario_path, inputs)
                                        : read_user_network(table, inputs);
    reads_volume = std::find(spec.fields.begin(), spec.fields.end(), kVolumeInput) != spec.fields.end();
    if (reads_volume) w.cells.add_column<float>(kVolumeInput);
    events = spec.events;
    for (const auto& sp : spec.species) {
      names.push_back(sp.name);
      initial.push_back(sp.initial);
    }
    names.push_back("adhesion");
    neighbour_distance = spec.neighbour_distance;
    auto user = std::make_unique<UserNetworkSystem>(std::move(spec), noise);
    if (adhesion) user->set_membrane(adhesion);
    if (reads_volume) user->set_volume_input(element_volume);
    network = std::move(user);
  } else {
    const auto params = read_gene_network_params(table);
    const auto& inputs = comp.cell_inputs();
    if (!params.tgf_beta_field.empty() &&
        std::find(inputs.begin(), inputs.end(), params.tgf_beta_field) == inputs.end())
      table.fail("tgf_beta_field", "no signal field named '" + params.tgf_beta_field + "' (add [signal." +
                                       params.tgf_beta_field +
                                       "], the entity set \"signals\" and the module "
                                       "\"signal_sampling\" before \"gene_network\"; sampled fields: " +
                                       (inputs.empty() ? std::string("none") : join(inputs)) + ")");
    names.assign(std::begin(kSpeciesNames), std::end(kSpeciesNames));
    initial.assign(params.initial.begin(), params.initial.begin() + kAdhesion);
    neighbour_distance = params.neighbour_distance;
    auto builtin = std::make_unique<GeneNetworkSystem>(params);
    if (adhesion) builtin->set_membrane(adhesion);
    network = std::move(builtin);
  }
  if (noise.enabled() && names.size() - 1 > kMaxNoiseSpecies)
    table.fail("noise", "noise is keyed for at most " + std::to_string(kMaxNoiseSpecies) + " species, not " +
                            std::to_string(names.size() - 1));
  if (w.box.periodic_x && (w.box.lx < 2.0 * neighbour_distance || w.box.ly < 2.0 * neighbour_distance))
    comp.root().table("initial").fail(
        "spacing", "the periodic box (" + std::to_string(w.box.lx) + " x " + std::to_string(w.box.ly) +
                       ") must be at least twice the largest interaction distance " +
                       std::to_string(neighbour_distance) + " (gene_network.neighbour_distance)");

  // memory (engine allocation counters, tests/scenarios/memory_estimate.py): on the device the species
  // column with its capacity and the integrator's stage buffers (about 16 bytes per species and cell); on
  // the host its mirror, and each species repeated at every element of the cell in the snapshot writer's
  // point data (4 bytes per species and element). Rounded up by 10 %.
  {
    const auto n_species = static_cast<double>(names.size());
    exec::MemoryEstimate need;
    need.device = 18.0 * n_species * static_cast<double>(w.cells.capacity());
    need.host = n_species * (4.4 * static_cast<double>(w.elements.size()) +
                             9.0 * static_cast<double>(w.cells.capacity()));
    comp.reserve_memory(table, "",
                        std::to_string(names.size()) + " gene network species on " +
                            std::to_string(w.cells.size()) + " cells",
                        need);
  }
  auto& species = add_species_column(w, names);
  for (std::size_t c = 0; c < w.cells.size(); ++c)
    for (std::size_t s = 0; s < initial.size(); ++s)
      species.host(c, static_cast<int>(s)) = static_cast<float>(initial[s]);
  species.upload(w.cells.size());  // this column only: the others' device values are current
  if (!events.empty()) {
    // the events' trigger values before t = 0 (initialValue): a hidden column, not written to the outputs
    auto& prev = w.cells.add_column<float>(kEventColumn, static_cast<int>(events.size()));
    for (std::size_t c = 0; c < w.cells.size(); ++c)
      for (std::size_t e = 0; e < events.size(); ++e)
        prev.host(c, static_cast<int>(e)) = events[e].initial_value ? 1.0f : 0.0f;
    prev.upload(w.cells.size());
  }
  w.add_output({TissueOutput::Kind::flag, kSuprabasalFlag, "", w.flag_bit(kSuprabasalFlag)});
  w.add_output({TissueOutput::Kind::cell_components, "", kSpeciesColumn});
  // a species finite but beyond gene_network.max_abs, or growing without bound (after the NaN check)
  comp.add_check([names, guard = std::make_shared<MagnitudeGuard>("gene_network", "gene_network", limits),
                  scratch = std::make_shared<DeviceBuffer<float>>()](World& world) {
    auto& column = species_column(world);
    const std::size_t rows = world.cells.size();
    if (rows == 0) return;
    // every species in one reduction (component s at s * capacity)
    const std::vector<double> max_abs = exec::column_max_abs(Span<const float>(column.span()), rows,
                                                             column.capacity(), names.size(), *scratch);
    guard->observe(world.step, names, max_abs, [&](std::size_t s) {
      world.cells.download();  // only on failure: where the largest |value| lies
      std::size_t at = 0;
      for (std::size_t c = 1; c < rows; ++c)
        if (std::fabs(column.host(c, static_cast<int>(s))) > std::fabs(column.host(at, static_cast<int>(s))))
          at = c;
      return "in cell id " + std::to_string(world.cell_id.host(at));
    });
  });
  if (typed) {
    // the cell's type as the float column the merged network reads, refreshed before every network step
    w.cells.add_column<float>(kNetworkTypeColumn);
    comp.add_system(std::make_unique<NetworkTypeSystem>());
  }
  comp.add_system(std::move(network));
}

}  // namespace

}  // namespace tissue::grn

namespace tissue::modules {

/// Registers the per-cell gene network.
void register_gene_network(ModuleRegistry& registry) {
  registry.add(
      ModuleInfo{"gene_network",
                 "per-cell gene network with juxtacrine coupling (Christley et al. 2010, Table 2), or "
                 "one written in the scenario (species, Hill terms, NVRTC/muParser)",
                 {"gene_network"},
                 {"tissue"},
                 0.0,
                 grn::install_gene_network});
}

}  // namespace tissue::modules
