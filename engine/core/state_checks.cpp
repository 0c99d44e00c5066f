#include "engine/core/state_checks.hpp"

#include <cmath>
#include <sstream>
#include <utility>

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

void check_table_values(World& w, DeviceBuffer<std::int32_t>& flag) {
  flag.ensure(1);
  flag.zero();
  for (Table* table : {&w.cells, &w.elements}) {
    const std::size_t rows = table->size();
    if (rows == 0) continue;
    for (const auto& base : table->columns()) {
      if (auto* f = dynamic_cast<Column<float>*>(base.get()))
        for (int c = 0; c < f->components(); ++c)
          exec::flag_non_finite(Span<const float>(f->component(c).subspan(0, rows)), flag.span());
      else if (auto* d = dynamic_cast<Column<double>*>(base.get()))
        for (int c = 0; c < d->components(); ++c)
          exec::flag_non_finite(Span<const double>(d->component(c).subspan(0, rows)), flag.span());
    }
  }
  std::int32_t raised = 0;
  flag.download(&raised, 1);
  if (raised != 0) check_table_values(w);  // finds the first bad value and throws
}

MagnitudeGuard::MagnitudeGuard(std::string field, std::string key, MagnitudeLimits limits)
    : field_(std::move(field)), key_(std::move(key)), limits_(limits) {}

std::size_t MagnitudeGuard::failing_species(std::int64_t step, const std::vector<double>& max_abs) {
  const std::size_t n = max_abs.size();
  // an infinity (or NaN) is the NaN check's to report, with its own message, whichever check runs first
  for (std::size_t s = 0; s < n; ++s)
    if (!std::isfinite(max_abs[s])) return n;
  for (std::size_t s = 0; s < n; ++s)
    if (max_abs[s] > limits_.max_abs) {
      bound_ = true;
      return s;
    }
  if (last_.size() != n) {  // the first check: nothing to compare with
    last_ = max_abs;
    growing_.assign(n, 0);
    since_.assign(n, step);
    return n;
  }
  std::size_t failed = n;
  for (std::size_t s = 0; s < n; ++s) {
    if (last_[s] > 0.0 && max_abs[s] > MagnitudeLimits::kGrowthFactor * last_[s]) {
      if (growing_[s] == 0) since_[s] = step;
      ++growing_[s];
    } else {
      growing_[s] = 0;
    }
    if (limits_.growth_checks > 0 && growing_[s] >= limits_.growth_checks && failed == n) failed = s;
  }
  if (failed == n) last_ = max_abs;
  bound_ = false;
  return failed;
}

void MagnitudeGuard::fail(std::int64_t step, const std::vector<std::string>& species,
                          const std::vector<double>& max_abs, std::size_t failed, const std::string& where) {
  std::ostringstream msg;
  msg << "step " << step << ": " << field_ << " species "
      << (failed < species.size() ? species[failed] : std::to_string(failed)) << " reached |value| "
      << max_abs[failed] << " " << where;
  if (bound_) {
    msg << ", beyond the bound " << key_ << ".max_abs = " << limits_.max_abs;
  } else {
    msg << ", its largest |value| grew more than " << MagnitudeLimits::kGrowthFactor << "-fold at each of "
        << growing_[failed] << " checks in a row (since step " << since_[failed] << ", " << key_
        << ".growth_checks = " << limits_.growth_checks << ")";
  }
  msg << "; a blow-up: the time step too large, or a model without the term that bounds it?";
  throw NumericalError(msg.str());
}

}  // namespace tissue
