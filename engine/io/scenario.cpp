#include "engine/io/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "engine/io/run_record.hpp"

namespace tissue::io {

struct Scenario::Impl {
  std::string path;
  std::string text;
  toml::table root;
  std::set<const toml::node*> read;                           ///< nodes some module has read
  std::map<const toml::table*, std::set<std::string>> asked;  ///< keys modules asked each table for
  std::string input_files;                                    ///< Scenario::input_files()
};

namespace {

const toml::table* as_table(const void* p) {
  return static_cast<const toml::table*>(p);
}

std::string position(const std::string& file, const toml::source_region& src) {
  return file + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column);
}

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string \"" + std::string(*n.value<std::string_view>()) + "\"";
    case toml::node_type::integer:
      return "the integer " + std::to_string(*n.value<std::int64_t>());
    case toml::node_type::floating_point: {
      std::ostringstream s;
      s << "the number " << *n.value<double>();
      return s.str();
    }
    case toml::node_type::boolean:
      return *n.value<bool>() ? "true" : "false";
    default:
      return "a date/time";
  }
}

std::string format_number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

bool Range::contains(double v) const {
  if (std::isnan(v)) return false;
  if (min_exclusive ? !(v > min) : !(v >= min)) return false;
  if (max_exclusive ? !(v < max) : !(v <= max)) return false;
  return true;
}

std::string Range::describe(bool integer) const {
  const std::string kind = integer ? "an integer" : "a number";
  const bool has_min = std::isfinite(min), has_max = std::isfinite(max);
  if (!has_min && !has_max) return kind;
  if (has_min && !has_max) return kind + (min_exclusive ? " > " : " >= ") + format_number(min);
  if (!has_min) return kind + (max_exclusive ? " < " : " <= ") + format_number(max);
  return kind + " in " + (min_exclusive ? "(" : "[") + format_number(min) + ", " + format_number(max) +
         (max_exclusive ? ")" : "]");
}

Scenario Scenario::from_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw InputError(path + ": scenario file not found");
  if (std::filesystem::is_directory(status)) throw InputError(path + ": is a directory, not a scenario file");
  // a FIFO would block, a device (/dev/zero) would never end: only regular files, of a bounded size
  if (!std::filesystem::is_regular_file(status))
    throw InputError(path + ": not a regular file (a pipe, device or socket); give a scenario file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError(path + ": cannot read the scenario file's size: " + ec.message());
  if (size > kMaxScenarioBytes)
    throw InputError(path + ": " + std::to_string(size) + " bytes, more than a scenario file may have (" +
                     std::to_string(kMaxScenarioBytes) + ")");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the scenario file for reading");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return from_string(buffer.str(), path);
}

namespace {

/// Refuses the non-ASCII characters on which toml++ 3.3.0 (Debian 12) has undefined behaviour: asked whether
/// some of them are whitespace, it reaches __builtin_unreachable (marzer/tomlplusplus#190 and #295; found by
/// tests/fuzz/fuzz_scenario.cpp too). TOML allows non-ASCII characters only in comments and strings (and a
/// byte-order mark first), so one anywhere else is refused here with its position, as is one right after a
/// backslash in a multi-line basic string, or after the whitespace that follows a line-ending backslash
/// (both places where the parser asks). Valid TOML is never refused.
/// @throws InputError "file:line:column: invalid TOML: ...", as toml++'s own errors read.
void check_non_ascii(const std::string& text, const std::string& source) {
  enum class In { code, comment, basic, literal, multi_basic, multi_literal };
  In in = In::code;
  std::size_t line = 1, line_start = 0;
  const auto at = [&](std::size_t i, const char* s) { return text.compare(i, std::strlen(s), s) == 0; };
  const auto non_ascii = [&](std::size_t i) { return static_cast<unsigned char>(text[i]) >= 0x80; };
  const auto fail = [&](std::size_t i, const char* what) {
    std::size_t column = 1;  // in characters, as toml++ counts
    for (std::size_t k = line_start; k < i; ++k)
      if ((static_cast<unsigned char>(text[k]) & 0xC0) != 0x80) ++column;
    throw InputError(source + ":" + std::to_string(line) + ":" + std::to_string(column) +
                     ": invalid TOML: " + what);
  };
  const auto new_line = [&](std::size_t i) {
    ++line;
    line_start = i + 1;
  };
  for (std::size_t i = at(0, "\xEF\xBB\xBF") ? 3 : 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      new_line(i);
      if (in == In::comment || in == In::basic || in == In::literal) in = In::code;
      continue;
    }
    switch (in) {
      case In::code:
        if (non_ascii(i)) fail(i, "a non-ASCII character outside a string or comment");
        if (c == '#') in = In::comment;
        if (c == '"') in = at(i, "\"\"\"") ? (i += 2, In::multi_basic) : In::basic;
        if (c == '\'') in = at(i, "\'\'\'") ? (i += 2, In::multi_literal) : In::literal;
        break;
      case In::comment:
        break;
      case In::basic:
        if (c == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
          ++i;  // an escaped character
        } else if (c == '"') {
          in = In::code;
        }
        break;
      case In::literal:
        if (c == '\'') in = In::code;
        break;
      case In::multi_basic:
        if (c == '\\') {
          std::size_t k = i + 1;
          for (; k < text.size() && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r' || text[k] == '\n'); ++k)
            if (text[k] == '\n') new_line(k);
          if (k < text.size() && non_ascii(k)) fail(k, "a non-ASCII character after a backslash");
          i = k > i + 1 ? k - 1 : i + 1;  // to the end of the whitespace, or past the escaped character
        } else if (at(i, "\"\"\"")) {
          i += 2;
          for (int extra = 0; extra < 2 && i + 1 < text.size() && text[i + 1] == '"'; ++extra) ++i;
          in = In::code;
        }
        break;
      case In::multi_literal:
        if (at(i, "\'\'\'")) {
          i += 2;
          for (int extra = 0; extra < 2 && i + 1 < text.size() && text[i + 1] == '\''; ++extra) ++i;
          in = In::code;
        }
        break;
    }
  }
}

}  // namespace

