#pragma once
/// @file scalar_type.hpp
/// The element types of table columns and field arrays, as a run-time tag: what checkpoints and other
/// type-erased readers and writers need to describe an array without knowing its C++ type.

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace tissue {

enum class ScalarType : std::uint8_t { f32, f64, i32, i64, u32, u8 };

/// The tag of T. Only the types above compile.
template <class T>
constexpr ScalarType scalar_type_of() {
  if constexpr (std::is_same_v<T, float>)
    return ScalarType::f32;
  else if constexpr (std::is_same_v<T, double>)
    return ScalarType::f64;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return ScalarType::i32;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return ScalarType::i64;
  else if constexpr (std::is_same_v<T, std::uint32_t>)
    return ScalarType::u32;
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return ScalarType::u8;
  else
    static_assert(!sizeof(T), "unsupported scalar type");
}

/// Bytes per value of `t`.
constexpr std::size_t size_of(ScalarType t) {
  switch (t) {
    case ScalarType::f64:
    case ScalarType::i64:
      return 8;
    case ScalarType::u8:
      return 1;
    default:
      return 4;
  }
}

/// Short name: "float32", "float64", "int32", "int64", "uint32", "uint8".
constexpr const char* name_of(ScalarType t) {
  switch (t) {
    case ScalarType::f32:
      return "float32";
    case ScalarType::f64:
      return "float64";
    case ScalarType::i32:
      return "int32";
    case ScalarType::i64:
      return "int64";
    case ScalarType::u32:
      return "uint32";
    default:
      return "uint8";
  }
}

}  // namespace tissue
