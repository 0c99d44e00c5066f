#include "modules/rules/rules.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "engine/core/cell_centres.hpp"
#include "engine/exec/error.hpp"
#include "engine/grid/grid.hpp"
#include "engine/grid/point_sampling.hpp"
#include "engine/util/random.hpp"
#include "modules/gene_network/expression_language.hpp"
#include "modules/lifecycle/lifecycle.hpp"

namespace tissue::rules {

namespace {

/// The cell's own variables besides species, means, fields and parameters.
const std::vector<std::string>& cell_variables() {
  static const std::vector<std::string> names{"elements", "age", "time", "x", "y", "z"};
  return names;
}

constexpr const char* kNamesHint =
    "not a species, mean_<species>, a sampled field, elements, age, time, x, y, z, a rules parameter or a "
    "function";

}  // namespace

RulesSpec read_rules(const io::ScenarioTable& root, const std::vector<std::string>& types,
                     const std::vector<std::string>& species, const std::vector<std::string>& cell_inputs,
                     const std::vector<std::string>& grid_fields) {
  RulesSpec spec;
  const auto t = root.table("rules");
  spec.types = types;
  spec.species = species;
  spec.interval = static_cast<int>(t.integer("interval", spec.interval, io::Range::closed(1, 1e9)));
  spec.neighbour_distance = t.number("neighbour_distance", spec.neighbour_distance, io::Range::positive());

  // names: unique across species, their means, sampled fields, the cell's variables, parameters, functions
  std::map<std::string, std::string> taken;
  for (const auto& f : grn::expression_functions()) taken[f] = "a function";
  for (const auto& v : cell_variables()) taken[v] = "a variable of every cell";
  for (const auto& s : species) {
    taken[s] = "a species";
    taken["mean_" + s] = "a neighbour mean";
  }
  for (const auto& f : cell_inputs) {
    if (taken.count(f)) continue;  // a field named like a species is refused where it is declared
    taken[f] = "a sampled field";
  }
  const auto params = t.table("parameters");
  for (const auto& key : params.keys()) {
    if (!grn::valid_expression_name(key))
      params.fail(key,
                  "\"" + key + "\" is not a valid name (letters, digits and _, not starting with a digit)");
    const auto it = taken.find(key);
    if (it != taken.end()) params.fail(key, "\"" + key + "\" is already " + it->second);
    taken[key] = "a rules parameter";
    spec.parameters.emplace_back(key, params.number(key, 0.0));
  }
  std::set<std::string> variables;
  for (const auto& [name, what] : taken)
    if (what != "a function" && what != "a rules parameter") variables.insert(name);

  std::set<int> means;
  std::set<std::string> inputs;
  const auto read_rule = [&](const io::ScenarioTable& table, const std::string& key,
                             const std::string& path) {
    Rule r;
    if (!table.has(key)) return r;
    r.text = table.string(key, "");
    r.where = table.where(key) + ": " + path + "." + key;
    r.reads = grn::check_expression(spec.parameters, variables, r.text, r.where, kNamesHint);
    for (const auto& name : r.reads) {
      if (name.rfind("mean_", 0) == 0) {
        const auto it = std::find(species.begin(), species.end(), name.substr(5));
        if (it != species.end()) means.insert(static_cast<int>(it - species.begin()));
      }
      if (std::find(cell_inputs.begin(), cell_inputs.end(), name) != cell_inputs.end()) inputs.insert(name);
    }
    return r;
  };
  const auto type_index = [&](const io::ScenarioTable& table, const std::string& key) {
    const std::string name = table.string(key, "");
    const auto it = std::find(types.begin(), types.end(), name);
    if (it == types.end()) {
      std::string known;
      for (const auto& n : types) known += (known.empty() ? "" : ", ") + n;
      table.fail(key, "unknown cell type \"" + name + "\" (declared in [[cell_types]]: " + known + ")");
    }
    return static_cast<int>(it - types.begin());
  };

  const auto entries = root.tables("cell_types");
  spec.by_type.resize(types.size());
  for (std::size_t k = 0; k < entries.size() && k < types.size(); ++k) {
    const auto r = entries[k].table("rules");
    const std::string path = "cell_types[" + std::to_string(k) + "].rules";
    TypeRules& tr = spec.by_type[k];
    tr.growth_rate = read_rule(r, "growth_rate", path);
    tr.divide_when = read_rule(r, "divide_when", path);
    tr.apoptosis_rate = read_rule(r, "apoptosis_rate", path);
    tr.motility = read_rule(r, "motility", path);
    spec.any_motility = spec.any_motility || !tr.motility.empty();
    tr.chemotaxis = read_rule(r, "chemotaxis", path);
    spec.any_chemotaxis = spec.any_chemotaxis || !tr.chemotaxis.empty();
    tr.apoptosis_duration = r.number("apoptosis_duration", 0.0, io::Range::non_negative());
    if (r.has("apoptosis_duration") && tr.apoptosis_rate.empty())
      r.fail("apoptosis_duration",
             "needs apoptosis_rate (the rate at which cells of this type start apoptosis)");
    tr.division = r.string("division", "basal", {"basal", "longest_axis"}) == "basal"
                      ? DivisionAxis::basal
                      : DivisionAxis::longest_axis;
    tr.halve_species = r.string("division_species", "halve", {"halve", "copy"}) == "halve";
    for (const char* key : {"division", "division_species"})
      if (r.has(key) && tr.divide_when.empty())
        r.fail(key, "needs divide_when (when cells of this type divide)");
    const auto transitions = r.tables("transitions");
    for (std::size_t i = 0; i < transitions.size(); ++i) {
      const auto& e = transitions[i];
      Transition tn;
      if (!e.has("to")) e.fail("to", "missing: the cell type a transition leads to");
      tn.to = type_index(e, "to");
      if (tn.to == static_cast<int>(k)) e.fail("to", "a transition leads to another type");
      if (!e.has("rate")) e.fail("rate", "missing: the transition's rate [1/time] as an expression");
      tn.rate = read_rule(e, "rate", path + ".transitions[" + std::to_string(i) + "]");
      tr.transitions.push_back(tn);
    }
    const auto secretions = r.tables("secretion");
    for (std::size_t i = 0; i < secretions.size(); ++i) {
      const auto& e = secretions[i];
      Secretion s;
      s.field = e.string("field", "");
      if (std::find(grid_fields.begin(), grid_fields.end(), s.field) == grid_fields.end()) {
        std::string known;
        for (const auto& n : grid_fields) known += (known.empty() ? "" : ", ") + n;
        e.fail("field",
               "no grid field named \"" + s.field + "\" (grid fields: " +
                   (known.empty() ? "none; add a [signal.<name>] and the entity set \"signals\"" : known) +
                   ")");
      }
      const std::string p = path + ".secretion[" + std::to_string(i) + "]";
      s.rate = read_rule(e, "rate", p);
      s.uptake = read_rule(e, "uptake", p);
      if (s.rate.empty() && s.uptake.empty())
        e.fail("field", "needs a rate (secretion) or an uptake, or both");
      tr.secretions.push_back(s);
    }
  }
  spec.mean_species.assign(means.begin(), means.end());
  for (const auto& f : cell_inputs)
    if (inputs.count(f)) spec.inputs.push_back(f);
  return spec;
}

void neighbour_means(World& w, const std::vector<int>& rows, double distance, std::vector<double>& out) {
  const std::size_t n = w.cells.size();
  out.assign(rows.size() * n, 0.0);
  if (rows.empty() || n == 0) return;
  auto* species = dynamic_cast<Column<float>*>(w.cells.find("species"));
  if (!species) return;
  const auto& cx = w.cx.host_data();
  const auto& cy = w.cy.host_data();
  const auto& cz = w.cz.host_data();
  // bins of side >= distance over the box (x, y) and the cells' z range; periodic axes wrap
  const double d2 = distance * distance;
  const float zmin = *std::min_element(cz.begin(), cz.begin() + static_cast<std::ptrdiff_t>(n));
  const float zmax = *std::max_element(cz.begin(), cz.begin() + static_cast<std::ptrdiff_t>(n));
  const auto bins_along = [&](double length) { return std::max(1, static_cast<int>(length / distance)); };
  const int bx = bins_along(w.box.lx), by = bins_along(w.box.ly),
            bz = bins_along(static_cast<double>(zmax - zmin) + 1e-6);
  const auto bin_of = [&](float v, double lo, double length, int nb) {
    const int b = static_cast<int>((static_cast<double>(v) - lo) / length * nb);
    return std::clamp(b, 0, nb - 1);
  };
  const double zl = std::max(1e-6, static_cast<double>(zmax - zmin));
  std::vector<std::vector<std::int32_t>> bins(static_cast<std::size_t>(bx) * static_cast<std::size_t>(by) *
                                              static_cast<std::size_t>(bz));
  const auto flat = [&](int i, int j, int k) {
    return (static_cast<std::size_t>(k) * static_cast<std::size_t>(by) + static_cast<std::size_t>(j)) *
               static_cast<std::size_t>(bx) +
           static_cast<std::size_t>(i);
  };
  std::vector<int> bi(n), bj(n), bk(n);
  for (std::size_t c = 0; c < n; ++c) {
    bi[c] = bin_of(cx[c], 0.0, w.box.lx, bx);
    bj[c] = bin_of(cy[c], 0.0, w.box.ly, by);
    bk[c] = bin_of(cz[c], static_cast<double>(zmin), zl, bz);
    bins[flat(bi[c], bj[c], bk[c])].push_back(static_cast<std::int32_t>(c));
  }
  std::vector<std::int32_t> neighbours;
  for (std::size_t c = 0; c < n; ++c) {
    neighbours.clear();
    std::set<std::size_t> seen;  // a small box folds several offsets onto one bin
    for (int dk = -1; dk <= 1; ++dk)
      for (int dj = -1; dj <= 1; ++dj)
        for (int di = -1; di <= 1; ++di) {
          int i = bi[c] + di, j = bj[c] + dj;
          const int k = bk[c] + dk;
          if (k < 0 || k >= bz) continue;
          if (w.box.periodic_x) i = (i + bx) % bx;
          if (w.box.periodic_y) j = (j + by) % by;
          if (i < 0 || i >= bx || j < 0 || j >= by) continue;
          if (!seen.insert(flat(i, j, k)).second) continue;
          for (const std::int32_t o : bins[flat(i, j, k)]) {
            if (static_cast<std::size_t>(o) == c) continue;
            const auto ou = static_cast<std::size_t>(o);
            const float dx = w.box.min_image_x(cx[c] - cx[ou]), dy = w.box.min_image_y(cy[c] - cy[ou]),
                        dz = cz[c] - cz[ou];
            if (static_cast<double>(dx * dx + dy * dy + dz * dz) < d2) neighbours.push_back(o);
          }
        }
    if (neighbours.empty()) continue;
    std::sort(neighbours.begin(), neighbours.end());
    for (std::size_t j = 0; j < rows.size(); ++j) {
      double sum = 0.0;
      for (const std::int32_t o : neighbours)
        sum += static_cast<double>(species->host(static_cast<std::size_t>(o), rows[j]));
      out[j * n + c] = sum / static_cast<double>(neighbours.size());
    }
  }
}

namespace {

/// Calls f(node index, weight) for each distinct node of a cloud-in-cell stencil at (x, y, z) (weights sum
/// to 1; corners folded onto one face node counted once, as the point source's deposit).
template <class Real, class F>
void for_each_stencil_node(const GridField<Real>& field, double x, double y, double z, F&& f) {
  const auto& g = field.geometry();
  const grid::CicStencil st = grid::cic_stencil(g, field.shape().h, x, y, z);
  const int n[3] = {g.nx, g.ny, g.nz};
  for (unsigned t = 0; t < 8; ++t) {
    const int corner[3] = {static_cast<int>(t & 1u), static_cast<int>((t >> 1) & 1u),
                           static_cast<int>((t >> 2) & 1u)};
    int node[3];
    bool duplicate = false;
    for (int d = 0; d < 3; ++d) {
      const bool periodic = g.face[2 * d] == GridBoundary::periodic;
      const int lo = grid::deposit_index(st.axis[d].lo, n[d], periodic);
      node[d] = grid::deposit_index(st.axis[d].lo + corner[d], n[d], periodic);
      if (corner[d] == 1 && node[d] == lo) duplicate = true;
    }
    if (duplicate) continue;
    const double w = grid::deposit_weight(g, st, node[0], node[1], node[2]);
    if (w != 0.0) f(g.index(node[0], node[1], node[2]), w);
  }
}

/// rate * delta [amount] into the field at (x, y, z), and the fraction 1 - exp(-uptake delta) of the field
/// under the stencil out of it; returns {secreted, taken up} [amount].
template <class Real>
std::pair<double, double> exchange(GridField<Real>& field, double x, double y, double z, double amount,
                                   double uptake_fraction) {
  const double h = field.shape().h;
  const double volume = field.shape().dims() == 3 ? h * h * h : h * h;
  auto& u = field.host();
  double taken = 0.0;
  for_each_stencil_node(field, x, y, z, [&](std::size_t i, double w) {
    double v = static_cast<double>(u[i]);
    if (uptake_fraction > 0.0) {
      const double removed = uptake_fraction * w * v;
      v -= removed;
      taken += removed * volume;
    }
    v += amount * w / volume;
    u[i] = static_cast<Real>(v);
  });
  return {amount, taken};
}

}  // namespace

// ---- the engine ----------------------------------------------------------------------------------------

/// One compiled expression over arrays of the variables it reads.
struct Compiled {
  std::unique_ptr<grn::ExpressionParser> parser;
  const Rule* rule = nullptr;
};

struct RuleEngine::Impl {
  grn::VariableArrays vars;
  std::vector<double> means;  ///< neighbour means, mean_species.size() x cells
  std::vector<double> result;
  std::map<const Rule*, std::vector<double>> values;  ///< each rule's values over the type's cells
  std::map<const Rule*, Compiled> compiled;