Scenario Scenario::from_string(std::string text, std::string source_name) {
  Scenario s;
  s.impl_ = std::make_shared<Impl>();
  s.impl_->path = std::move(source_name);
  s.impl_->text = std::move(text);
  check_non_ascii(s.impl_->text, s.impl_->path);
  try {
    s.impl_->root = toml::parse(s.impl_->text, s.impl_->path);
  } catch (const toml::parse_error& e) {
    throw InputError(position(s.impl_->path, e.source()) + ": invalid TOML: " + std::string(e.description()));
  }
  return s;
}

ScenarioTable Scenario::root() const {
  return ScenarioTable(impl_, &impl_->root, "");
}

const std::string& Scenario::path() const {
  return impl_->path;
}
const std::string& Scenario::text() const {
  return impl_->text;
}

void Scenario::check_unused() const {
  // Depth-first in file order; a table that was read is descended into, one that was not is reported.
  std::function<void(const toml::table&, const std::string&)> walk = [&](const toml::table& t,
                                                                         const std::string& prefix) {
    for (auto&& [k, v] : t) {
      const std::string full = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
      if (!impl_->read.count(&v)) {
        std::string msg = position(impl_->path, k.source()) + ": unknown key '" + full + "'";
        std::string best;
        std::size_t best_d = 3;
        const auto asked = impl_->asked.find(&t);
        if (asked != impl_->asked.end())
          for (const auto& name : asked->second) {
            const auto d = edit_distance(k.str(), name);
            if (d < best_d) best_d = d, best = name;
          }
        if (!best.empty()) msg += " (did you mean '" + best + "'?)";
        throw InputError(msg + "; the keys of each section are listed in docs/scenarios.md");
      }
      if (v.is_table()) walk(*v.as_table(), full);
      if (const toml::array* array = v.as_array())
        for (std::size_t i = 0; i < array->size(); ++i)
          if (const toml::table* entry = (*array)[i].as_table())
            walk(*entry, full + "[" + std::to_string(i) + "]");
    }
  };
  walk(impl_->root, "");
}

ScenarioTable::ScenarioTable(std::shared_ptr<Scenario::Impl> impl, const void* node, std::string path)
    : impl_(std::move(impl)), node_(node), path_(std::move(path)) {}

std::string ScenarioTable::where(std::string_view key) const {
  if (node_ != nullptr && !key.empty())
    if (const toml::node* n = as_table(node_)->get(key)) return position(impl_->path, n->source());
  if (node_ != nullptr && as_table(node_)->source().begin.line > 0)
    return position(impl_->path, as_table(node_)->source());
  return impl_->path;
}

std::string Scenario::input_files() const {
  return impl_->input_files;
}

void ScenarioTable::record_input_file(const std::filesystem::path& file, std::string_view bytes) const {
  impl_->input_files += sha256_hex(bytes) + "  " + file.string() + "\n";
}

void ScenarioTable::fail(std::string_view key, const std::string& what) const {
  const std::string full = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  throw InputError(where(key) + ": " + (key.empty() ? path_ : full) + ": " + what);
}

bool ScenarioTable::has(std::string_view key) const {
  if (node_ == nullptr) return false;
  impl_->asked[as_table(node_)].emplace(key);
  return as_table(node_)->get(key) != nullptr;
}

