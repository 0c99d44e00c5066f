#include "engine/domain/table_rows.hpp"

#include <cstring>
#include <stdexcept>

#include "engine/core/scalar_type.hpp"

namespace tissue::domain {

std::vector<ColumnBase*> find_columns(Table& table, const std::vector<std::string>& names) {
  std::vector<ColumnBase*> columns;
  for (const std::string& name : names) {
    ColumnBase* column = table.find(name);
    if (column == nullptr)
      throw std::invalid_argument("table '" + table.name() + "' has no column '" + name + "'");
    columns.push_back(column);
  }
  return columns;
}

std::vector<ColumnBase*> all_columns(Table& table) {
  std::vector<ColumnBase*> columns;
  for (const auto& column : table.columns()) columns.push_back(column.get());
  return columns;
}

std::size_t row_bytes(const std::vector<ColumnBase*>& columns) {
  std::size_t bytes = 0;
  for (const ColumnBase* column : columns)
    bytes += static_cast<std::size_t>(column->components()) * size_of(column->scalar_type());
  return bytes;
}

void check_same_layout(const std::vector<ColumnBase*>& from, const std::vector<ColumnBase*>& to,
                       const std::string& what) {
  if (from.size() != to.size())
    throw std::invalid_argument(what + ": " + std::to_string(from.size()) + " columns sent, " +
                                std::to_string(to.size()) + " to receive them");
  for (std::size_t i = 0; i < from.size(); ++i)
    if (from[i]->name() != to[i]->name() || from[i]->scalar_type() != to[i]->scalar_type() ||
        from[i]->components() != to[i]->components())
      throw std::invalid_argument(
          what + ": column '" + from[i]->name() + "' (" + name_of(from[i]->scalar_type()) + " x " +
          std::to_string(from[i]->components()) + ") is received into '" + to[i]->name() + "' (" +
          name_of(to[i]->scalar_type()) + " x " + std::to_string(to[i]->components()) + ")");
}

void pack_rows(const std::vector<ColumnBase*>& columns, const std::vector<std::int32_t>& rows, Bytes& out) {
  const std::size_t n = rows.size();
  std::size_t at = out.size();
  out.resize(at + n * row_bytes(columns));
  for (ColumnBase* column : columns) {
    const std::size_t value = size_of(column->scalar_type()), capacity = column->capacity();
    const auto* base = static_cast<const std::byte*>(column->host_bytes());
    for (int c = 0; c < column->components(); ++c) {
      const std::byte* component = base + static_cast<std::size_t>(c) * capacity * value;
      for (std::size_t i = 0; i < n; ++i, at += value)
        std::memcpy(out.data() + at, component + static_cast<std::size_t>(rows[i]) * value, value);
    }
  }
}

std::size_t unpack_rows(const std::vector<ColumnBase*>& columns, std::size_t first, std::size_t count,
                        const std::byte* in) {
  std::size_t at = 0;
  for (ColumnBase* column : columns) {
    const std::size_t value = size_of(column->scalar_type()), capacity = column->capacity();
    if (first + count > capacity)
      throw std::logic_error("unpack_rows: rows up to " + std::to_string(first + count) + " in column '" +
                             column->name() + "' of capacity " + std::to_string(capacity));
    auto* base = static_cast<std::byte*>(column->host_bytes());
    for (int c = 0; c < column->components(); ++c) {
      std::memcpy(base + (static_cast<std::size_t>(c) * capacity + first) * value, in + at, count * value);
      at += count * value;
    }
  }
  return at;
}

}  // namespace tissue::domain
