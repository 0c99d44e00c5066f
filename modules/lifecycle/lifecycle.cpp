#include "modules/lifecycle/lifecycle.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <vector>

#include "engine/core/cell_centres.hpp"
#include "engine/exec/host_for.hpp"
#include "engine/schedule/module_registry.hpp"
#include "engine/util/random.hpp"

namespace tissue::lifecycle {

LifecycleParams read_lifecycle_params(const io::ScenarioTable& t) {
  LifecycleParams p;
  p.growth_interval =
      static_cast<int>(t.integer("growth_interval", p.growth_interval, io::Range::closed(1, 1e9)));
  p.division_elements =
      static_cast<int>(t.integer("division_elements", p.division_elements, io::Range::closed(2, 100000)));
  p.delta_threshold = t.number("delta_threshold", p.delta_threshold, io::Range::non_negative());
  p.gate = t.string("gate", "");
  p.gate_threshold = t.number("gate_threshold", 0.0);
  if (t.has("gate_threshold") && p.gate.empty())
    t.fail("gate_threshold", "needs lifecycle.gate (a cell column)");
  p.cycle_cv = t.number("cycle_cv", 0.0, io::Range::closed(0.0, 3.0));
  p.cycle_resolution = static_cast<int>(
      t.integer("cycle_resolution", std::max(1, p.growth_interval / 20), io::Range::closed(1, 1e9)));
  if (t.has("cycle_resolution") && p.cycle_cv == 0.0)
    t.fail("cycle_resolution", "needs lifecycle.cycle_cv > 0 (a stochastic cell cycle)");
  return p;
}

double draw_growth_interval(std::uint64_t seed, std::int64_t cell_id, std::int64_t birth_step, double mean,
                            double cv) {
  if (cv <= 0.0) return mean;
  const double shape = 1.0 / (cv * cv);
  const std::uint64_t entity =
      (static_cast<std::uint64_t>(birth_step) << 32) ^ static_cast<std::uint64_t>(cell_id);
  return mean / shape * random::gamma_variate(seed, random::kCellCycle, entity, shape);
}

void start_cycle(World& w, std::size_t c, const LifecycleParams& p) {
  auto* interval = dynamic_cast<Column<float>*>(w.cells.find(kGrowthIntervalColumn));
  auto* next = dynamic_cast<Column<std::int64_t>*>(w.cells.find(kNextGrowthColumn));
  if (!interval || !next) return;
  const double steps = draw_growth_interval(w.seed, w.cell_id.host(c), w.step, p.growth_interval, p.cycle_cv);
  interval->host(c) = static_cast<float>(steps);
  next->host(c) = w.step + std::max<std::int64_t>(1, std::llround(steps));
}

namespace {

/// The columns the lifecycle reads by name: the SEM's element types and a gene network's species.
Column<std::int32_t>& element_types(World& w) {
  return w.elements.column<std::int32_t>(kElementTypeColumn);
}
Column<float>* species_of(World& w) {
  return dynamic_cast<Column<float>*>(w.cells.find(kSpeciesColumn));
}

using Vec = std::array<double, 3>;

/// Dominant eigenvector of a symmetric 3x3 matrix by power iteration (start: its largest column).
Vec principal_axis(const std::array<Vec, 3>& m) {
  std::size_t best = 0;
  double best_norm = -1.0;
  for (std::size_t j = 0; j < 3; ++j) {
    const double n2 = m[0][j] * m[0][j] + m[1][j] * m[1][j] + m[2][j] * m[2][j];
    if (n2 > best_norm) best_norm = n2, best = j;
  }
  Vec v{m[0][best], m[1][best], m[2][best]};
  if (best_norm <= 0.0) return {1.0, 0.0, 0.0};
  for (int it = 0; it < 50; ++it) {
    Vec w{0, 0, 0};
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j) w[i] += m[i][j] * v[j];
    const double n = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    if (n == 0.0) break;
    for (std::size_t i = 0; i < 3; ++i) v[i] = w[i] / n;
  }
  return v;
}

}  // namespace

