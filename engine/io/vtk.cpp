#include "engine/io/vtk.hpp"

#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "engine/exec/host_for.hpp"
#include "engine/io/atomic_file.hpp"

namespace tissue::io {

namespace {

std::size_t type_size(const std::string& t) {
  if (t == "Float32" || t == "Int32") return 4;
  if (t == "Float64" || t == "Int64") return 8;
  if (t == "UInt8") return 1;
  throw std::invalid_argument("unknown VTK type " + t);
}

/// RFC 4648 base64 of `size` bytes at `p` into `text` (4 characters per 3 bytes, the last group padded).
void encode_base64(const unsigned char* p, std::size_t size, char* text) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const std::size_t whole = size / 3 * 3;
  for (std::size_t i = 0; i < whole; i += 3, text += 4) {
    const std::uint32_t triple = (std::uint32_t{p[i]} << 16) | (std::uint32_t{p[i + 1]} << 8) | p[i + 2];
    text[0] = kAlphabet[(triple >> 18) & 63];
    text[1] = kAlphabet[(triple >> 12) & 63];
    text[2] = kAlphabet[(triple >> 6) & 63];
    text[3] = kAlphabet[triple & 63];
  }
  if (whole < size) {
    const std::uint32_t b1 = whole + 1 < size ? p[whole + 1] : 0u;
    const std::uint32_t triple = (std::uint32_t{p[whole]} << 16) | (b1 << 8);
    text[0] = kAlphabet[(triple >> 18) & 63];
    text[1] = kAlphabet[(triple >> 12) & 63];
    text[2] = whole + 1 < size ? kAlphabet[(triple >> 6) & 63] : '=';
    text[3] = '=';
  }
}

/// RFC 4648 base64, streamed into a file: bytes are encoded 3 at a time as they come, the up to 2 left over
/// wait for the next write(), finish() pads the last group. The output equals the base64 of all the bytes
/// written at once, without holding them in memory: large writes are encoded a block of kBlock bytes at a
/// time, the block's pieces on the host's threads (a snapshot's arrays are 10^8 bytes and more).
class Base64Stream {
 public:
  explicit Base64Stream(AtomicWriter& out) : out_(out) {}

  void write(const void* bytes, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(bytes);
    while (carried_ > 0 && carried_ < 3 && size > 0) {
      carry_[carried_++] = *p++;
      --size;
    }
    if (carried_ == 3) {
      encode(carry_, 3);
      carried_ = 0;
    }
    const std::size_t whole = size / 3 * 3;
    for (std::size_t i = 0; i < whole; i += kBlock) encode(p + i, std::min(kBlock, whole - i));
    for (std::size_t i = whole; i < size; ++i) carry_[carried_++] = p[i];
  }

  void finish() {
    if (carried_ > 0) encode(carry_, carried_);
    carried_ = 0;
  }

 private:
  static constexpr std::size_t kPiece = 3 * 65536;    ///< input bytes a thread encodes at once
  static constexpr std::size_t kBlock = 64 * kPiece;  ///< input bytes encoded per write to the file

  /// Encodes `size` bytes (a multiple of 3 unless they are the stream's last) and writes the text.
  void encode(const unsigned char* p, std::size_t size) {
    text_.resize((size + 2) / 3 * 4);
    const std::size_t pieces = (size + kPiece - 1) / kPiece;
    const auto piece = [&](std::size_t k) {
      const std::size_t from = k * kPiece;
      encode_base64(p + from, std::min(kPiece, size - from), text_.data() + from / 3 * 4);
    };
    if (pieces > 1) {
      const auto count = static_cast<std::int64_t>(pieces);
#pragma omp parallel for schedule(static)
      for (std::int64_t k = 0; k < count; ++k) piece(static_cast<std::size_t>(k));
    } else {
      piece(0);
    }
    out_.write(text_);
  }