  /// The variables' arrays hold at least n entries and every parser is bound to them.
  void reserve(const RulesSpec& spec, std::size_t n) {
    if (n <= vars.capacity && !compiled.empty()) return;
    vars.capacity = std::max<std::size_t>({n, 2 * vars.capacity, 16});
    const auto all = [&](const auto& f) {
      for (const auto& tr : spec.by_type) {
        for (const Rule* r :
             {&tr.growth_rate, &tr.divide_when, &tr.apoptosis_rate, &tr.motility, &tr.chemotaxis})
          f(*r);
        for (const auto& t : tr.transitions) f(t.rate);
        for (const auto& s : tr.secretions) {
          f(s.rate);
          f(s.uptake);
        }
      }
    };
    all([&](const Rule& r) {
      for (const auto& name : r.reads) vars.arrays[name];
    });
    for (auto& [name, a] : vars.arrays) a.assign(vars.capacity, 0.0);
    result.assign(vars.capacity, 0.0);
    compiled.clear();
    all([&](const Rule& r) {
      if (r.empty()) return;
      Compiled c;
      c.parser = std::make_unique<grn::ExpressionParser>();
      vars.bind(*c.parser);
      for (const auto& [name, value] : spec.parameters) c.parser->DefineConst(name, value);
      c.parser->SetExpr(r.text);
      c.rule = &r;
      compiled[&r] = std::move(c);
    });
  }