namespace {

/// The columns a division reads and writes, found once per hook (the interface between modules is the
/// World's named columns; looking them up for each of 10^6 divisions would cost more than the divisions).
struct DivisionColumns {
  explicit DivisionColumns(World& w)
      : type(element_types(w)),
        species(species_of(w)),
        events(dynamic_cast<Column<float>*>(w.cells.find("gene_network_events"))),
        cell_type(dynamic_cast<Column<std::int32_t>*>(w.cells.find("cell_type"))) {}
  Column<std::int32_t>& type;
  Column<float>* species;
  Column<float>* events;            ///< a gene network's per-cell event state (its triggers' previous values)
  Column<std::int32_t>* cell_type;  ///< present when the scenario declares [[cell_types]]
};

void split(World& w, const DivisionColumns& cols, std::int32_t c, std::int32_t daughter,
           const TriangleIndex::View* membrane, DivisionOptions options) {
  const auto cu = static_cast<std::size_t>(c);
  const auto first = static_cast<std::size_t>(w.first.host(cu));
  const auto n = static_cast<std::size_t>(w.count.host(cu));
  const auto centre = cell_centre(w.x.host_data().data(), w.y.host_data().data(), w.z.host_data().data(),
                                  static_cast<std::int32_t>(first), static_cast<std::int32_t>(n), w.box);
  auto& type = cols.type;
  std::vector<Vec> d(n);
  bool adhesive = false;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t e = first + k;
    d[k] = {w.box.min_image_x(w.x.host(e) - centre.x), w.box.min_image_y(w.y.host(e) - centre.y),
            w.z.host(e) - centre.z};
    adhesive = adhesive || type.host(e) == kAdhesiveElementType;
  }
  if (!options.basal) adhesive = false;  // a symmetric division: across the principal axis
  Vec axis{0.0, 0.0, 1.0};
  if (adhesive && membrane) {
    const SurfaceHit hit = membrane->closest_anywhere(centre.x, centre.y, centre.z);
    if (hit.triangle >= 0) axis = {hit.normal[0], hit.normal[1], hit.normal[2]};
  }
  if (!adhesive) {
    std::array<Vec, 3> cov{};
    for (const auto& v : d)
      for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j < 3; ++j) cov[i][j] += v[i] * v[j];
    axis = principal_axis(cov);
  }
  // Order: adhesive elements first (the attached daughter keeps all of them, as the seed says), then by
  // position along the axis; the first half stays with the mother.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  const auto proj = [&](std::size_t k) { return d[k][0] * axis[0] + d[k][1] * axis[1] + d[k][2] * axis[2]; };
  const auto is_adhesive = [&](std::size_t k) {
    return adhesive && type.host(first + k) == kAdhesiveElementType;
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (is_adhesive(a) != is_adhesive(b)) return is_adhesive(a);
    return proj(a) < proj(b);
  });

  const auto du = static_cast<std::size_t>(daughter);
  for (std::size_t k = n / 2; k < n; ++k) {
    const std::size_t e = first + order[k];
    w.cell.host(e) = daughter;
    if (options.basal) type.host(e) = 0;  // the daughter that leaves is given no adhesive elements
  }
  if (Column<float>* species = cols.species)
    for (int s = 0; s < species->components(); ++s) {
      species->host(cu, s) *= 0.5f;
      species->host(du, s) = species->host(cu, s);
    }
  // both daughters keep the mother's event state
  if (Column<float>* events = cols.events)
    for (int e = 0; e < events->components(); ++e) events->host(du, e) = events->host(cu, e);
  w.flags.host(du) = w.flags.host(cu);
  // a daughter is of its mother's cell type
  if (Column<std::int32_t>* cell_type = cols.cell_type) cell_type->host(du) = cell_type->host(cu);
  w.cx.host(du) = w.cx.host(cu);
  w.cy.host(du) = w.cy.host(cu);
  w.cz.host(du) = w.cz.host(cu);
}

}  // namespace

void split_cell(World& w, std::int32_t c, std::int32_t d, const TriangleIndex::View* membrane,
                DivisionOptions options) {
  split(w, DivisionColumns(w), c, d, membrane, options);
}

std::int32_t divide_cell(World& w, std::int32_t c, const TriangleIndex::View* membrane,
                         DivisionOptions options) {
  const auto daughter = static_cast<std::int32_t>(w.add_daughters_host({c}));
  split_cell(w, c, daughter, membrane, options);
  return daughter;
}