std::vector<std::string> ScenarioTable::keys() const {
  std::vector<std::string> out;
  if (node_ == nullptr) return out;
  for (auto&& [k, v] : *as_table(node_)) out.emplace_back(k.str());
  return out;
}

double ScenarioTable::number(std::string_view key, double fallback, Range range) const {
  if (!has(key)) return fallback;
  const toml::node* n = as_table(node_)->get(key);
  impl_->read.insert(n);
  if (!n->is_number()) fail(key, "expected " + range.describe(false) + ", got " + type_name(*n));
  const double v = *n->value<double>();
  // TOML allows inf and nan; no key of a scenario means them (a limit that is absent is written by leaving
  // the key out), and they would only fail later, mid-run or with meaningless results
  if (!std::isfinite(v))
    fail(key, "expected a finite number (" + range.describe(false) + "), got " + format_number(v));
  if (!range.contains(v)) fail(key, "expected " + range.describe(false) + ", got " + format_number(v));
  return v;
}

double ScenarioTable::require_number(std::string_view key, Range range) const {
  if (!has(key)) fail(key, "missing; expected " + range.describe(false));
  return number(key, 0.0, range);
}

std::int64_t ScenarioTable::integer(std::string_view key, std::int64_t fallback, Range range) const {
  if (!has(key)) return fallback;
  const toml::node* n = as_table(node_)->get(key);
  impl_->read.insert(n);
  if (!n->is_integer()) fail(key, "expected " + range.describe(true) + ", got " + type_name(*n));
  const std::int64_t v = *n->value<std::int64_t>();
  if (!range.contains(static_cast<double>(v)))
    fail(key, "expected " + range.describe(true) + ", got " + std::to_string(v));
  return v;
}

bool ScenarioTable::boolean(std::string_view key, bool fallback) const {
  if (!has(key)) return fallback;
  const toml::node* n = as_table(node_)->get(key);
  impl_->read.insert(n);
  if (!n->is_boolean()) fail(key, "expected true or false, got " + type_name(*n));
  return *n->value<bool>();
}

std::string ScenarioTable::string(std::string_view key, std::string fallback,
                                  const std::vector<std::string>& allowed) const {
  if (!has(key)) return fallback;
  const toml::node* n = as_table(node_)->get(key);
  impl_->read.insert(n);
  std::string choices;
  for (const auto& a : allowed) choices += (choices.empty() ? "" : ", ") + ("\"" + a + "\"");
  const std::string expected = allowed.empty() ? "a string" : "one of " + choices;
  if (!n->is_string()) fail(key, "expected " + expected + ", got " + type_name(*n));
  std::string v(*n->value<std::string_view>());
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), v) == allowed.end())
    fail(key, "expected " + expected + ", got \"" + v + "\"");
  return v;
}

std::vector<std::string> ScenarioTable::strings(std::string_view key, std::vector<std::string> fallback,
                                                const std::vector<std::string>& allowed) const {
  if (!has(key)) return fallback;
  const toml::node* n = as_table(node_)->get(key);
  impl_->read.insert(n);
  std::string choices;
  for (const auto& a : allowed) choices += (choices.empty() ? "" : ", ") + ("\"" + a + "\"");
  const toml::array* array = n->as_array();
  if (array == nullptr) fail(key, "expected an array of strings, got " + type_name(*n));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const toml::node& entry = (*array)[i];
    if (!entry.is_string())
      fail(key, "entry " + std::to_string(i) + ": expected a string, got " + type_name(entry));
    std::string v(*entry.value<std::string_view>());
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), v) == allowed.end())
      fail(key, "entry " + std::to_string(i) + ": \"" + v + "\" is not one of " + choices);
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<ScenarioTable> ScenarioTable::tables(std::string_view key) const {
  std::vector<ScenarioTable> out;
  if (!has(key)) return out;
  const toml::node* n = as_table(node_)->get(key);
  impl_->read.insert(n);
  const toml::array* array = n->as_array();
  if (array == nullptr) fail(key, "expected an array of tables, got " + type_name(*n));
  const std::string full = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  for (std::size_t i = 0; i < array->size(); ++i) {
    const toml::table* entry = (*array)[i].as_table();
    if (entry == nullptr)
      fail(key, "entry " + std::to_string(i) + ": expected a table, got " + type_name((*array)[i]));
    out.push_back(ScenarioTable(impl_, entry, full + "[" + std::to_string(i) + "]"));
  }
  return out;
}

ScenarioTable ScenarioTable::table(std::string_view key) const {
  const std::string full = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  if (!has(key)) return ScenarioTable(impl_, nullptr, full);
  const toml::node* n = as_table(node_)->get(key);
  impl_->read.insert(n);
  if (!n->is_table()) fail(key, "expected a table, got " + type_name(*n));
  return ScenarioTable(impl_, n->as_table(), full);
}

}  // namespace tissue::io
