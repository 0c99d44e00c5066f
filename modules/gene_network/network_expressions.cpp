#include "modules/gene_network/network_expressions.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <set>
#include <sstream>

#include "engine/exec/error.hpp"
#include "modules/gene_network/expression_language.hpp"

namespace tissue::grn {

namespace {

/// What a name in an expression refers to.
struct NameRef {
  enum class Kind { species, mean, adhesion, field, parameter } kind;
  int index;  ///< species, field or parameter index
};

using NameTable = std::map<std::string, NameRef>;

/// What the names of a network's expressions may be, for the message about an unknown one.
const char* const kNamesHint =
    "not a species, mean_<species>, adhesion, a sampled field, a parameter or a function";

/// The variables an expression of `spec` may read (`with_means`: the mean_<species> too).
std::vector<std::string> variable_names(const UserNetworkSpec& spec, const std::vector<std::string>& fields,
                                        bool with_means) {
  std::vector<std::string> names;
  for (const auto& s : spec.species) {
    names.push_back(s.name);
    if (with_means) names.push_back("mean_" + s.name);
  }
  names.push_back("adhesion");
  for (const auto& f : fields) names.push_back(f);
  return names;
}

/// Emits `expr` as CUDA C++: names prefixed by their kind, numbers as double literals.
std::string to_cuda(const std::string& expr, const NameTable& names) {
  std::string out;
  std::size_t i = 0;
  while (i < expr.size()) {
    const char ch = expr[i];
    if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') {
      std::size_t j = i;
      while (j < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[j])) || expr[j] == '_')) ++j;
      const std::string name = expr.substr(i, j - i);
      if (expression_functions().count(name)) {
        out += "fn_" + name;
      } else {
        const auto it = names.find(name);
        if (it == names.end()) throw std::logic_error("to_cuda: unchecked name " + name);
        switch (it->second.kind) {
          case NameRef::Kind::species:
            out += "s_" + name;
            break;
          case NameRef::Kind::mean:
            out += "m_" + name.substr(5);
            break;
          case NameRef::Kind::adhesion:
            out += "in_adhesion";
            break;
          case NameRef::Kind::field:
            out += "f_" + name;
            break;
          case NameRef::Kind::parameter:
            out += "p_" + name;
            break;
        }
      }
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(ch)) || ch == '.') {
      double v = 0.0;
      const auto [stop, ec] = std::from_chars(expr.data() + i, expr.data() + expr.size(), v);
      if (ec != std::errc()) throw std::logic_error("to_cuda: unchecked number in " + expr);
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", v);
      std::string literal = buf;
      if (literal.find_first_of(".en") == std::string::npos) literal += ".0";
      out += literal;
      i = static_cast<std::size_t>(stop - expr.data());
    } else {
      out += ch;
      ++i;
    }
  }
  return out;
}

NameTable name_table(const UserNetworkSpec& spec) {
  NameTable t;
  for (std::size_t k = 0; k < spec.species.size(); ++k) {
    t[spec.species[k].name] = {NameRef::Kind::species, static_cast<int>(k)};
    t["mean_" + spec.species[k].name] = {NameRef::Kind::mean, static_cast<int>(k)};
  }
  t["adhesion"] = {NameRef::Kind::adhesion, 0};
  for (std::size_t f = 0; f < spec.fields.size(); ++f)
    t[spec.fields[f]] = {NameRef::Kind::field, static_cast<int>(f)};
  for (std::size_t p = 0; p < spec.parameters.size(); ++p)
    t[spec.parameters[p].first] = {NameRef::Kind::parameter, static_cast<int>(p)};
  return t;
}

}  // namespace

int UserNetworkSpec::species_index(const std::string& name) const {
  for (std::size_t k = 0; k < species.size(); ++k)
    if (species[k].name == name) return static_cast<int>(k);
  return -1;
}

bool has_user_network(const io::ScenarioTable& gene_network) {
  return gene_network.has("species");
}

