#include "modules/gene_network/expression_language.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <deque>

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

}  // namespace

const std::set<std::string>& expression_functions() {
  static const std::set<std::string> names{"hill", "hill_act", "hill_rep", "exp", "log",
                                           "sqrt", "abs",      "pow",      "min", "max"};
  return names;
}

const char* device_functions_source() {
  return kDeviceFunctions;
}

ExpressionParser::ExpressionParser() {
  AddValIdent(read_number);
  InitCharSets();
  InitFun();
  InitConst();
  InitOprt();
}
void ExpressionParser::InitCharSets() {
  DefineNameChars("0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
  DefineOprtChars("+-*/<>=!&|");
  DefineInfixOprtChars("+-");
}
void ExpressionParser::InitFun() {
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
void ExpressionParser::InitOprt() {
  DefineInfixOprt("-", unary_minus, mu::prINFIX);
  DefineInfixOprt("+", unary_plus, mu::prINFIX);
}

bool valid_expression_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
}

/// "<where>: <what> in "<expr>"": one line, as every input error; `what` names the token and its column.
[[noreturn]] void expression_error(const std::string& where, const std::string& expr,
                                   const std::string& what) {
  throw InputError(where + ": " + what + " in \"" + expr + "\"");
}

std::vector<std::string> check_expression(const std::vector<std::pair<std::string, double>>& constants,
                                          const std::set<std::string>& variables, const std::string& expr,
                                          const std::string& where, const std::string& names_hint) {
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
  ExpressionParser parser;
  CheckedNames names{&variables, &expr, {}};
  parser.SetVarFactory(&CheckedNames::find, &names);
  for (const auto& [name, value] : constants) parser.DefineConst(name, value);
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
      what = "unknown name \"" + token + "\" at column " + std::to_string(pos + 1) + " (" + names_hint + ")";
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
}  // namespace tissue::grn
