#include "engine/io/vtk.hpp"

#include <cstring>
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
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

/// Appended-data block: UInt64 byte count followed by the raw bytes.
void append_block(std::string& data, const void* bytes, std::uint64_t size) {
  const auto* p = reinterpret_cast<const char*>(&size);
  data.append(p, sizeof size);
  data.append(reinterpret_cast<const char*>(bytes), size);
}

}  // namespace

void write_vtu_points(const std::filesystem::path& path, const std::vector<float>& points,
                      const std::vector<VtkArray>& arrays) {
  if (points.size() % 3 != 0) throw std::invalid_argument("points must hold 3 coordinates per point");
  const std::uint64_t n = points.size() / 3;
  std::ostringstream xml;
  std::string data;
  xml << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
         "header_type=\"UInt64\">\n"
      << "  <UnstructuredGrid>\n"
      << "    <Piece NumberOfPoints=\"" << n << "\" NumberOfCells=\"" << n << "\">\n"
      << "      <PointData>\n";
  for (const auto& a : arrays) {
    if (a.bytes.size() != n * static_cast<std::uint64_t>(a.components) * type_size(a.type))
      throw std::invalid_argument("VTK array '" + a.name + "' does not have one value per point");
    xml << "        <DataArray type=\"" << a.type << "\" Name=\"" << xml_escape(a.name) << "\"";
    if (a.components != 1) xml << " NumberOfComponents=\"" << a.components << "\"";
    xml << " format=\"appended\" offset=\"" << data.size() << "\"/>\n";
    append_block(data, a.bytes.data(), a.bytes.size());
  }
  xml << "      </PointData>\n      <Points>\n"
      << "        <DataArray type=\"Float32\" NumberOfComponents=\"3\" format=\"appended\" offset=\""
      << data.size() << "\"/>\n      </Points>\n";
  append_block(data, points.data(), points.size() * sizeof(float));

  std::vector<std::int64_t> connectivity(n), offsets(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    connectivity[i] = static_cast<std::int64_t>(i);
    offsets[i] = static_cast<std::int64_t>(i + 1);
  }
  const std::vector<std::uint8_t> types(n, 1);  // VTK_VERTEX
  xml << "      <Cells>\n"
      << "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"appended\" offset=\"" << data.size()
      << "\"/>\n";
  append_block(data, connectivity.data(), n * sizeof(std::int64_t));
  xml << "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"appended\" offset=\"" << data.size()
      << "\"/>\n";
  append_block(data, offsets.data(), n * sizeof(std::int64_t));
  xml << "        <DataArray type=\"UInt8\" Name=\"types\" format=\"appended\" offset=\"" << data.size()
      << "\"/>\n";
  append_block(data, types.data(), n);
  xml << "      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n"
      << "  <AppendedData encoding=\"raw\">\n   _";
  std::string content = xml.str();
  content += data;
  content += "\n  </AppendedData>\n</VTKFile>\n";
  write_file_atomic(path, content);
}

void PvdSeries::add(double time, const std::string& file) {
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
