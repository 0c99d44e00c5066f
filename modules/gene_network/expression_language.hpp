#pragma once
/// @file expression_language.hpp
/// The expression language of scenario files (gene-network rates, behaviour rules): numbers, names bound to
/// per-cell values or constants, + - * / comparisons && || ?: and the functions hill, hill_act, hill_rep,
/// exp, log, sqrt, abs, pow, min, max (modules/gene_network/README.md, "The language"). Expressions are
/// checked with muParser (Debian's libmuparser-dev) when a scenario is read; the host evaluates them with
/// muParser's bytecode in bulk, and CUDA code generated from the same text (device_functions_source()) runs
/// them on the GPU.

#include <muParserBase.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tissue::grn {

/// The names of the language's functions.
const std::set<std::string>& expression_functions();

/// CUDA C++ definitions of the functions, as `__device__ double fn_<name>(...)`, the same formulas as the
/// host's.
const char* device_functions_source();

/// muParser with exactly this language: C-like names, + - * / comparisons && || ?: and the functions
/// hill, hill_act, hill_rep, exp, log, sqrt, abs, pow, min, max; no built-in constants, no other functions.
class ExpressionParser final : public mu::ParserBase {
 public:
  ExpressionParser();
  void InitCharSets() override;
  void InitFun() override;
  void InitConst() override {}
  void InitOprt() override;
};

/// True for a name the language accepts: letters, digits and _, not starting with a digit.
bool valid_expression_name(const std::string& s);

/// Throws InputError "<where>: <what> in "<expr>"": one line, as every input error; `what` names the token
/// and its column.
[[noreturn]] void expression_error(const std::string& where, const std::string& expr,
                                   const std::string& what);

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

/// Parses `expr` with the given variable names and named constants; returns the variables it uses.
/// `names_hint` completes the message for an unknown name, e.g. "not a species, a parameter or a function".
/// @throws InputError at `where` naming the token and its column, for a syntax error, an unknown name,
///         `^`, an assignment `=`, an empty expression, more than one result, or a constant that is not
///         finite.
std::vector<std::string> check_expression(const std::vector<std::pair<std::string, double>>& constants,
                                          const std::set<std::string>& variables, const std::string& expr,
                                          const std::string& where, const std::string& names_hint);

}  // namespace tissue::grn
