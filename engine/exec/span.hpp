#pragma once
/// @file span.hpp
/// A pointer + length view that kernels hold by value. Unlike std::span it is usable in device
/// code with any C++17 compiler, and it does no bounds checking unless TISSUE_BOUNDS_CHECK is set.

#include <cstddef>
#include <type_traits>

#include "engine/exec/config.hpp"

#if defined(TISSUE_BOUNDS_CHECK)
#include <cassert>
#define TISSUE_SPAN_ASSERT(cond) assert(cond)
#else
#define TISSUE_SPAN_ASSERT(cond) ((void)0)
#endif

namespace tissue {

/// Non-owning view of `size()` contiguous objects of type T in the memory of the active backend
/// (host memory on the CPU backend, device memory on the CUDA backend).
template <class T>
class Span {
 public:
  using value_type = std::remove_cv_t<T>;

  TISSUE_HD constexpr Span() = default;
  TISSUE_HD constexpr Span(T* data, std::size_t size) : data_(data), size_(size) {}
  /// Implicit conversion Span<T> -> Span<const T>.
  template <class U, class = std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>>>
  TISSUE_HD constexpr Span(Span<U> other) : data_(other.data()), size_(other.size()) {}

  TISSUE_HD constexpr T* data() const { return data_; }
  TISSUE_HD constexpr std::size_t size() const { return size_; }
  TISSUE_HD constexpr bool empty() const { return size_ == 0; }
  TISSUE_HD constexpr T& operator[](std::size_t i) const {
    TISSUE_SPAN_ASSERT(i < size_);
    return data_[i];
  }
  /// Sub-view [offset, offset + count).
  TISSUE_HD constexpr Span subspan(std::size_t offset, std::size_t count) const {
    TISSUE_SPAN_ASSERT(offset + count <= size_);
    return Span(data_ + offset, count);
  }
  TISSUE_HD constexpr T* begin() const { return data_; }
  TISSUE_HD constexpr T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace tissue
