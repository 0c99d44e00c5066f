#include "engine/run/sweep_spec.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <toml++/toml.h>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/sobol.hpp>
#include <boost/random/uniform_01.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include "engine/io/scenario.hpp"

namespace tissue::sweep {

namespace {

namespace fs = std::filesystem;

std::string position(const std::string& file, const toml::source_position& p) {
  return file + ":" + std::to_string(p.line) + ":" + std::to_string(p.column);
}

[[noreturn]] void fail(const std::string& where, const std::string& key, const std::string& what) {
  throw InputError(where + ": " + key + ": " + what);
}

std::string shortest(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

/// A finite double as a TOML float: shortest round trip, ".0" appended where it would read as an integer.
std::string float_literal(double v) {
  std::string s = shortest(v);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

/// A TOML basic string holding `s` (UTF-8 passes through; control characters escaped).
std::string string_literal(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

/// What a node holds, for messages ("an array", "the integer 3", ...).
std::string describe(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "the string " + string_literal(*n.value<std::string_view>());
    case toml::node_type::integer:
      return "the integer " + std::to_string(*n.value<std::int64_t>());
    case toml::node_type::floating_point:
      return "the number " + shortest(*n.value<double>());
    case toml::node_type::boolean:
      return *n.value<bool>() ? "true" : "false";
    default:
      return "a date/time";
  }
}

/// Rounds to 15 significant digits (grid range values: 0.30000000000000004 -> 0.3).
double round15(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return std::strtod(buf, nullptr);
}

/// The entries of a table in file order (toml++ keeps them sorted by name).
std::vector<std::pair<const toml::key*, const toml::node*>> in_file_order(const toml::table& t) {
  std::vector<std::pair<const toml::key*, const toml::node*>> out;
  for (auto&& [k, v] : t) out.emplace_back(&k, &v);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    const auto& pa = a.first->source().begin;
    const auto& pb = b.first->source().begin;
    return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
  });
  return out;
}

/// Reads a whole file of at most io::kMaxScenarioBytes. `what` names it in messages ("sweep file").
/// @throws InputError "<prefix><path>: reason" when missing, not a regular file, too large or unreadable.
std::string read_text(const fs::path& path, const std::string& what, const std::string& prefix) {
  const std::string p = path.string();
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) throw InputError(prefix + p + ": " + what + " not found");
  if (fs::is_directory(status)) throw InputError(prefix + p + ": is a directory, not a " + what);
  if (!fs::is_regular_file(status))
    throw InputError(prefix + p + ": not a regular file (a pipe, device or socket); give a " + what);
  const auto size = fs::file_size(path, ec);
  if (ec) throw InputError(prefix + p + ": cannot read the " + what + "'s size: " + ec.message());
  if (size > io::kMaxScenarioBytes)
    throw InputError(prefix + p + ": " + std::to_string(size) + " bytes, more than a " + what +
                     " may have (" + std::to_string(io::kMaxScenarioBytes) + ")");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(prefix + p + ": cannot open the " + what + " for reading");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// Parses TOML text after io::Scenario's checks (which refuse the input toml++ has undefined behaviour on,
/// and turn parse errors into InputErrors with the file's position).
toml::table parse_toml(const std::string& text, const std::string& source) {
  (void)io::Scenario::from_string(text, source);
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {  // not reached: the check above parsed the same text
    throw InputError(position(source, e.source().begin) + ": invalid TOML: " + std::string(e.description()));
  }
}

/// Byte offsets of toml++'s (line, column) positions: lines from 1, columns from 1 in characters (UTF-8),
/// a byte-order mark not counted.
class Offsets {
 public:
  explicit Offsets(const std::string& text) : text_(text) {
    starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') starts_.push_back(i + 1);
  }
  std::size_t operator()(const toml::source_position& p) const {
    if (p.line < 1 || p.line > starts_.size()) throw std::logic_error("sweep: source line out of range");
    std::size_t i = starts_[p.line - 1];
    if (p.line == 1 && text_.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;  // toml++ skips a byte-order mark
    for (std::size_t column = 1; column < p.column; ++column) {
      if (i >= text_.size()) throw std::logic_error("sweep: source column out of range");
      ++i;
      while (i < text_.size() && (static_cast<unsigned char>(text_[i]) & 0xC0) == 0x80) ++i;
    }
    return i;
  }
  /// Offset just past the end of the line holding `offset` (after its '\n', or the text's end).
  std::size_t line_end(std::size_t offset) const {
    const std::size_t nl = text_.find('\n', offset);
    return nl == std::string::npos ? text_.size() : nl + 1;
  }

 private:
  const std::string& text_;
  std::vector<std::size_t> starts_;
};

enum class Type { integer, floating, string, boolean };

const char* type_word(Type t) {
  switch (t) {
    case Type::integer:
      return "an integer";
    case Type::floating:
      return "a number";
    case Type::string:
      return "a string";
    default:
      return "true or false";
  }
}

/// One varied key: where its value lies in the base and what the members give it.
struct Dimension {
  std::string key;
  std::string where;  ///< sweep file position of the key
  Type type = Type::floating;
  bool in_base = false;             ///< false: simulation.seed, to be inserted
  std::size_t begin = 0, end = 0;   ///< byte span of the base's value (in_base)
  std::vector<std::string> values;  ///< literals (grid, seeds); sample dimensions fill it after the design
  double from = 0.0, to = 0.0;      ///< sample range
  bool log = false;
};

struct Context {
  std::string file;  ///< the sweep file's name in messages
  std::string base_name;
  const toml::table* base = nullptr;
  const Offsets* base_offsets = nullptr;
  std::map<std::string, std::string> varied;  ///< key -> where, for duplicates
};

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    parts.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

/// The node at a dotted key of `root`, or nullptr (`blocked` then names a prefix that is not a table).
const toml::node* find_key(const toml::table& root, const std::string& key, std::string* blocked = nullptr) {
  const toml::table* t = &root;
  const toml::node* n = nullptr;
  std::string prefix;
  for (const auto& part : split_key(key)) {
    if (t == nullptr) {
      if (blocked != nullptr) *blocked = prefix;
      return nullptr;
    }
    n = t->get(part);
    if (n == nullptr) return nullptr;
    prefix += (prefix.empty() ? "" : ".") + part;
    t = n->as_table();
  }
  return n;
}

/// Registers a varied key and finds its value in the base. @throws InputError for a duplicate, a key the base
/// does not set (except simulation.seed), or a value that cannot be varied.
Dimension new_dimension(Context& c, const std::string& key, const std::string& where) {
  if (key.empty() || key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos)
    fail(where, "\"" + key + "\"", "not a dotted scenario key (an empty part)");
  const auto [it, fresh] = c.varied.emplace(key, where);
  if (!fresh)
    fail(where, key, "varied twice (also at " + it->second + "); a key is varied in one place only");
  Dimension d;
  d.key = key;
  d.where = where;
  std::string blocked;
  const toml::node* n = find_key(*c.base, key, &blocked);
  if (n == nullptr) {
    if (key == "simulation.seed" && blocked.empty()) {
      d.type = Type::integer;
      return d;
    }
    if (!blocked.empty())
      fail(where, key,
           "not set in the base scenario " + c.base_name + ": " + blocked + " is " +
               describe(*find_key(*c.base, blocked)) + " there, not a table");
    fail(where, key, "not set in the base scenario " + c.base_name + "; set it there to vary it");
  }
  const std::string base_where = position(c.base_name, n->source().begin);
  switch (n->type()) {
    case toml::node_type::integer:
      d.type = Type::integer;
      break;
    case toml::node_type::floating_point:
      d.type = Type::floating;
      break;
    case toml::node_type::string:
      d.type = Type::string;
      break;
    case toml::node_type::boolean:
      d.type = Type::boolean;
      break;
    case toml::node_type::table:
      fail(where, key, "is a table in the base scenario (" + base_where + "); vary its entries instead");
    case toml::node_type::array:
      fail(where, key,
           "is an array in the base scenario (" + base_where +
               "); a sweep varies single values: vary its entries instead (split it into keys, or make one "
               "base scenario per array)");
    default:
      fail(where, key, "is a date/time in the base scenario (" + base_where + "), which a sweep cannot vary");
  }
  if (key == "simulation.seed" && d.type != Type::integer)
    fail(where, key, "is " + describe(*n) + " in the base scenario (" + base_where + "), not an integer");
  d.in_base = true;
  d.begin = (*c.base_offsets)(n->source().begin);
  d.end = (*c.base_offsets)(n->source().end);
  return d;
}

/// The literal of one list entry for a dimension of type d.type.
std::string list_literal(const Context& c, const Dimension& d, const toml::node& v, std::size_t i) {
  const std::string where = position(c.file, v.source().begin);
  const std::string entry = "entry " + std::to_string(i) + ": ";
  const std::string base = " (" + d.key + " is " + type_word(d.type) + " in the base scenario)";
  switch (d.type) {
    case Type::integer:
      if (!v.is_integer()) fail(where, d.key, entry + "expected an integer" + base + ", got " + describe(v));
      return std::to_string(*v.value<std::int64_t>());
    case Type::floating: {
      if (!v.is_number()) fail(where, d.key, entry + "expected a number" + base + ", got " + describe(v));
      const double x = *v.value<double>();
      if (!std::isfinite(x)) fail(where, d.key, entry + "expected a finite number, got " + shortest(x));
      return float_literal(x);
    }
    case Type::string:
      if (!v.is_string()) fail(where, d.key, entry + "expected a string" + base + ", got " + describe(v));
      return string_literal(*v.value<std::string_view>());
    default:
      if (!v.is_boolean())
        fail(where, d.key, entry + "expected true or false" + base + ", got " + describe(v));
      return *v.value<bool>() ? "true" : "false";
  }
}

/// A numeric field of a range table (finite number).
double range_number(const Context& c, const Dimension& d, const toml::table& t, const char* field,
                    const std::string& table_where) {
  const toml::node* n = t.get(field);
  if (n == nullptr)
    fail(table_where, d.key, std::string("range: `") + field + "` missing; expected a number");
  const std::string where = position(c.file, n->source().begin);
  if (!n->is_number()) fail(where, d.key, std::string(field) + ": expected a number, got " + describe(*n));
  const double v = *n->value<double>();
  if (!std::isfinite(v))
    fail(where, d.key, std::string(field) + ": expected a finite number, got " + shortest(v));
  return v;
}

/// The literal of a number computed for a dimension (rounded to an integer for integer keys).
std::string number_literal(const Dimension& d, double v, const std::string& where) {
  if (d.type == Type::integer) {
    const double r = std::round(v);
    if (!(std::fabs(r) < 9.2e18))
      fail(where, d.key, "value " + shortest(v) + " is out of an integer's range");
    return std::to_string(static_cast<std::int64_t>(r));
  }
  return float_literal(v);
}

/// Reads `scale` of a range table: true for "log".
bool range_scale(const Context& c, const Dimension& d, const toml::table& t) {
  const toml::node* n = t.get("scale");
  if (n == nullptr) return false;
  const std::string where = position(c.file, n->source().begin);
  if (!n->is_string() ||
      (*n->value<std::string_view>() != "linear" && *n->value<std::string_view>() != "log"))
    fail(where, d.key, "scale: expected \"linear\" or \"log\", got " + describe(*n));
  return *n->value<std::string_view>() == "log";
}

void refuse_unknown_fields(const Context& c, const Dimension& d, const toml::table& t,
                           const std::set<std::string_view>& allowed, const std::string& list) {
  for (const auto& [k, v] : in_file_order(t))
    if (!allowed.count(k->str()))
      fail(position(c.file, k->source().begin), d.key,
           "unknown key '" + std::string(k->str()) + "' in its range; expected " + list);
}

void refuse_non_numeric(const Dimension& d, const std::string& where) {
  if (d.type == Type::string || d.type == Type::boolean)
    fail(where, d.key,
         std::string("is ") + type_word(d.type) +
             " in the base scenario; a range needs a numeric key: give a list of values instead");
}

/// The values of a grid range table.
void grid_range(const Context& c, Dimension& d, const toml::table& t) {
  const std::string where = position(c.file, t.source().begin);
  refuse_non_numeric(d, d.where);
  refuse_unknown_fields(c, d, t, {"from", "to", "count", "step", "scale"}, "from, to, count or step, scale");
  const double from = range_number(c, d, t, "from", where);
  const double to = range_number(c, d, t, "to", where);
  const bool log = range_scale(c, d, t);
  const toml::node* count = t.get("count");
  const toml::node* step = t.get("step");
  if ((count == nullptr) == (step == nullptr)) fail(where, d.key, "range: give one of `count` and `step`");
  if (to < from)
    fail(position(c.file, t.get("to")->source().begin), d.key,
         "to (" + shortest(to) + ") is less than from (" + shortest(from) + ")");
  if (log && (from <= 0.0 || to <= 0.0))
    fail(position(c.file, t.get(from <= 0.0 ? "from" : "to")->source().begin), d.key,
         "a log-scale range needs ends > 0, got from = " + shortest(from) + ", to = " + shortest(to));
  std::vector<double> values;
  if (count != nullptr) {
    const std::string count_where = position(c.file, count->source().begin);
    if (!count->is_integer())
      fail(count_where, d.key, "count: expected an integer >= 1, got " + describe(*count));
    const std::int64_t n = *count->value<std::int64_t>();
    if (n < 1) fail(count_where, d.key, "count: expected an integer >= 1, got " + std::to_string(n));
    if (static_cast<std::uint64_t>(n) > kMaxMembers)
      fail(count_where, d.key,
           "count: " + std::to_string(n) + " values, more than a sweep may have members (" +
               std::to_string(kMaxMembers) + ")");
    for (std::int64_t i = 0; i < n; ++i) {
      const double f = n == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(n - 1);
      double v = log ? from * std::pow(to / from, f) : from + (to - from) * f;
      if (i == 0) v = from;
      if (i == n - 1 && n > 1) v = to;
      values.push_back(v);
    }
  } else {
    const std::string step_where = position(c.file, step->source().begin);
    if (log) fail(step_where, d.key, "step: a log-scale range takes `count`, not `step`");
    if (!step->is_number()) fail(step_where, d.key, "step: expected a number > 0, got " + describe(*step));
    const double s = *step->value<double>();
    if (!(s > 0.0) || !std::isfinite(s))
      fail(step_where, d.key, "step: expected a number > 0, got " + shortest(s));
    const double n = std::floor((to - from) / s + 1e-9) + 1.0;
    if (!(n <= static_cast<double>(kMaxMembers)))
      fail(step_where, d.key,
           "step: " + shortest(n) + " values, more than a sweep may have members (" +
               std::to_string(kMaxMembers) + ")");
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i)
      values.push_back(std::min(from + static_cast<double>(i) * s, to));
  }
  for (const double v : values)
    d.values.push_back(number_literal(d, d.type == Type::floating ? round15(v) : v, where));
}

/// Reads a [sample.ranges] entry.
void sample_range(const Context& c, Dimension& d, const toml::table& t) {
  const std::string where = position(c.file, t.source().begin);
  refuse_non_numeric(d, d.where);
  refuse_unknown_fields(c, d, t, {"from", "to", "scale"}, "from, to, scale");
  d.from = range_number(c, d, t, "from", where);
  d.to = range_number(c, d, t, "to", where);
  d.log = range_scale(c, d, t);
  if (!(d.from < d.to))
    fail(position(c.file, t.get("to")->source().begin), d.key,
         "a sampled range needs from < to, got from = " + shortest(d.from) + ", to = " + shortest(d.to));
  if (d.log && d.from <= 0.0)
    fail(position(c.file, t.get("from")->source().begin), d.key,
         "a log-scale range needs ends > 0, got from = " + shortest(d.from));
}

/// The leaves of [grid] or [sample.ranges] in file order: (dotted key, key position, value).
struct Leaf {
  std::string key;
  std::string where;
  const toml::node* value;
};

void collect(const Context& c, const toml::table& t, const std::string& prefix, const std::string& section,
             std::vector<Leaf>& out) {
  for (const auto& [k, v] : in_file_order(t)) {
    const std::string key = prefix.empty() ? std::string(k->str()) : prefix + "." + std::string(k->str());
    const std::string where = position(c.file, k->source().begin);
    if (const toml::table* sub = v->as_table()) {
      if (sub->contains("from") || sub->contains("to")) {
        out.push_back({key, where, v});
      } else if (sub->empty()) {
        fail(where, key,
             "an empty table; expected " + std::string(section == "grid" ? "a list of values or " : "") +
                 "a range { from = ..., to = ... }");
      } else {
        collect(c, *sub, key, section, out);
      }
    } else if (v->is_array() && section == "grid") {
      out.push_back({key, where, v});
    } else {
      fail(where, key,
           std::string("expected ") + (section == "grid" ? "a list of values or " : "") +
               "a range { from = ..., to = ... } (" + section + " keys are dotted scenario keys), got " +
               describe(*v));
    }
  }
}

std::int64_t integer_key(const Context& c, const toml::node& n, const std::string& key, std::int64_t min) {
  const std::string where = position(c.file, n.source().begin);
  if (!n.is_integer())
    fail(where, key, "expected an integer >= " + std::to_string(min) + ", got " + describe(n));
  const std::int64_t v = *n.value<std::int64_t>();
  if (v < min)
    fail(where, key, "expected an integer >= " + std::to_string(min) + ", got " + std::to_string(v));
  return v;
}

/// The design's u values: count points x dims, each in [0, 1).
std::vector<std::vector<double>> design(const std::string& method, std::size_t count, std::size_t dims,
                                        std::uint64_t seed) {
  std::vector<std::vector<double>> u(count, std::vector<double>(dims));
  const double below_one = std::nextafter(1.0, 0.0);
  if (method == "uniform") {
    boost::random::mt19937_64 gen(seed);
    boost::random::uniform_01<double> u01;
    for (auto& point : u)
      for (auto& x : point) x = u01(gen);
  } else if (method == "latin_hypercube") {
    boost::random::mt19937_64 gen(seed);
    boost::random::uniform_01<double> u01;
    std::vector<std::size_t> strata(count);
    for (std::size_t d = 0; d < dims; ++d) {
      for (std::size_t i = 0; i < count; ++i) strata[i] = i;
      for (std::size_t i = count - 1; i >= 1; --i) {
        boost::random::uniform_int_distribution<std::size_t> pick(0, i);
        std::swap(strata[i], strata[pick(gen)]);
      }
      for (std::size_t i = 0; i < count; ++i)
        u[i][d] =
            std::min((static_cast<double>(strata[i]) + u01(gen)) / static_cast<double>(count), below_one);
    }
  } else {
    using Sobol = boost::random::sobol;
    static_assert((Sobol::min)() == 0 && (Sobol::max)() == std::numeric_limits<std::uint64_t>::max(),
                  "the Sobol engine is expected to give 64-bit integers");
    Sobol gen(dims);  // boost's engine starts after the origin: its first point is (0.5, 0.5, ...)
    for (auto& point : u)
      for (auto& x : point) x = std::ldexp(static_cast<double>(static_cast<std::uint64_t>(gen()) >> 11), -53);
  }
  return u;
}

/// Splices the members' values into the base text and checks the result.
std::string member_text(const std::string& base, const std::vector<Dimension>& dims,
                        const std::vector<std::string>& values, std::size_t seed_insert_at, bool crlf) {
  struct Splice {
    std::size_t begin, end;
    std::string text;
  };
  std::vector<Splice> splices;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].in_base)
      splices.push_back({dims[i].begin, dims[i].end, values[i]});
    else
      splices.push_back({seed_insert_at, seed_insert_at,
                         (seed_insert_at == base.size() && !base.empty() && base.back() != '\n' ? "\n" : "") +
                             std::string("seed = ") + values[i] + (crlf ? "\r\n" : "\n")});
  }
  std::sort(splices.begin(), splices.end(),
            [](const Splice& a, const Splice& b) { return a.begin < b.begin; });
  std::string out;
  out.reserve(base.size() + 64);
  std::size_t at = 0;
  for (const auto& s : splices) {
    if (s.begin < at) throw std::logic_error("sweep: overlapping value spans in the base scenario");
    out.append(base, at, s.begin - at);
    out += s.text;
    at = s.end;
  }
  out.append(base, at, std::string::npos);
  return out;
}