  AtomicWriter& out_;
  unsigned char carry_[3] = {0, 0, 0};
  std::size_t carried_ = 0;
  std::string text_;
};

/// One inline binary DataArray of `size` bytes that `emit` writes into the Base64Stream it is given:
/// base64 of the UInt64 byte count, then base64 of the bytes (encoded separately, as VTK writes them).
template <class Emit>
void data_array(AtomicWriter& out, const std::string& type, const std::string& name, int components,
                std::uint64_t size, const char* indent, Emit&& emit) {
  std::ostringstream xml;
  xml << indent << "<DataArray type=\"" << type << "\"";
  if (!name.empty()) xml << " Name=\"" << xml_escape(name) << "\"";
  if (components != 1) xml << " NumberOfComponents=\"" << components << "\"";
  xml << " format=\"binary\">";
  out.write(xml.str());
  Base64Stream b64(out);
  b64.write(&size, sizeof size);
  b64.finish();
  emit(b64);
  b64.finish();
  out.write("</DataArray>\n");
}

/// A DataArray of bytes held in memory.
void data_array(AtomicWriter& out, const std::string& type, const std::string& name, int components,
                const void* bytes, std::uint64_t size, const char* indent) {
  data_array(out, type, name, components, size, indent,
             [&](Base64Stream& b64) { b64.write(bytes, static_cast<std::size_t>(size)); });
}

/// A DataArray of `count` Int64 values value(0), value(1), ..., generated a block at a time (connectivity
/// and offsets, which would otherwise take 16 bytes per point in memory).
template <class Value>
void int64_array(AtomicWriter& out, const std::string& name, std::uint64_t count, const char* indent,
                 Value&& value) {
  data_array(out, "Int64", name, 1, count * sizeof(std::int64_t), indent, [&](Base64Stream& b64) {
    constexpr std::uint64_t kBlock = std::uint64_t{1} << 20;
    std::vector<std::int64_t> block(static_cast<std::size_t>(std::min(kBlock, count)));
    for (std::uint64_t start = 0; start < count; start += kBlock) {
      const std::uint64_t n = std::min(kBlock, count - start);
      exec::host_for(static_cast<std::size_t>(n), [&](std::size_t k) { block[k] = value(start + k); });
      b64.write(block.data(), static_cast<std::size_t>(n) * sizeof(std::int64_t));
    }
  });
}

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {
/// An unstructured grid of `n` points with `cells` cells of `corners` points each (VTK cell type `type`),
/// cell c made of points corner(corners * c), corner(corners * c + 1), ... Streamed into the file.
template <class Corner>
void write_vtu(const std::filesystem::path& path, const std::vector<float>& points, std::uint64_t cells,
               int corners, std::uint8_t type, const std::vector<VtkArray>& arrays, Corner&& corner) {
  if (points.size() % 3 != 0) throw std::invalid_argument("points must hold 3 coordinates per point");
  const std::uint64_t n = points.size() / 3;
  for (const auto& a : arrays)
    if (a.bytes.size() != n * static_cast<std::uint64_t>(a.components) * type_size(a.type))
      throw std::invalid_argument("VTK array '" + a.name + "' does not have one value per point");
  AtomicWriter out(path);
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
         "header_type=\"UInt64\">\n"
      << "  <UnstructuredGrid>\n"
      << "    <Piece NumberOfPoints=\"" << n << "\" NumberOfCells=\"" << cells << "\">\n"
      << "      <PointData>\n";
  out.write(xml.str());
  const char* indent = "        ";
  for (const auto& a : arrays)
    data_array(out, a.type, a.name, a.components, a.bytes.data(), a.bytes.size(), indent);
  out.write("      </PointData>\n      <Points>\n");
  data_array(out, "Float32", "", 3, points.data(), points.size() * sizeof(float), indent);
  out.write("      </Points>\n      <Cells>\n");
  const auto k = static_cast<std::uint64_t>(corners);
  int64_array(out, "connectivity", cells * k, indent, corner);
  int64_array(out, "offsets", cells, indent,
              [&](std::uint64_t c) { return static_cast<std::int64_t>((c + 1) * k); });
  data_array(out, "UInt8", "types", 1, cells, indent, [&](Base64Stream& b64) {
    const std::vector<std::uint8_t> block(std::min<std::uint64_t>(cells, 3 << 20), type);
    for (std::uint64_t start = 0; start < cells; start += block.size())
      b64.write(block.data(), static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), cells - start)));
  });
  out.write("      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n");
  out.commit();
}
}  // namespace

