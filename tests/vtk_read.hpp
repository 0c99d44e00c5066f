#pragma once
/// @file vtk_read.hpp
/// What the tests read back from the .vtu files the writers make (engine/io/vtk.hpp): an independent
/// base64 decoder and the arrays of a point cloud, by name. The files' readability by ParaView's and
/// meshio's readers is checked in tests/scenarios.

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace tissue::test {

/// The bytes of a file.
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Independent RFC 4648 decoder.
inline std::vector<unsigned char> from_base64(const std::string& text) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<unsigned char> out;
  std::uint32_t buffer = 0;
  int bits = 0;
  for (char ch : text) {
    if (ch == '=') break;
    buffer = (buffer << 6) | static_cast<std::uint32_t>(alphabet.find(ch));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<unsigned char>((buffer >> bits) & 0xFF));
    }
  }
  return out;
}

/// The values of the inline binary array `name` of a .vtu's text (its 8-byte size header, base64 on its own,
/// skipped); empty when there is none.
template <class T>
std::vector<T> vtu_array(const std::string& text, const std::string& name) {
  const std::regex re("Name=\"" + name + "\"[^>]*format=\"binary\">([A-Za-z0-9+/=]*)</DataArray>");
  std::smatch m;
  if (!std::regex_search(text, m, re)) return {};
  const std::string encoded = m[1];
  if (encoded.size() < 12) return {};
  const auto bytes = from_base64(encoded.substr(12));
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

/// Every match of group 1 of `pattern` in `text`, in order (the Name="..." of the arrays, the Source="..."
/// of a .pvtu's pieces).
inline std::vector<std::string> all_matches(const std::string& text, const std::string& pattern) {
  std::vector<std::string> found;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    found.push_back((*it)[1]);
  return found;
}

}  // namespace tissue::test