void grow_and_divide(World& w, const LifecycleParams& p) {
  const std::size_t n = w.cells.size();
  Column<float>* species = species_of(w);
  const bool has_delta = species && p.delta_species >= 0 && species->components() > p.delta_species;
  const std::uint32_t growing = w.flag_bit(kGrowingFlag);
  const std::vector<float>* gate = p.gate.empty() ? nullptr : &w.cells.column<float>(p.gate).host_data();
  const auto gate_threshold = static_cast<float>(p.gate_threshold);
  // the stochastic cycle: a cell's growth event comes when its own clock is due (each interval its own)
  auto* interval = dynamic_cast<Column<float>*>(w.cells.find(kGrowthIntervalColumn));
  auto* next = dynamic_cast<Column<std::int64_t>*>(w.cells.find(kNextGrowthColumn));

  // 1. growth, on the host's threads: which cells grow, and where (their centre); then one append of all the
  //    new elements, cell by cell in order (the rows a cell-by-cell loop would have appended)
  std::vector<std::int32_t> grows(n, 0);
  std::vector<float> at(3 * n);
  {
    const float* x = w.x.host_data().data();
    const float* y = w.y.host_data().data();
    const float* z = w.z.host_data().data();
    exec::host_for(n, [&](std::size_t c) {
      w.flags.host(c) &= ~growing;
      if (next) {
        if (w.step < next->host(c)) return;
        next->host(c) += std::max<std::int64_t>(1, std::llround(static_cast<double>(interval->host(c))));
      }
      const bool grows_now =
          (!has_delta || species->host(c, p.delta_species) < static_cast<float>(p.delta_threshold)) &&
          (!gate || (*gate)[c] > gate_threshold);
      if (!grows_now) return;
      const auto centre = cell_centre(x, y, z, w.first.host(c), w.count.host(c), w.box);
      at[3 * c] = centre.x;
      at[3 * c + 1] = centre.y;
      at[3 * c + 2] = centre.z;
      w.flags.host(c) |= growing;
      grows[c] = 1;
    });
  }
  std::vector<std::int32_t> slot(n, 0);
  std::exclusive_scan(grows.begin(), grows.end(), slot.begin(), 0);
  const std::size_t grown = n == 0 ? 0 : static_cast<std::size_t>(slot.back() + grows.back());
  if (grown > 0) {
    const std::size_t e0 = w.add_elements_host(grown);  // type 0
    exec::host_for(n, [&](std::size_t c) {
      if (grows[c] != 0)
        w.set_element_host(e0 + static_cast<std::size_t>(slot[c]), static_cast<std::int32_t>(c), at[3 * c],
                           at[3 * c + 1], at[3 * c + 2]);
    });
  }

  // 2. divisions, on contiguous element ranges: the daughters' rows in the mothers' order (as one division
  //    after another would append them), then every split in parallel (each writes only its own rows)
  std::vector<std::int32_t> mothers;
  for (std::size_t c = 0; c < n; ++c)
    if (w.count.host(c) + grows[c] >= p.division_elements) mothers.push_back(static_cast<std::int32_t>(c));
  if (mothers.empty()) {
    // none: still called, as it is collective where a decomposed run numbers them (World::daughter_ids)
    w.add_daughters_host(mothers);
    return;
  }
  w.compact_host();  // contiguous element ranges again, now including the new elements
  const std::size_t d0 = w.add_daughters_host(mothers);
  const DivisionColumns cols(w);
  TriangleIndex::View membrane;
  if (p.membrane) membrane = p.membrane->host_view();
  exec::host_for(mothers.size(), [&](std::size_t k) {
    const auto daughter = static_cast<std::int32_t>(d0 + k);
    split(w, cols, mothers[k], daughter, p.membrane ? &membrane : nullptr, DivisionOptions{});
    // both daughters start a new cycle (no-op for the seed's deterministic one)
    start_cycle(w, static_cast<std::size_t>(mothers[k]), p);
    start_cycle(w, static_cast<std::size_t>(daughter), p);
  });
}

}  // namespace tissue::lifecycle

