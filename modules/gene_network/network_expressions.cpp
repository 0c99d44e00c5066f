#include "modules/gene_network/network_expressions.hpp"

#include <muParserBase.h>

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

namespace tissue::grn {

namespace {

// ---- the expression language's functions (host side; the same formulas are in kDeviceFunctions) ----
double hill_seed(double x, double a, double b, double c, double h) {
  return a + b / (1.0 + std::pow(c * x, h));
}
double hill_act(double x, double k, double n) {
  const double xn = std::pow(x, n), kn = std::pow(k, n);
  return xn / (kn + xn);
}
double hill_rep(double x, double k, double n) {
  const double xn = std::pow(x, n), kn = std::pow(k, n);
  return kn / (kn + xn);
}
double fn_exp(double x) {
  return std::exp(x);
}
double fn_log(double x) {
  return std::log(x);
}
double fn_sqrt(double x) {
  return std::sqrt(x);
}
double fn_abs(double x) {
  return std::fabs(x);
}
double fn_pow(double x, double y) {
  return std::pow(x, y);
}
double fn_min(double x, double y) {
  return std::fmin(x, y);
}
double fn_max(double x, double y) {
  return std::fmax(x, y);
}
double unary_minus(double x) {
  return -x;
}
double unary_plus(double x) {
  return x;
}

/// The device side of the functions above, emitted into every generated kernel.
constexpr const char* kDeviceFunctions = R"(
__device__ double fn_hill(double x, double a, double b, double c, double h) { return a + b / (1.0 + pow(c * x, h)); }
__device__ double fn_hill_act(double x, double k, double n) { const double xn = pow(x, n), kn = pow(k, n); return xn / (kn + xn); }
__device__ double fn_hill_rep(double x, double k, double n) { const double xn = pow(x, n), kn = pow(k, n); return kn / (kn + xn); }
__device__ double fn_exp(double x) { return exp(x); }
__device__ double fn_log(double x) { return log(x); }
__device__ double fn_sqrt(double x) { return sqrt(x); }
__device__ double fn_abs(double x) { return fabs(x); }
__device__ double fn_pow(double x, double y) { return pow(x, y); }
__device__ double fn_min(double x, double y) { return fmin(x, y); }
__device__ double fn_max(double x, double y) { return fmax(x, y); }
)";

const std::set<std::string>& function_names() {
  static const std::set<std::string> names{"hill", "hill_act", "hill_rep", "exp", "log",
                                           "sqrt", "abs",      "pow",      "min", "max"};
  return names;
}

/// Number literals: a digit or '.' followed by a decimal number (no sign: unary minus is an operator).
int read_number(const mu::char_type* text, int* pos, mu::value_type* value) {
  const char* begin = text;
  if (!(std::isdigit(static_cast<unsigned char>(*begin)) ||
        (*begin == '.' && std::isdigit(static_cast<unsigned char>(begin[1])))))
    return 0;
  const char* end = begin;
  while (*end != '\0') ++end;
  double v = 0.0;
  const auto [stop, ec] = std::from_chars(begin, end, v, std::chars_format::general);
  if (ec != std::errc()) return 0;
  *value = v;
  *pos += static_cast<int>(stop - begin);
  return 1;
}

/// muParser with exactly this language: C-like names, + - * / comparisons && || ?: and the functions
/// above; no built-in constants, no other functions.
class NetworkParser final : public mu::ParserBase {
 public:
  NetworkParser() {
    AddValIdent(read_number);
    InitCharSets();
    InitFun();
    InitConst();
    InitOprt();
  }
  void InitCharSets() override {
    DefineNameChars("0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
    DefineOprtChars("+-*/<>=!&|");
    DefineInfixOprtChars("+-");
  }
  void InitFun() override {
    DefineFun("hill", hill_seed);
    DefineFun("hill_act", hill_act);
    DefineFun("hill_rep", hill_rep);
    DefineFun("exp", fn_exp);
    DefineFun("log", fn_log);
    DefineFun("sqrt", fn_sqrt);
    DefineFun("abs", fn_abs);
    DefineFun("pow", fn_pow);
    DefineFun("min", fn_min);
    DefineFun("max", fn_max);
  }
  void InitConst() override {}
  void InitOprt() override {
    DefineInfixOprt("-", unary_minus, mu::prINFIX);
    DefineInfixOprt("+", unary_plus, mu::prINFIX);
  }
};

/// What a name in an expression refers to.
struct NameRef {
  enum class Kind { species, mean, adhesion, field, parameter } kind;
  int index;  ///< species, field or parameter index
};

using NameTable = std::map<std::string, NameRef>;

bool valid_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
}

/// "<where>: <what> in "<expr>"": one line, as every input error; `what` names the token and its column.
[[noreturn]] void expression_error(const std::string& where, const std::string& expr,
                                   const std::string& what) {
  throw InputError(where + ": " + what + " in \"" + expr + "\"");
}

/// Storage muParser's variables point at: one array of `capacity` doubles per name.
struct VariableArrays {
  std::size_t capacity = 0;
  std::map<std::string, std::vector<double>> arrays;
  /// Lets `p` bind the arrays of the names its expression uses, as it meets them (muParser's variable
  /// factory): each parser holds only its own expression's variables, not every name of the network (with
  /// all of them bound, 5000 species took 5000 x 10001 bindings, gigabytes).
  void bind(mu::ParserBase& p) { p.SetVarFactory(&VariableArrays::find, this); }