UserNetworkSpec read_user_network(const io::ScenarioTable& t,
                                  const std::vector<std::string>& available_fields) {
  UserNetworkSpec spec;
  spec.neighbour_distance = t.number("neighbour_distance", spec.neighbour_distance, io::Range::positive());
  // names are unique across species, mean_<species>, adhesion, fields, parameters and functions
  std::map<std::string, std::string> taken;  // name -> what it is
  for (const auto& f : expression_functions()) taken[f] = "a function";
  taken["adhesion"] = "the adhesion input";
  for (const auto& f : available_fields) taken[f] = "a signal field";
  const auto claim = [&](const io::ScenarioTable& table, const std::string& key, const std::string& name,
                         const std::string& what) {
    if (!valid_expression_name(name))
      table.fail(key,
                 "\"" + name + "\" is not a valid name (letters, digits and _, not starting with a digit)");
    if (name.rfind("mean_", 0) == 0)
      table.fail(key, "\"" + name + "\": names starting with mean_ are reserved");
    const auto it = taken.find(name);
    if (it != taken.end()) table.fail(key, "\"" + name + "\" is already " + it->second);
    taken[name] = what;
  };

  const auto species = t.tables("species");
  if (species.empty())
    t.fail("species", "a scenario-defined network needs at least one [[gene_network.species]]");
  for (std::size_t i = 0; i < species.size(); ++i) {
    const auto& s = species[i];
    UserSpecies u;
    u.name = s.string("name", "");
    if (u.name.empty()) s.fail("name", "missing: every species needs a name");
    claim(s, "name", u.name, "a species");
    u.initial = s.number("initial", 0.0, io::Range::non_negative());
    if (!s.has("rate")) s.fail("rate", "missing: d(" + u.name + ")/dt as an expression");
    u.rate = s.string("rate", "");
    u.where = s.where("rate") + ": " + t.path() + ".species[" + std::to_string(i) + "].rate";
    spec.species.push_back(u);
  }
  const auto params = t.table("parameters");
  for (const auto& key : params.keys()) {
    claim(params, key, key, "a parameter");
    spec.parameters.emplace_back(key, params.number(key, 0.0));
  }
  if (t.has("suprabasal")) {
    spec.suprabasal = t.string("suprabasal", "");
    spec.suprabasal_where = t.where("suprabasal") + ": " + t.path() + ".suprabasal";
  }
  check_user_network(spec, t, available_fields);
  return spec;
}

void check_user_network(UserNetworkSpec& spec, const io::ScenarioTable& t,
                        const std::vector<std::string>& available_fields) {
  // check every expression; collect the means, fields and adhesion they read
  std::set<int> means;
  std::set<std::string> fields;
  const auto note_use = [&](const std::vector<std::string>& used) {
    for (const auto& name : used) {
      if (name == "adhesion") spec.reads_adhesion = true;
      if (name.rfind("mean_", 0) == 0) means.insert(spec.species_index(name.substr(5)));
      if (std::find(available_fields.begin(), available_fields.end(), name) != available_fields.end())
        fields.insert(name);
    }
  };
  const auto rate_names = variable_names(spec, available_fields, true);
  const std::set<std::string> rate_vars(rate_names.begin(), rate_names.end());
  for (const auto& s : spec.species)
    note_use(check_expression(spec.parameters, rate_vars, s.rate, s.where, kNamesHint));
  if (!spec.suprabasal.empty()) {
    const auto names = variable_names(spec, available_fields, false);
    note_use(check_expression(spec.parameters, std::set<std::string>(names.begin(), names.end()),
                              spec.suprabasal, spec.suprabasal_where, kNamesHint));
  }
  spec.mean_species.assign(means.begin(), means.end());
  if (spec.mean_species.size() > static_cast<std::size_t>(kMaxMeanSpecies))
    t.fail("species", "the network reads the neighbour means of " + std::to_string(spec.mean_species.size()) +
                          " species; at most " + std::to_string(kMaxMeanSpecies) + " are supported");
  for (const auto& f : available_fields)
    if (fields.count(f)) spec.fields.push_back(f);
  if (spec.fields.size() > static_cast<std::size_t>(kMaxNetworkFields))
    t.fail("species", "the network reads " + std::to_string(spec.fields.size()) + " signal fields; at most " +
                          std::to_string(kMaxNetworkFields) + " are supported");
}

