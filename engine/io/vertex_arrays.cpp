#include "engine/io/vertex_arrays.hpp"

#include <hdf5.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>

#include "engine/exec/error.hpp"

namespace tissue::io {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw InputError(path.string() + ": " + what);
}

/// The whole file. @throws InputError when it is missing, a directory or unreadable.
std::string read_all(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) fail(path, "is a directory, not a file");
  if (!fs::exists(path, ec)) fail(path, "file not found");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot be read");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// ---- VTK XML ------------------------------------------------------------------------------------------

/// Value of attribute `name` in the tag text `tag` ("" when absent).
std::string attribute(const std::string& tag, const std::string& name) {
  std::size_t at = 0;
  while ((at = tag.find(name + "=\"", at)) != std::string::npos) {
    if (at == 0 || tag[at - 1] == ' ' || tag[at - 1] == '\t' || tag[at - 1] == '\n' || tag[at - 1] == '\r') {
      const std::size_t start = at + name.size() + 2, end = tag.find('"', start);
      if (end == std::string::npos) return "";
      return tag.substr(start, end - start);
    }
    at += name.size();
  }
  return "";
}

/// Bytes of one value of a VTK type; 0 for an unknown type.
std::size_t vtk_type_size(const std::string& t) {
  if (t == "Int8" || t == "UInt8") return 1;
  if (t == "Int16" || t == "UInt16") return 2;
  if (t == "Int32" || t == "UInt32" || t == "Float32") return 4;
  if (t == "Int64" || t == "UInt64" || t == "Float64") return 8;
  return 0;
}

/// Little-endian value of VTK type `t` at `p`, as double.
double vtk_value(const std::string& t, const unsigned char* p) {
  auto get = [p](auto v) {
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  };
  if (t == "Int8") return get(std::int8_t{});
  if (t == "UInt8") return get(std::uint8_t{});
  if (t == "Int16") return get(std::int16_t{});
  if (t == "UInt16") return get(std::uint16_t{});
  if (t == "Int32") return get(std::int32_t{});
  if (t == "UInt32") return get(std::uint32_t{});
  if (t == "Int64") return get(std::int64_t{});
  if (t == "UInt64") return get(std::uint64_t{});
  if (t == "Float32") return get(float{});
  return get(double{});
}

int base64_digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

/// Decodes base64 text (whitespace ignored) up to its end or its first padding group.
/// `used` gets the characters consumed (the padded group included).
std::vector<unsigned char> base64_decode(const char* text, std::size_t size, std::size_t& used,
                                         std::size_t max_bytes = static_cast<std::size_t>(-1)) {
  std::vector<unsigned char> out;
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t i = 0;
  for (; i < size && out.size() < max_bytes; ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {  // padding: this group ends here
      while (i < size && text[i] == '=') ++i;
      acc = 0;
      bits = 0;
      break;
    }
    const int d = base64_digit(c);
    if (d < 0) break;
    acc = (acc << 6) | static_cast<std::uint32_t>(d);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<unsigned char>((acc >> bits) & 0xFF));
    }
  }
  used = i;
  return out;
}

/// One DataArray: its opening tag and the text between the tags.
struct XmlArray {
  std::string tag, body;
};

/// The DataArray elements in text[begin, end).
std::vector<XmlArray> data_arrays(const std::string& text, std::size_t begin, std::size_t end) {
  std::vector<XmlArray> out;
  std::size_t at = begin;
  while ((at = text.find("<DataArray", at)) != std::string::npos && at < end) {
    const std::size_t close = text.find('>', at);
    if (close == std::string::npos || close >= end) break;
    XmlArray a;
    a.tag = text.substr(at, close - at + 1);
    if (text[close - 1] == '/') {
      at = close + 1;
    } else {
      const std::size_t stop = text.find("</DataArray>", close);
      if (stop == std::string::npos || stop > end) break;
      a.body = text.substr(close + 1, stop - close - 1);
      at = stop;
    }
    out.push_back(std::move(a));
  }
  return out;
}