 private:
  /// muParser's factory: the array of `name`. @throws mu::ParserError for a name the network does not
  /// have (the expressions were checked before, so this does not happen in a run).
  static double* find(const char* name, void* self) {
    auto& arrays = static_cast<VariableArrays*>(self)->arrays;
    const auto it = arrays.find(name);
    if (it == arrays.end()) throw mu::ParserError(std::string("unknown name \"") + name + "\"");
    return it->second.data();
  }
};

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

/// muParser's variable factory while an expression is checked: a name in `known` reads a dummy 1.0; any other
/// is the error muParser gives for an undefined name, at the name's first column in the expression. Names
/// are bound as the expression uses them, so checking S rates costs O(S), not O(S^2) bindings.
struct CheckedNames {
  const std::set<std::string>* known;
  const std::string* expr;
  std::deque<double> values;

  static double* find(const char* name, void* self) {
    auto& me = *static_cast<CheckedNames*>(self);
    if (me.known->count(name)) return &me.values.emplace_back(1.0);
    const std::string& e = *me.expr;
    const std::string token = name;
    const auto word = [&](std::size_t at) {
      const auto ident = [&](std::size_t i) {
        return std::isalnum(static_cast<unsigned char>(e[i])) || e[i] == '_';
      };
      return (at == 0 || !ident(at - 1)) && (at + token.size() >= e.size() || !ident(at + token.size()));
    };
    std::size_t at = e.find(token);
    while (at != std::string::npos && !word(at)) at = e.find(token, at + 1);
    throw mu::ParserError(mu::ecUNASSIGNABLE_TOKEN, at == std::string::npos ? 0 : static_cast<int>(at),
                          token);
  }
};

/// Parses `expr` with the given variables and the spec's parameters; returns the variables it uses.
/// @throws InputError at `where` with the token and its column.
std::vector<std::string> check_expression(const UserNetworkSpec& spec, const std::set<std::string>& variables,
                                          const std::string& expr, const std::string& where) {
  for (std::size_t i = 0; i < expr.size(); ++i) {
    if (expr[i] == '^')
      expression_error(where, expr,
                       "token \"^\" at column " + std::to_string(i + 1) +
                           ": write powers as pow(x, n), or use hill_act / hill_rep / hill");
    if (expr[i] == '=') {
      const bool part_of_comparison = (i > 0 && std::string("<>!=").find(expr[i - 1]) != std::string::npos) ||
                                      (i + 1 < expr.size() && expr[i + 1] == '=');
      if (!part_of_comparison)
        expression_error(where, expr,
                         "token \"=\" at column " + std::to_string(i + 1) +
                             ": assignments are not allowed "
                             "(compare with ==)");
    }
  }
  if (expr.find_first_not_of(" \t\n") == std::string::npos) expression_error(where, expr, "empty expression");
  NetworkParser parser;
  CheckedNames names{&variables, &expr, {}};
  parser.SetVarFactory(&CheckedNames::find, &names);
  for (const auto& [name, value] : spec.parameters) parser.DefineConst(name, value);
  std::vector<std::string> used;
  try {
    parser.SetExpr(expr);
    const double value = parser.Eval();
    if (parser.GetNumResults() != 1)
      expression_error(where, expr,
                       "token \",\" at column " + std::to_string(expr.find(',') + 1) +
                           ": one expression per rate (a comma outside a function's arguments)");
    for (const auto& entry : parser.GetUsedVar()) used.push_back(entry.first);
    // an expression of parameters and numbers only is a constant: a non-finite one (1/0, log(0), sqrt(-1))
    // would fill every cell with inf or NaN from the first step
    if (used.empty() && !std::isfinite(value))
      expression_error(where, expr,
                       "the expression is a constant that is not finite (" + std::to_string(value) + ")");
  } catch (const mu::ParserError& e) {
    const auto pos = static_cast<std::size_t>(std::max(0, e.GetPos()));
    const std::string token = e.GetToken();
    std::string what;
    if (e.GetCode() == mu::ecUNASSIGNABLE_TOKEN)
      what = "unknown name \"" + token + "\" at column " + std::to_string(pos + 1) +
             " (not a species, mean_<species>, adhesion, a sampled field, a parameter or a function)";
    else {
      // muParser's message ends in " at position N" (0-based): replaced by the column
      std::string msg = e.GetMsg();
      for (const char* tail : {" at expression position ", " at position "}) {
        const auto at = msg.find(tail);
        if (at != std::string::npos) msg.erase(at);
      }
      what = msg + (token.empty() ? std::string() : " (token \"" + token + "\")") + " at column " +
             std::to_string(pos + 1);
    }
    expression_error(where, expr, what);
  }
  return used;
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
      if (function_names().count(name)) {
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
  for (const auto& f : function_names()) taken[f] = "a function";
  taken["adhesion"] = "the adhesion input";
  for (const auto& f : available_fields) taken[f] = "a signal field";
  const auto claim = [&](const io::ScenarioTable& table, const std::string& key, const std::string& name,
                         const std::string& what) {
    if (!valid_name(name))
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
  for (const auto& s : spec.species) note_use(check_expression(spec, rate_vars, s.rate, s.where));
  if (!spec.suprabasal.empty()) {
    const auto names = variable_names(spec, available_fields, false);
    note_use(check_expression(spec, std::set<std::string>(names.begin(), names.end()), spec.suprabasal,
                              spec.suprabasal_where));
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
  return spec;
}

std::string cuda_source(const UserNetworkSpec& spec) {
  const NameTable names = name_table(spec);
  const std::size_t s_count = spec.species.size();
  std::ostringstream src;
  src << "// generated from the scenario's [gene_network] by tissue "
         "(modules/gene_network/network_expressions.cpp)\n";
  src << "struct UserNetworkFields { const float* p[" << kMaxNetworkFields << "]; };\n";
  src << kDeviceFunctions;
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
  std::vector<std::unique_ptr<NetworkParser>> rates;
  std::unique_ptr<NetworkParser> suprabasal;
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
      auto p = std::make_unique<NetworkParser>();
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
