#pragma once
/// @file scenario.hpp
/// Scenario files (TOML, read with toml++), validated key by key.
///
/// Modules read their parameters through ScenarioTable, giving each key a default and a valid range.
/// A missing optional key takes its default; a key of the wrong type, a value out of range, or (after
/// Scenario::check_unused) a key nobody read is an InputError whose message starts with
/// `file:line:column:` and names the key and what was expected. toml++ stays out of this header so
/// that CUDA translation units can include it.

#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/exec/error.hpp"

namespace tissue::io {

/// Valid interval of a numeric key.
struct Range {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
  bool max_exclusive = false;

  static Range any() { return {}; }
  static Range positive() { return {0.0, std::numeric_limits<double>::infinity(), true, false}; }
  static Range non_negative() { return {0.0, std::numeric_limits<double>::infinity(), false, false}; }
  static Range at_least(double v) { return {v, std::numeric_limits<double>::infinity(), false, false}; }
  static Range closed(double lo, double hi) { return {lo, hi, false, false}; }
  bool contains(double v) const;
  /// e.g. "a number > 0", "an integer in [1, 100]".
  std::string describe(bool integer) const;
};

class ScenarioTable;

/// The largest scenario file read [bytes] (the shipped ones are under 4 KiB; meshes and fields live in their
/// own files).
inline constexpr std::uintmax_t kMaxScenarioBytes = 4u << 20;

/// A parsed scenario file plus the record of which keys have been read.
class Scenario {
 public:
  /// Parses a file. @throws InputError if it is missing, a directory, not a regular file (a FIFO or device,
  /// which could block or never end), larger than kMaxScenarioBytes, unreadable or not valid TOML (with
  /// position).
  static Scenario from_file(const std::string& path);
  /// Parses text; `source_name` stands for the file name in messages.
  static Scenario from_string(std::string text, std::string source_name);

  /// The root table.
  ScenarioTable root() const;
  /// @throws InputError naming the first key (in file order) that no module read.
  void check_unused() const;

  const std::string& path() const;
  const std::string& text() const;
  /// The files the scenario's modules read (meshes), one line each in `sha256sum` form ("<SHA-256>  <path>",
  /// in the order read; "" when none): a checkpoint stores it, and a restart refuses to continue when a
  /// file changed since (the geometry of a run cannot change under it).
  std::string input_files() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

/// A table of the scenario (the root or a [section]). Copies share the record of read keys.
class ScenarioTable {
 public:
  /// True when the key is present (does not count as reading it).
  bool has(std::string_view key) const;
  /// Number (integers accepted) in `range`, or `fallback` when absent. @throws InputError for a value that
  /// is not a number, not finite (TOML's inf and nan), or outside `range`.
  double number(std::string_view key, double fallback, Range range = Range::any()) const;
  /// Required number. @throws InputError when absent.
  double require_number(std::string_view key, Range range = Range::any()) const;
  /// Integer in `range`, or `fallback` when absent.
  std::int64_t integer(std::string_view key, std::int64_t fallback, Range range = Range::any()) const;
  /// Boolean, or `fallback` when absent.
  bool boolean(std::string_view key, bool fallback) const;
  /// String, one of `allowed` when that list is not empty, or `fallback` when absent.
  std::string string(std::string_view key, std::string fallback,
                     const std::vector<std::string>& allowed = {}) const;
  /// Array of strings, each one of `allowed` when that list is not empty; `fallback` when absent.
  /// @throws InputError when the key is not an array of strings or an entry is not allowed.
  std::vector<std::string> strings(std::string_view key, std::vector<std::string> fallback,
                                   const std::vector<std::string>& allowed = {}) const;
  /// Sub-table (an empty one when absent). @throws InputError when the key is not a table.
  ScenarioTable table(std::string_view key) const;
  /// Array of tables (`key = [{...}, {...}]` or `[[key]]`), empty when absent.
  /// @throws InputError when the key is not an array or an entry is not a table.
  std::vector<ScenarioTable> tables(std::string_view key) const;
  /// Keys present in this table, in file order.
  std::vector<std::string> keys() const;
  /// Dotted path of this table ("" for the root, "sem.intra", ...).
  const std::string& path() const { return path_; }
  /// "file:line:column" of this table, or of `key` in it when present.
  std::string where(std::string_view key = {}) const;
  /// Throws an InputError at `key` with message "<path.key>: <what>".
  [[noreturn]] void fail(std::string_view key, const std::string& what) const;
  /// Records that a module read `file` (named at `key`), with the SHA-256 of `bytes`, its content as read:
  /// Scenario::input_files().
  void record_input_file(const std::filesystem::path& file, std::string_view bytes) const;

 private:
  friend class Scenario;
  ScenarioTable(std::shared_ptr<Scenario::Impl> impl, const void* node, std::string path);
  std::shared_ptr<Scenario::Impl> impl_;
  const void* node_;  ///< toml::table*, or nullptr for an absent table
  std::string path_;
};

}  // namespace tissue::io
