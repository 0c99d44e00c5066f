#pragma once
/// @file column.hpp
/// One component of a table: a device array plus its host mirror.
///
/// A column with k components stores component c of row i at [c * capacity + i] ("species-major"),
/// so that threads of a warp reading consecutive rows of one component read consecutive addresses.
/// The device array is the truth while stepping; the host mirror is synced only at hooks and output.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/scalar_type.hpp"
#include "engine/exec/device_buffer.hpp"
#include "engine/exec/host_for.hpp"

namespace tissue {

/// Type-erased interface the Table uses to resize, reorder and sync every column at once.
class ColumnBase {
 public:
  ColumnBase(std::string name, int components) : name_(std::move(name)), components_(components) {}
  virtual ~ColumnBase() = default;
  ColumnBase(const ColumnBase&) = delete;
  ColumnBase& operator=(const ColumnBase&) = delete;

  const std::string& name() const { return name_; }
  int components() const { return components_; }
  /// Names of the components (e.g. a gene network's species), as the module that added the column gave
  /// them; empty when it gave none. Writers use them for per-component arrays.
  const std::vector<std::string>& component_names() const { return component_names_; }
  /// Index of the component named `name`, or -1.
  int component_index(const std::string& name) const {
    for (std::size_t k = 0; k < component_names_.size(); ++k)
      if (component_names_[k] == name) return static_cast<int>(k);
    return -1;
  }
  /// Names the components. @throws std::invalid_argument unless there are components() names.
  void set_component_names(std::vector<std::string> names) {
    if (names.size() != static_cast<std::size_t>(components_))
      throw std::invalid_argument("column '" + name_ + "' has " + std::to_string(components_) +
                                  " components, not " + std::to_string(names.size()));
    component_names_ = std::move(names);
  }
  std::size_t capacity() const { return capacity_; }
  /// A transient column holds what a system derives and rebuilds by itself (a decomposed run's global ids
  /// of merged rows, sem::DecomposedSem): checkpoints leave it out, so that a checkpoint holds the same
  /// datasets whoever wrote it and restarts where the column does not exist. It still moves with its rows.
  bool transient() const { return transient_; }
  void set_transient(bool transient) { transient_ = transient; }
  /// Element type of the values.
  virtual ScalarType scalar_type() const = 0;
  /// The host mirror's bytes: components() * capacity() values of scalar_type(), component c of row i at
  /// value index c * capacity() + i (for type-erased readers and writers such as checkpoints).
  virtual void* host_bytes() = 0;
  /// The device array's bytes, laid out as host_bytes() (the host memory the CPU backend computes in): for
  /// zero-copy views (the Python package's `__cuda_array_interface__`). Valid until the table is resized
  /// beyond its capacity or the column is destroyed.
  virtual void* device_bytes() = 0;

  /// Reallocates host and device storage for `capacity` rows, keeping rows [0, rows) of every
  /// component on both sides. New rows are zero on the host mirror.
  virtual void reserve(std::size_t capacity, std::size_t rows) = 0;
  /// Copies rows [0, rows) of every component device -> host mirror.
  virtual void download(std::size_t rows) = 0;
  /// Copies rows [0, rows) of every component host mirror -> device.
  virtual void upload(std::size_t rows) = 0;
  /// Host mirror: new row r takes old row order[r], for r < rows (rows beyond are zeroed). On the host's
  /// threads, into a second mirror kept for the next gather (a hook's compaction of 10^7 rows would
  /// otherwise fault in fresh pages every time).
  virtual void gather_host(const std::int32_t* order, std::size_t rows) = 0;
  /// Host mirror: zeroes rows [from, to) of every component.
  virtual void clear_host_rows(std::size_t from, std::size_t to) = 0;

 protected:
  std::string name_;
  bool transient_ = false;
  int components_;
  std::size_t capacity_ = 0;
  std::vector<std::string> component_names_;
};

/// A column of trivially copyable T with `components()` values per row.
template <class T>
class Column final : public ColumnBase {
 public:
  Column(std::string name, int components) : ColumnBase(std::move(name), components) {}

  /// Device array, components() * capacity() long; component c of row i at [c * capacity() + i].
  Span<T> span() { return device_.span(); }
  Span<const T> span() const { return device_.span(); }
  /// Device span of component c (capacity() long).
  Span<T> component(int c) {
    return device_.span().subspan(static_cast<std::size_t>(c) * capacity_, capacity_);
  }
  Span<const T> component(int c) const {
    return device_.span().subspan(static_cast<std::size_t>(c) * capacity_, capacity_);
  }
  /// Host mirror value of component c of row i.
  T& host(std::size_t i, int c = 0) { return host_[static_cast<std::size_t>(c) * capacity_ + i]; }
  const T& host(std::size_t i, int c = 0) const { return host_[static_cast<std::size_t>(c) * capacity_ + i]; }
  /// Whole host mirror (components() * capacity() values).
  std::vector<T>& host_data() { return host_; }
  const std::vector<T>& host_data() const { return host_; }
  DeviceBuffer<T>& device() { return device_; }
  ScalarType scalar_type() const override { return scalar_type_of<T>(); }
  void* host_bytes() override { return host_.data(); }
  void* device_bytes() override { return device_.data(); }

  void reserve(std::size_t capacity, std::size_t rows) override {
    rows = std::min(rows, std::min(capacity, capacity_));
    const std::size_t k = static_cast<std::size_t>(components_);
    DeviceBuffer<T> device(capacity * k);
    std::vector<T> host(capacity * k, T{});
    for (std::size_t c = 0; c < k; ++c) {
      if (rows > 0) device.copy_from(device_, rows, c * capacity_, c * capacity);
      std::copy_n(host_.begin() + static_cast<std::ptrdiff_t>(c * capacity_), rows,
                  host.begin() + static_cast<std::ptrdiff_t>(c * capacity));
    }
    device_ = std::move(device);
    host_ = std::move(host);
    spare_ = std::vector<T>();  // a gather makes it again at the new size
    capacity_ = capacity;
  }
  void download(std::size_t rows) override {
    for (std::size_t c = 0; c < static_cast<std::size_t>(components_); ++c)
      device_.download(host_.data() + c * capacity_, rows, c * capacity_);
  }
  void upload(std::size_t rows) override {
    for (std::size_t c = 0; c < static_cast<std::size_t>(components_); ++c)
      device_.upload(host_.data() + c * capacity_, rows, c * capacity_);
  }
  void gather_host(const std::int32_t* order, std::size_t rows) override {
    spare_.resize(host_.size());  // the same layout; only a grown capacity needs new pages
    for (std::size_t c = 0; c < static_cast<std::size_t>(components_); ++c) {
      T* to = spare_.data() + c * capacity_;
      const T* from = host_.data() + c * capacity_;
      exec::host_for(capacity_, [&](std::size_t r) {
        to[r] = r < rows ? from[static_cast<std::size_t>(order[r])] : T{};
      });
    }
    host_.swap(spare_);
  }
  void clear_host_rows(std::size_t from, std::size_t to) override {
    for (std::size_t c = 0; c < static_cast<std::size_t>(components_); ++c)
      std::fill(host_.begin() + static_cast<std::ptrdiff_t>(c * capacity_ + from),
                host_.begin() + static_cast<std::ptrdiff_t>(c * capacity_ + to), T{});
  }

 private:
  DeviceBuffer<T> device_;
  std::vector<T> host_;
  std::vector<T> spare_;  ///< the other host mirror of gather_host (empty until a gather)
};

}  // namespace tissue