/// The values of DataArray `a` (count = vertices * components), as doubles.
std::vector<double> decode_array(const fs::path& path, const XmlArray& a, std::size_t count,
                                 const std::string& header_type, const std::string& appended, bool raw) {
  const std::string type = attribute(a.tag, "type"), format = attribute(a.tag, "format");
  const std::string name = attribute(a.tag, "Name");
  const std::string what = "DataArray \"" + name + "\"";
  const std::size_t size = vtk_type_size(type);
  if (size == 0) fail(path, what + ": unsupported type \"" + type + "\"");
  std::vector<double> values;
  values.reserve(count);
  if (format == "ascii") {
    // strtod, not a stream: it reads nan and inf as VTK writes them (refused later, naming the vertex)
    const char* p = a.body.c_str();
    while (values.size() < count) {
      char* end = nullptr;
      const double v = std::strtod(p, &end);
      if (end == p) break;
      values.push_back(v);
      p = end;
    }
    if (values.size() != count)
      fail(path,
           what + ": " + std::to_string(values.size()) + " ascii values, expected " + std::to_string(count));
    return values;
  }
  const std::size_t header = header_type == "UInt64" ? 8 : 4;
  std::vector<unsigned char> bytes;
  const auto header_bytes = [&](const unsigned char* h) {
    return header == 8 ? static_cast<std::uint64_t>(vtk_value("UInt64", h))
                       : static_cast<std::uint64_t>(vtk_value("UInt32", h));
  };
  if (format == "binary") {
    // the header and the data are encoded either separately (VTK's writers, ours) or together
    const std::string& text = a.body;
    std::size_t used = 0;
    const std::size_t first_group = (header + 2) / 3 * 4;
    std::size_t skip = 0;
    while (skip < text.size() && std::isspace(static_cast<unsigned char>(text[skip]))) ++skip;
    const bool separate = skip + first_group <= text.size() && text[skip + first_group - 1] == '=';
    if (separate) {
      const auto h = base64_decode(text.data(), text.size(), used);
      if (h.size() < header) fail(path, what + ": truncated binary header");
      const std::uint64_t n = header_bytes(h.data());
      std::size_t used2 = 0;
      bytes = base64_decode(text.data() + used, text.size() - used, used2);
      if (bytes.size() < n) fail(path, what + ": truncated binary data");
      bytes.resize(n);
    } else {
      auto all = base64_decode(text.data(), text.size(), used);
      if (all.size() < header) fail(path, what + ": truncated binary header");
      const std::uint64_t n = header_bytes(all.data());
      if (all.size() - header < n) fail(path, what + ": truncated binary data");
      bytes.assign(all.begin() + static_cast<std::ptrdiff_t>(header),
                   all.begin() + static_cast<std::ptrdiff_t>(header + n));
    }
  } else if (format == "appended") {
    const std::string off = attribute(a.tag, "offset");
    if (off.empty()) fail(path, what + ": appended data without an offset");
    const std::uint64_t offset = std::stoull(off);
    if (raw) {
      if (offset + header > appended.size()) fail(path, what + ": offset beyond the appended data");
      const auto* h = reinterpret_cast<const unsigned char*>(appended.data() + offset);
      const std::uint64_t n = header_bytes(h);
      if (offset + header + n > appended.size()) fail(path, what + ": truncated appended data");
      bytes.assign(h + header, h + header + n);
    } else {
      if (offset > appended.size()) fail(path, what + ": offset beyond the appended data");
      std::size_t used = 0;
      const auto h = base64_decode(appended.data() + offset, appended.size() - offset, used, header);
      if (h.size() < header) fail(path, what + ": truncated appended header");
      const std::uint64_t n = header_bytes(h.data());
      // separately encoded (VTK): data after the header's padded group; together otherwise
      std::size_t used2 = 0;
      const std::size_t group = (header + 2) / 3 * 4;
      if (appended.size() >= offset + group && appended[offset + group - 1] == '=') {
        bytes = base64_decode(appended.data() + offset + group, appended.size() - offset - group, used2, n);
      } else {
        auto all = base64_decode(appended.data() + offset, appended.size() - offset, used2, header + n);
        if (all.size() >= header) bytes.assign(all.begin() + static_cast<std::ptrdiff_t>(header), all.end());
      }
      if (bytes.size() < n) fail(path, what + ": truncated appended data");
    }
  } else {
    fail(path, what + ": unsupported format \"" + format + "\"");
  }
  if (bytes.size() != count * size)
    fail(path,
         what + ": " + std::to_string(bytes.size() / size) + " values, expected " + std::to_string(count));
  for (std::size_t i = 0; i < count; ++i) values.push_back(vtk_value(type, bytes.data() + i * size));
  return values;
}

