// SBML import and export of gene networks with libSBML: the model becomes a UserNetworkSpec (species,
// parameters, rate expressions in the scenario's expression language), compiled as every scenario network.

#include "modules/gene_network/sbml_network.hpp"

#include <sbml/SBMLTypes.h>
#include <sbml/conversion/ConversionProperties.h>
#include <sbml/math/L3Parser.h>
#include <sbml/math/L3ParserSettings.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "engine/exec/error.hpp"
#include "modules/gene_network/expression_language.hpp"
#include "modules/gene_network/network_events.hpp"

namespace tissue::grn {

namespace fs = std::filesystem;

namespace {

/// Thrown inside the reader; the caller prefixes the scenario key.
struct SbmlError {
  std::string what;
};

[[noreturn]] void refuse(const std::string& element, const std::string& id, const std::string& what) {
  throw SbmlError{element + " '" + id + "': " + what};
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return v < 0 ? "(" + s + ")" : s;
}

/// Translates SBML math into the expression language. `symbols` maps an SBML id to its text (a name of the
/// network, an input, or a parenthesised assignment-rule expression).
class MathWriter {
 public:
  /// `model` for its function definitions; `native`: the ids of those that are the language's own hill,
  /// hill_act or hill_rep (called as such: one call in muParser's bytecode instead of their expansion).
  /// `with_time`: the time csymbol is written as the name `time` (events only: evaluated at the end of a
  /// step), else refused.
  MathWriter(const std::map<std::string, std::string>& symbols, std::string element, std::string id,
             const Model* model = nullptr, const std::set<std::string>* native = nullptr,
             bool with_time = false)
      : symbols_(symbols),
        element_(std::move(element)),
        id_(std::move(id)),
        model_(model),
        native_(native),
        with_time_(with_time) {}

  std::string write(const ASTNode* n) const {
    if (n == nullptr) refuse(element_, id_, "has no math");
    const auto c = [&](unsigned i) { return write(n->getChild(i)); };
    const unsigned k = n->getNumChildren();
    const auto join = [&](const char* op) {
      std::string s = "(";
      for (unsigned i = 0; i < k; ++i) s += (i ? std::string(" ") + op + " " : "") + c(i);
      return s + ")";
    };
    switch (n->getType()) {
      case AST_INTEGER:
        return number(static_cast<double>(n->getInteger()));
      case AST_REAL:
      case AST_REAL_E:
      case AST_RATIONAL:
        return number(n->getReal());
      case AST_CONSTANT_E:
        return number(std::exp(1.0));
      case AST_CONSTANT_PI:
        return number(M_PI);
      case AST_CONSTANT_TRUE:
        return "1.0";
      case AST_CONSTANT_FALSE:
        return "0.0";
      case AST_NAME_AVOGADRO:
        return number(6.02214076e23);
      case AST_NAME: {
        const auto it = symbols_.find(n->getName());
        if (it == symbols_.end()) refuse(element_, id_, std::string("unknown symbol '") + n->getName() + "'");
        return it->second;
      }
      case AST_NAME_TIME:
        if (with_time_) return "time";
        refuse(element_, id_, "reads the time csymbol, which a per-cell network has no meaning for");
      case AST_FUNCTION_DELAY:
        refuse(element_, id_, "uses delay(), which is not supported");
      case AST_PLUS:
        return k == 0 ? "0.0" : join("+");
      case AST_TIMES:
        return k == 0 ? "1.0" : join("*");
      case AST_MINUS:
        if (k == 1) return "(-" + c(0) + ")";
        return join("-");
      case AST_DIVIDE:
        return join("/");
      case AST_POWER:
      case AST_FUNCTION_POWER:
        return "pow(" + c(0) + ", " + c(1) + ")";
      case AST_FUNCTION_EXP:
        return "exp(" + c(0) + ")";
      case AST_FUNCTION_LN:
        return "log(" + c(0) + ")";
      case AST_FUNCTION_LOG:  // log(base, x) or log10(x)
        if (k == 2) return "(log(" + c(1) + ") / log(" + c(0) + "))";
        return "(log(" + c(0) + ") / " + number(std::log(10.0)) + ")";
      case AST_FUNCTION_ROOT:  // root(degree, x) or sqrt(x)
        if (k == 2) return "pow(" + c(1) + ", 1.0 / " + c(0) + ")";
        return "sqrt(" + c(0) + ")";
      case AST_FUNCTION_ABS:
        return "abs(" + c(0) + ")";
      case AST_FUNCTION_MAX:
      case AST_FUNCTION_MIN: {
        const char* f = n->getType() == AST_FUNCTION_MAX ? "max" : "min";
        std::string s = c(0);
        for (unsigned i = 1; i < k; ++i) s = std::string(f) + "(" + s + ", " + c(i) + ")";
        return s;
      }
      case AST_RELATIONAL_EQ:
        return "(" + c(0) + " == " + c(1) + ")";
      case AST_RELATIONAL_NEQ:
        return "(" + c(0) + " != " + c(1) + ")";
      case AST_RELATIONAL_LT:
        return "(" + c(0) + " < " + c(1) + ")";
      case AST_RELATIONAL_LEQ:
        return "(" + c(0) + " <= " + c(1) + ")";
      case AST_RELATIONAL_GT:
        return "(" + c(0) + " > " + c(1) + ")";
      case AST_RELATIONAL_GEQ:
        return "(" + c(0) + " >= " + c(1) + ")";
      case AST_LOGICAL_AND:
        return join("&&");
      case AST_LOGICAL_OR:
        return join("||");
      case AST_LOGICAL_NOT:
        return "(" + c(0) + " == 0.0)";
      case AST_FUNCTION_PIECEWISE: {  // value1, cond1, value2, cond2, ..., [otherwise]
        std::string tail = (k % 2 == 1) ? c(k - 1) : std::string("0.0");
        for (int i = static_cast<int>(k / 2) - 1; i >= 0; --i)
          tail = "(" + c(2 * i + 1) + " ? " + c(2 * i) + " : " + tail + ")";
        return tail;
      }
      case AST_FUNCTION: {
        // a call of a function definition: the language's own Hill functions stay calls; any other is
        // expanded, its arguments bound to the lambda's bound variables (SBML's semantics of a call)
        const FunctionDefinition* f = model_ ? model_->getFunctionDefinition(n->getName()) : nullptr;
        if (f == nullptr || !f->isSetMath() || f->getNumArguments() != k)
          refuse(element_, id_,
                 std::string("calls '") + n->getName() + "' with " + std::to_string(k) +
                     " arguments, which is no function definition of that many arguments");
        if (native_ && native_->count(n->getName())) {
          std::string s = std::string(n->getName()) + "(";
          for (unsigned i = 0; i < k; ++i) s += (i ? ", " : "") + c(i);
          return s + ")";
        }
        if (++depth_ > 64) refuse(element_, id_, "function definitions nest deeper than 64 calls");
        std::map<std::string, std::string> bound;
        for (unsigned i = 0; i < k; ++i) bound[f->getArgument(i)->getName()] = "(" + c(i) + ")";
        const std::string body =
            "(" + MathWriter(bound, element_, id_, model_, native_, with_time_).write(f->getBody()) + ")";
        --depth_;
        return body;
      }
      default: {
        const char* name = n->getName();
        refuse(element_, id_,
               std::string("uses the MathML function '") + (name ? name : "?") +
                   "', which the expression language lacks (supported: + - * / power exp ln log root abs "
                   "min max piecewise, comparisons, and or not)");
      }
    }
  }

