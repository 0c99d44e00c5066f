#pragma once
/// @file atomic_file.hpp
/// Files that are never seen half-written: content goes to a temporary file in the same directory,
/// which is flushed to disk and then renamed over the final name.

#include <filesystem>
#include <string_view>

namespace tissue::io {

/// Writes `content` to `path` atomically (temporary name, fsync, rename).
/// @throws std::runtime_error with the path and the system error on failure; the temporary is removed.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

}  // namespace tissue::io