// ---- PLY ----------------------------------------------------------------------------------------------

/// Bytes of a PLY scalar type; 0 for an unknown one.
std::size_t ply_type_size(const std::string& t) {
  if (t == "char" || t == "uchar" || t == "int8" || t == "uint8") return 1;
  if (t == "short" || t == "ushort" || t == "int16" || t == "uint16") return 2;
  if (t == "int" || t == "uint" || t == "float" || t == "int32" || t == "uint32" || t == "float32") return 4;
  if (t == "double" || t == "float64") return 8;
  return 0;
}

/// The VTK name of a PLY type (for vtk_value).
std::string ply_as_vtk(const std::string& t) {
  if (t == "char" || t == "int8") return "Int8";
  if (t == "uchar" || t == "uint8") return "UInt8";
  if (t == "short" || t == "int16") return "Int16";
  if (t == "ushort" || t == "uint16") return "UInt16";
  if (t == "int" || t == "int32") return "Int32";
  if (t == "uint" || t == "uint32") return "UInt32";
  if (t == "float" || t == "float32") return "Float32";
  return "Float64";
}

// ---- HDF5 ---------------------------------------------------------------------------------------------

struct H5Closer {
  herr_t (*close)(hid_t);
  void operator()(hid_t* h) const {
    if (*h >= 0) close(*h);
    delete h;
  }
};
using H5Handle = std::unique_ptr<hid_t, H5Closer>;
H5Handle handle(hid_t h, herr_t (*close)(hid_t)) {
  return H5Handle(new hid_t(h), H5Closer{close});
}

/// Opens an HDF5 file read-only. @throws InputError when missing, a directory or not HDF5.
H5Handle open_hdf5(const fs::path& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  std::error_code ec;
  if (fs::is_directory(path, ec)) fail(path, "is a directory, not a file");
  if (!fs::exists(path, ec)) fail(path, "file not found");
  if (H5Fis_hdf5(path.c_str()) <= 0) fail(path, "not an HDF5 file");
  auto f = handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (*f < 0) fail(path, "cannot be opened as HDF5");
  return f;
}

/// True when every link on `dataset`'s path exists and the last is a dataset.
bool has_dataset(hid_t file, const std::string& dataset) {
  if (dataset.empty()) return false;
  std::string prefix;
  std::size_t at = dataset[0] == '/' ? 1 : 0;
  prefix = dataset[0] == '/' ? "/" : "";
  while (at <= dataset.size()) {
    const std::size_t next = std::min(dataset.find('/', at), dataset.size());
    if (next == at) return false;
    prefix += dataset.substr(at, next - at);
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (next == dataset.size()) break;
    prefix += '/';
    at = next + 1;
  }
  const hid_t set = H5Dopen2(file, dataset.c_str(), H5P_DEFAULT);  // a group or datatype fails
  if (set < 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  H5Dclose(set);
  return true;
}

}  // namespace