void write_vtu_points(const std::filesystem::path& path, const std::vector<float>& points,
                      const std::vector<VtkArray>& arrays) {
  write_vtu(path, points, points.size() / 3, 1, 1 /* VTK_VERTEX */, arrays,
            [](std::uint64_t i) { return static_cast<std::int64_t>(i); });
}

void write_pvtu_points(const std::filesystem::path& path, const std::vector<VtkArray>& arrays,
                       const std::vector<std::string>& pieces) {
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"PUnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
         "header_type=\"UInt64\">\n"
      << "  <PUnstructuredGrid GhostLevel=\"0\">\n    <PPointData>\n";
  for (const auto& a : arrays)
    xml << "      <PDataArray type=\"" << a.type << "\" Name=\"" << xml_escape(a.name)
        << "\" NumberOfComponents=\"" << a.components << "\"/>\n";
  xml << "    </PPointData>\n    <PPoints>\n      <PDataArray type=\"Float32\" NumberOfComponents=\"3\"/>\n"
      << "    </PPoints>\n";
  for (const auto& piece : pieces) xml << "    <Piece Source=\"" << xml_escape(piece) << "\"/>\n";
  xml << "  </PUnstructuredGrid>\n</VTKFile>\n";
  write_file_atomic(path, xml.str());
}

void write_vtu_triangles(const std::filesystem::path& path, const std::vector<float>& points,
                         const std::vector<std::int32_t>& triangles, const std::vector<VtkArray>& arrays) {
  if (triangles.size() % 3 != 0) throw std::invalid_argument("triangles must hold 3 point indices each");
  const auto n = static_cast<std::int64_t>(points.size() / 3);
  for (auto v : triangles)
    if (v < 0 || v >= n) throw std::invalid_argument("triangle refers to a point out of range");
  write_vtu(path, points, triangles.size() / 3, 3, 5 /* VTK_TRIANGLE */, arrays, [&](std::uint64_t i) {
    return static_cast<std::int64_t>(triangles[static_cast<std::size_t>(i)]);
  });
}

namespace {
std::string extent_text(const ImageExtent& e) {
  return std::to_string(e.i0) + " " + std::to_string(e.i1) + " " + std::to_string(e.j0) + " " +
         std::to_string(e.j1) + " " + std::to_string(e.k0) + " " + std::to_string(e.k1);
}
}  // namespace

void write_vti_piece(const std::filesystem::path& path, const ImageExtent& whole, const ImageExtent& piece,
                     const double origin[3], double spacing, const std::vector<VtkArray>& arrays) {
  if (piece.i0 < whole.i0 || piece.i1 > whole.i1 || piece.j0 < whole.j0 || piece.j1 > whole.j1 ||
      piece.k0 < whole.k0 || piece.k1 > whole.k1 || piece.i1 < piece.i0 || piece.j1 < piece.j0 ||
      piece.k1 < piece.k0)
    throw std::invalid_argument("VTI piece " + extent_text(piece) + " outside the whole extent " +
                                extent_text(whole));
  const auto n = static_cast<std::uint64_t>(piece.i1 - piece.i0 + 1) *
                 static_cast<std::uint64_t>(piece.j1 - piece.j0 + 1) *
                 static_cast<std::uint64_t>(piece.k1 - piece.k0 + 1);
  for (const auto& a : arrays)
    if (a.bytes.size() != n * static_cast<std::uint64_t>(a.components) * type_size(a.type))
      throw std::invalid_argument("VTK array '" + a.name + "' does not have one value per grid point");
  std::ostringstream xml;
  xml << std::setprecision(17);
  xml << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
      << "  <ImageData WholeExtent=\"" << extent_text(whole) << "\" Origin=\"" << origin[0] << " "
      << origin[1] << " " << origin[2] << "\" Spacing=\"" << spacing << " " << spacing << " " << spacing
      << "\">\n"
      << "    <Piece Extent=\"" << extent_text(piece) << "\">\n      <PointData>\n";
  AtomicWriter out(path);
  out.write(xml.str());
  for (const auto& a : arrays)
    data_array(out, a.type, a.name, a.components, a.bytes.data(), a.bytes.size(), "        ");
  out.write("      </PointData>\n    </Piece>\n  </ImageData>\n</VTKFile>\n");
  out.commit();
}

