#include "modules/gene_network/typed_network.hpp"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <set>

#include "modules/gene_network/expression_language.hpp"
#include "modules/gene_network/sbml_network.hpp"

namespace tissue::grn {

namespace {

/// The tissue-wide [gene_network] keys that are not a network's own (they apply to whichever network runs).
const std::set<std::string> kSharedKeys = {"noise", "noise_kind", "max_abs", "growth_checks"};

/// A network written in the scenario or read from SBML, from a table of the gene_network form.
UserNetworkSpec read_network(const io::ScenarioTable& t, const std::string& scenario_path,
                             const std::vector<std::string>& fields) {
  auto spec =
      has_sbml_network(t) ? read_sbml_network(t, scenario_path, fields) : read_user_network(t, fields);
  // events keep a trigger column per network; merged networks do not carry them yet
  if (!spec.events.empty())
    t.fail("sbml", "event '" + spec.events.front().id +
                       "': events are not supported in networks per cell type (only in [gene_network] "
                       "without [cell_types.gene_network])");
  return spec;
}

/// Same network (the same species, initial values, rates, parameters, suprabasal and neighbour distance).
bool same_network(const UserNetworkSpec& a, const UserNetworkSpec& b) {
  if (a.species.size() != b.species.size() || a.parameters != b.parameters || a.suprabasal != b.suprabasal ||
      a.neighbour_distance != b.neighbour_distance)
    return false;
  for (std::size_t k = 0; k < a.species.size(); ++k)
    if (a.species[k].name != b.species[k].name || a.species[k].initial != b.species[k].initial ||
        a.species[k].rate != b.species[k].rate)
      return false;
  return true;
}

std::string number_text(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// "(network_type == 0 || network_type == 2)": the condition that a cell runs network `net`.
std::string type_condition(const std::vector<int>& network_of_type, int net) {
  std::string cond;
  for (std::size_t t = 0; t < network_of_type.size(); ++t)
    if (network_of_type[t] == net)
      cond += std::string(cond.empty() ? "" : " || ") + kNetworkTypeColumn + " == " + std::to_string(t);
  return "(" + cond + ")";
}

/// `net_expr[i]` selected by the cell's type: "cond_0 ? (e_0) : (cond_1 ? (e_1) : (fallback))" over the
/// networks with an expression.
std::string select_by_type(const std::vector<int>& network_of_type, const std::vector<std::string>& net_expr,
                           const std::string& fallback) {
  std::string out = fallback;
  for (std::size_t i = net_expr.size(); i-- > 0;) {
    if (net_expr[i].empty()) continue;
    const std::string cond = type_condition(network_of_type, static_cast<int>(i));
    if (cond == "()") continue;  // no type runs this network
    out = cond + " ? (" + net_expr[i] + ") : (" + out + ")";
  }
  return out;
}

}  // namespace

bool has_typed_networks(const io::ScenarioTable& root) {
  if (!root.has("cell_types")) return false;
  try {
    for (const auto& e : root.tables("cell_types"))
      if (e.has("gene_network")) return true;
  } catch (const InputError&) {
    return root.table("cell_types").has("gene_network");  // [cell_types.gene_network] without [[cell_types]]
  }
  return false;
}

std::string rename_names(const std::string& expr,
                         const std::vector<std::pair<std::string, std::string>>& renames) {
  std::string out;
  std::size_t i = 0;
  while (i < expr.size()) {
    const char ch = expr[i];
    if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') {
      std::size_t j = i;
      while (j < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[j])) || expr[j] == '_')) ++j;
      const std::string name = expr.substr(i, j - i);
      std::string replaced = name;
      for (const auto& [from, to] : renames)
        if (from == name) replaced = to;
      out += replaced;
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(ch)) || ch == '.') {
      // a number, exponent included ("1e-5" is not the name e), copied as written
      double v = 0.0;
      const auto [stop, ec] = std::from_chars(expr.data() + i, expr.data() + expr.size(), v);
      const std::size_t end = ec == std::errc() ? static_cast<std::size_t>(stop - expr.data()) : i + 1;
      out += expr.substr(i, end - i);
      i = end;
    } else {
      out += ch;
      ++i;
    }
  }
  return out;
}