bool same_value(const toml::node& a, const toml::node& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case toml::node_type::integer:
      return *a.value<std::int64_t>() == *b.value<std::int64_t>();
    case toml::node_type::floating_point: {
      const double x = *a.value<double>(), y = *b.value<double>();
      return x == y && std::signbit(x) == std::signbit(y);
    }
    case toml::node_type::string:
      return *a.value<std::string_view>() == *b.value<std::string_view>();
    case toml::node_type::boolean:
      return *a.value<bool>() == *b.value<bool>();
    default:
      return false;
  }
}

/// Bug guard: the member's text parses and holds each value at its key.
void check_member(const Member& m, const std::vector<Dimension>& dims, const std::string& base_name) {
  toml::table parsed;
  try {
    parsed = toml::parse(m.scenario_text, base_name);
  } catch (const toml::parse_error& e) {
    throw std::logic_error("sweep: member " + m.name +
                           "'s scenario is not valid TOML: " + std::string(e.description()));
  }
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const toml::table expected = toml::parse("v = " + m.values[i]);
    const toml::node* got = find_key(parsed, dims[i].key);
    if (got == nullptr || !same_value(*got, *expected.get("v")))
      throw std::logic_error("sweep: member " + m.name + "'s scenario does not hold " + dims[i].key + " = " +
                             m.values[i]);
  }
}

