// What the rules folder registers: the modules "rules" (behaviour rules per cell type, a CPU hook) and
// "motility" (random motility of cells, a system).

#include <algorithm>

#include "engine/grid/grid.hpp"
#include "engine/schedule/module_registry.hpp"
#include "modules/chemotaxis/chemotaxis.hpp"
#include "modules/rules/motility.hpp"
#include "modules/rules/rules.hpp"

namespace tissue::rules {

namespace {

/// [motility]: the system, listed after the SEM; shared as "motility.system" for the rules.
void install_motility(Composition& comp) {
  const auto table = comp.root().table("motility");
  const double diffusion = table.number("diffusion", 0.0, io::Range::non_negative());
  auto system = std::make_shared<MotilitySystem>(diffusion);
  comp.share("motility.system", system);
  struct Forward final : System {  // the schedule owns systems; the rules keep a handle on this one
    std::shared_ptr<MotilitySystem> s;
    std::string name() const override { return s->name(); }
    AccessList access() const override { return s->access(); }
    void run(World& w, const StepContext& ctx) override { s->run(w, ctx); }
  };
  auto forward = std::make_unique<Forward>();
  forward->s = system;
  comp.add_system(std::move(forward));
}

/// [rules] and [cell_types.rules]: the hook, its columns, and a summary line per secreted field.
void install_rules(Composition& comp) {
  const auto root = comp.root();
  const auto table = root.table("rules");
  const auto types = comp.find<const std::vector<std::string>>("cell_types");
  if (!types)
    table.fail("",
               "behaviour rules are written per cell type: declare them with [[cell_types]] (entity set "
               "\"tissue\")");
  World& w = comp.world();
  std::vector<std::string> species;
  if (const auto* column = w.cells.find("species")) species = column->component_names();
  std::vector<std::string> grid_fields;
  for (const auto& f : w.fields)
    if (dynamic_cast<GridField<float>*>(f.get()) || dynamic_cast<GridField<double>*>(f.get()))
      grid_fields.push_back(f->name());
  RulesSpec spec = read_rules(root, *types, species, comp.cell_inputs(), grid_fields);
  for (std::size_t t = 0; t < spec.by_type.size(); ++t)
    for (const auto& s : spec.by_type[t].secretions)
      for (const auto& f : w.fields)
        if (f->name() == s.field) {
          const bool one = dynamic_cast<GridField<float>*>(f.get())
                               ? dynamic_cast<GridField<float>*>(f.get())->species_count() == 1
                               : dynamic_cast<GridField<double>*>(f.get())->species_count() == 1;
          if (!one)
            root.tables("cell_types")[t].table("rules").fail(
                "secretion", "the field \"" + s.field +
                                 "\" holds more than one species (cells excluded from it); secretion needs a "
                                 "field of one species");
        }
  // one module grows and divides the cells: their daughters' columns are each one's own
  if (const auto owner = comp.find<const std::string>("cell_growth"))
    table.fail("", "the module " + *owner + " already grows and divides the cells: use rules or " + *owner +
                       ", not both");
  comp.share("cell_growth", std::make_shared<const std::string>("rules"));

  const auto motility = comp.find<MotilitySystem>("motility.system");
  if (spec.any_motility && !motility)
    table.fail("",
               "a cell type has a motility rule: add the module \"motility\" (before \"sem\") to "
               "[simulation] modules");
  const auto chemotaxis = comp.find<chemotaxis::ChemotaxisHandle>("chemotaxis.system");
  if (spec.any_chemotaxis && !chemotaxis)
    table.fail("",
               "a cell type has a chemotaxis rule: add the module \"chemotaxis\" ([cell_chemotaxis]) before "
               "\"rules\" in [simulation] modules");
  auto engine = std::make_shared<RuleEngine>(spec, comp.find<const TriangleIndex>("membrane.index"));
  engine->install(w);
  if (motility && spec.any_motility) {
    auto& column = w.cells.add_column<float>(kMotilityColumn);
    for (std::size_t c = 0; c < w.cells.size(); ++c)
      column.host(c) = static_cast<float>(motility->diffusion());
    column.upload(w.cells.size());
    motility->set_per_cell();
  }
  if (spec.any_chemotaxis) {  // every cell climbs with chi until its type's rule says otherwise
    auto& column = w.cells.add_column<float>(kChemotaxisColumn);
    for (std::size_t c = 0; c < w.cells.size(); ++c) column.host(c) = 1.0f;
    column.upload(w.cells.size());
    chemotaxis->set_cell_factor(kChemotaxisColumn);
  }

  AccessList access;
  access.read("elements", "x", "y", "z", "type")
      .read("cells", "id", "first", "count", "cx", "cy", "cz", "flags", kCellTypeColumn, kBirthStepColumn,
            kGrowthProgressColumn, kApoptosisStartColumn, kApoptosisElementsColumn);
  if (!species.empty()) access.read("cells", "species");
  for (const auto& f : spec.inputs) access.read("cells", f);
  access.write("elements", "x", "y", "z", "cell", "type")
      .write("cells", "id", "first", "count", "cx", "cy", "cz", "flags", kCellTypeColumn, kBirthStepColumn,
             kGrowthProgressColumn, kApoptosisStartColumn, kApoptosisElementsColumn);
  if (!species.empty()) access.write("cells", "species");
  if (spec.any_motility) access.write("cells", kMotilityColumn);
  if (spec.any_chemotaxis) access.write("cells", kChemotaxisColumn);
  for (const auto& tr : spec.by_type)
    for (const auto& s : tr.secretions) access.read("grid", s.field).write("grid", s.field);
  comp.add_hook(
      "rules.apply", spec.interval,
      [engine](World& world, const StepContext& ctx) { engine->apply(world, ctx.dt); }, access);
  comp.add_summary([engine](World& world) {
    std::string line = "cells by type:";
    const auto& names = engine->spec().types;
    std::vector<std::size_t> count(names.size(), 0);
    const auto& type = world.cells.column<std::int32_t>(kCellTypeColumn);
    for (std::size_t c = 0; c < world.cells.size(); ++c) ++count[static_cast<std::size_t>(type.host(c))];
    for (std::size_t k = 0; k < names.size(); ++k)
      line += (k ? ", " : " ") + names[k] + " " + std::to_string(count[k]);
    for (const auto& b : engine->budgets())
      line += "; " + b.field + " secreted " + std::to_string(b.secreted) + ", taken up " +
              std::to_string(b.taken_up);
    return line;
  });
}

}  // namespace

}  // namespace tissue::rules

namespace tissue::modules {

/// Registers behaviour rules and random motility.
void register_rules(ModuleRegistry& registry) {
  registry.add(
      ModuleInfo{"rules",
                 "behaviour rules per cell type written in the scenario: growth, division, apoptosis, "
                 "stochastic transitions, secretion and uptake, motility (expressions, like the gene "
                 "network's)",
                 {"rules"},
                 {"tissue"},
                 0.0,
                 rules::install_rules});
  registry.add(
      ModuleInfo{"motility",
                 "random motility of whole cells: Brownian motion with a diffusion coefficient, uniform "
                 "or per cell from a behaviour rule",
                 {"motility"},
                 {"tissue"},
                 0.0,
                 rules::install_motility});
}

}  // namespace tissue::modules