  /// Evaluates `r` over the m cells whose variables are loaded; values[&r] holds the results.
  void evaluate(const Rule& r, std::size_t m) {
    auto& out = values[&r];
    out.assign(m, 0.0);
    if (r.empty() || m == 0) return;
    auto& parser = *compiled.at(&r).parser;
    if (r.reads.empty()) {
      const double v = parser.Eval();
      std::fill(out.begin(), out.end(), v);
      return;
    }
    parser.Eval(result.data(), static_cast<int>(m));
    std::copy(result.begin(), result.begin() + static_cast<std::ptrdiff_t>(m), out.begin());
  }
};

RuleEngine::RuleEngine(RulesSpec spec, std::shared_ptr<const TriangleIndex> membrane)
    : spec_(std::move(spec)), membrane_(std::move(membrane)), impl_(std::make_unique<Impl>()) {}
RuleEngine::~RuleEngine() = default;

void RuleEngine::install(World& w) const {
  w.flag_bit(kApoptoticFlag);
  auto& birth = w.cells.add_column<std::int64_t>(kBirthStepColumn);
  w.cells.add_column<float>(kGrowthProgressColumn);
  w.cells.add_column<std::int64_t>(kApoptosisStartColumn);
  w.cells.add_column<std::int32_t>(kApoptosisElementsColumn);
  for (std::size_t c = 0; c < w.cells.size(); ++c) birth.host(c) = w.step;
  for (const char* name :
       {kBirthStepColumn, kGrowthProgressColumn, kApoptosisStartColumn, kApoptosisElementsColumn})
    w.cells.find(name)->upload(w.cells.size());
}

void RuleEngine::apply(World& w, double dt) {
  Impl& m = *impl_;
  const double delta = static_cast<double>(spec_.interval) * dt;
  const std::size_t n = w.cells.size();
  auto& type = w.cells.column<std::int32_t>(kCellTypeColumn);
  auto& birth = w.cells.column<std::int64_t>(kBirthStepColumn);
  auto& progress = w.cells.column<float>(kGrowthProgressColumn);
  auto& apoptosis_start = w.cells.column<std::int64_t>(kApoptosisStartColumn);
  auto& apoptosis_elements = w.cells.column<std::int32_t>(kApoptosisElementsColumn);
  auto* motility = dynamic_cast<Column<float>*>(w.cells.find(kMotilityColumn));
  auto* chemotaxis =
      spec_.any_chemotaxis ? dynamic_cast<Column<float>*>(w.cells.find(kChemotaxisColumn)) : nullptr;
  auto* species = dynamic_cast<Column<float>*>(w.cells.find("species"));
  const std::uint32_t apoptotic = w.flag_bit(kApoptoticFlag);

  // 1. apoptotic cells lose their elements linearly over the duration (the last ones of their range; the
  //    elements are contiguous after the schedule's last commit); the cell goes with its last element
  std::vector<std::size_t> finished;
  for (std::size_t c = 0; c < n; ++c) {
    if (!(w.flags.host(c) & apoptotic)) continue;
    const double duration = spec_.by_type[static_cast<std::size_t>(type.host(c))].apoptosis_duration;
    const double elapsed = static_cast<double>(w.step - apoptosis_start.host(c)) * dt;
    const double n0 = apoptosis_elements.host(c);
    const auto keep =
        duration <= 0.0 ? 0 : static_cast<std::int32_t>(std::ceil(n0 * (1.0 - elapsed / duration) - 1e-9));
    if (keep <= 0) {
      finished.push_back(c);
      continue;
    }
    const std::int32_t first = w.first.host(c), count = w.count.host(c);
    for (std::int32_t e = first + std::min(keep, count); e < first + count; ++e)
      w.cell.host(static_cast<std::size_t>(e)) = -1;
  }

  // 2. the variables of every cell; then each type's rules over its cells (not apoptotic)
  std::vector<double> means;
  neighbour_means(w, spec_.mean_species, spec_.neighbour_distance, means);
  m.reserve(spec_, n);
  std::vector<char> divides(n, 0);
  std::vector<std::int32_t> new_type(n);
  for (std::size_t c = 0; c < n; ++c) new_type[c] = type.host(c);
  const float* x = w.x.host_data().data();
  const float* y = w.y.host_data().data();
  const float* z = w.z.host_data().data();
  for (std::size_t t = 0; t < spec_.types.size(); ++t) {
    const TypeRules& tr = spec_.by_type[t];
    std::vector<std::size_t> cells;
    for (std::size_t c = 0; c < n; ++c)
      if (type.host(c) == static_cast<std::int32_t>(t) && !(w.flags.host(c) & apoptotic)) cells.push_back(c);
    const std::size_t mt = cells.size();
    if (mt == 0) continue;
    for (auto& [name, a] : m.vars.arrays) {
      // what `name` reads, resolved once per round (not per cell)
      enum class Kind {
        elements,
        age,
        time,
        centre_x,
        centre_y,
        centre_z,
        mean,
        species_row,
        input
      } kind = Kind::input;
      int row = -1;
      const Column<float>* input = nullptr;
      if (name == "elements")
        kind = Kind::elements;
      else if (name == "age")
        kind = Kind::age;
      else if (name == "time")
        kind = Kind::time;
      else if (name == "x")
        kind = Kind::centre_x;
      else if (name == "y")
        kind = Kind::centre_y;
      else if (name == "z")
        kind = Kind::centre_z;
      else if (name.rfind("mean_", 0) == 0 && species) {
        kind = Kind::mean;
        const auto it = std::find(spec_.mean_species.begin(), spec_.mean_species.end(),
                                  species->component_index(name.substr(5)));
        row = static_cast<int>(it - spec_.mean_species.begin());
      } else if (species && species->component_index(name) >= 0) {
        kind = Kind::species_row;
        row = species->component_index(name);
      } else {
        input = &w.cells.column<float>(name);
      }
      for (std::size_t i = 0; i < mt; ++i) {
        const std::size_t c = cells[i];
        double v = 0.0;
        switch (kind) {
          case Kind::elements:
            v = w.count.host(c);
            break;
          case Kind::age:
            v = static_cast<double>(w.step - birth.host(c)) * dt;
            break;
          case Kind::time:
            v = w.time;
            break;
          case Kind::centre_x:
            v = w.cx.host(c);
            break;
          case Kind::centre_y:
            v = w.cy.host(c);
            break;
          case Kind::centre_z:
            v = w.cz.host(c);
            break;
          case Kind::mean:
            v = means[static_cast<std::size_t>(row) * n + c];
            break;
          case Kind::species_row:
            v = species->host(c, row);
            break;
          case Kind::input:
            v = input->host(c);
            break;
        }
        a[i] = v;
      }
    }
    for (const Rule* r : {&tr.growth_rate, &tr.apoptosis_rate, &tr.motility, &tr.chemotaxis})
      m.evaluate(*r, mt);
    for (const auto& tn : tr.transitions) m.evaluate(tn.rate, mt);
    for (const auto& s : tr.secretions) {
      m.evaluate(s.rate, mt);
      m.evaluate(s.uptake, mt);
    }
    std::vector<std::int32_t> grown(mt, 0);
    std::vector<char> active(mt, 1);  // not turned apoptotic in this round
    for (std::size_t i = 0; i < mt; ++i) {
      const std::size_t c = cells[i];
      const auto id = static_cast<std::uint64_t>(w.cell_id.host(c));
      const std::uint64_t entity = (static_cast<std::uint64_t>(w.step) << 32) ^ id;
      const auto fires = [&](double rate, std::uint32_t counter) {
        if (!(rate > 0.0)) return false;
        const auto r = random::philox(w.seed, random::kTransition, entity, counter);
        return random::to_unit_double(r.v[0], r.v[1]) <= -std::expm1(-rate * delta);
      };
      if (!tr.apoptosis_rate.empty() && fires(m.values[&tr.apoptosis_rate][i], 0)) {
        w.flags.host(c) |= apoptotic;
        apoptosis_start.host(c) = w.step;
        apoptosis_elements.host(c) = w.count.host(c);
        if (motility) motility->host(c) = 0.0f;
        if (tr.apoptosis_duration <= 0.0) finished.push_back(c);
        active[i] = 0;
        continue;
      }
      for (std::size_t k = 0; k < tr.transitions.size(); ++k)
        if (fires(m.values[&tr.transitions[k].rate][i], static_cast<std::uint32_t>(k + 1))) {
          new_type[c] = tr.transitions[k].to;
          break;
        }
      if (!tr.growth_rate.empty()) {
        double owed =
            static_cast<double>(progress.host(c)) + std::max(0.0, m.values[&tr.growth_rate][i]) * delta;
        const auto whole = static_cast<std::int64_t>(std::min(owed, 1e6));
        if (whole > 0) {
          const auto centre = cell_centre(x, y, z, w.first.host(c), w.count.host(c), w.box);
          for (std::int64_t k = 0; k < whole; ++k)
            w.add_element_host(static_cast<std::int32_t>(c), centre.x, centre.y, centre.z);
          x = w.x.host_data().data();  // the appends may have reallocated the mirrors
          y = w.y.host_data().data();
          z = w.z.host_data().data();
          owed -= static_cast<double>(whole);
          grown[i] = static_cast<std::int32_t>(whole);
        }
        progress.host(c) = static_cast<float>(owed);
      }
      for (const auto& s : tr.secretions) {
        const double amount = s.rate.empty() ? 0.0 : std::max(0.0, m.values[&s.rate][i]) * delta;
        const double fraction =
            s.uptake.empty() ? 0.0 : -std::expm1(-std::max(0.0, m.values[&s.uptake][i]) * delta);
        if (amount == 0.0 && fraction == 0.0) continue;
        auto budget = std::find_if(budgets_.begin(), budgets_.end(),
                                   [&](const FieldBudget& b) { return b.field == s.field; });
        if (budget == budgets_.end())
          budget = budgets_.insert(budgets_.end(), FieldBudget{s.field, 0.0, 0.0});
        std::pair<double, double> moved{0.0, 0.0};
        for (auto& f : w.fields) {
          if (f->name() != s.field) continue;
          if (auto* g = dynamic_cast<GridField<float>*>(f.get()))
            moved = exchange(*g, w.cx.host(c), w.cy.host(c), w.cz.host(c), amount, fraction);
          else if (auto* gd = dynamic_cast<GridField<double>*>(f.get()))
            moved = exchange(*gd, w.cx.host(c), w.cy.host(c), w.cz.host(c), amount, fraction);
        }
        budget->secreted += moved.first;
        budget->taken_up += moved.second;
      }
      if (motility)
        motility->host(c) = tr.motility.empty()
                                ? motility->host(c)
                                : static_cast<float>(std::max(0.0, m.values[&tr.motility][i]));
    }
    if (chemotaxis && !tr.chemotaxis.empty())
      for (std::size_t i = 0; i < mt; ++i)
        if (active[i]) chemotaxis->host(cells[i]) = static_cast<float>(m.values[&tr.chemotaxis][i]);
    // division, after this round's growth: `elements` counts the new elements
    if (!tr.divide_when.empty()) {
      const auto it = m.vars.arrays.find("elements");
      if (it != m.vars.arrays.end())
        for (std::size_t i = 0; i < mt; ++i) it->second[i] += grown[i];
      m.evaluate(tr.divide_when, mt);
      for (std::size_t i = 0; i < mt; ++i)
        if (active[i] && m.values[&tr.divide_when][i] != 0.0) divides[cells[i]] = 1;
    }
  }
  for (std::size_t c = 0; c < n; ++c) type.host(c) = new_type[c];
  for (const auto& b : budgets_)
    for (auto& f : w.fields)
      if (f->name() == b.field) f->upload();

  // 3. divisions, on contiguous ranges (compacting drops the removed elements; no cell is removed yet, so
  //    indices stay); the daughters are born now
  w.compact_host();
  const TriangleIndex::View* membrane = nullptr;
  TriangleIndex::View membrane_view;
  if (membrane_) {
    membrane_view = membrane_->host_view();
    membrane = &membrane_view;
  }
  // the daughters' rows (and ids, World::add_daughters_host: collective in a decomposed run, so called with
  // no mothers too) in the mothers' order, then one split each
  std::vector<std::int32_t> mothers;
  for (std::size_t c = 0; c < n; ++c)
    if (divides[c] && w.count.host(c) >= 2) mothers.push_back(static_cast<std::int32_t>(c));
  const std::size_t d0 = w.add_daughters_host(mothers);
  for (std::size_t k = 0; k < mothers.size(); ++k) {
    const auto c = static_cast<std::size_t>(mothers[k]);
    const TypeRules& tr = spec_.by_type[static_cast<std::size_t>(type.host(c))];
    std::vector<float> before;
    if (species && !tr.halve_species)
      for (int s = 0; s < species->components(); ++s) before.push_back(species->host(c, s));
    lifecycle::DivisionOptions options;
    options.basal = tr.division == DivisionAxis::basal;
    const auto du = d0 + k;
    lifecycle::split_cell(w, mothers[k], static_cast<std::int32_t>(du), membrane, options);
    if (!before.empty())
      for (int s = 0; s < species->components(); ++s) {
        species->host(c, s) = before[static_cast<std::size_t>(s)];
        species->host(du, s) = before[static_cast<std::size_t>(s)];
      }
    for (const std::size_t r : {c, du}) {
      birth.host(r) = w.step;
      progress.host(r) = 0.0f;
      w.flags.host(r) &= ~apoptotic;
    }
    if (motility) motility->host(du) = motility->host(c);
    if (chemotaxis) chemotaxis->host(du) = chemotaxis->host(c);
  }
  // 4. cells whose apoptosis ended go (the schedule's commit removes them and their elements)
  for (const std::size_t c : finished) w.flags.host(c) |= cell_flags::dead;
}

}  // namespace tissue::rules