VertexArrays read_vtu_point_data(const fs::path& path) {
  const std::string text = read_all(path);
  const std::size_t file_tag = text.find("<VTKFile");
  if (file_tag == std::string::npos) fail(path, "not a VTK XML file (no <VTKFile>)");
  const std::string head = text.substr(file_tag, text.find('>', file_tag) - file_tag + 1);
  const std::string type = attribute(head, "type");
  if (type != "UnstructuredGrid" && type != "PolyData")
    fail(path, "a VTK XML file of type \"" + type + "\", expected UnstructuredGrid or PolyData");
  if (attribute(head, "byte_order") == "BigEndian") fail(path, "big-endian VTK files are not supported");
  if (!attribute(head, "compressor").empty())
    fail(path, "compressed VTK data (" + attribute(head, "compressor") +
                   ") is not supported; save it uncompressed (ParaView: Data Mode, Compressor None)");
  std::string header_type = attribute(head, "header_type");
  if (header_type.empty()) header_type = "UInt32";
  if (header_type != "UInt32" && header_type != "UInt64")
    fail(path, "unsupported header_type \"" + header_type + "\"");
  const std::size_t piece = text.find("<Piece");
  if (piece == std::string::npos) fail(path, "no <Piece>");
  const std::string piece_tag = text.substr(piece, text.find('>', piece) - piece + 1);
  const std::string np = attribute(piece_tag, "NumberOfPoints");
  if (np.empty() || np.find_first_not_of("0123456789") != std::string::npos)
    fail(path, "<Piece> without a valid NumberOfPoints");
  VertexArrays out;
  out.vertices = static_cast<std::size_t>(std::stoull(np));
  // appended data: raw bytes after '_' up to the closing tag (binary: never search inside it)
  std::string appended;
  bool raw = false;
  const std::size_t app = text.find("<AppendedData");
  const std::size_t xml_end = app == std::string::npos ? text.size() : app;
  if (app != std::string::npos) {
    const std::size_t close = text.find('>', app);
    raw = attribute(text.substr(app, close - app + 1), "encoding") == "raw";
    const std::size_t underscore = text.find('_', close);
    if (underscore == std::string::npos) fail(path, "<AppendedData> without its '_' marker");
    const std::size_t stop = text.rfind("</AppendedData>");
    appended =
        text.substr(underscore + 1,
                    (stop == std::string::npos || stop < underscore ? text.size() : stop) - underscore - 1);
  }
  const std::size_t pd = text.find("<PointData", piece), pd_end = text.find("</PointData>", piece);
  if (pd != std::string::npos && pd < xml_end && pd_end != std::string::npos)
    for (const auto& a : data_arrays(text, pd, pd_end)) {
      const std::string name = attribute(a.tag, "Name");
      const std::string nc = attribute(a.tag, "NumberOfComponents");
      if (!nc.empty() && nc != "1") {
        out.skipped.push_back(name);
        continue;
      }
      out.arrays[name] = decode_array(path, a, out.vertices, header_type, appended, raw);
    }
  const std::size_t pts = text.find("<Points", piece), pts_end = text.find("</Points>", piece);
  if (pts != std::string::npos && pts < xml_end && pts_end != std::string::npos) {
    const auto arrays = data_arrays(text, pts, pts_end);
    if (!arrays.empty())
      out.points = decode_array(path, arrays.front(), 3 * out.vertices, header_type, appended, raw);
  }
  return out;
}

