#include "engine/schedule/access.hpp"

#include <algorithm>

namespace tissue {

const char* to_string(AccessMode mode) {
  switch (mode) {
    case AccessMode::read:
      return "reads";
    case AccessMode::read_previous:
      return "reads previous step";
    case AccessMode::write:
      return "writes";
  }
  return "?";
}

void AccessList::append(AccessMode mode, const std::string& table, const std::string& column) {
  entries_.push_back({ColumnRef{table, column}, mode});
}

void AccessList::append(AccessMode mode, const std::string& table, const std::vector<std::string>& columns) {
  for (const auto& c : columns) append(mode, table, c);
}

std::vector<ColumnRef> AccessList::columns(AccessMode mode) const {
  std::vector<ColumnRef> out;
  for (const auto& a : entries_)
    if (a.mode == mode) out.push_back(a.column);
  return out;
}

bool AccessList::has(AccessMode mode, const ColumnRef& column) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const Access& a) { return a.mode == mode && a.column == column; });
}

}  // namespace tissue