/// Where "seed = N" goes: just after the base's `[simulation]` header line. @throws InputError when there is
/// no such header.
std::size_t seed_insertion(const Context& c, const std::string& base_text, const Dimension& seed) {
  const std::string advice = "the base scenario " + c.base_name +
                             " does not set simulation.seed and has no [simulation] header line to add it "
                             "under; write simulation.seed in the base scenario";
  const toml::node* sim = c.base->get("simulation");
  if (sim == nullptr || !sim->is_table() || sim->as_table()->is_inline()) fail(seed.where, seed.key, advice);
  const std::size_t at = (*c.base_offsets)(sim->source().begin);
  const std::size_t end = c.base_offsets->line_end(at);
  std::string line = base_text.substr(at, end - at);
  const auto comment = line.find('#');
  if (comment != std::string::npos) line.erase(comment);
  std::string compact;
  for (const char ch : line)
    if (ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n') compact += ch;
  if (compact != "[simulation]" && compact != "[\"simulation\"]" && compact != "['simulation']")
    fail(seed.where, seed.key, advice);
  return end;
}

}  // namespace

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

SweepSpec read_sweep(const fs::path& file) {
  return parse_sweep(read_text(file, "sweep file", ""), file.string());
}

SweepSpec parse_sweep(std::string text, const std::string& source_name) {
  SweepSpec spec;
  spec.file = source_name;
  spec.text = std::move(text);
  Context c;
  c.file = source_name;
  const toml::table root = parse_toml(spec.text, source_name);

  // top-level keys
  const std::set<std::string_view> known = {"scenario", "out",        "steps", "every", "checkpoint_every",
                                            "metrics",  "replicates", "seeds", "grid",  "sample"};
  for (const auto& [k, v] : in_file_order(root))
    if (!known.count(k->str()))
      fail(
          position(source_name, k->source().begin), std::string(k->str()),
          "unknown key; a sweep file has scenario, out, steps, every, checkpoint_every, metrics, replicates, "
          "seeds, [grid] and [sample]");
  const auto where_of = [&](const toml::node& n) { return position(source_name, n.source().begin); };

  const toml::node* scenario = root.get("scenario");
  if (scenario == nullptr)
    fail(source_name, "scenario",
         "missing; expected the base scenario file (a path relative to the sweep file)");
  if (!scenario->is_string() || scenario->value<std::string_view>()->empty())
    fail(where_of(*scenario), "scenario",
         "expected the base scenario file (a non-empty string), got " + describe(*scenario));
  spec.base =
      (fs::path(source_name).parent_path() / fs::path(*scenario->value<std::string>())).lexically_normal();
  c.base_name = spec.base.string();
  spec.base_text = read_text(spec.base, "base scenario", where_of(*scenario) + ": scenario: ");
  const toml::table base = parse_toml(spec.base_text, c.base_name);
  const Offsets base_offsets(spec.base_text);
  c.base = &base;
  c.base_offsets = &base_offsets;

  if (const toml::node* out = root.get("out")) {
    if (!out->is_string() || out->value<std::string_view>()->empty())
      fail(where_of(*out), "out", "expected an output directory (a non-empty string), got " + describe(*out));
    spec.out = *out->value<std::string>();
  }
  if (const toml::node* n = root.get("steps")) spec.steps = integer_key(c, *n, "steps", 0);
  if (const toml::node* n = root.get("every")) spec.every = integer_key(c, *n, "every", 0);
  if (const toml::node* n = root.get("checkpoint_every"))
    spec.checkpoint_every = integer_key(c, *n, "checkpoint_every", 0);
  if (const toml::node* n = root.get("metrics")) {
    spec.metrics_where = where_of(*n);
    const toml::array* array = n->as_array();
    if (array == nullptr)
      fail(spec.metrics_where, "metrics", "expected an array of metric names, got " + describe(*n));
    if (array->empty())
      fail(spec.metrics_where, "metrics",
           "an empty list; name at least one metric, or leave the key out for every metric of the model");
    for (std::size_t i = 0; i < array->size(); ++i) {
      const toml::node& e = (*array)[i];
      const std::string entry = "entry " + std::to_string(i) + ": ";
      if (!e.is_string() || e.value<std::string_view>()->empty())
        fail(where_of(e), "metrics",
             entry + "expected a metric name (a non-empty string), got " + describe(e));
      std::string name = *e.value<std::string>();
      if (std::find(spec.metrics.begin(), spec.metrics.end(), name) != spec.metrics.end())
        fail(where_of(e), "metrics", entry + "\"" + name + "\" is listed twice");
      spec.metrics.push_back(std::move(name));
    }
  }

  // [grid]
  std::vector<Dimension> dims;
  if (const toml::node* grid = root.get("grid")) {
    if (!grid->is_table())
      fail(where_of(*grid), "grid", "expected a table of varied keys, got " + describe(*grid));
    std::vector<Leaf> leaves;
    collect(c, *grid->as_table(), "", "grid", leaves);
    for (const auto& leaf : leaves) {
      Dimension d = new_dimension(c, leaf.key, leaf.where);
      if (const toml::array* list = leaf.value->as_array()) {
        if (list->empty()) fail(leaf.where, leaf.key, "an empty list; give at least one value");
        if (list->size() > kMaxMembers)
          fail(leaf.where, leaf.key,
               "more values than a sweep may have members (" + std::to_string(kMaxMembers) + ")");
        for (std::size_t i = 0; i < list->size(); ++i) d.values.push_back(list_literal(c, d, (*list)[i], i));
      } else {
        grid_range(c, d, *leaf.value->as_table());
      }
      for (std::size_t i = 0; i < d.values.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
          if (d.values[i] == d.values[j])
            fail(leaf.where, leaf.key,
                 "gives the value " + d.values[i] + " twice (values " + std::to_string(j) + " and " +
                     std::to_string(i) + "); a grid's values must differ (replicates repeat a member)");
      dims.push_back(std::move(d));
    }
  }

  // [sample]
  const std::size_t first_sample = dims.size();
  std::size_t samples = 1;
  std::string method;
  std::uint64_t design_seed = 1;
  if (const toml::node* sample = root.get("sample")) {
    const toml::table* t = sample->as_table();
    if (t == nullptr)
      fail(where_of(*sample), "sample", "expected a table ([sample]), got " + describe(*sample));
    const std::string where = where_of(*sample);
    for (const auto& [k, v] : in_file_order(*t))
      if (k->str() != "method" && k->str() != "count" && k->str() != "seed" && k->str() != "ranges")
        fail(position(source_name, k->source().begin), "sample." + std::string(k->str()),
             "unknown key; [sample] has method, count, seed and [sample.ranges]");
    const toml::node* m = t->get("method");
    if (m == nullptr)
      fail(where, "sample.method", "missing; expected \"latin_hypercube\", \"sobol\" or \"uniform\"");
    if (!m->is_string() ||
        (*m->value<std::string_view>() != "latin_hypercube" && *m->value<std::string_view>() != "sobol" &&
         *m->value<std::string_view>() != "uniform"))
      fail(where_of(*m), "sample.method",
           "expected \"latin_hypercube\", \"sobol\" or \"uniform\", got " + describe(*m));
    method = *m->value<std::string>();
    const toml::node* n = t->get("count");
    if (n == nullptr) fail(where, "sample.count", "missing; expected the number of design points (>= 1)");
    if (!n->is_integer()) fail(where_of(*n), "sample.count", "expected an integer >= 1, got " + describe(*n));
    if (*n->value<std::int64_t>() < 1)
      fail(where_of(*n), "sample.count",
           "sample size must be at least 1, got " + std::to_string(*n->value<std::int64_t>()));
    if (*n->value<std::int64_t>() > static_cast<std::int64_t>(kMaxMembers))
      fail(where_of(*n), "sample.count",
           std::to_string(*n->value<std::int64_t>()) +
               " design points, more than a sweep may have members (" + std::to_string(kMaxMembers) + ")");
    samples = static_cast<std::size_t>(*n->value<std::int64_t>());
    if (const toml::node* s = t->get("seed"))
      design_seed = static_cast<std::uint64_t>(integer_key(c, *s, "sample.seed", 0));
    const toml::node* ranges = t->get("ranges");
    if (ranges == nullptr)
      fail(where, "sample.ranges", "missing; give [sample.ranges] with the sampled keys");
    if (!ranges->is_table() || ranges->as_table()->empty())
      fail(where_of(*ranges), "sample.ranges",
           "expected a table of sampled keys, each { from = ..., to = ... }, got " +
               (ranges->is_table() ? std::string("an empty table") : describe(*ranges)));
    std::vector<Leaf> leaves;
    collect(c, *ranges->as_table(), "", "sample.ranges", leaves);
    for (const auto& leaf : leaves) {
      Dimension d = new_dimension(c, leaf.key, leaf.where);
      sample_range(c, d, *leaf.value->as_table());
      dims.push_back(std::move(d));
    }
    const std::size_t n_dims = dims.size() - first_sample;
    if (method == "sobol" && n_dims > boost::random::default_sobol_table::max_dimension)
      fail(where_of(*m), "sample.method",
           "sobol supports at most " + std::to_string(boost::random::default_sobol_table::max_dimension) +
               " dimensions, got " + std::to_string(n_dims));
    const auto u = design(method, samples, n_dims, design_seed);
    for (std::size_t k = 0; k < n_dims; ++k) {
      Dimension& d = dims[first_sample + k];
      for (std::size_t i = 0; i < samples; ++i) {
        const double x =
            d.log ? d.from * std::pow(d.to / d.from, u[i][k]) : d.from + u[i][k] * (d.to - d.from);
        d.values.push_back(number_literal(d, std::min(std::max(x, d.from), d.to), d.where));
      }
    }
  }

  // replicates / seeds
  const toml::node* replicates = root.get("replicates");
  const toml::node* seeds = root.get("seeds");
  if (replicates != nullptr && seeds != nullptr) {
    const bool seeds_later = seeds->source().begin.line > replicates->source().begin.line;
    fail(where_of(seeds_later ? *seeds : *replicates), seeds_later ? "seeds" : "replicates",
         "give either replicates or seeds, not both");
  }
  if (replicates != nullptr || seeds != nullptr) {
    const toml::node& n = replicates != nullptr ? *replicates : *seeds;
    Dimension d = new_dimension(c, "simulation.seed", where_of(n));
    if (replicates != nullptr) {
      const std::int64_t count = integer_key(c, n, "replicates", 1);
      if (count > static_cast<std::int64_t>(kMaxMembers))
        fail(where_of(n), "replicates",
             std::to_string(count) + " replicates, more than a sweep may have members (" +
                 std::to_string(kMaxMembers) + ")");
      std::int64_t base_seed = 1;
      if (const toml::node* s = find_key(base, "simulation.seed")) base_seed = *s->value<std::int64_t>();
      if (base_seed < 0 || base_seed > std::numeric_limits<std::int64_t>::max() - (count - 1))
        fail(where_of(n), "replicates",
             "the base scenario's simulation.seed (" + std::to_string(base_seed) + ") + " +
                 std::to_string(count - 1) + " is not a seed (an integer >= 0)");
      for (std::int64_t i = 0; i < count; ++i) d.values.push_back(std::to_string(base_seed + i));
    } else {
      const toml::array* array = n.as_array();
      if (array == nullptr || array->empty())
        fail(where_of(n), "seeds", "expected a non-empty array of seeds (integers >= 0), got " + describe(n));
      if (array->size() > kMaxMembers)
        fail(where_of(n), "seeds",
             "more seeds than a sweep may have members (" + std::to_string(kMaxMembers) + ")");
      std::set<std::int64_t> seen;
      for (std::size_t i = 0; i < array->size(); ++i) {
        const toml::node& e = (*array)[i];
        const std::string entry = "entry " + std::to_string(i) + ": ";
        if (!e.is_integer() || *e.value<std::int64_t>() < 0)
          fail(where_of(e), "seeds", entry + "expected an integer >= 0, got " + describe(e));
        if (!seen.insert(*e.value<std::int64_t>()).second)
          fail(where_of(e), "seeds", entry + std::to_string(*e.value<std::int64_t>()) + " is listed twice");
        d.values.push_back(std::to_string(*e.value<std::int64_t>()));
      }
    }
    dims.push_back(std::move(d));
  }

  // the members: grid (first key slowest) x samples x replicates (innermost)
  const bool has_seed = replicates != nullptr || seeds != nullptr;
  const std::size_t n_grid = first_sample;
  const std::size_t n_sample = dims.size() - first_sample - (has_seed ? 1 : 0);
  std::vector<std::size_t> factors;
  for (std::size_t k = 0; k < n_grid; ++k) factors.push_back(dims[k].values.size());
  factors.push_back(samples);
  if (has_seed) factors.push_back(dims.back().values.size());
  std::size_t total = 1;
  for (const std::size_t factor : factors) {
    if (total > kMaxMembers / factor)
      fail(source_name, "sweep",
           "more than " + std::to_string(kMaxMembers) +
               " members (the product of the grid's sizes, the sample count and the replicates); split the "
               "sweep");
    total *= factor;
  }
  if (static_cast<std::uintmax_t>(total) * (spec.base_text.size() + 32) > kMaxMemberTextBytes)
    fail(source_name, "sweep",
         std::to_string(total) + " members of a " + std::to_string(spec.base_text.size()) +
             "-byte base scenario are more scenario text than a sweep may hold (" +
             std::to_string(kMaxMemberTextBytes) + " bytes); split the sweep");

  std::size_t seed_at = 0;
  bool crlf = false;
  for (const auto& d : dims)
    if (!d.in_base) {
      seed_at = seed_insertion(c, spec.base_text, d);
      crlf = seed_at >= 2 && spec.base_text.compare(seed_at - 2, 2, "\r\n") == 0;
    }
  for (const auto& d : dims) spec.parameters.push_back({d.key, d.where});

  // mixed-radix counters: grid dimensions, then the sample index (all sample dimensions together), then seeds
  std::size_t width = 3, digits = 1;
  for (std::size_t v = total - 1; v >= 10; v /= 10) ++digits;
  width = std::max(width, digits);
  spec.members.reserve(total);
  for (std::size_t index = 0; index < total; ++index) {
    Member m;
    m.index = index;
    const std::string number = std::to_string(index);
    m.name = "m" + std::string(width - std::min(width, number.size()), '0') + number;
    m.values.resize(dims.size());
    std::size_t rest = index;
    if (has_seed) {
      const auto& v = dims.back().values;
      m.values.back() = v[rest % v.size()];
      rest /= v.size();
    }
    const std::size_t sample = rest % samples;
    rest /= samples;
    for (std::size_t k = 0; k < n_sample; ++k)
      m.values[first_sample + k] = dims[first_sample + k].values[sample];
    for (std::size_t k = n_grid; k-- > 0;) {
      const auto& v = dims[k].values;
      m.values[k] = v[rest % v.size()];
      rest /= v.size();
    }
    m.scenario_text = member_text(spec.base_text, dims, m.values, seed_at, crlf);
    check_member(m, dims, c.base_name);
    spec.members.push_back(std::move(m));
  }
  return spec;
}

}  // namespace tissue::sweep
