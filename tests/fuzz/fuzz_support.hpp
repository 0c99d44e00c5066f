#pragma once
/// @file fuzz_support.hpp
/// What the libFuzzer targets share: a scratch directory private to the process, where an input is written
/// as the file a user would pass when the reader under test takes a path.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace tissue::fuzz {

/// `<temp>/tissue_fuzz_<pid>`, created on first use and removed when the process exits normally.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    const auto d = std::filesystem::temp_directory_path() / ("tissue_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return d;
  }();
  return dir;
}

/// Writes `size` bytes from `data` to `path`, replacing it. Aborts if that fails: a fuzzing run that cannot
/// write its input tests nothing.
inline void write_file(const std::filesystem::path& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
}

/// The same for text.
inline void write_file(const std::filesystem::path& path, const std::string& text) {
  write_file(path, reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
}

/// A closed, consistently oriented octahedron (6 vertices, 8 faces): a small valid mesh.
inline constexpr const char* kOctahedronObj =
    "v 1 0 0\nv -1 0 0\nv 0 1 0\nv 0 -1 0\nv 0 0 1\nv 0 0 -1\n"
    "f 1 3 5\nf 3 2 5\nf 2 4 5\nf 4 1 5\nf 3 1 6\nf 2 3 6\nf 4 2 6\nf 1 4 6\n";

}  // namespace tissue::fuzz