 private:
  const std::map<std::string, std::string>& symbols_;
  std::string element_, id_;
  const Model* model_;
  const std::set<std::string>* native_;
  bool with_time_ = false;
  mutable int depth_ = 0;
};

/// The function definitions that are exactly the expression language's hill, hill_act or hill_rep (as
/// write_sbml() writes them): same id, same lambda.
std::set<std::string> native_functions(const Model& m) {
  const std::pair<const char*, const char*> ours[] = {
      {"hill", "lambda(x, a, b, c, h, a + b / (1 + pow(c * x, h)))"},
      {"hill_act", "lambda(x, K, n, pow(x, n) / (pow(K, n) + pow(x, n)))"},
      {"hill_rep", "lambda(x, K, n, pow(K, n) / (pow(K, n) + pow(x, n)))"}};
  std::set<std::string> out;
  for (const auto& [id, body] : ours) {
    const FunctionDefinition* f = m.getFunctionDefinition(id);
    if (f == nullptr || !f->isSetMath()) continue;
    std::unique_ptr<ASTNode> canonical(SBML_parseL3Formula(body));
    std::unique_ptr<char[], void (*)(void*)> a(SBML_formulaToL3String(f->getMath()), free);
    std::unique_ptr<char[], void (*)(void*)> b(SBML_formulaToL3String(canonical.get()), free);
    if (a && b && std::string(a.get()) == b.get()) out.insert(id);
  }
  return out;
}

/// The first error libSBML reported, as "line N: message".
std::string first_error(const SBMLDocument& doc) {
  for (unsigned i = 0; i < doc.getNumErrors(); ++i) {
    const SBMLError* e = doc.getError(i);
    if (e->isError() || e->isFatal()) {
      std::string msg = e->getMessage();
      for (char& ch : msg)
        if (ch == '\n' || ch == '\r') ch = ' ';
      while (!msg.empty() && msg.back() == ' ') msg.pop_back();
      return "line " + std::to_string(e->getLine()) + ": " + msg;
    }
  }
  return "";
}

/// Runs one of libSBML's converters (expandFunctionDefinitions, expandInitialAssignments, ...).
void convert(SBMLDocument& doc, const char* option, const char* element) {
  ConversionProperties props;
  props.addOption(option, true);
  if (doc.convert(props) != LIBSBML_OPERATION_SUCCESS) {
    const auto e = first_error(doc);
    throw SbmlError{std::string(element) + ": libSBML's converter '" + option + "' failed" +
                    (e.empty() ? "" : ": " + e)};
  }
}

/// The model translated; the caller binds inputs by name.
UserNetworkSpec translate(Model& m, const std::map<std::string, std::string>& inputs) {
  if (m.getLevel() >= 3 && m.isSetConversionFactor())
    refuse("model", m.getId(), "conversionFactor is not supported");
  if (m.getLevel() >= 3 && m.isSetExtentUnits() && m.isSetSubstanceUnits() &&
      m.getExtentUnits() != m.getSubstanceUnits())
    refuse("model", m.getId(),
           "extentUnits '" + m.getExtentUnits() + "' differ from substanceUnits '" + m.getSubstanceUnits() +
               "' (a conversion factor would be needed; not supported)");
  for (unsigned i = 0; i < m.getNumInitialAssignments(); ++i)
    refuse("initialAssignment", m.getInitialAssignment(i)->getSymbol(), "could not be expanded");

  std::map<std::string, const Rule*> assignment, rate;
  for (unsigned i = 0; i < m.getNumRules(); ++i) {
    const Rule* r = m.getRule(i);
    if (r->isAlgebraic())
      refuse("algebraicRule", r->getId().empty() ? std::to_string(i) : r->getId(),
             "algebraic rules are not supported");
    if (r->isAssignment()) assignment[r->getVariable()] = r;
    if (r->isRate()) rate[r->getVariable()] = r;
  }
  for (const auto& [id, engine] : inputs) {
    if (m.getSpecies(id) == nullptr && m.getParameter(id) == nullptr)
      throw SbmlError{"[gene_network.inputs] names '" + id +
                      "', which is no species or parameter of the model"};
    if (assignment.count(id) || rate.count(id))
      refuse(m.getSpecies(id) ? "species" : "parameter", id,
             "is an input (bound to " + engine + ") but a rule sets it");
  }

  // what events assign becomes a state of the network (rate 0 unless a rule or reactions change it)
  std::set<std::string> event_targets;
  for (unsigned i = 0; i < m.getNumEvents(); ++i) {
    const Event* ev = m.getEvent(i);
    const std::string id = ev->getId().empty() ? "event" + std::to_string(i) : ev->getId();
    if (ev->isSetDelay()) refuse("event", id, "has a delay; events with delays are not supported");
    if (ev->isSetPriority())
      refuse("event", id,
             "has a priority; not supported: events firing in the same step run in document order");
    if (!ev->isSetTrigger() || !ev->getTrigger()->isSetMath()) refuse("event", id, "has no trigger");
    for (unsigned j = 0; j < ev->getNumEventAssignments(); ++j) {
      const std::string v = ev->getEventAssignment(j)->getVariable();
      if (m.getCompartment(v))
        refuse("event", id, "assigns compartment '" + v + "'; non-constant compartments are not supported");
      if (inputs.count(v))
        refuse("event", id, "assigns '" + v + "', an engine input (bound to " + inputs.at(v) + ")");
      if (assignment.count(v)) refuse("event", id, "assigns '" + v + "', which an assignment rule sets");
      const Species* sp = m.getSpecies(v);
      const Parameter* p = m.getParameter(v);
      if (sp == nullptr && p == nullptr)
        refuse("event", id, "assigns '" + v + "', which is no species or parameter (not supported)");
      if ((sp && sp->getConstant()) || (p && p->getConstant()))
        refuse("event", id, "assigns '" + v + "', which is constant");
      event_targets.insert(v);
    }
  }

  const std::set<std::string> native = native_functions(m);
  UserNetworkSpec spec;
  std::map<std::string, std::string> symbols;  // SBML id -> text in the expression language
  std::map<std::string, int> state;            // SBML id -> species index of the spec
  std::map<std::string, double> volume;        // species id -> compartment size (concentration species)
  const auto add_state = [&](const std::string& id, double initial) {
    state[id] = static_cast<int>(spec.species.size());
    UserSpecies u;
    u.name = id;
    u.initial = initial;
    spec.species.push_back(u);
    symbols[id] = id;
  };
  for (unsigned i = 0; i < m.getNumCompartments(); ++i) {
    const Compartment* c = m.getCompartment(i);
    if (!c->getConstant()) refuse("compartment", c->getId(), "non-constant compartments are not supported");
    if (assignment.count(c->getId()) || rate.count(c->getId()))
      refuse("compartment", c->getId(), "a rule sets its size; non-constant compartments are not supported");
    const double size = c->isSetSize() ? c->getSize() : 1.0;
    if (!(size > 0) || !std::isfinite(size)) refuse("compartment", c->getId(), "needs a positive size");
    spec.parameters.emplace_back(c->getId(), size);
    symbols[c->getId()] = c->getId();
  }
  for (unsigned i = 0; i < m.getNumParameters(); ++i) {
    const Parameter* p = m.getParameter(i);
    const auto& id = p->getId();
    if (inputs.count(id)) {
      symbols[id] = inputs.at(id);
    } else if (rate.count(id) || event_targets.count(id)) {
      add_state(id, p->isSetValue() ? p->getValue() : 0.0);
    } else if (!assignment.count(id)) {
      if (!p->isSetValue()) refuse("parameter", id, "has no value");
      spec.parameters.emplace_back(id, p->getValue());
      symbols[id] = id;
    }
  }
  for (unsigned i = 0; i < m.getNumSpecies(); ++i) {
    const Species* s = m.getSpecies(i);
    const auto& id = s->getId();
    if (s->isSetConversionFactor()) refuse("species", id, "conversionFactor is not supported");
    const Compartment* c = m.getCompartment(s->getCompartment());
    const double v = c != nullptr && c->isSetSize() ? c->getSize() : 1.0;
    const bool amount = s->getHasOnlySubstanceUnits();
    double initial = 0.0;
    if (s->isSetInitialConcentration())
      initial = amount ? s->getInitialConcentration() * v : s->getInitialConcentration();
    else if (s->isSetInitialAmount())
      initial = amount ? s->getInitialAmount() : s->getInitialAmount() / v;
    else if (!inputs.count(id) && !assignment.count(id))
      refuse("species", id, "has neither initialConcentration nor initialAmount");
    if (!amount) volume[id] = v;
    if (inputs.count(id)) {
      symbols[id] = inputs.at(id);
    } else if (assignment.count(id)) {
      // set below
    } else if (s->getConstant() ||
               (s->getBoundaryCondition() && !rate.count(id) && !event_targets.count(id))) {
      spec.parameters.emplace_back(id, initial);
      symbols[id] = id;
    } else {
      if (initial < 0)
        refuse("species", id, "has a negative initial value (concentrations are clamped at 0)");
      add_state(id, initial);
    }
  }
  // assignment rules: substituted where they are read, in an order that resolves chains
  std::map<std::string, int> visiting;
  std::function<void(const std::string&)> resolve = [&](const std::string& id) {
    if (symbols.count(id)) return;
    if (visiting[id]++) refuse("assignmentRule", id, "the assignment rules form a cycle");
    const Rule* r = assignment.at(id);
    // resolve what it reads first
    std::function<void(const ASTNode*)> walk = [&](const ASTNode* n) {
      if (n == nullptr) return;
      if (n->getType() == AST_NAME && assignment.count(n->getName())) resolve(n->getName());
      for (unsigned j = 0; j < n->getNumChildren(); ++j) walk(n->getChild(j));
    };
    walk(r->getMath());
    symbols[id] = "(" + MathWriter(symbols, "assignmentRule", id, &m, &native).write(r->getMath()) + ")";
  };
  for (const auto& [id, r] : assignment) {
    (void)r;
    if (m.getSpecies(id) == nullptr && m.getParameter(id) == nullptr)
      refuse("assignmentRule", id, "assigns a compartment or species reference, which is not supported");
    resolve(id);
  }

  // rates: reactions (divided by the compartment size for concentration species) and rate rules
  std::vector<std::string> terms(spec.species.size());
  for (unsigned i = 0; i < m.getNumReactions(); ++i) {
    const Reaction* r = m.getReaction(i);
    if (r->isSetFast() && r->getFast()) refuse("reaction", r->getId(), "fast reactions are not supported");
    if (!r->isSetKineticLaw() || !r->getKineticLaw()->isSetMath())
      refuse("reaction", r->getId(), "has no kinetic law");
    const std::string v =
        MathWriter(symbols, "reaction", r->getId(), &m, &native).write(r->getKineticLaw()->getMath());
    const auto add = [&](const SpeciesReference* ref, double sign) {
      if (ref->isSetStoichiometryMath()) refuse("reaction", r->getId(), "stoichiometryMath is not supported");
      if (!ref->getId().empty() && (assignment.count(ref->getId()) || rate.count(ref->getId())))
        refuse("reaction", r->getId(), "a rule sets the stoichiometry of '" + ref->getId() + "'");
      const auto it = state.find(ref->getSpecies());
      if (it == state.end()) return;  // boundary, constant or input species: reactions do not change it
      const Species* s = m.getSpecies(ref->getSpecies());
      if (s->getBoundaryCondition()) return;
      const double st = sign * (ref->isSetStoichiometry() ? ref->getStoichiometry() : 1.0);
      std::string term = number(st) + " * " + v;
      if (volume.count(ref->getSpecies()))
        term = "(" + term + ") / " + m.getSpecies(ref->getSpecies())->getCompartment();
      auto& t = terms[static_cast<std::size_t>(it->second)];
      t += (t.empty() ? "" : " + ") + term;
    };
    for (unsigned j = 0; j < r->getNumReactants(); ++j) add(r->getReactant(j), -1.0);
    for (unsigned j = 0; j < r->getNumProducts(); ++j) add(r->getProduct(j), 1.0);
  }
  for (const auto& [id, r] : rate) {
    const auto it = state.find(id);
    if (it == state.end()) refuse("rateRule", id, "sets a symbol that is not a species or parameter state");
    auto& t = terms[static_cast<std::size_t>(it->second)];
    if (!t.empty()) refuse("rateRule", id, "sets a species that reactions also change");
    t = MathWriter(symbols, "rateRule", id, &m, &native).write(r->getMath());
  }
  for (std::size_t k = 0; k < spec.species.size(); ++k)
    spec.species[k].rate = terms[k].empty() ? "0.0" : terms[k];
  // events: trigger and assignments in the expression language, `time` allowed (the end of the step)
  for (unsigned i = 0; i < m.getNumEvents(); ++i) {
    const Event* ev = m.getEvent(i);
    UserEvent u;
    u.id = ev->getId().empty() ? "event" + std::to_string(i) : ev->getId();
    const Trigger* tr = ev->getTrigger();
    // SBML Level 2 has no initialValue; its events cannot fire at t = 0, which is initialValue = true
    u.initial_value = tr->isSetInitialValue() ? tr->getInitialValue() : true;
    u.trigger = MathWriter(symbols, "event", u.id, &m, &native, true).write(tr->getMath());
    for (unsigned j = 0; j < ev->getNumEventAssignments(); ++j) {
      const EventAssignment* a = ev->getEventAssignment(j);
      if (!a->isSetMath()) refuse("event", u.id, "assigns '" + a->getVariable() + "' without math");
      u.assignments.emplace_back(state.at(a->getVariable()),
                                 MathWriter(symbols, "event", u.id, &m, &native, true).write(a->getMath()));
    }
    spec.events.push_back(std::move(u));
  }
  return spec;
}

/// The L3 parser's last error message, one line (libSBML allocates it; the caller frees it).
std::string last_parse_error() {
  std::unique_ptr<char[], void (*)(void*)> e(SBML_getLastParseL3Error(), free);
  std::string msg = e ? e.get() : "a syntax error";
  for (char& ch : msg)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return msg;
}

/// A formula in Antimony's infix syntax (SBML's L3 infix, log = ln) as MathML.
std::unique_ptr<ASTNode> antimony_formula(const std::string& text, const std::string& where) {
  L3ParserSettings settings;
  settings.setParseLog(L3P_PARSE_LOG_AS_LN);
  std::unique_ptr<ASTNode> ast(SBML_parseL3FormulaWithSettings(text.c_str(), &settings));
  if (!ast) throw SbmlError{where + ": \"" + text + "\": " + last_parse_error()};
  return ast;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

bool is_id(const std::string& s) {
  return valid_expression_name(s);
}

/// The subset of Antimony (Smith et al. 2009, Bioinformatics 25:2452) that networks are written in, as
/// SBML Level 3 Version 2; see docs/sbml.md, "Antimony". Statements, one per line:
///   model NAME / end                     (optional)
///   compartment C = 2.5                  a compartment and its size (default: one of size 1)
///   species S in C  or  S in C           the species' compartment
///   J1: A + 2 B -> C; k1 * A * B         a reaction (label optional; $X a boundary species; -> or =>)
///   S = 1.5                              initial concentration of a species, value of a parameter
///   X' = expression                      a rate rule
///   y := expression                      an assignment rule
///   function f(x, y) / body / end        a function definition
///   # or // comments, const/var/substanceOnly prefixes of declarations are ignored.
///   [E1:] at (condition)[, t0 = false]: x = value, y = value   an event (no delays, no priority)
/// Units, imports and model modules are refused naming the line.
std::string antimony_to_sbml(const std::string& text, const std::string& file) {
  struct Side {
    std::vector<std::pair<std::string, double>> species;  // id, stoichiometry
  };
  struct AntimonyReaction {
    std::string id, law;
    Side left, right;
    int line;
  };
  std::vector<std::pair<std::string, std::string>> compartments;  // id, size text
  std::map<std::string, std::string> compartment_of;              // species -> compartment
  std::vector<std::string> species_order;
  std::set<std::string> species, boundary;
  std::vector<std::pair<std::string, std::string>> values;  // id = expression, in order
  std::vector<std::pair<std::string, std::string>> rate_rules, assignment_rules;
  std::vector<AntimonyReaction> reactions;
  std::vector<std::pair<std::string, std::string>> functions;  // "f(x, y)" header, body
  struct AntimonyEvent {
    std::string id, trigger;
    bool t0 = true;  // the trigger's initialValue (Antimony's default)
    std::vector<std::pair<std::string, std::string>> assignments;
    int line = 0;
  };
  std::vector<AntimonyEvent> events;
  std::set<std::string> event_assigned;
  std::string model_id = "antimony_model";
  const auto add_species = [&](const std::string& id) {
    if (species.insert(id).second) species_order.push_back(id);
  };
  std::istringstream in(text);
  std::string raw;
  int line = 0;
  std::string function_header, function_body;
  bool in_function = false;
  // statements: one per line, or several separated by ';' on a line without a reaction (a reaction's ';'
  // separates its rate law)
  std::vector<std::pair<int, std::string>> statements;
  while (std::getline(in, raw)) {
    ++line;
    for (const char* c : {"#", "//"}) {
      const auto k = raw.find(c);
      if (k != std::string::npos) raw = raw.substr(0, k);
    }
    if (raw.find("->") != std::string::npos || raw.find("=>") != std::string::npos) {
      statements.emplace_back(line, raw);
      continue;
    }
    std::istringstream parts(raw);
    for (std::string part; std::getline(parts, part, ';');) statements.emplace_back(line, part);
  }
  for (auto& [stmt_line, stmt] : statements) {
    line = stmt_line;
    const std::string where = file + ":" + std::to_string(line);
    std::string st = trim(stmt);
    while (!st.empty() && st.back() == ';') st = trim(st.substr(0, st.size() - 1));
    if (st.empty()) continue;
    if (in_function) {
      if (st == "end") {
        functions.emplace_back(function_header, function_body);
        in_function = false;
      } else {
        function_body += " " + st;
      }
      continue;
    }
    const auto word = st.substr(0, st.find_first_of(" \t("));
    if (word == "model" || word == "end") {
      if (word == "model") {
        std::string rest = trim(st.substr(5));
        if (!rest.empty() && rest[0] == '*') rest = trim(rest.substr(1));
        rest = rest.substr(0, rest.find_first_of(" \t("));
        if (is_id(rest)) model_id = rest;
      }
      continue;
    }
    if (word == "function") {
      function_header = trim(st.substr(8));
      function_body.clear();
      in_function = true;
      continue;
    }
    {  // an event: [label:] at [(]condition[)][, t0 = false]: x = expr, y = expr
      std::string label, rest = st;
      const auto colon = st.find(':');
      if (colon != std::string::npos && is_id(trim(st.substr(0, colon))) &&
          trim(st.substr(colon + 1)).rfind("at", 0) == 0) {
        label = trim(st.substr(0, colon));
        rest = trim(st.substr(colon + 1));
      }
      if (rest.rfind("at", 0) == 0 && rest.size() > 2 &&
          (rest[2] == ' ' || rest[2] == '\t' || rest[2] == '(')) {
        AntimonyEvent ev;
        ev.line = line;
        ev.id = label.empty() ? "_E" + std::to_string(events.size()) : label;
        // split at the top level: the head (condition and options) before the first ':', then ','
        const auto split = [](const std::string& part_text, char sep) {
          std::vector<std::string> parts(1);
          int depth = 0;
          for (char ch : part_text) {
            if (ch == '(') ++depth;
            if (ch == ')') --depth;
            if (ch == sep && depth == 0) {
              parts.emplace_back();
              continue;
            }
            parts.back() += ch;
          }
          return parts;
        };
        const auto halves = split(rest.substr(2), ':');
        if (halves.size() != 2)
          throw SbmlError{where + ": event '" + ev.id + "': expected at condition: x = value, ..."};
        const auto head = split(halves[0], ',');
        ev.trigger = trim(head[0]);
        if (ev.trigger.find(" after ") != std::string::npos || ev.trigger.rfind("after", 0) == 0)
          throw SbmlError{where + ": event '" + ev.id + "': delays ('after') are not supported"};
        for (std::size_t k = 1; k < head.size(); ++k) {
          const std::string opt = trim(head[k]);
          const auto eq = opt.find('=');
          const std::string key = trim(opt.substr(0, eq)),
                            val = eq == std::string::npos ? "" : trim(opt.substr(eq + 1));
          if (key == "t0" && (val == "false" || val == "true")) {
            ev.t0 = val == "true";
          } else if (key == "persistent" || key == "fromTrigger") {
            // without delays neither changes what the engine does
          } else {
            throw SbmlError{where + ": event '" + ev.id + "': option '" + opt +
                            "' is not supported (t0, persistent and fromTrigger are)"};
          }
        }
        for (const auto& part : split(halves[1], ',')) {
          const auto eq = part.find('=');
          const std::string id = trim(part.substr(0, eq == std::string::npos ? 0 : eq));
          if (eq == std::string::npos || !is_id(id))
            throw SbmlError{where + ": event '" + ev.id + "': '" + trim(part) + "' is not id = value"};
          ev.assignments.emplace_back(id, trim(part.substr(eq + 1)));
          event_assigned.insert(id);
        }
        events.push_back(ev);
        continue;
      }
    }
    if (word == "at" || word == "import" || word == "unit" || word == "delete" ||
        st.find(" at ") != std::string::npos)
      throw SbmlError{where + ": '" + word + "' statements (events, imports, units) are not supported"};
    for (const char* prefix : {"const ", "var ", "substanceOnly ", "species ", "compartment "}) {
      if (st.rfind(prefix, 0) == 0) {
        const bool is_compartment = std::string(prefix) == "compartment ";
        const bool is_species = std::string(prefix) == "species ";
        st = trim(st.substr(std::string(prefix).size()));
        if (is_compartment) {  // compartment C [= size]
          const auto eq = st.find('=');
          const std::string id = trim(st.substr(0, eq));
          if (!is_id(id)) throw SbmlError{where + ": compartment '" + id + "': not a valid id"};
          compartments.emplace_back(id, eq == std::string::npos ? "1" : trim(st.substr(eq + 1)));
          st.clear();
        } else if (is_species && st.find('=') == std::string::npos && st.find(" in ") == std::string::npos) {
          std::istringstream ids(st);
          for (std::string id; std::getline(ids, id, ',');) {
            id = trim(id);
            if (!id.empty() && id[0] == '$') {
              id = id.substr(1);
              boundary.insert(id);
            }
            if (!is_id(id)) throw SbmlError{where + ": species '" + id + "': not a valid id"};
            add_species(id);
          }
          st.clear();
        }
        break;
      }
    }
    if (st.empty()) continue;
    if (st.find("->") != std::string::npos || st.find("=>") != std::string::npos) {
      AntimonyReaction r;
      r.line = line;
      const auto colon = st.find(':');
      const auto arrow = st.find(st.find("->") != std::string::npos ? "->" : "=>");
      if (colon != std::string::npos && colon < arrow) {
        r.id = trim(st.substr(0, colon));
        st = trim(st.substr(colon + 1));
      } else {
        r.id = "J" + std::to_string(reactions.size());
      }
      if (!is_id(r.id)) throw SbmlError{where + ": reaction label '" + r.id + "': not a valid id"};
      const auto semi = st.find(';');
      if (semi == std::string::npos)
        throw SbmlError{where + ": reaction '" + r.id + "' has no rate law (; law)"};
      r.law = trim(st.substr(semi + 1));
      const std::string eq = st.substr(0, semi);
      const auto a = eq.find(eq.find("->") != std::string::npos ? "->" : "=>");
      const auto parse_side = [&](const std::string& side, Side& out) {
        std::istringstream terms(side);
        for (std::string term; std::getline(terms, term, '+');) {
          term = trim(term);
          if (term.empty()) continue;
          double stoich = 1.0;
          const auto sp = term.find_first_of(" \t");
          if (sp != std::string::npos) {
            char* end = nullptr;
            const std::string num = term.substr(0, sp);
            stoich = std::strtod(num.c_str(), &end);
            if (end != num.c_str() + num.size())
              throw SbmlError{where + ": reaction '" + r.id + "': '" + term +
                              "' is not [stoichiometry] species"};
            term = trim(term.substr(sp));
          }
          if (!term.empty() && term[0] == '$') {
            term = term.substr(1);
            boundary.insert(term);
          }
          if (!is_id(term))
            throw SbmlError{where + ": reaction '" + r.id + "': '" + term + "' is not a species id"};
          add_species(term);
          out.species.emplace_back(term, stoich);
        }
      };
      parse_side(eq.substr(0, a), r.left);
      parse_side(eq.substr(a + 2), r.right);
      reactions.push_back(r);
      continue;
    }
    if (st.find(" in ") != std::string::npos && st.find('=') == std::string::npos) {  // S in C
      const auto k = st.find(" in ");
      std::string id = trim(st.substr(0, k));
      if (!id.empty() && id[0] == '$') {
        id = id.substr(1);
        boundary.insert(id);
      }
      if (!is_id(id)) throw SbmlError{where + ": species '" + id + "': not a valid id"};
      add_species(id);
      compartment_of[id] = trim(st.substr(k + 4));
      continue;
    }
    const auto assign = st.find(":=");
    if (assign != std::string::npos) {
      const std::string id = trim(st.substr(0, assign));
      if (!is_id(id)) throw SbmlError{where + ": assignment rule of '" + id + "': not a valid id"};
      assignment_rules.emplace_back(id, trim(st.substr(assign + 2)));
      continue;
    }
    const auto eqs = st.find('=');
    if (eqs == std::string::npos)
      throw SbmlError{where + ": cannot read \"" + st + "\" (docs/sbml.md lists the Antimony subset)"};
    std::string id = trim(st.substr(0, eqs));
    const std::string rhs = trim(st.substr(eqs + 1));
    if (!id.empty() && id.back() == '\'') {
      id = trim(id.substr(0, id.size() - 1));
      if (!is_id(id)) throw SbmlError{where + ": rate rule of '" + id + "': not a valid id"};
      rate_rules.emplace_back(id, rhs);
      continue;
    }
    std::string sid = id;
    if (!sid.empty() && sid[0] == '$') {
      sid = sid.substr(1);
      boundary.insert(sid);
      add_species(sid);
    }
    if (sid.find(" in ") != std::string::npos) {  // S in C = value
      const auto k = sid.find(" in ");
      compartment_of[trim(sid.substr(0, k))] = trim(sid.substr(k + 4));
      sid = trim(sid.substr(0, k));
      add_species(sid);
    }
    if (!is_id(sid)) throw SbmlError{where + ": '" + sid + "': not a valid id"};
    values.emplace_back(sid, rhs);
  }
  if (in_function) throw SbmlError{file + ": function '" + function_header + "' has no end"};

  SBMLDocument doc(3, 2);
  Model* m = doc.createModel();
  m->setId(model_id);
  const std::string where = file;
  for (const auto& [header, body] : functions) {
    const auto open = header.find('('), close = header.rfind(')');
    if (open == std::string::npos || close == std::string::npos)
      throw SbmlError{where + ": function '" + header + "': expected name(arguments)"};
    FunctionDefinition* f = m->createFunctionDefinition();
    f->setId(trim(header.substr(0, open)));
    const std::string args = trim(header.substr(open + 1, close - open - 1));
    f->setMath(antimony_formula("lambda(" + args + (args.empty() ? "" : ", ") + trim(body) + ")",
                                where + ": function '" + f->getId() + "'")
                   .get());
  }
  std::set<std::string> compartment_ids;
  for (const auto& [id, size] : compartments) compartment_ids.insert(id);
  bool need_default = false;
  for (const auto& sid : species_order)
    if (!compartment_of.count(sid)) need_default = true;
  if (need_default && !compartment_ids.count("default_compartment"))
    compartments.emplace_back("default_compartment", "1");
  std::map<std::string, std::string> value_of(values.begin(), values.end());
  const auto number_of = [&](const std::string& id, const std::string& expr) {
    char* end = nullptr;
    const double v = std::strtod(expr.c_str(), &end);
    if (end == expr.c_str() + expr.size() && !expr.empty()) return std::optional<double>(v);
    (void)id;
    return std::optional<double>();
  };
  std::set<std::string> ruled;
  for (const auto& r : rate_rules) ruled.insert(r.first);
  for (const auto& r : assignment_rules) ruled.insert(r.first);
  const auto initial = [&](const std::string& id, const std::function<void(double)>& set_value) {
    const auto it = value_of.find(id);
    if (it == value_of.end()) return;
    if (const auto v = number_of(id, it->second)) {
      set_value(*v);
    } else {  // an expression: an initial assignment, evaluated by libSBML's expandInitialAssignments
      InitialAssignment* ia = m->createInitialAssignment();
      ia->setSymbol(id);
      ia->setMath(antimony_formula(it->second, where + ": initial value of '" + id + "'").get());
    }
  };
  for (const auto& [id, size] : compartments) {
    Compartment* c = m->createCompartment();
    c->setId(id);
    c->setConstant(true);
    c->setSpatialDimensions(3.0);
    c->setSize(1.0);
    value_of.emplace(id, size);
    initial(id, [&](double v) { c->setSize(v); });
  }
  for (const auto& sid : species_order) {
    Species* sp = m->createSpecies();
    sp->setId(sid);
    sp->setCompartment(compartment_of.count(sid) ? compartment_of[sid] : "default_compartment");
    sp->setHasOnlySubstanceUnits(false);
    sp->setBoundaryCondition(boundary.count(sid) > 0);
    sp->setConstant(false);
    sp->setInitialConcentration(0.0);
    initial(sid, [&](double v) { sp->setInitialConcentration(v); });
  }
  for (const auto& [id, expr] : values) {
    if (species.count(id) || compartment_ids.count(id) || m->getParameter(id)) continue;
    Parameter* p = m->createParameter();
    p->setId(id);
    p->setConstant(!ruled.count(id) && !event_assigned.count(id));
    p->setValue(0.0);
    initial(id, [&](double v) { p->setValue(v); });
  }
  for (const auto& id : ruled)
    if (!species.count(id) && !m->getParameter(id)) {
      Parameter* p = m->createParameter();
      p->setId(id);
      p->setConstant(false);
      p->setValue(0.0);
    }
  for (const auto& [id, expr] : assignment_rules) {
    AssignmentRule* r = m->createAssignmentRule();
    r->setVariable(id);
    r->setMath(antimony_formula(expr, where + ": " + id + " :=").get());
  }
  for (const auto& [id, expr] : rate_rules) {
    RateRule* r = m->createRateRule();
    r->setVariable(id);
    r->setMath(antimony_formula(expr, where + ": " + id + "'").get());
  }
  for (const auto& ev : events) {
    const std::string at = file + ":" + std::to_string(ev.line) + ": event '" + ev.id + "'";
    Event* e = m->createEvent();
    e->setId(ev.id);
    e->setUseValuesFromTriggerTime(true);
    Trigger* t = e->createTrigger();
    t->setInitialValue(ev.t0);
    t->setPersistent(true);
    t->setMath(antimony_formula(ev.trigger, at + " trigger").get());
    for (const auto& [id, expr] : ev.assignments) {
      EventAssignment* a = e->createEventAssignment();
      a->setVariable(id);
      a->setMath(antimony_formula(expr, at + ": " + id + " =").get());
    }
  }
  for (const auto& rx : reactions) {
    Reaction* r = m->createReaction();
    r->setId(rx.id);
    r->setReversible(false);
    std::set<std::string> participants;
    for (const auto& [sid, st] : rx.left.species) {
      SpeciesReference* ref = r->createReactant();
      ref->setSpecies(sid);
      ref->setStoichiometry(st);
      ref->setConstant(true);
      participants.insert(sid);
    }
    for (const auto& [sid, st] : rx.right.species) {
      SpeciesReference* ref = r->createProduct();
      ref->setSpecies(sid);
      ref->setStoichiometry(st);
      ref->setConstant(true);
      participants.insert(sid);
    }
    KineticLaw* law = r->createKineticLaw();
    const auto ast =
        antimony_formula(rx.law, file + ":" + std::to_string(rx.line) + ": reaction '" + rx.id + "'");
    law->setMath(ast.get());
    // species the law reads besides reactants and products are modifiers (SBML requires them listed)
    std::function<void(const ASTNode*)> walk = [&](const ASTNode* n) {
      if (n->getType() == AST_NAME && species.count(n->getName()) && !participants.count(n->getName())) {
        participants.insert(n->getName());
        r->createModifier()->setSpecies(n->getName());
      }
      for (unsigned j = 0; j < n->getNumChildren(); ++j) walk(n->getChild(j));
    };
    walk(ast.get());
  }
  std::unique_ptr<char[], void (*)(void*)> out(writeSBMLToString(&doc), free);
  return out ? std::string(out.get()) : std::string();
}

}  // namespace

bool has_sbml_network(const io::ScenarioTable& gene_network) {
  return gene_network.has("sbml");
}

bool sbml_available() {
  return true;
}

UserNetworkSpec read_sbml_network(const io::ScenarioTable& t, const std::string& scenario_path,
                                  const std::vector<std::string>& available_fields) {
  if (t.has("species")) t.fail("sbml", "give either sbml or [[gene_network.species]], not both");
  fs::path file = t.string("sbml", "");
  if (file.empty()) t.fail("sbml", "an empty path");
  if (file.is_relative()) file = fs::path(scenario_path).parent_path() / file;
  const std::string name = file.filename().string();
  const std::string ext = file.extension().string();
  const bool antimony = ext == ".ant" || ext == ".antimony";
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) t.fail("sbml", file.string() + ": SBML file not found");
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  t.record_input_file(fs::absolute(file).lexically_normal(), bytes);