void write_vti(const std::filesystem::path& path, int nx, int ny, int nz, const double origin[3],
               double spacing, const std::vector<VtkArray>& arrays) {
  const ImageExtent whole{0, nx - 1, 0, ny - 1, 0, nz - 1};
  write_vti_piece(path, whole, whole, origin, spacing, arrays);
}

void write_pvti(const std::filesystem::path& path, const ImageExtent& whole, const double origin[3],
                double spacing, const std::vector<VtkArray>& arrays,
                const std::vector<std::pair<std::string, ImageExtent>>& pieces) {
  std::ostringstream xml;
  xml << std::setprecision(17);
  xml << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"PImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
      << "  <PImageData WholeExtent=\"" << extent_text(whole) << "\" GhostLevel=\"0\" Origin=\"" << origin[0]
      << " " << origin[1] << " " << origin[2] << "\" Spacing=\"" << spacing << " " << spacing << " "
      << spacing << "\">\n    <PPointData>\n";
  for (const auto& a : arrays)
    xml << "      <PDataArray type=\"" << a.type << "\" Name=\"" << xml_escape(a.name)
        << "\" NumberOfComponents=\"" << a.components << "\"/>\n";
  xml << "    </PPointData>\n";
  for (const auto& [file, extent] : pieces)
    xml << "    <Piece Extent=\"" << extent_text(extent) << "\" Source=\"" << xml_escape(file) << "\"/>\n";
  xml << "  </PImageData>\n</VTKFile>\n";
  write_file_atomic(path, xml.str());
}

void write_vts(const std::filesystem::path& path, int nx, int ny, int nz, const std::vector<double>& points,
               const std::vector<VtkArray>& arrays) {
  const auto n =
      static_cast<std::uint64_t>(nx) * static_cast<std::uint64_t>(ny) * static_cast<std::uint64_t>(nz);
  if (points.size() != 3 * n)
    throw std::invalid_argument("VTS points: expected 3 coordinates per grid point");
  for (const auto& a : arrays)
    if (a.bytes.size() != n * static_cast<std::uint64_t>(a.components) * type_size(a.type))
      throw std::invalid_argument("VTK array '" + a.name + "' does not have one value per grid point");
  std::ostringstream xml;
  const std::string extent =
      "0 " + std::to_string(nx - 1) + " 0 " + std::to_string(ny - 1) + " 0 " + std::to_string(nz - 1);
  xml << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"StructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
         "header_type=\"UInt64\">\n"
      << "  <StructuredGrid WholeExtent=\"" << extent << "\">\n"
      << "    <Piece Extent=\"" << extent << "\">\n      <Points>\n";
  AtomicWriter out(path);
  out.write(xml.str());
  data_array(out, "Float64", "Points", 3, points.data(), points.size() * sizeof(double), "        ");
  out.write("      </Points>\n      <PointData>\n");
  for (const auto& a : arrays)
    data_array(out, a.type, a.name, a.components, a.bytes.data(), a.bytes.size(), "        ");
  out.write("      </PointData>\n    </Piece>\n  </StructuredGrid>\n</VTKFile>\n");
  out.commit();
}

void PvdSeries::append(double time, const std::string& file) {
  if (!entries_.empty() && entries_.back().second == file) entries_.pop_back();
  entries_.emplace_back(time, file);
}

std::string PvdSeries::index_xml() const {
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n";
  xml << std::setprecision(17);
  for (const auto& [t, f] : entries_)
    xml << "    <DataSet timestep=\"" << t << "\" group=\"\" part=\"0\" file=\"" << xml_escape(f) << "\"/>\n";
  xml << "  </Collection>\n</VTKFile>\n";
  return xml.str();
}

void PvdSeries::add(double time, const std::string& file) {
  append(time, file);
  write_file_atomic(path_, index_xml());
}

std::vector<std::string> PvdSeries::drop_missing() {
  std::vector<std::string> dropped;
  std::vector<std::pair<double, std::string>> kept;
  const std::filesystem::path dir = path_.parent_path();
  for (auto& entry : entries_) {
    std::error_code ec;
    if (std::filesystem::exists(dir / entry.second, ec))
      kept.push_back(std::move(entry));
    else
      dropped.push_back(entry.second);
  }
  entries_ = std::move(kept);
  return dropped;
}

}  // namespace tissue::io
