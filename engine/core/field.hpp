#pragma once
/// @file field.hpp
/// Fields the World owns besides its entity tables (grids; meshes later): a name, host/device sync.

#include <cstddef>
#include <string>

namespace tissue {

class FieldBase {
 public:
  explicit FieldBase(std::string name) : name_(std::move(name)) {}
  virtual ~FieldBase() = default;
  FieldBase(const FieldBase&) = delete;
  FieldBase& operator=(const FieldBase&) = delete;
  const std::string& name() const { return name_; }
  /// Host mirror <- device.
  virtual void download() = 0;
  /// Host mirror -> device.
  virtual void upload() = 0;
  /// Device memory the field holds [bytes].
  virtual std::size_t bytes() const = 0;

 private:
  std::string name_;
};

}  // namespace tissue
