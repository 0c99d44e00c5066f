#pragma once
/// @file table.hpp
/// A table of entities (cells, elements, ...) as structure-of-arrays columns sharing one row count
/// and one capacity. Rows are dense indices; stable ids, where an entity needs one, are a column.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/column.hpp"

namespace tissue {

class Table {
 public:
  explicit Table(std::string name) : name_(std::move(name)) {}
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;

  const std::string& name() const { return name_; }
  /// Number of rows in use.
  std::size_t size() const { return size_; }
  /// Rows allocated in every column.
  std::size_t capacity() const { return capacity_; }

  /// Adds a column with `components` values per row, sized to the current capacity.
  /// The returned reference stays valid for the table's lifetime.
  /// @throws std::logic_error if a column of that name exists.
  template <class T>
  Column<T>& add_column(std::string name, int components = 1) {
    if (find(name) != nullptr)
      throw std::logic_error("table '" + name_ + "' already has a column '" + name + "'");
    auto column = std::make_unique<Column<T>>(std::move(name), components);
    column->reserve(capacity_, 0);
    auto& ref = *column;
    columns_.push_back(std::move(column));
    return ref;
  }

  /// Column by name; host-side lookup for output and tests (kernels hold typed references).
  /// @throws std::out_of_range if absent or of another type.
  template <class T>
  Column<T>& column(std::string_view name) {
    auto* typed = dynamic_cast<Column<T>*>(find(name));
    if (typed == nullptr)
      throw std::out_of_range("table '" + name_ + "' has no column '" + std::string(name) + "' of that type");
    return *typed;
  }
  ColumnBase* find(std::string_view name);
  const std::vector<std::unique_ptr<ColumnBase>>& columns() const { return columns_; }

  /// Grows capacity to at least `capacity` rows, preserving rows [0, size()) on host and device.
  void reserve(std::size_t capacity);
  /// Lowers capacity to the row count (at least 64, the floor of resize()'s growth), freeing the rest on the
  /// host and the device; rows [0, size()) are kept. A decomposed run's ranks call it once their share of a
  /// tissue every rank composed whole has reached them.
  void shrink_to_fit();
  /// Sets the row count; grows capacity geometrically (x1.5, at least 64) when needed. New rows are
  /// zero on the host mirror; the device side of new rows is written by the next upload().
  void resize(std::size_t rows);
  /// Appends `count` zero rows on the host mirror; returns the index of the first.
  std::size_t append_host(std::size_t count);

  /// Device -> host mirror for rows [0, size()).
  void download();
  /// Host mirror -> device for rows [0, size()).
  void upload();
  /// Host mirror: row r takes old row order[r]; the row count becomes `rows` (order holds `rows` entries).
  void gather_host(const std::int32_t* order, std::size_t rows);
  void gather_host(const std::vector<std::int32_t>& order) { gather_host(order.data(), order.size()); }

 private:
  std::string name_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  std::vector<std::unique_ptr<ColumnBase>> columns_;
};

}  // namespace tissue
