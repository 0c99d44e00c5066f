#include "engine/io/vtk.hpp"

#include <cstdint>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "engine/io/atomic_file.hpp"

namespace tissue::io {

namespace {

std::size_t type_size(const std::string& t) {
  if (t == "Float32" || t == "Int32") return 4;
  if (t == "Float64" || t == "Int64") return 8;
  if (t == "UInt8") return 1;
  throw std::invalid_argument("unknown VTK type " + t);
}

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

/// RFC 4648 base64 of `size` bytes.
std::string base64(const void* bytes, std::size_t size) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = static_cast<const unsigned char*>(bytes);
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  for (std::size_t i = 0; i < size; i += 3) {
    const std::uint32_t b0 = p[i], b1 = i + 1 < size ? p[i + 1] : 0u, b2 = i + 2 < size ? p[i + 2] : 0u;
    const std::uint32_t triple = (b0 << 16) | (b1 << 8) | b2;
    out += kAlphabet[(triple >> 18) & 63];
    out += kAlphabet[(triple >> 12) & 63];
    out += i + 1 < size ? kAlphabet[(triple >> 6) & 63] : '=';
    out += i + 2 < size ? kAlphabet[triple & 63] : '=';
  }
  return out;
}

/// One inline binary DataArray: base64 of the UInt64 byte count, then base64 of the bytes (encoded
/// separately, as VTK writes them).
void data_array(std::ostringstream& xml, const std::string& type, const std::string& name, int components,
                const void* bytes, std::uint64_t size, const char* indent) {
  xml << indent << "<DataArray type=\"" << type << "\"";
  if (!name.empty()) xml << " Name=\"" << xml_escape(name) << "\"";
  if (components != 1) xml << " NumberOfComponents=\"" << components << "\"";
  xml << " format=\"binary\">" << base64(&size, sizeof size) << base64(bytes, size) << "</DataArray>\n";
}

}  // namespace

namespace {
/// An unstructured grid of `n` points with `cells` cells of `corners` points each (VTK cell type `type`),
/// cell c made of points connectivity[corners * c ..].
void write_vtu(const std::filesystem::path& path, const std::vector<float>& points,
               const std::vector<std::int64_t>& connectivity, int corners, std::uint8_t type,
               const std::vector<VtkArray>& arrays) {
  if (points.size() % 3 != 0) throw std::invalid_argument("points must hold 3 coordinates per point");
  const std::uint64_t n = points.size() / 3;
  for (const auto& a : arrays)
    if (a.bytes.size() != n * static_cast<std::uint64_t>(a.components) * type_size(a.type))
      throw std::invalid_argument("VTK array '" + a.name + "' does not have one value per point");
  const std::uint64_t cells = connectivity.size() / static_cast<std::uint64_t>(corners);
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
         "header_type=\"UInt64\">\n"
      << "  <UnstructuredGrid>\n"
      << "    <Piece NumberOfPoints=\"" << n << "\" NumberOfCells=\"" << cells << "\">\n"
      << "      <PointData>\n";
  const char* indent = "        ";
  for (const auto& a : arrays)
    data_array(xml, a.type, a.name, a.components, a.bytes.data(), a.bytes.size(), indent);
  xml << "      </PointData>\n      <Points>\n";
  data_array(xml, "Float32", "", 3, points.data(), points.size() * sizeof(float), indent);
  xml << "      </Points>\n      <Cells>\n";
  std::vector<std::int64_t> offsets(cells);
  for (std::uint64_t c = 0; c < cells; ++c)
    offsets[c] = static_cast<std::int64_t>((c + 1) * static_cast<std::uint64_t>(corners));
  const std::vector<std::uint8_t> types(cells, type);
  data_array(xml, "Int64", "connectivity", 1, connectivity.data(), connectivity.size() * sizeof(std::int64_t),
             indent);
  data_array(xml, "Int64", "offsets", 1, offsets.data(), cells * sizeof(std::int64_t), indent);
  data_array(xml, "UInt8", "types", 1, types.data(), cells, indent);
  xml << "      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n";
  write_file_atomic(path, xml.str());
}
}  // namespace

void write_vtu_points(const std::filesystem::path& path, const std::vector<float>& points,
                      const std::vector<VtkArray>& arrays) {
  std::vector<std::int64_t> connectivity(points.size() / 3);
  for (std::size_t i = 0; i < connectivity.size(); ++i) connectivity[i] = static_cast<std::int64_t>(i);
  write_vtu(path, points, connectivity, 1, 1 /* VTK_VERTEX */, arrays);
}

void write_vtu_triangles(const std::filesystem::path& path, const std::vector<float>& points,
                         const std::vector<std::int32_t>& triangles, const std::vector<VtkArray>& arrays) {
  if (triangles.size() % 3 != 0) throw std::invalid_argument("triangles must hold 3 point indices each");
  const auto n = static_cast<std::int64_t>(points.size() / 3);
  std::vector<std::int64_t> connectivity(triangles.begin(), triangles.end());
  for (auto v : connectivity)
    if (v < 0 || v >= n) throw std::invalid_argument("triangle refers to a point out of range");
  write_vtu(path, points, connectivity, 3, 5 /* VTK_TRIANGLE */, arrays);
}

void write_vti(const std::filesystem::path& path, int nx, int ny, int nz, const double origin[3],
               double spacing, const std::vector<VtkArray>& arrays) {
  const auto n =
      static_cast<std::uint64_t>(nx) * static_cast<std::uint64_t>(ny) * static_cast<std::uint64_t>(nz);
  for (const auto& a : arrays)
    if (a.bytes.size() != n * static_cast<std::uint64_t>(a.components) * type_size(a.type))
      throw std::invalid_argument("VTK array '" + a.name + "' does not have one value per grid point");
  std::ostringstream xml;
  xml << std::setprecision(17);
  const std::string extent =
      "0 " + std::to_string(nx - 1) + " 0 " + std::to_string(ny - 1) + " 0 " + std::to_string(nz - 1);
  xml << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
      << "  <ImageData WholeExtent=\"" << extent << "\" Origin=\"" << origin[0] << " " << origin[1] << " "
      << origin[2] << "\" Spacing=\"" << spacing << " " << spacing << " " << spacing << "\">\n"
      << "    <Piece Extent=\"" << extent << "\">\n      <PointData>\n";
  for (const auto& a : arrays)
    data_array(xml, a.type, a.name, a.components, a.bytes.data(), a.bytes.size(), "        ");
  xml << "      </PointData>\n    </Piece>\n  </ImageData>\n</VTKFile>\n";
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
  data_array(xml, "Float64", "Points", 3, reinterpret_cast<const unsigned char*>(points.data()),
             points.size() * sizeof(double), "        ");
  xml << "      </Points>\n      <PointData>\n";
  for (const auto& a : arrays)
    data_array(xml, a.type, a.name, a.components, a.bytes.data(), a.bytes.size(), "        ");
  xml << "      </PointData>\n    </Piece>\n  </StructuredGrid>\n</VTKFile>\n";
  write_file_atomic(path, xml.str());
}

void PvdSeries::add(double time, const std::string& file) {
  if (!entries_.empty() && entries_.back().second == file) entries_.pop_back();
  entries_.emplace_back(time, file);
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n";
  xml << std::setprecision(17);
  for (const auto& [t, f] : entries_)
    xml << "    <DataSet timestep=\"" << t << "\" group=\"\" part=\"0\" file=\"" << xml_escape(f) << "\"/>\n";
  xml << "  </Collection>\n</VTKFile>\n";
  write_file_atomic(path_, xml.str());
}

}  // namespace tissue::io
