#include "engine/io/png.hpp"

#include <png.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/io/atomic_file.hpp"

namespace tissue::io {

namespace {
constexpr std::uint8_t kViridis[256][3] = {
#include "engine/io/viridis.inc"
};

void append(png_structp png, png_bytep data, png_size_t length) {
  auto* out = static_cast<std::string*>(png_get_io_ptr(png));
  out->append(reinterpret_cast<const char*>(data), length);
}
void flush(png_structp) {}
}  // namespace

void viridis(double value, double lo, double hi, std::uint8_t rgb[3]) {
  if (std::isnan(value)) {
    rgb[0] = rgb[1] = rgb[2] = 0;
    return;
  }
  double t = hi > lo ? (value - lo) / (hi - lo) : 0.0;
  t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
  const auto level = static_cast<int>(std::lround(t * 255.0));
  for (int c = 0; c < 3; ++c) rgb[c] = kViridis[level][c];
}

void write_png_rgb(const std::filesystem::path& path, int width, int height,
                   const std::vector<std::uint8_t>& rgb) {
  if (width <= 0 || height <= 0 ||
      rgb.size() != 3 * static_cast<std::size_t>(width) * static_cast<std::size_t>(height))
    throw std::invalid_argument("write_png_rgb: " + std::to_string(rgb.size()) + " bytes for a " +
                                std::to_string(width) + " x " + std::to_string(height) + " RGB image");
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (png == nullptr || info == nullptr) {
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error("libpng: cannot create a writer");
  }
  std::string encoded;
  // libpng reports errors by longjmp; nothing with a destructor lives between here and the calls below
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error("libpng: cannot encode " + path.string());
  }
  png_set_write_fn(png, &encoded, append, flush);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8,
               PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int row = 0; row < height; ++row)
    png_write_row(png, const_cast<png_bytep>(rgb.data() + 3 * static_cast<std::size_t>(row) *
                                                              static_cast<std::size_t>(width)));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  write_file_atomic(path, encoded);
}

}  // namespace tissue::io