  // inputs: SBML id -> engine quantity
  std::map<std::string, std::string> inputs;
  const auto in_table = t.table("inputs");
  for (const auto& key : in_table.keys()) {
    const std::string q = in_table.string(key, "");
    const bool field =
        std::find(available_fields.begin(), available_fields.end(), q) != available_fields.end();
    if (q != "adhesion" && q.rfind("mean_", 0) != 0 && !field)
      in_table.fail(
          key, "\"" + q + "\" is not an engine quantity (adhesion, mean_<species>, or a sampled field: " +
                   [&] {
                     std::string s;
                     for (const auto& f : available_fields) s += (s.empty() ? "" : ", ") + f;
                     return s.empty() ? std::string("none") : s;
                   }() +
                   ")");
    inputs[key] = q;
  }

  UserNetworkSpec spec;
  try {
    const std::string sbml = antimony ? antimony_to_sbml(bytes, name) : bytes;
    std::unique_ptr<SBMLDocument> doc(readSBMLFromString(sbml.c_str()));
    if (doc == nullptr) throw SbmlError{"libSBML could not read the file"};
    const auto e = first_error(*doc);
    if (!e.empty()) throw SbmlError{e};
    if (doc->getModel() == nullptr) throw SbmlError{"the document has no model"};
    // libSBML's converters: initial assignments evaluated, local parameters promoted to global ones (named
    // <reaction>_<parameter>). Function definitions are not expanded by libSBML's converter but bound at
    // their calls by MathWriter, so that the language's own Hill functions stay single calls.
    if (doc->getModel()->getNumInitialAssignments() > 0)
      convert(*doc, "expandInitialAssignments", "initialAssignment");
    convert(*doc, "promoteLocalParameters", "localParameter");
    spec = translate(*doc->getModel(), inputs);
  } catch (const SbmlError& err) {
    t.fail("sbml", name + ": " + err.what);
  }
  // the means an input names must be of the network's species
  for (const auto& [id, q] : inputs)
    if (q.rfind("mean_", 0) == 0 && spec.species_index(q.substr(5)) < 0)
      in_table.fail(id,
                    "\"" + q + "\": '" + q.substr(5) + "' is not a species of the network (" + name + ")");
  for (std::size_t i = 0; i < spec.species.size(); ++i) {
    auto& s = spec.species[i];
    if (!valid_expression_name(s.name) || s.name.rfind("mean_", 0) == 0 || s.name == "adhesion" ||
        expression_functions().count(s.name))
      t.fail("sbml", name + ": species '" + s.name +
                         "': the id is reserved by the engine (adhesion, mean_*, "
                         "function names); rename it");
    s.where = t.where("sbml") + ": " + t.path() + ".sbml: " + name + ": rate of '" + s.name + "'";
  }
  for (const auto& [p, v] : spec.parameters) {
    (void)v;
    if (p == "adhesion" || p.rfind("mean_", 0) == 0 || expression_functions().count(p) ||
        std::find(available_fields.begin(), available_fields.end(), p) != available_fields.end())
      t.fail("sbml", name + ": parameter '" + p + "': the id is an engine quantity; bind it in [" + t.path() +
                         ".inputs] (" + p + " = \"" + p + "\") or rename it");
  }
  spec.neighbour_distance = t.number("neighbour_distance", spec.neighbour_distance, io::Range::positive());
  if (t.has("suprabasal")) {
    spec.suprabasal = t.string("suprabasal", "");
    spec.suprabasal_where = t.where("suprabasal") + ": " + t.path() + ".suprabasal";
  }
  for (auto& e : spec.events)
    e.where = t.where("sbml") + ": " + t.path() + ".sbml: " + name + ": event '" + e.id + "'";
  check_user_network(spec, t, available_fields);
  if (!spec.events.empty() &&
      (spec.species_index("time") >= 0 || std::any_of(spec.parameters.begin(), spec.parameters.end(),
                                                      [](const auto& p) { return p.first == "time"; })))
    t.fail("sbml", name + ": the id 'time' is the events' time; rename the species or parameter");
  check_network_events(spec, t, available_fields);
  return spec;
}

namespace {

/// Our expression text as an SBML L3 formula: log is the natural logarithm; ?: has no L3 infix form.
std::unique_ptr<ASTNode> parse_formula(const std::string& expr, const std::string& what, Model* model) {
  if (expr.find('?') != std::string::npos)
    throw InputError(what + ": the ?: operator cannot be exported to SBML yet");
  L3ParserSettings settings;
  settings.setParseLog(L3P_PARSE_LOG_AS_LN);
  settings.setModel(model);
  std::unique_ptr<ASTNode> ast(SBML_parseL3FormulaWithSettings(expr.c_str(), &settings));
  if (!ast)
    throw InputError(what + ": SBML's formula parser refused \"" + expr + "\": " + last_parse_error());
  return ast;
}

}  // namespace

std::string write_sbml(const UserNetworkSpec& spec, const std::string& model_id) {
  if (!spec.events.empty())
    throw InputError("export-sbml: the network has events ('" + spec.events.front().id +
                     "'), which export does not write yet");
  SBMLDocument doc(3, 2);
  Model* m = doc.createModel();
  m->setId(model_id);
  // the expression language's Hill functions (modules/gene_network/README.md)
  const std::pair<const char*, const char*> functions[] = {
      {"hill", "lambda(x, a, b, c, h, a + b / (1 + pow(c * x, h)))"},
      {"hill_act", "lambda(x, K, n, pow(x, n) / (pow(K, n) + pow(x, n)))"},
      {"hill_rep", "lambda(x, K, n, pow(K, n) / (pow(K, n) + pow(x, n)))"}};
  for (const auto& [id, body] : functions) {
    FunctionDefinition* f = m->createFunctionDefinition();
    f->setId(id);
    std::unique_ptr<ASTNode> ast(SBML_parseL3Formula(body));
    f->setMath(ast.get());
  }
  // the compartment's id must differ from every name of the network (a network read from SBML keeps its
  // compartments' sizes as parameters)
  std::string compartment = "cell";
  const auto taken = [&](const std::string& id) {
    if (spec.species_index(id) >= 0) return true;
    for (const auto& p : spec.parameters)
      if (p.first == id) return true;
    return false;
  };
  for (int k = 1; taken(compartment); ++k) compartment = "cell_" + std::to_string(k);
  Compartment* c = m->createCompartment();
  c->setId(compartment);
  c->setSize(1.0);
  c->setConstant(true);
  c->setSpatialDimensions(3.0);
  for (const auto& s : spec.species) {
    Species* sp = m->createSpecies();
    sp->setId(s.name);
    sp->setCompartment(compartment);
    sp->setInitialConcentration(s.initial);
    sp->setHasOnlySubstanceUnits(false);
    sp->setBoundaryCondition(false);
    sp->setConstant(false);
  }
  for (const auto& [id, v] : spec.parameters) {
    Parameter* p = m->createParameter();
    p->setId(id);
    p->setValue(v);
    p->setConstant(true);
  }
  std::vector<std::string> inputs;
  if (spec.reads_adhesion) inputs.push_back("adhesion");
  for (const int k : spec.mean_species)
    inputs.push_back("mean_" + spec.species[static_cast<std::size_t>(k)].name);
  for (const auto& f : spec.fields) inputs.push_back(f);
  for (const auto& id : inputs) {
    Parameter* p = m->createParameter();
    p->setId(id);
    p->setValue(0.0);
    p->setConstant(false);  // set per cell by the engine: [gene_network.inputs]
  }
  for (const auto& s : spec.species) {
    RateRule* r = m->createRateRule();
    r->setVariable(s.name);
    const auto ast = parse_formula(s.rate, s.where, m);
    r->setMath(ast.get());
  }
  std::unique_ptr<char[], void (*)(void*)> text(writeSBMLToString(&doc), free);
  return text ? std::string(text.get()) : std::string();
}

std::string sbml_inputs_table(const UserNetworkSpec& spec) {
  std::string s = "[gene_network.inputs]\n";
  if (spec.reads_adhesion) s += "adhesion = \"adhesion\"\n";
  for (const int k : spec.mean_species) {
    const auto n = "mean_" + spec.species[static_cast<std::size_t>(k)].name;
    s += n + " = \"" + n + "\"\n";
  }
  for (const auto& f : spec.fields) s += f + " = \"" + f + "\"\n";
  return s;
}

}  // namespace tissue::grn
