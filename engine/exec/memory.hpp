#pragma once
/// @file memory.hpp
/// Raw memory of a backend. Only DeviceBuffer (device_buffer.hpp) calls these; modules never do.

#include <cstddef>

#include "engine/exec/backend.hpp"

namespace tissue::exec {

/// Allocates `bytes` bytes on backend `b` (64-byte aligned host memory, or cudaMalloc).
/// @throws std::bad_alloc / std::runtime_error on failure. Returns nullptr for bytes == 0.
void* allocate(std::size_t bytes, Backend b);

/// Frees `bytes` bytes from allocate() (the size it was allocated with); nullptr is ignored. Never throws.
void deallocate(void* ptr, std::size_t bytes, Backend b) noexcept;

/// What allocate() holds on one backend [bytes]: now, and the most at any time since the process started
/// or reset_allocation_peak(). The memory estimates of the modules are checked against these
/// (tests/engine/test_memory_estimate.cpp); allocations of libraries (cuSPARSE, HDF5) are not counted.
struct AllocationStats {
  std::size_t current = 0;
  std::size_t peak = 0;
};

/// The allocation counters of backend `b`. Thread-safe.
AllocationStats allocation_stats(Backend b);

/// Sets the peak of backend `b` to what is held now.
void reset_allocation_peak(Backend b);

/// Copies `bytes` bytes from `src` (memory of backend src_b, or plain host memory if src_b is cpu)
/// to `dst` (memory of dst_b). Synchronous.
void copy_bytes(void* dst, Backend dst_b, const void* src, Backend src_b, std::size_t bytes);

/// Sets `bytes` bytes at `ptr` (memory of backend b) to zero. Synchronous.
void zero_bytes(void* ptr, Backend b, std::size_t bytes);

}  // namespace tissue::exec