std::string cuda_expression(const std::string& expr, const UserNetworkSpec& spec, bool with_time) {
  NameTable names = name_table(spec);
  if (with_time) names["time"] = {NameRef::Kind::parameter, -1};
  return to_cuda(expr, names);
}

std::string cuda_source(const UserNetworkSpec& spec) {
  const NameTable names = name_table(spec);
  const std::size_t s_count = spec.species.size();
  std::ostringstream src;
  src << "// generated from the scenario's [gene_network] by tissue "
         "(modules/gene_network/network_expressions.cpp)\n";
  src << "struct UserNetworkFields { const float* p[" << kMaxNetworkFields << "]; };\n";
  src << device_functions_source();
  src << "extern \"C\" __global__ void user_network_stage(const float* __restrict__ eval, const float* "
         "__restrict__ base, float* out, const float* __restrict__ means, UserNetworkFields fields, "
         "unsigned* "
         "flags, unsigned suprabasal_bit, unsigned long long stride, unsigned long long n, double h) {\n";
  src << "  const unsigned long long c = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n";
  src << "  if (c >= n) return;\n";
  char buf[64];
  for (const auto& [name, value] : spec.parameters) {
    std::snprintf(buf, sizeof buf, "%.17g", value);
    src << "  const double p_" << name << " = " << buf << ";\n";
  }
  src << "  const double in_adhesion = eval[" << s_count << " * stride + c];\n";
  for (std::size_t f = 0; f < spec.fields.size(); ++f)
    src << "  const double f_" << spec.fields[f] << " = fields.p[" << f << "][c];\n";
  src << "  float result[" << s_count << "];\n";
  src << "  {\n";
  for (std::size_t k = 0; k < s_count; ++k)
    src << "    const double s_" << spec.species[k].name << " = eval[" << k << " * stride + c];\n";
  for (std::size_t m = 0; m < spec.mean_species.size(); ++m)
    src << "    const double m_" << spec.species[static_cast<std::size_t>(spec.mean_species[m])].name
        << " = means[" << m << " * stride + c];\n";
  for (std::size_t k = 0; k < s_count; ++k) {
    src << "    {  // d(" << spec.species[k].name << ")/dt\n";
    src << "      const double rate = " << to_cuda(spec.species[k].rate, names) << ";\n";
    src << "      const double v = (double)base[" << k << " * stride + c] + h * rate;\n";
    src << "      result[" << k << "] = v > 0.0 ? (float)v : 0.0f;\n";
    src << "    }\n";
  }
  src << "  }\n";
  for (std::size_t k = 0; k < s_count; ++k) src << "  out[" << k << " * stride + c] = result[" << k << "];\n";
  if (!spec.suprabasal.empty()) {
    src << "  if (flags) {\n";
    for (std::size_t k = 0; k < s_count; ++k)
      src << "    const double s_" << spec.species[k].name << " = result[" << k << "];\n";
    src << "    const bool suprabasal = (" << to_cuda(spec.suprabasal, names) << ") != 0;\n";
    src << "    flags[c] = suprabasal ? (flags[c] | suprabasal_bit) : (flags[c] & ~suprabasal_bit);\n";
    src << "  }\n";
  }
  src << "}\n";
  return src.str();
}

// ---- host path -----------------------------------------------------------------------------------------

struct HostNetworkEvaluator::Impl {
  const UserNetworkSpec spec;
  VariableArrays vars;
  std::vector<std::unique_ptr<ExpressionParser>> rates;
  std::unique_ptr<ExpressionParser> suprabasal;
  std::vector<double> results;
  std::vector<float> staged;  ///< species x capacity: the new values, written to `out` after every rate

  // the arrays of each kind of name, resolved once (map nodes do not move)
  std::vector<std::vector<double>*> species_arrays, mean_arrays, field_arrays;
  std::vector<double>* adhesion_array = nullptr;

