#pragma once
/// @file device_buffer.hpp
/// RAII owner of an array in the memory of a backend. The only way the engine and its modules hold
/// device memory: non-copyable, movable, freed on destruction.

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/exec/memory.hpp"
#include "engine/exec/span.hpp"

namespace tissue {

/// Array of `size()` objects of trivially copyable type T in the memory of the backend that was active
/// when it was allocated (host memory for exec::Backend::cpu, CUDA device memory for Backend::cuda).
/// Contents are unspecified after construction and resize(); use zero() or upload().
template <class T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "DeviceBuffer holds trivially copyable types only");

 public:
  DeviceBuffer() : backend_(exec::backend()) {}
  explicit DeviceBuffer(std::size_t size) : backend_(exec::backend()) { resize(size); }
  ~DeviceBuffer() { exec::deallocate(data_, size_ * sizeof(T), backend_); }

  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), backend_(o.backend_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      exec::deallocate(data_, size_ * sizeof(T), backend_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      backend_ = o.backend_;
    }
    return *this;
  }

  /// Reallocates to `size` elements on the active backend; old contents are discarded.
  void resize(std::size_t size) {
    if (size == size_ && backend_ == exec::backend()) return;
    exec::deallocate(data_, size_ * sizeof(T), backend_);
    data_ = nullptr;
    size_ = 0;
    backend_ = exec::backend();
    data_ = static_cast<T*>(exec::allocate(size * sizeof(T), backend_));
    size_ = size;
  }
  /// Grows to at least `size` elements (contents discarded when it grows).
  void ensure(std::size_t size) {
    if (size_ < size || backend_ != exec::backend()) resize(size);
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  exec::Backend backend() const { return backend_; }

  Span<T> span() { return {data_, size_}; }
  Span<const T> span() const { return {data_, size_}; }

  /// Sets every byte to zero.
  void zero() { exec::zero_bytes(data_, backend_, size_ * sizeof(T)); }

  /// Copies `count` elements from host memory `src` to elements [offset, offset + count).
  void upload(const T* src, std::size_t count, std::size_t offset = 0) {
    exec::copy_bytes(data_ + offset, backend_, src, exec::Backend::cpu, count * sizeof(T));
  }
  /// Copies elements [offset, offset + count) to host memory `dst`.
  void download(T* dst, std::size_t count, std::size_t offset = 0) const {
    exec::copy_bytes(dst, exec::Backend::cpu, data_ + offset, backend_, count * sizeof(T));
  }
  /// Resizes to host.size() and uploads it.
  void assign(const std::vector<T>& host) {
    resize(host.size());
    upload(host.data(), host.size());
  }
  /// Downloads the whole buffer into a new host vector.
  std::vector<T> to_host() const {
    std::vector<T> out(size_);
    download(out.data(), size_);
    return out;
  }
  /// Copies `count` elements from `src[src_offset...]` to `this[dst_offset...]` (both on any backend).
  void copy_from(const DeviceBuffer& src, std::size_t count, std::size_t src_offset = 0,
                 std::size_t dst_offset = 0) {
    exec::copy_bytes(data_ + dst_offset, backend_, src.data_ + src_offset, src.backend_, count * sizeof(T));
  }

  void swap(DeviceBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(backend_, o.backend_);
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  exec::Backend backend_;
};

}  // namespace tissue
