#pragma once
/// @file memory.hpp
/// Raw memory of a backend. Only DeviceBuffer (device_buffer.hpp) calls these; modules never do.

#include <cstddef>

#include "engine/exec/backend.hpp"

namespace tissue::exec {

/// Allocates `bytes` bytes on backend `b` (64-byte aligned host memory, or cudaMalloc).
/// @throws std::bad_alloc / std::runtime_error on failure. Returns nullptr for bytes == 0.
void* allocate(std::size_t bytes, Backend b);

/// Frees memory from allocate(); nullptr is ignored. Never throws.
void deallocate(void* ptr, Backend b) noexcept;

/// Copies `bytes` bytes from `src` (memory of backend src_b, or plain host memory if src_b is cpu)
/// to `dst` (memory of dst_b). Synchronous.
void copy_bytes(void* dst, Backend dst_b, const void* src, Backend src_b, std::size_t bytes);

/// Sets `bytes` bytes at `ptr` (memory of backend b) to zero. Synchronous.
void zero_bytes(void* ptr, Backend b, std::size_t bytes);

}  // namespace tissue::exec
