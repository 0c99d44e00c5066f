#pragma once
/// @file access.hpp
/// What a system reads and writes of the World, declared as data (EnTT's organizer, FLAME GPU 2's
/// layers): the Schedule prints the declarations and checks the step order against them
/// (Schedule::check_access). A declaration is one short chain per system:
///
///   AccessList access() const override {
///     return AccessList().read("elements", "x", "y", "z").write("cells", "cx", "cy", "cz");
///   }

#include <string>
#include <vector>

namespace tissue {

/// One column of the World: a table's column ("cells", "cx"), or a field ("grid", "tgfb": the field's kind
/// (grid, surface, graph) and its name).
struct ColumnRef {
  std::string table;
  std::string column;
  /// "table.column", as printed.
  std::string str() const { return table + "." + column; }
  friend bool operator==(const ColumnRef& a, const ColumnRef& b) {
    return a.table == b.table && a.column == b.column;
  }
  friend bool operator!=(const ColumnRef& a, const ColumnRef& b) { return !(a == b); }
};

/// How a system uses a column each time it runs.
enum class AccessMode {
  /// The value as it is when the system runs, after the earlier systems of the step: no later system of
  /// the step may write it (it would be read stale).
  read,
  /// The value the previous step left (e.g. cells sampling a field that a later system advances): no
  /// earlier system of the step may write it.
  read_previous,
  /// Written (a read-modify-write declares read and write). A system may read and write the same column.
  write,
};

/// "reads", "reads previous step" or "writes".
const char* to_string(AccessMode mode);

/// One declared use of a column.
struct Access {
  ColumnRef column;
  AccessMode mode;
};

/// A system's declarations, in the order given; built one table at a time with the chainable helpers.
/// Columns are arguments after the table: names, or vectors of names for lists known at run time
/// (`read("cells", "species", fields)`). No braced lists: nvcc drops the braces of a one-element list
/// of a dependent expression in a class template (`{field_.name()}`).
class AccessList {
 public:
  /// Declares a same-step read of `columns` of `table`.
  template <class... Columns>
  AccessList& read(const std::string& table, const Columns&... columns) {
    return add(AccessMode::read, table, columns...);
  }
  /// Declares a read of the previous step's values of `columns` of `table`.
  template <class... Columns>
  AccessList& read_previous(const std::string& table, const Columns&... columns) {
    return add(AccessMode::read_previous, table, columns...);
  }
  /// Declares writes of `columns` of `table`.
  template <class... Columns>
  AccessList& write(const std::string& table, const Columns&... columns) {
    return add(AccessMode::write, table, columns...);
  }
  /// Declares a same-step read and a write of `columns` of `table` (an update in place).
  template <class... Columns>
  AccessList& read_write(const std::string& table, const Columns&... columns) {
    add(AccessMode::read, table, columns...);
    return add(AccessMode::write, table, columns...);
  }
  /// Declares `columns` of `table` with `mode`.
  template <class... Columns>
  AccessList& add(AccessMode mode, const std::string& table, const Columns&... columns) {
    (append(mode, table, columns), ...);
    return *this;
  }

  /// The columns declared with `mode`, in declaration order.
  std::vector<ColumnRef> columns(AccessMode mode) const;
  /// True when `column` is declared with `mode`.
  bool has(AccessMode mode, const ColumnRef& column) const;
  const std::vector<Access>& entries() const { return entries_; }
  /// True when nothing is declared.
  bool empty() const { return entries_.empty(); }

 private:
  void append(AccessMode mode, const std::string& table, const std::string& column);
  void append(AccessMode mode, const std::string& table, const std::vector<std::string>& columns);
  std::vector<Access> entries_;
};

}  // namespace tissue
