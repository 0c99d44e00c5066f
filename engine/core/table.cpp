#include "engine/core/table.hpp"

#include <algorithm>

namespace tissue {

ColumnBase* Table::find(std::string_view name) {
  for (auto& c : columns_)
    if (c->name() == name) return c.get();
  return nullptr;
}

void Table::reserve(std::size_t capacity) {
  if (capacity <= capacity_) return;
  for (auto& c : columns_) c->reserve(capacity, size_);
  capacity_ = capacity;
}

void Table::shrink_to_fit() {
  const std::size_t capacity = std::max<std::size_t>(size_, 64);
  if (capacity >= capacity_) return;
  for (auto& c : columns_) c->reserve(capacity, size_);
  capacity_ = capacity;
}

void Table::resize(std::size_t rows) {
  if (rows > capacity_) reserve(std::max<std::size_t>({rows, capacity_ + capacity_ / 2, 64}));
  if (rows > size_)
    for (auto& c : columns_) c->clear_host_rows(size_, rows);
  size_ = rows;
}

std::size_t Table::append_host(std::size_t count) {
  const std::size_t first = size_;
  resize(size_ + count);
  return first;
}

void Table::download() {
  for (auto& c : columns_) c->download(size_);
}

void Table::upload() {
  for (auto& c : columns_) c->upload(size_);
}

void Table::gather_host(const std::int32_t* order, std::size_t rows) {
  if (rows > capacity_) reserve(rows);
  for (auto& c : columns_) c->gather_host(order, rows);
  size_ = rows;
}

}  // namespace tissue
