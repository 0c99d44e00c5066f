#include "engine/core/state_checks.hpp"

#include <cmath>
#include <sstream>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/error.hpp"

namespace tissue {

namespace {

template <class T>
bool check_column(World& w, Table& table, ColumnBase& base) {
  auto* column = dynamic_cast<Column<T>*>(&base);
  if (column == nullptr) return false;
  const std::size_t rows = table.size();
  if (rows == 0) return true;
  for (int c = 0; c < column->components(); ++c) {
    const std::size_t bad = exec::count_non_finite(Span<const T>(column->component(c).subspan(0, rows)));
    if (bad == 0) continue;
    table.download();  // only on failure: find the first for the message
    std::size_t row = 0;
    while (row < rows && std::isfinite(static_cast<double>(column->host(row, c)))) ++row;
    const auto& names = column->component_names();
    std::ostringstream msg;
    msg << "step " << w.step << ": " << table.name() << "." << column->name();
    if (column->components() > 1)
      msg << " ("
          << (static_cast<std::size_t>(c) < names.size() ? names[static_cast<std::size_t>(c)]
                                                         : "component " + std::to_string(c))
          << ")";
    msg << " has " << bad << " values that are NaN or infinite; the first: row " << row;
    if (&table == &w.cells && row < rows) msg << " (cell id " << w.cell_id.host(row) << ")";
    msg << " = " << column->host(row, c)
        << "; a rate expression that divides by zero or overflows, or a time step too large for it?";
    throw NumericalError(msg.str());
  }
  return true;
}

}  // namespace

void check_table_values(World& w) {
  for (Table* table : {&w.cells, &w.elements})
    for (const auto& column : table->columns())
      if (!check_column<float>(w, *table, *column)) check_column<double>(w, *table, *column);
}

}  // namespace tissue
