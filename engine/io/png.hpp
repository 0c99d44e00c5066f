#pragma once
/// @file png.hpp
/// PNG snapshots (libpng) of 2D scalar fields through the viridis colour map.

#include <cstdint>
#include <filesystem>
#include <vector>

namespace tissue::io {

/// Writes an 8-bit RGB PNG atomically. rgb: 3 * width * height bytes, row 0 at the top.
/// @throws std::runtime_error on libpng or I/O failure.
void write_png_rgb(const std::filesystem::path& path, int width, int height,
                   const std::vector<std::uint8_t>& rgb);

/// RGB (viridis) of a value: lo maps to the dark end, hi to the bright end, values outside are clamped,
/// NaN is black.
void viridis(double value, double lo, double hi, std::uint8_t rgb[3]);

/// Writes a nx x ny field (x fastest, j = 0 at the bottom of the image) as a viridis PNG over [lo, hi].
template <class Real>
void write_field_png(const std::filesystem::path& path, const Real* values, int nx, int ny, double lo,
                     double hi) {
  std::vector<std::uint8_t> rgb(3 * static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny));
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i)
      viridis(static_cast<double>(values[static_cast<std::size_t>(j) * nx + i]), lo, hi,
              &rgb[3 * (static_cast<std::size_t>(ny - 1 - j) * nx + i)]);
  write_png_rgb(path, nx, ny, rgb);
}

}  // namespace tissue::io