  explicit Impl(const UserNetworkSpec& s) : spec(s) {
    for (const auto& name : variable_names(spec, spec.fields, true)) vars.arrays[name];
    for (const auto& sp : spec.species) species_arrays.push_back(&vars.arrays[sp.name]);
    for (int k : spec.mean_species)
      mean_arrays.push_back(&vars.arrays["mean_" + spec.species[static_cast<std::size_t>(k)].name]);
    for (const auto& f : spec.fields) field_arrays.push_back(&vars.arrays[f]);
    adhesion_array = &vars.arrays["adhesion"];
  }

  /// (Re)creates the parsers over arrays of at least n entries.
  void reserve(std::size_t n) {
    if (n <= vars.capacity && !rates.empty()) return;
    vars.capacity = std::max<std::size_t>(n, 2 * vars.capacity);
    for (auto& [name, a] : vars.arrays) a.assign(vars.capacity, 0.0);
    results.assign(vars.capacity, 0.0);
    staged.assign(spec.species.size() * vars.capacity, 0.0f);
    const auto make = [&](const std::string& expr) {
      auto p = std::make_unique<ExpressionParser>();
      vars.bind(*p);
      for (const auto& [name, value] : spec.parameters) p->DefineConst(name, value);
      p->SetExpr(expr);
      return p;
    };
    rates.clear();
    for (const auto& s : spec.species) rates.push_back(make(s.rate));
    if (!spec.suprabasal.empty()) suprabasal = make(spec.suprabasal);
  }

  void load_species(const float* rows, std::size_t stride, std::size_t n) {
    for (std::size_t k = 0; k < spec.species.size(); ++k) {
      auto& a = *species_arrays[k];
      const float* row = rows + k * stride;
      for (std::size_t c = 0; c < n; ++c) a[c] = static_cast<double>(row[c]);
    }
  }
};

HostNetworkEvaluator::HostNetworkEvaluator(const UserNetworkSpec& spec)
    : impl_(std::make_unique<Impl>(spec)) {}
HostNetworkEvaluator::~HostNetworkEvaluator() = default;

void HostNetworkEvaluator::stage(const float* eval, const float* base, float* out, const float* means,
                                 const std::vector<const float*>& fields, unsigned* flags,
                                 unsigned suprabasal_bit, std::size_t stride, std::size_t n, double h) {
  if (n == 0) return;
  Impl& m = *impl_;
  m.reserve(n);
  const std::size_t s_count = m.spec.species.size();
  m.load_species(eval, stride, n);
  for (std::size_t j = 0; j < m.spec.mean_species.size(); ++j) {
    auto& a = *m.mean_arrays[j];
    for (std::size_t c = 0; c < n; ++c) a[c] = static_cast<double>(means[j * stride + c]);
  }
  auto& adhesion = *m.adhesion_array;
  for (std::size_t c = 0; c < n; ++c) adhesion[c] = static_cast<double>(eval[s_count * stride + c]);
  for (std::size_t f = 0; f < m.spec.fields.size(); ++f) {
    auto& a = *m.field_arrays[f];
    for (std::size_t c = 0; c < n; ++c) a[c] = static_cast<double>(fields[f][c]);
  }
  // every rate from `eval` before any row of `out` is written (out may alias base, never eval)
  const std::size_t cap = m.vars.capacity;
  for (std::size_t k = 0; k < s_count; ++k) {
    m.rates[k]->Eval(m.results.data(), static_cast<int>(n));
    const float* b = base + k * stride;
    for (std::size_t c = 0; c < n; ++c) {
      const double v = static_cast<double>(b[c]) + h * m.results[c];
      m.staged[k * cap + c] = v > 0.0 ? static_cast<float>(v) : 0.0f;
    }
  }
  for (std::size_t k = 0; k < s_count; ++k)
    std::copy(m.staged.begin() + static_cast<std::ptrdiff_t>(k * cap),
              m.staged.begin() + static_cast<std::ptrdiff_t>(k * cap + n), out + k * stride);
  if (flags != nullptr && m.suprabasal) {
    m.load_species(out, stride, n);
    m.suprabasal->Eval(m.results.data(), static_cast<int>(n));
    for (std::size_t c = 0; c < n; ++c)
      flags[c] = m.results[c] != 0.0 ? (flags[c] | suprabasal_bit) : (flags[c] & ~suprabasal_bit);
  }
}

}  // namespace tissue::grn