VertexArrays read_ply_vertices(const fs::path& path) {
  const std::string text = read_all(path);
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line.rfind("ply", 0) != 0) fail(path, "not a PLY file (no \"ply\" line)");
  std::string format;
  struct Element {
    std::string name;
    std::size_t count = 0;
    std::vector<std::pair<std::string, std::string>> properties;  // type, name
    bool list = false;
  };
  std::vector<Element> elements;
  bool ended = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream words(line);
    std::string word;
    words >> word;
    if (word == "format") {
      words >> format;
    } else if (word == "element") {
      Element e;
      long long count = -1;
      words >> e.name >> count;
      if (count < 0) fail(path, "bad header line \"" + line + "\"");
      e.count = static_cast<std::size_t>(count);
      elements.push_back(e);
    } else if (word == "property") {
      if (elements.empty()) fail(path, "a property before any element");
      std::string t, name;
      words >> t;
      if (t == "list") {
        elements.back().list = true;
        continue;
      }
      words >> name;
      if (ply_type_size(t) == 0) fail(path, "unknown property type \"" + t + "\"");
      elements.back().properties.emplace_back(t, name);
    } else if (word == "end_header") {
      ended = true;
      break;
    }
  }
  if (!ended) fail(path, "no end_header");
  if (format != "ascii" && format != "binary_little_endian")
    fail(path, "format \"" + format + "\" is not supported (ascii or binary_little_endian)");
  std::size_t before = 0;  // bytes (binary) or lines (ascii) of the elements before "vertex"
  const Element* vertex = nullptr;
  for (const auto& e : elements) {
    if (e.name == "vertex") {
      vertex = &e;
      break;
    }
    if (e.list) fail(path, "element \"" + e.name + "\" with a list property comes before \"vertex\"");
    std::size_t row = 0;
    for (const auto& p : e.properties) row += ply_type_size(p.first);
    before += format == "ascii" ? e.count : e.count * row;
  }
  if (vertex == nullptr) fail(path, "no \"vertex\" element");
  if (vertex->list) fail(path, "the \"vertex\" element has a list property");
  VertexArrays out;
  out.vertices = vertex->count;
  const std::size_t np = vertex->properties.size();
  std::vector<std::vector<double>> columns(np, std::vector<double>(out.vertices));
  if (format == "ascii") {
    for (std::size_t i = 0; i < before; ++i) std::getline(in, line);
    for (std::size_t v = 0; v < out.vertices; ++v)
      for (std::size_t p = 0; p < np; ++p)
        if (!(in >> columns[p][v]))
          fail(path, "vertex " + std::to_string(v) + ": expected " + std::to_string(np) + " numbers");
  } else {
    std::size_t at = static_cast<std::size_t>(in.tellg()) + before, row = 0;
    for (const auto& p : vertex->properties) row += ply_type_size(p.first);
    if (at + row * out.vertices > text.size())
      fail(path, "truncated: " + std::to_string(out.vertices) + " vertices of " + std::to_string(row) +
                     " bytes need more data than the file has");
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    for (std::size_t v = 0; v < out.vertices; ++v)
      for (std::size_t p = 0; p < np; ++p) {
        columns[p][v] = vtk_value(ply_as_vtk(vertex->properties[p].first), bytes + at);
        at += ply_type_size(vertex->properties[p].first);
      }
  }
  const double* xyz[3] = {nullptr, nullptr, nullptr};
  for (std::size_t p = 0; p < np; ++p) {
    const std::string& name = vertex->properties[p].second;
    if (name == "x" || name == "y" || name == "z") xyz[name[0] - 'x'] = columns[p].data();
  }
  if (xyz[0] && xyz[1] && xyz[2]) {
    out.points.resize(3 * out.vertices);
    for (std::size_t v = 0; v < out.vertices; ++v)
      for (int k = 0; k < 3; ++k) out.points[3 * v + static_cast<std::size_t>(k)] = xyz[k][v];
  }
  for (std::size_t p = 0; p < np; ++p) out.arrays[vertex->properties[p].second] = std::move(columns[p]);
  return out;
}

bool hdf5_has_dataset(const fs::path& path, const std::string& dataset) {
  const auto f = open_hdf5(path);
  return has_dataset(*f, dataset);
}

std::vector<double> read_hdf5_dataset(const fs::path& path, const std::string& dataset,
                                      std::vector<std::size_t>& dims) {
  const auto f = open_hdf5(path);
  if (!has_dataset(*f, dataset)) fail(path, "no dataset \"" + dataset + "\"");
  const auto set = handle(H5Dopen2(*f, dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (*set < 0) fail(path, "dataset \"" + dataset + "\" cannot be opened");
  const auto type = handle(H5Dget_type(*set), H5Tclose);
  const H5T_class_t cls = H5Tget_class(*type);
  if (cls != H5T_INTEGER && cls != H5T_FLOAT) fail(path, "dataset \"" + dataset + "\" is not numeric");
  const auto space = handle(H5Dget_space(*set), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(*space);
  if (rank < 0) fail(path, "dataset \"" + dataset + "\" has no simple shape");
  std::vector<hsize_t> d(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(*space, d.data(), nullptr);
  dims.assign(d.begin(), d.end());
  std::size_t n = 1;
  for (auto x : d) n *= static_cast<std::size_t>(x);
  std::vector<double> values(n);
  if (n > 0 && H5Dread(*set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0) {
    H5Eclear2(H5E_DEFAULT);
    fail(path, "dataset \"" + dataset + "\" cannot be read (corrupted or truncated?)");
  }
  return values;
}

}  // namespace tissue::io