TypedNetworks read_typed_networks(const io::ScenarioTable& root, const io::ScenarioTable& gene_network,
                                  const std::string& scenario_path,
                                  const std::vector<std::string>* cell_types,
                                  const std::vector<std::string>& available_fields) {
  std::vector<io::ScenarioTable> entries;
  try {
    entries = root.tables("cell_types");
  } catch (const InputError&) {
    root.table("cell_types")
        .fail("gene_network",
              "a network per cell type needs the types declared with [[cell_types]] (an array "
              "of tables with name and fraction), each with its own [cell_types.gene_network]");
  }
  if (cell_types == nullptr || cell_types->size() != entries.size()) {
    for (const auto& e : entries)
      if (e.has("gene_network"))
        e.fail("gene_network",
               "a network per cell type needs the cell types of the tissue: [[cell_types]] read by the "
               "module \"sem\" before \"gene_network\"");
  }
  const bool tissue_wide = has_user_network(gene_network) || has_sbml_network(gene_network);
  if (!tissue_wide)
    for (const auto& key : gene_network.keys())
      if (!kSharedKeys.count(key))
        gene_network.fail(
            key,
            "the built-in epidermis network cannot be mixed with per-type networks "
            "([cell_types.gene_network]): write the tissue-wide network in the scenario "
            "or in SBML, or leave [gene_network] with noise keys (and max_abs, growth_checks) only");

  // the distinct networks: the tissue-wide one first, then each type's own in declaration order
  std::vector<UserNetworkSpec> nets;
  std::vector<io::ScenarioTable> net_table;
  if (tissue_wide) {
    nets.push_back(read_network(gene_network, scenario_path, available_fields));
    net_table.push_back(gene_network);
  }
  std::vector<int> network_of_type(entries.size(), tissue_wide ? 0 : -1);
  for (std::size_t t = 0; t < entries.size(); ++t) {
    if (!entries[t].has("gene_network")) continue;
    const auto table = entries[t].table("gene_network");
    for (const auto& key : {"noise", "noise_kind"})
      if (table.has(key))
        table.fail(key, "noise is one setting of the tissue: give it in [gene_network], not per cell type");
    if (!has_user_network(table) && !has_sbml_network(table))
      entries[t].fail("gene_network",
                      "a cell type's network needs sbml = \"file\" or [[cell_types.gene_network.species]]");
    auto spec = read_network(table, scenario_path, available_fields);
    int found = -1;
    for (std::size_t i = 0; i < nets.size() && found < 0; ++i)
      if (same_network(nets[i], spec)) found = static_cast<int>(i);
    if (found < 0) {
      found = static_cast<int>(nets.size());
      nets.push_back(std::move(spec));
      net_table.push_back(table);
    }
    network_of_type[t] = found;
  }
  TypedNetworks out;
  if (nets.empty()) return out;  // no network declared (has_typed_networks() was false)
  bool one = nets.size() == 1;
  for (int n : network_of_type) one = one && n == 0;
  if (one) {
    // every type runs the one network declared: that network, as if written once in [gene_network]
    out.spec = std::move(nets.front());
    return out;
  }

  // the union of the species by name; one initial value per species; one neighbour distance
  UserNetworkSpec& m = out.spec;
  out.typed = true;
  m.neighbour_distance = nets.front().neighbour_distance;
  std::vector<std::size_t> defined_by;  // the network that first defines each species
  for (std::size_t i = 0; i < nets.size(); ++i) {
    if (nets[i].neighbour_distance != m.neighbour_distance)
      net_table[i].fail("neighbour_distance", "the networks of the tissue share one neighbour distance (" +
                                                  number_text(m.neighbour_distance) +
                                                  " in the first network, " +
                                                  number_text(nets[i].neighbour_distance) + " here)");
    for (const auto& s : nets[i].species) {
      if (s.name == kNetworkTypeColumn)
        net_table[i].fail(has_sbml_network(net_table[i]) ? "sbml" : "species",
                          std::string("the species name \"") + kNetworkTypeColumn +
                              "\" is reserved with per-type networks");
      const int k = m.species_index(s.name);
      if (k < 0) {
        m.species.push_back(UserSpecies{s.name, s.initial, "", s.where});
        defined_by.push_back(i);
      } else if (m.species[static_cast<std::size_t>(k)].initial != s.initial) {
        net_table[i].fail(has_sbml_network(net_table[i]) ? "sbml" : "species",
                          "species '" + s.name + "' starts at " + number_text(s.initial) + " here but at " +
                              number_text(m.species[static_cast<std::size_t>(k)].initial) +
                              " in the network of " +
                              net_table[defined_by[static_cast<std::size_t>(k)]].path() +
                              ": networks that share a species must give it the same initial value");
      }
    }
  }
  // each network's parameters under names of their own: <name>_net<i>, made unique
  std::set<std::string> taken(expression_functions().begin(), expression_functions().end());
  taken.insert("adhesion");
  taken.insert(kNetworkTypeColumn);
  for (const auto& f : available_fields) taken.insert(f);
  for (const auto& s : m.species) {
    taken.insert(s.name);
    taken.insert("mean_" + s.name);
  }
  std::vector<std::vector<std::pair<std::string, std::string>>> renames(nets.size());
  for (std::size_t i = 0; i < nets.size(); ++i)
    for (const auto& [name, value] : nets[i].parameters) {
      if (name == kNetworkTypeColumn)
        net_table[i].fail("parameters", std::string("the parameter name \"") + kNetworkTypeColumn +
                                            "\" is reserved with per-type networks");
      std::string fresh = name + "_net" + std::to_string(i);
      while (taken.count(fresh)) fresh += "_";
      taken.insert(fresh);
      renames[i].emplace_back(name, fresh);
      m.parameters.emplace_back(fresh, value);
    }
  // each species' rate: its rate in the cell's type's network, 0 where that network does not have it
  for (auto& s : m.species) {
    std::vector<std::string> rates(nets.size());
    for (std::size_t i = 0; i < nets.size(); ++i) {
      const int k = nets[i].species_index(s.name);
      if (k >= 0) rates[i] = rename_names(nets[i].species[static_cast<std::size_t>(k)].rate, renames[i]);
    }
    s.rate = select_by_type(network_of_type, rates, "0");
  }
  // the suprabasal state: the type's network's expression (0, not suprabasal, where it has none)
  std::vector<std::string> supra(nets.size());
  bool any_supra = false;
  for (std::size_t i = 0; i < nets.size(); ++i)
    if (!nets[i].suprabasal.empty()) {
      supra[i] = rename_names(nets[i].suprabasal, renames[i]);
      if (m.suprabasal.empty()) m.suprabasal_where = nets[i].suprabasal_where;
      any_supra = true;
    }
  if (any_supra) m.suprabasal = select_by_type(network_of_type, supra, "0");
  std::vector<std::string> fields = available_fields;
  fields.push_back(kNetworkTypeColumn);
  check_user_network(m, gene_network, fields);
  return out;
}

}  // namespace tissue::grn