namespace tissue::lifecycle {

namespace {

/// [lifecycle]: the growth-and-division hook. Finds Delta by name in the species column (when a gene
/// network added one), checks the gate names an offered cell input, and divides along the membrane's normal
/// when a membrane mesh is shared.
void install_lifecycle(Composition& comp) {
  const auto table = comp.root().table("lifecycle");
  auto life = read_lifecycle_params(table);
  if (const auto owner = comp.find<const std::string>("cell_growth"))
    table.fail("", "the module " + *owner + " already grows and divides the cells: use lifecycle or " +
                       *owner + ", not both");
  comp.share("cell_growth", std::make_shared<const std::string>("lifecycle"));
  World& w = comp.world();
  if (const auto* species = w.cells.find(kSpeciesColumn)) {
    life.delta_species = species->component_index(kDeltaSpecies);
    if (life.delta_species < 0)
      table.fail(
          "delta_threshold",
          "the lifecycle lets a cell grow while its Delta is below lifecycle.delta_threshold: the gene "
          "network needs a species named delta");
  }
  const auto& inputs = comp.cell_inputs();
  if (!life.gate.empty() && std::find(inputs.begin(), inputs.end(), life.gate) == inputs.end()) {
    std::string list;
    for (const auto& n : inputs) list += (list.empty() ? "" : ", ") + n;
    table.fail("gate",
               "no sampled field named '" + life.gate + "' (sampled fields: " +
                   (list.empty() ? "none; add [signal.<name>] or [membrane.rd] and their sampling" : list) +
                   ")");
  }
  life.membrane = comp.find<const TriangleIndex>("membrane.index");
  w.flag_bit(kGrowingFlag);
  if (life.cycle_cv > 0.0) {
    // each cell's growth interval and next event, drawn for the cells there now (born at step 0)
    w.cells.add_column<float>(kGrowthIntervalColumn);
    w.cells.add_column<std::int64_t>(kNextGrowthColumn);
    for (std::size_t c = 0; c < w.cells.size(); ++c) start_cycle(w, c, life);
    w.cells.column<float>(kGrowthIntervalColumn).upload(w.cells.size());
    w.cells.column<std::int64_t>(kNextGrowthColumn).upload(w.cells.size());
  }
  // what the hook reads and writes, for `tissue check`: it appends and moves elements and cells (every
  // column of both tables follows its rows), from positions, element types, Delta and the gate
  AccessList access;
  access.read("elements", "x", "y", "z", kElementTypeColumn).read("cells", "first", "count", "flags");
  if (life.delta_species >= 0) access.read("cells", kSpeciesColumn);
  if (!life.gate.empty()) access.read("cells", life.gate);
  access.write("elements", "x", "y", "z", "cell", kElementTypeColumn)
      .write("cells", "id", "first", "count", "cx", "cy", "cz", "flags");
  if (life.delta_species >= 0) access.write("cells", kSpeciesColumn);
  if (w.cells.find("gene_network_events")) access.read_write("cells", "gene_network_events");
  if (life.cycle_cv > 0.0) {
    access.read("cells", kGrowthIntervalColumn, kNextGrowthColumn);
    access.write("cells", kGrowthIntervalColumn, kNextGrowthColumn);
  }
  comp.add_hook(
      "lifecycle.grow_and_divide", life.cycle_cv > 0.0 ? life.cycle_resolution : life.growth_interval,
      [life](World& world, const StepContext&) { grow_and_divide(world, life); }, access);
  if (!life.gate.empty()) {
    const std::string gate = life.gate;
    const double threshold = life.gate_threshold;
    comp.add_summary([gate, threshold](World& world) {
      const auto& v = world.cells.column<float>(gate).host_data();
      std::size_t open = 0;
      for (std::size_t c = 0; c < world.cells.size(); ++c)
        open += v[c] > static_cast<float>(threshold) ? 1 : 0;
      return "cells with " + gate + " > " + std::to_string(threshold) + ": " + std::to_string(open) + " of " +
             std::to_string(world.cells.size());
    });
  }
}

}  // namespace

}  // namespace tissue::lifecycle

namespace tissue::modules {

/// Registers cell growth and division.
void register_lifecycle(ModuleRegistry& registry) {
  registry.add(ModuleInfo{"lifecycle",
                          "cell growth (one element per interval while Delta is low, optionally gated by a "
                          "sampled field) and division at a size (Christley et al. 2010)",
                          {"lifecycle"},
                          {"tissue"},
                          0.0,
                          lifecycle::install_lifecycle});
}

}  // namespace tissue::modules
