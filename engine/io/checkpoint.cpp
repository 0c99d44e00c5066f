#include "engine/io/checkpoint.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>
#include <system_error>

#include "engine/exec/error.hpp"
#include "engine/io/atomic_file.hpp"
#include "engine/io/hdf5_write_driver.hpp"
#include "engine/io/run_record.hpp"
#include "engine/io/vtk.hpp"

namespace fs = std::filesystem;

namespace tissue::io {

namespace {

constexpr const char* kFormatName = "tissue checkpoint";
/// Largest attribute string read back (the scenario text is a dataset, not an attribute).
constexpr std::size_t kMaxAttributeBytes = 1u << 20;
/// Largest scenario text read back [bytes].
constexpr std::size_t kMaxScenarioBytes = 64u << 20;
/// Values per dataset chunk (each chunk carries its own Fletcher-32 checksum).
constexpr std::size_t kChunkValues = 1u << 20;

// ---- HDF5 plumbing -------------------------------------------------------------------------------

/// Turns off HDF5's printing of its error stack; errors are reported through exceptions instead.
void quiet_hdf5() {
  static const bool quiet = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)quiet;
}

/// The innermost message on HDF5's error stack (where the failure was detected), on one line, then clears
/// the stack. (HDF5's own driver messages span two lines: they embed ctime().)
std::string hdf5_reason() {
  std::string reason;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* e, void* data) -> herr_t {
        if (n == 0 && e->desc != nullptr) *static_cast<std::string*>(data) = e->desc;
        return 0;
      },
      &reason);
  H5Eclear2(H5E_DEFAULT);
  std::replace(reason.begin(), reason.end(), '\n', ' ');
  return reason.empty() ? std::string("HDF5 error") : reason;
}

/// An HDF5 identifier closed by the matching H5?close on destruction.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), close_(closer) {}
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(close_, o.close_);
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { close(); }
  /// Closes the identifier now (once); returns the close's status, 0 when there was nothing to close.
  herr_t close() {
    const hid_t id = id_;
    id_ = H5I_INVALID_HID;
    return id >= 0 && close_ != nullptr ? close_(id) : 0;
  }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer close_ = nullptr;
};

/// Memory type of a scalar type.
hid_t native_type(ScalarType t) {
  switch (t) {
    case ScalarType::f32:
      return H5T_NATIVE_FLOAT;
    case ScalarType::f64:
      return H5T_NATIVE_DOUBLE;
    case ScalarType::i32:
      return H5T_NATIVE_INT32;
    case ScalarType::i64:
      return H5T_NATIVE_INT64;
    case ScalarType::u32:
      return H5T_NATIVE_UINT32;
    default:
      return H5T_NATIVE_UINT8;
  }
}

// ---- writing ---------------------------------------------------------------------------------------

/// Throws std::runtime_error for a failed HDF5 call while writing, and as soon as the file driver
/// (hdf5_write_driver.hpp) records a failed write: the rest of the file would be thrown away.
class Writer {
 public:
  Writer(fs::path path, const Hdf5WriteStatus& io) : path_(std::move(path)), io_(io) {}

  /// A created identifier (a Handle takes it over at once; a failed write shows in the next check_status).
  hid_t check(hid_t id, const std::string& what) const {
    if (id < 0) fail(what);
    return id;
  }
  void check_status(herr_t status, const std::string& what) const {
    if (status < 0 || io_.failed()) fail(what);
  }
  /// "cannot write checkpoint PATH (<call>): <system error>" after an I/O error, else HDF5's reason.
  [[noreturn]] void fail(const std::string& what) const {
    if (io_.failed()) {
      H5Eclear2(H5E_DEFAULT);
      throw std::runtime_error("cannot write checkpoint " + path_.string() + " (" + io_.call +
                               "): " + io_.message());
    }
    throw std::runtime_error("cannot write checkpoint " + path_.string() + " (" + what +
                             "): " + hdf5_reason());
  }

  Handle group(hid_t parent, const std::string& name) const {
    Handle plist(check(H5Pcreate(H5P_GROUP_CREATE), "property list"), H5Pclose);
    check_status(H5Pset_obj_track_times(plist.get(), false), "time tracking");
    return {check(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, plist.get(), H5P_DEFAULT), "group " + name),
            H5Gclose};
  }

  void attribute(hid_t loc, const char* name, hid_t type, const void* value) const {
    Handle space(check(H5Screate(H5S_SCALAR), "dataspace"), H5Sclose);
    Handle attr(check(H5Acreate2(loc, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), name), H5Aclose);
    check_status(H5Awrite(attr.get(), type, value), name);
  }
  void attribute(hid_t loc, const char* name, std::int64_t v) const {
    attribute(loc, name, H5T_NATIVE_INT64, &v);
  }
  void attribute(hid_t loc, const char* name, double v) const { attribute(loc, name, H5T_NATIVE_DOUBLE, &v); }
  void attribute(hid_t loc, const char* name, const std::string& v) const {
    Handle type(check(H5Tcopy(H5T_C_S1), "string type"), H5Tclose);
    check_status(H5Tset_size(type.get(), std::max<std::size_t>(v.size(), 1)), "string type");
    check_status(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "string type");
    std::string padded = v;
    padded.resize(std::max<std::size_t>(v.size(), 1), '\0');
    attribute(loc, name, type.get(), padded.data());
  }

  /// A dataset of `dims` values of `type` from `data`, chunked with Fletcher-32 checksums.
  void dataset(hid_t loc, const std::string& name, ScalarType type, const std::vector<hsize_t>& dims,
               const void* data) const {
    hsize_t count = 1;
    for (auto d : dims) count *= d;
    Handle space(check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), "dataspace"),
                 H5Sclose);
    Handle plist(check(H5Pcreate(H5P_DATASET_CREATE), "property list"), H5Pclose);
    check_status(H5Pset_obj_track_times(plist.get(), false), "time tracking");
    if (count > 0) {
      // chunks of whole rows along the last (fastest) axis, about kChunkValues values each
      std::vector<hsize_t> chunk(dims.size(), 1);
      const hsize_t last = dims.back();
      chunk.back() = std::min<hsize_t>(last, kChunkValues);
      if (dims.size() >= 2)
        chunk[dims.size() - 2] =
            std::clamp<hsize_t>(kChunkValues / std::max<hsize_t>(last, 1), 1, dims[dims.size() - 2]);
      check_status(H5Pset_chunk(plist.get(), static_cast<int>(chunk.size()), chunk.data()), "chunking");
      check_status(H5Pset_fletcher32(plist.get()), "Fletcher-32 filter");
    }
    Handle set(check(H5Dcreate2(loc, name.c_str(), native_type(type), space.get(), H5P_DEFAULT, plist.get(),
                                H5P_DEFAULT),
                     "dataset " + name),
               H5Dclose);
    if (count > 0)
      check_status(H5Dwrite(set.get(), native_type(type), H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
                   "dataset " + name);
    check_status(set.close(), "dataset " + name);  // writes the cached chunks
  }

  void string_dataset(hid_t loc, const std::string& name, const std::string& text) const {
    Handle type(check(H5Tcopy(H5T_C_S1), "string type"), H5Tclose);
    check_status(H5Tset_size(type.get(), std::max<std::size_t>(text.size(), 1)), "string type");
    check_status(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "string type");
    Handle space(check(H5Screate(H5S_SCALAR), "dataspace"), H5Sclose);
    Handle plist(check(H5Pcreate(H5P_DATASET_CREATE), "property list"), H5Pclose);
    check_status(H5Pset_obj_track_times(plist.get(), false), "time tracking");
    Handle set(
        check(H5Dcreate2(loc, name.c_str(), type.get(), space.get(), H5P_DEFAULT, plist.get(), H5P_DEFAULT),
              "dataset " + name),
        H5Dclose);
    std::string padded = text;
    padded.resize(std::max<std::size_t>(text.size(), 1), '\0');
    check_status(H5Dwrite(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, padded.data()),
                 "dataset " + name);
    check_status(set.close(), "dataset " + name);
  }

 private:
  fs::path path_;
  const Hdf5WriteStatus& io_;
};

/// Dataset dimensions of a column with `components` values per row and `rows` rows.
std::vector<hsize_t> column_dims(int components, std::size_t rows) {
  if (components == 1) return {static_cast<hsize_t>(rows)};
  return {static_cast<hsize_t>(components), static_cast<hsize_t>(rows)};
}

/// Rows [0, rows) of every component of a column, packed (component-major).
std::vector<unsigned char> pack_column(ColumnBase& column, std::size_t rows) {
  const std::size_t size = size_of(column.scalar_type());
  std::vector<unsigned char> packed(static_cast<std::size_t>(column.components()) * rows * size);
  const auto* host = static_cast<const unsigned char*>(column.host_bytes());
  for (std::size_t c = 0; c < static_cast<std::size_t>(column.components()); ++c)
    std::memcpy(packed.data() + c * rows * size, host + c * column.capacity() * size, rows * size);
  return packed;
}

void write_tables(const Writer& w, hid_t file, World& world) {
  Handle tables = w.group(file, "tables");
  for (Table* table : {&world.cells, &world.elements}) {
    Handle g = w.group(tables.get(), table->name());
    w.attribute(g.get(), "size", static_cast<std::int64_t>(table->size()));
    w.attribute(g.get(), "capacity", static_cast<std::int64_t>(table->capacity()));
    for (const auto& column : table->columns()) {
      if (column->transient()) continue;  // rebuilt by its system
      const auto packed = pack_column(*column, table->size());
      w.dataset(g.get(), column->name(), column->scalar_type(),
                column_dims(column->components(), table->size()), packed.data());
    }
  }
}

/// The prefix of a table's coordinate columns: "c" for cells (cx, cy, cz), "" for elements (x, y, z); no
/// value when the table has no coordinates (or no rows), and then no point cloud for viewers.
std::optional<std::string> coordinate_prefix(Table& table) {
  const std::string prefix = table.find("cx") != nullptr ? "c" : "";
  if (table.size() == 0) return std::nullopt;
  for (const char* axis : {"x", "y", "z"}) {
    ColumnBase* c = table.find(prefix + axis);
    if (c == nullptr || c->components() != 1 || c->scalar_type() != ScalarType::f32) return std::nullopt;
  }
  return prefix;
}

/// The name a viewer shows for component c of a multi-component column: its component name, else
/// "<column>_<c>".
std::string component_label(const ColumnBase& column, int c) {
  const auto& names = column.component_names();
  return static_cast<std::size_t>(c) < names.size() ? names[static_cast<std::size_t>(c)]
                                                    : column.name() + "_" + std::to_string(c);
}

/// /view: copies of table data in the shapes viewers read (ParaView's XDMF 3 reader takes neither separate
/// x, y, z arrays nor hyperslabs of the (components, size) columns): per table with coordinates, its points
/// (size, 3) and each component of a multi-component column as its own (size) dataset. Never read back.
void write_view(const Writer& w, hid_t file, World& world) {
  Handle view = w.group(file, "view");
  for (Table* table : {&world.cells, &world.elements}) {
    const auto prefix = coordinate_prefix(*table);
    if (!prefix) continue;
    const std::size_t n = table->size();
    Handle g = w.group(view.get(), table->name());
    std::vector<float> points(3 * n);
    for (int a = 0; a < 3; ++a) {
      const auto& column = table->column<float>(*prefix + "xyz"[a]);
      for (std::size_t i = 0; i < n; ++i) points[3 * i + static_cast<std::size_t>(a)] = column.host(i);
    }
    w.dataset(g.get(), "points", ScalarType::f32, {static_cast<hsize_t>(n), 3}, points.data());
    for (const auto& column : table->columns()) {
      if (column->components() == 1 || column->transient()) continue;
      Handle cg = w.group(g.get(), column->name());
      const std::size_t size = size_of(column->scalar_type());
      const auto* host = static_cast<const unsigned char*>(column->host_bytes());
      for (int c = 0; c < column->components(); ++c)
        w.dataset(cg.get(), component_label(*column, c), column->scalar_type(), {static_cast<hsize_t>(n)},
                  host + static_cast<std::size_t>(c) * column->capacity() * size);
    }
  }
}

void write_fields(const Writer& w, hid_t file, World& world) {
  Handle fields = w.group(file, "fields");
  for (const auto& field : world.fields) {
    Handle g = w.group(fields.get(), field->name());
    w.attribute(g.get(), "grid_spacing", field->grid_spacing());
    for (const auto& a : field->host_arrays()) {
      std::vector<hsize_t> dims(a.dims.begin(), a.dims.end());
      w.dataset(g.get(), a.name, a.type, dims, a.data);
    }
    // a surface field's mesh, for viewers only (a restart rebuilds the mesh from the scenario)
    std::vector<double> points;
    std::vector<std::int32_t> triangles;
    if (field->surface_geometry(points, triangles)) {
      Handle mesh = w.group(g.get(), "mesh");
      w.dataset(mesh.get(), "points", ScalarType::f64, {static_cast<hsize_t>(points.size() / 3), 3},
                points.data());
      w.dataset(mesh.get(), "triangles", ScalarType::i32, {static_cast<hsize_t>(triangles.size() / 3), 3},
                triangles.data());
    }
  }
}

void write_series(const Writer& w, hid_t file, const std::vector<PvdSeries*>& series) {
  Handle output = w.group(file, "output");
  for (const PvdSeries* s : series) {
    Handle g = w.group(output.get(), s->path().filename().string());
    std::vector<double> times;
    std::string files;
    for (const auto& [t, f] : s->entries()) {
      times.push_back(t);
      files += f + "\n";
    }
    w.dataset(g.get(), "times", ScalarType::f64, {static_cast<hsize_t>(times.size())}, times.data());
    w.attribute(g.get(), "files", files);
  }
}

// ---- XDMF ----------------------------------------------------------------------------------------

std::string xdmf_number_type(ScalarType t) {
  switch (t) {
    case ScalarType::f32:
      return "NumberType=\"Float\" Precision=\"4\"";
    case ScalarType::f64:
      return "NumberType=\"Float\" Precision=\"8\"";
    case ScalarType::i32:
      return "NumberType=\"Int\" Precision=\"4\"";
    case ScalarType::i64:
      return "NumberType=\"Int\" Precision=\"8\"";
    case ScalarType::u32:
      return "NumberType=\"UInt\" Precision=\"4\"";
    default:
      return "NumberType=\"UChar\" Precision=\"1\"";
  }
}

/// The XDMF 3 description of a checkpoint's tables (as point clouds, where a table has coordinate columns
/// x/y/z or cx/cy/cz: points and multi-component columns from /view, one named array per component), grid
/// fields (as 3DCoRectMesh) and surface fields (triangles), referring to datasets in `h5_name`. What
/// ParaView's default reader of .xdmf files (Xdmf3ReaderS, 5.11) reads: no X_Y_Z geometry, no hyperslabs.
std::string xdmf_text(World& world, const std::string& h5_name, double time) {
  std::ostringstream x;
  x << std::setprecision(17);
  x << "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n  <Domain>\n";
  const auto item = [&](const std::string& dims, ScalarType t, const std::string& dataset) {
    x << "        <DataItem Dimensions=\"" << dims << "\" " << xdmf_number_type(t) << " Format=\"HDF\">"
      << h5_name << ":" << dataset << "</DataItem>\n";
  };
  for (Table* table : {&world.cells, &world.elements}) {
    const auto prefix = coordinate_prefix(*table);
    if (!prefix) continue;
    const std::size_t n = table->size();
    const std::string base = "/tables/" + table->name() + "/", view = "/view/" + table->name() + "/";
    x << "    <Grid Name=\"" << table->name() << "\" GridType=\"Uniform\">\n      <Time Value=\"" << time
      << "\"/>\n      <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"" << n
      << "\" NodesPerElement=\"1\"/>\n      <Geometry GeometryType=\"XYZ\">\n";
    item(std::to_string(n) + " 3", ScalarType::f32, view + "points");
    x << "      </Geometry>\n";
    for (const auto& column : table->columns()) {
      const std::string& name = column->name();
      if (column->transient() || name == *prefix + "x" || name == *prefix + "y" || name == *prefix + "z")
        continue;
      for (int c = 0; c < column->components(); ++c) {
        const std::string label = column->components() == 1 ? name : component_label(*column, c);
        x << "      <Attribute Name=\"" << xml_escape(label)
          << "\" AttributeType=\"Scalar\" Center=\"Node\">\n";
        item(std::to_string(n), column->scalar_type(),
             column->components() == 1 ? base + name : view + name + "/" + label);
        x << "      </Attribute>\n";
      }
    }
    x << "    </Grid>\n";
  }
  for (const auto& field : world.fields) {
    std::vector<double> points;
    std::vector<std::int32_t> triangles;
    if (field->surface_geometry(points, triangles)) {  // a triangle mesh with per-vertex species
      const std::string base = "/fields/" + field->name() + "/";
      const std::size_t n = points.size() / 3, nf = triangles.size() / 3;
      x << "    <Grid Name=\"" << xml_escape(field->name())
        << "\" GridType=\"Uniform\">\n      <Time Value=\"" << time
        << "\"/>\n      <Topology TopologyType=\"Triangle\" NumberOfElements=\"" << nf << "\">\n";
      item(std::to_string(nf) + " 3", ScalarType::i32, base + "mesh/triangles");
      x << "      </Topology>\n      <Geometry GeometryType=\"XYZ\">\n";
      item(std::to_string(n) + " 3", ScalarType::f64, base + "mesh/points");
      x << "      </Geometry>\n";
      for (const auto& a : field->host_arrays()) {
        if (!a.viewer) continue;
        x << "      <Attribute Name=\"" << xml_escape(a.name)
          << "\" AttributeType=\"Scalar\" Center=\"Node\">\n";
        item(std::to_string(n), a.type, base + a.name);
        x << "      </Attribute>\n";
      }
      x << "    </Grid>\n";
      continue;
    }
    const double h = field->grid_spacing();
    const auto arrays = field->host_arrays();
    if (h <= 0.0 || arrays.empty() || arrays.front().dims.size() != 3) continue;
    const auto& d = arrays.front().dims;
    const std::string dims = std::to_string(d[0]) + " " + std::to_string(d[1]) + " " + std::to_string(d[2]);
    x << "    <Grid Name=\"" << xml_escape(field->name()) << "\" GridType=\"Uniform\">\n      <Time Value=\""
      << time << "\"/>\n      <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" << dims << "\"/>\n"
      << "      <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
      << "        <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">"
      << (d[0] > 1 ? 0.5 * h : 0.0) << " " << 0.5 * h << " " << 0.5 * h << "</DataItem>\n"
      << "        <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">" << h << " "
      << h << " " << h << "</DataItem>\n      </Geometry>\n";
    for (const auto& a : arrays) {
      if (!a.viewer) continue;
      x << "      <Attribute Name=\"" << xml_escape(a.name)
        << "\" AttributeType=\"Scalar\" Center=\"Node\">\n";
      item(dims, a.type, "/fields/" + field->name() + "/" + a.name);
      x << "      </Attribute>\n";
    }
    x << "    </Grid>\n";
  }
  x << "  </Domain>\n</Xdmf>\n";
  return x.str();
}

/// /systems/<name>/integers/<key> (one int64 each) and /systems/<name>/arrays/<key> (float32, 1-D).
void write_systems(const Writer& w, hid_t file, const SystemStates& systems) {
  Handle root = w.group(file, "systems");
  for (const auto& [name, state] : systems) {
    Handle g = w.group(root.get(), name);
    Handle integers = w.group(g.get(), "integers");
    for (const auto& [key, value] : state.integers)
      w.dataset(integers.get(), key, ScalarType::i64, {1}, &value);
    Handle arrays = w.group(g.get(), "arrays");
    for (const auto& [key, values] : state.arrays)
      w.dataset(arrays.get(), key, ScalarType::f32, {static_cast<hsize_t>(values.size())}, values.data());
  }
}

// ---- reading ---------------------------------------------------------------------------------------

/// Throws InputError for a checkpoint that cannot be read or does not fit.
class Reader {
 public:
  explicit Reader(fs::path path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError("checkpoint " + path_.string() + ": " + what);
  }
  [[noreturn]] void fail_hdf5(const std::string& what) const { fail(what + ": " + hdf5_reason()); }

  Handle open() const {
    quiet_hdf5();
    std::error_code ec;
    if (!fs::is_regular_file(path_, ec)) fail("no such file");
    if (H5Fis_hdf5(path_.c_str()) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      fail("not an HDF5 file");
    }
    // Checkpoints are written in the HDF5 1.10 format (superblock version 3), whose metadata carry
    // checksums. The 1.8 format's (superblock 0 or 1) do not, and HDF5 1.10.8 trusts the sizes in them: a
    // damaged one made it read past a buffer (tests/fuzz, docs/fuzzing.md). Only the former is opened.
    char head[9] = {};
    std::ifstream(path_, std::ios::binary).read(head, sizeof head);
    if (std::memcmp(head, "\x89HDF\r\n\x1a\n", 8) != 0) fail("not an HDF5 file (or one with a user block)");
    if (head[8] < 2)
      fail("HDF5 superblock version " + std::to_string(head[8]) +
           ": not written by this engine, whose checkpoints use the HDF5 1.10 format (checksummed metadata)");
    const hid_t file = H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) fail_hdf5("cannot open (truncated or damaged file?)");
    return {file, H5Fclose};
  }

  bool exists(hid_t loc, const std::string& name) const {
    const htri_t e = H5Lexists(loc, name.c_str(), H5P_DEFAULT);
    if (e < 0) fail_hdf5("cannot look up '" + name + "'");
    return e > 0;
  }

  Handle group(hid_t parent, const std::string& name, const std::string& where) const {
    if (!exists(parent, name)) fail("missing group " + where);
    const hid_t g = H5Gopen2(parent, name.c_str(), H5P_DEFAULT);
    if (g < 0) fail_hdf5("cannot open group " + where);
    return {g, H5Gclose};
  }

  /// A scalar attribute; `type_class` is checked before reading.
  Handle attribute(hid_t loc, const char* name, H5T_class_t type_class) const {
    const htri_t e = H5Aexists(loc, name);
    if (e < 0) fail_hdf5(std::string("cannot look up attribute ") + name);
    if (e == 0) fail(std::string("missing attribute '") + name + "'");
    Handle attr(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
    if (!attr.valid()) fail_hdf5(std::string("cannot open attribute ") + name);
    Handle space(H5Aget_space(attr.get()), H5Sclose);
    Handle type(H5Aget_type(attr.get()), H5Tclose);
    if (!space.valid() || !type.valid()) fail_hdf5(std::string("cannot read attribute ") + name);
    if (H5Sget_simple_extent_type(space.get()) != H5S_SCALAR || H5Tget_class(type.get()) != type_class)
      fail(std::string("attribute '") + name + "' has the wrong type");
    return attr;
  }
  std::int64_t integer(hid_t loc, const char* name) const {
    Handle attr = attribute(loc, name, H5T_INTEGER);
    std::int64_t v = 0;
    if (H5Aread(attr.get(), H5T_NATIVE_INT64, &v) < 0)
      fail_hdf5(std::string("cannot read attribute ") + name);
    return v;
  }
  double number(hid_t loc, const char* name) const {
    Handle attr = attribute(loc, name, H5T_FLOAT);
    double v = 0;
    if (H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &v) < 0)
      fail_hdf5(std::string("cannot read attribute ") + name);
    return v;
  }
  std::string string(hid_t loc, const char* name) const {
    Handle attr = attribute(loc, name, H5T_STRING);
    Handle type(H5Aget_type(attr.get()), H5Tclose);
    const std::size_t size = H5Tget_size(type.get());
    if (H5Tis_variable_str(type.get()) != 0 || size == 0 || size > kMaxAttributeBytes)
      fail(std::string("attribute '") + name + "' is not a fixed-length string of sane size");
    std::string v(size, '\0');
    if (H5Aread(attr.get(), type.get(), v.data()) < 0)
      fail_hdf5(std::string("cannot read attribute ") + name);
    v.resize(std::strlen(v.c_str()));
    return v;
  }

  std::string string_dataset(hid_t loc, const std::string& name) const {
    if (!exists(loc, name)) fail("missing dataset /" + name);
    Handle set(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!set.valid()) fail_hdf5("cannot open dataset /" + name);
    Handle type(H5Dget_type(set.get()), H5Tclose);
    Handle space(H5Dget_space(set.get()), H5Sclose);
    if (!type.valid() || !space.valid()) fail_hdf5("cannot read dataset /" + name);
    const std::size_t size = H5Tget_size(type.get());
    if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0 ||
        H5Sget_simple_extent_type(space.get()) != H5S_SCALAR || size == 0 || size > kMaxScenarioBytes)
      fail("dataset /" + name + " is not a fixed-length string of sane size");
    std::string v(size, '\0');
    if (H5Dread(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
      fail_hdf5("cannot read dataset /" + name);
    v.resize(std::strlen(v.c_str()));
    return v;
  }

  /// Reads dataset `name` of `loc` into `out` after checking its type and dimensions.
  void dataset(hid_t loc, const std::string& name, const std::string& where, ScalarType type,
               const std::vector<hsize_t>& dims, void* out) const {
    if (!exists(loc, name)) fail("missing dataset " + where);
    Handle set(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!set.valid()) fail_hdf5("cannot open dataset " + where);
    Handle stored(H5Dget_type(set.get()), H5Tclose);
    Handle space(H5Dget_space(set.get()), H5Sclose);
    if (!stored.valid() || !space.valid()) fail_hdf5("cannot read dataset " + where);
    if (H5Tequal(stored.get(), native_type(type)) <= 0)
      fail("dataset " + where + " is not of type " + name_of(type));
    const int rank = H5Sget_simple_extent_ndims(space.get());
    std::vector<hsize_t> have(static_cast<std::size_t>(std::max(rank, 0)));
    if (rank != static_cast<int>(dims.size()) ||
        H5Sget_simple_extent_dims(space.get(), have.data(), nullptr) < 0 || have != dims) {
      std::string want, got;
      for (auto d : dims) want += (want.empty() ? "" : " x ") + std::to_string(d);
      for (auto d : have) got += (got.empty() ? "" : " x ") + std::to_string(d);
      fail("dataset " + where + " has shape (" + got + "), expected (" + want + ")");
    }
    hsize_t count = 1;
    for (auto d : dims) count *= d;
    if (count == 0) return;
    if (H5Dread(set.get(), native_type(type), H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
      fail_hdf5("cannot read dataset " + where + " (checksum mismatch: the file is damaged?)");
  }

  /// The dimensions of dataset `name` of `loc`, at most `max_values` values in all.
  std::vector<hsize_t> extent(hid_t loc, const std::string& name, const std::string& where,
                              hsize_t max_values) const {
    if (!exists(loc, name)) fail("missing dataset " + where);
    Handle set(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!set.valid()) fail_hdf5("cannot open dataset " + where);
    Handle space(H5Dget_space(set.get()), H5Sclose);
    const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
    if (rank < 0 || rank > 8) fail("dataset " + where + " has no sane shape");
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    if (H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0) fail_hdf5("cannot read " + where);
    hsize_t count = 1;
    for (auto d : dims) {
      if (d > max_values || count * d > max_values) fail("dataset " + where + " is larger than expected");
      count *= d;
    }
    return dims;
  }

  /// Names of the links in group `loc`, in name order.
  std::vector<std::string> members(hid_t loc, const std::string& where) const {
    std::vector<std::string> names;
    const herr_t s = H5Literate(
        loc, H5_INDEX_NAME, H5_ITER_INC, nullptr,
        [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
          static_cast<std::vector<std::string>*>(data)->emplace_back(name);
          return 0;
        },
        &names);
    if (s < 0) fail_hdf5("cannot list " + where);
    return names;
  }

 private:
  fs::path path_;
};

void read_tables(const Reader& r, hid_t file, World& world) {
  Handle tables = r.group(file, "tables", "/tables");
  for (Table* table : {&world.cells, &world.elements}) {
    const std::string where = "/tables/" + table->name();
    Handle g = r.group(tables.get(), table->name(), where);
    const std::int64_t size = r.integer(g.get(), "size"), capacity = r.integer(g.get(), "capacity");
    // dense indices are int32 in the columns: a table never holds more rows
    if (size < 0 || capacity < size || capacity > std::numeric_limits<std::int32_t>::max())
      r.fail(where + ": size " + std::to_string(size) + " and capacity " + std::to_string(capacity) +
             " are inconsistent");
    const auto names = r.members(g.get(), where);
    for (const auto& name : names)
      if (table->find(name) == nullptr)
        r.fail(where + " has a column '" + name +
               "' that this model does not have (another model or version?)");
    std::vector<std::vector<unsigned char>> packed;
    for (const auto& column : table->columns()) {
      if (column->transient()) continue;  // not in checkpoints: zero until its system rebuilds it
      const auto rows = static_cast<std::size_t>(size);
      packed.emplace_back(static_cast<std::size_t>(column->components()) * rows *
                          size_of(column->scalar_type()));
      r.dataset(g.get(), column->name(), where + "/" + column->name(), column->scalar_type(),
                column_dims(column->components(), rows), packed.back().data());
    }
    // everything read and checked: now change the world
    table->reserve(static_cast<std::size_t>(capacity));
    table->resize(static_cast<std::size_t>(size));
    std::size_t k = 0;
    for (const auto& column : table->columns()) {
      const std::size_t value = size_of(column->scalar_type()), rows = table->size();
      auto* host = static_cast<unsigned char*>(column->host_bytes());
      if (column->transient()) {
        column->clear_host_rows(0, column->capacity());
        continue;
      }
      // an empty table's buffers may be null, which memcpy must not be given even for 0 bytes
      for (std::size_t c = 0; rows > 0 && c < static_cast<std::size_t>(column->components()); ++c)
        std::memcpy(host + c * column->capacity() * value, packed[k].data() + c * rows * value, rows * value);
      column->clear_host_rows(rows, column->capacity());
      ++k;
    }
  }
}

void read_fields(const Reader& r, hid_t file, World& world) {
  Handle fields = r.group(file, "fields", "/fields");
  for (const auto& name : r.members(fields.get(), "/fields")) {
    const bool known = std::any_of(world.fields.begin(), world.fields.end(),
                                   [&](const auto& f) { return f->name() == name; });
    if (!known) r.fail("field '" + name + "' is not part of this model (another model or version?)");
  }
  for (const auto& field : world.fields) {
    const std::string where = "/fields/" + field->name();
    Handle g = r.group(fields.get(), field->name(), where);
    for (const auto& a : field->host_arrays()) {
      if (!a.viewer && !r.exists(g.get(), a.name)) {  // written before this array existed: zeros
        std::memset(a.data, 0, a.count() * size_of(a.type));
        continue;
      }
      std::vector<hsize_t> dims(a.dims.begin(), a.dims.end());
      r.dataset(g.get(), a.name, where + "/" + a.name, a.type, dims, a.data);
    }
  }
}

void read_series(const Reader& r, hid_t file, const std::vector<PvdSeries*>& series) {
  if (series.empty()) return;
  Handle output = r.group(file, "output", "/output");
  for (PvdSeries* s : series) {
    const std::string name = s->path().filename().string();
    if (!r.exists(output.get(), name)) continue;
    const std::string where = "/output/" + name;
    Handle g = r.group(output.get(), name, where);
    std::istringstream files(r.string(g.get(), "files"));
    std::vector<std::pair<double, std::string>> entries;
    for (std::string f; std::getline(files, f);) entries.emplace_back(0.0, f);
    std::vector<double> times(entries.size());
    r.dataset(g.get(), "times", where + "/times", ScalarType::f64, {static_cast<hsize_t>(times.size())},
              times.data());
    for (std::size_t i = 0; i < entries.size(); ++i) entries[i].first = times[i];
    s->restore(std::move(entries));
  }
}

/// What write_systems() wrote; no /systems group (a checkpoint of systems that keep no state, or written
/// before states were recorded) reads as none.
SystemStates read_systems(const Reader& r, hid_t file) {
  SystemStates out;
  if (!r.exists(file, "systems")) return out;
  Handle root = r.group(file, "systems", "/systems");
  for (const auto& name : r.members(root.get(), "/systems")) {
    const std::string where = "/systems/" + name;
    Handle g = r.group(root.get(), name, where);
    SystemState state;
    Handle integers = r.group(g.get(), "integers", where + "/integers");
    for (const auto& key : r.members(integers.get(), where + "/integers")) {
      std::int64_t v = 0;
      r.dataset(integers.get(), key, where + "/integers/" + key, ScalarType::i64, {1}, &v);
      state.integers[key] = v;
    }
    Handle arrays = r.group(g.get(), "arrays", where + "/arrays");
    for (const auto& key : r.members(arrays.get(), where + "/arrays")) {
      const std::string at = where + "/arrays/" + key;
      const auto dims = r.extent(arrays.get(), key, at, hsize_t{1} << 31);
      if (dims.size() != 1) r.fail("dataset " + at + " is not one-dimensional");
      std::vector<float> values(static_cast<std::size_t>(dims[0]));
      r.dataset(arrays.get(), key, at, ScalarType::f32, dims, values.data());
      state.arrays[key] = std::move(values);
    }
    out.emplace_back(name, std::move(state));
  }
  return out;
}

}  // namespace

void write_checkpoint(const fs::path& path, World& world, const CheckpointHeader& header,
                      const std::vector<PvdSeries*>& series, const SystemStates& systems) {
  quiet_hdf5();
  world.download();
  const fs::path tmp = temporary_path(path);
  // HDF5 sees no I/O error (it would leave identifiers half-closed and crash at exit); the driver records
  // the first one, the writer stops at it, every identifier is closed, and the temporary is removed
  Hdf5WriteStatus io;
  const Writer w(path, io);
  try {
    {
      Handle fapl(w.check(H5Pcreate(H5P_FILE_ACCESS), "file access list"), H5Pclose);
      set_hdf5_write_driver(fapl.get(), &io);
      // the 1.10 file format: checksummed superblock, object headers and chunk indices
      w.check_status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_LATEST), "format version");
      Handle fcpl(w.check(H5Pcreate(H5P_FILE_CREATE), "file creation list"), H5Pclose);
      w.check_status(H5Pset_obj_track_times(fcpl.get(), false), "time tracking");  // the root group's
      Handle file(w.check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()), "create"), H5Fclose);
      const hid_t f = file.get();
      w.attribute(f, "format", std::string(kFormatName));
      w.attribute(f, "format_version", static_cast<std::int64_t>(kCheckpointFormatVersion));
      w.attribute(f, "engine_version", header.engine_version);
      w.attribute(f, "engine_revision", header.engine_revision);
      w.attribute(f, "model", header.model);
      w.attribute(f, "scenario_path", header.scenario_path);
      w.attribute(f, "scenario_sha256", header.scenario_sha256);
      w.attribute(f, "backend", header.backend);
      w.attribute(f, "status", header.status);
      w.attribute(f, "message", header.message);
      w.attribute(f, "step", world.step);
      w.attribute(f, "time", world.time);
      w.attribute(f, "dt", header.dt);
      w.attribute(f, "steps_requested", header.steps_requested);
      w.attribute(f, "next_cell_id", world.next_cell_id);
      w.attribute(f, "seed", static_cast<std::int64_t>(world.seed));
      w.string_dataset(f, "scenario", header.scenario_text);
      w.attribute(f, "input_files", header.input_files);
      write_tables(w, f, world);
      write_view(w, f, world);
      write_fields(w, f, world);
      write_series(w, f, series);
      if (!systems.empty()) write_systems(w, f, systems);
      w.check_status(H5Fflush(f, H5F_SCOPE_GLOBAL), "flush");
      w.check_status(file.close(), "close");
    }
    if (io.failed()) w.fail("close");
    commit_file_atomic(tmp, path);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  fs::path xdmf = path;
  xdmf.replace_extension(".xdmf");
  write_file_atomic(xdmf, xdmf_text(world, path.filename().string(), world.time));
}

CheckpointHeader read_checkpoint_header(const fs::path& path) {
  const Reader r(path);
  Handle file = r.open();
  const hid_t f = file.get();
  const htri_t has_format = H5Aexists(f, "format");
  if (has_format <= 0) r.fail("not a tissue checkpoint (no 'format' attribute)");
  if (r.string(f, "format") != kFormatName)
    r.fail("not a tissue checkpoint (format is not '" + std::string(kFormatName) + "')");
  CheckpointHeader h;
  h.format_version = static_cast<int>(r.integer(f, "format_version"));
  if (h.format_version != kCheckpointFormatVersion)
    r.fail("checkpoint format version " + std::to_string(h.format_version) + "; this engine reads version " +
           std::to_string(kCheckpointFormatVersion));
  h.engine_version = r.string(f, "engine_version");
  h.engine_revision = r.string(f, "engine_revision");
  h.model = r.string(f, "model");
  h.scenario_path = r.string(f, "scenario_path");
  h.scenario_sha256 = r.string(f, "scenario_sha256");
  h.backend = r.string(f, "backend");
  h.status = r.string(f, "status");
  h.message = r.string(f, "message");
  h.step = r.integer(f, "step");
  h.time = r.number(f, "time");
  h.dt = r.number(f, "dt");
  h.steps_requested = r.integer(f, "steps_requested");
  h.scenario_text = r.string_dataset(f, "scenario");
  if (H5Aexists(f, "input_files") > 0) h.input_files = r.string(f, "input_files");
  if (h.status != "ok" && h.status != "failed") r.fail("unknown status '" + h.status + "'");
  if (h.step < 0 || !(h.dt > 0.0) || !std::isfinite(h.time)) r.fail("step, time or dt out of range");
  if (sha256_hex(h.scenario_text) != h.scenario_sha256)
    r.fail("the stored scenario does not match its SHA-256 (the file is damaged)");
  return h;
}

SystemStates read_checkpoint_state(const fs::path& path, World& world,
                                   const std::vector<PvdSeries*>& series) {
  const Reader r(path);
  Handle file = r.open();
  const hid_t f = file.get();
  const std::int64_t step = r.integer(f, "step"), next_cell_id = r.integer(f, "next_cell_id");
  const double time = r.number(f, "time");
  if (static_cast<std::uint64_t>(r.integer(f, "seed")) != world.seed)
    r.fail("its random seed differs from the scenario's");
  read_tables(r, f, world);
  read_fields(r, f, world);
  read_series(r, f, series);
  SystemStates systems = read_systems(r, f);
  world.step = step;
  world.time = time;
  world.next_cell_id = next_cell_id;
  if (const std::string problem = world.check_consistency(); !problem.empty())
    r.fail("inconsistent tables: " + problem);
  for (std::size_t c = 0; c < world.cells.size(); ++c)
    if (world.cell_id.host(c) < 0 || world.cell_id.host(c) >= next_cell_id)
      r.fail("cell " + std::to_string(c) + " has id " + std::to_string(world.cell_id.host(c)) +
             ", outside [0, next_cell_id = " + std::to_string(next_cell_id) + ")");
  world.cells.upload();
  world.elements.upload();
  for (const auto& field : world.fields) field->upload();
  return systems;
}

// ---- CheckpointSeries ------------------------------------------------------------------------------

CheckpointSeries::CheckpointSeries(fs::path dir, int keep) : dir_(std::move(dir)), keep_(std::max(keep, 1)) {}

std::string CheckpointSeries::file_name(std::int64_t step, bool failed) {
  char name[64];
  std::snprintf(name, sizeof name, "checkpoint_%09lld%s.h5", static_cast<long long>(step),
                failed ? "_failed" : "");
  return name;
}

namespace {
/// (step, path) of the complete, not failed checkpoints in `dir`, oldest first.
std::vector<std::pair<std::int64_t, fs::path>> complete_checkpoints(const fs::path& dir) {
  std::vector<std::pair<std::int64_t, fs::path>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    // exactly checkpoint_<digits>.h5 (temporary files end in .h5.tmp-<pid>, failed ones in _failed.h5)
    const std::string name = entry.path().filename().string();
    const std::string prefix = "checkpoint_", suffix = ".h5";
    if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    found.emplace_back(std::stoll(digits), entry.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}
}  // namespace

fs::path CheckpointSeries::write(World& world, const CheckpointHeader& header,
                                 const std::vector<PvdSeries*>& series, const SystemStates& systems) {
  const bool failed = header.status == "failed";
  const fs::path path = dir_ / file_name(world.step, failed);
  write_checkpoint(path, world, header, series, systems);
  if (!failed) {
    auto all = complete_checkpoints(dir_);
    for (std::size_t i = 0; i + static_cast<std::size_t>(keep_) < all.size(); ++i) {
      std::error_code ec;
      fs::path xdmf = all[i].second;
      fs::remove(all[i].second, ec);
      fs::remove(xdmf.replace_extension(".xdmf"), ec);
    }
  }
  return path;
}

fs::path CheckpointSeries::latest(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError("checkpoint directory " + dir.string() + ": not a directory");
  const auto all = complete_checkpoints(dir);
  if (all.empty()) throw InputError(dir.string() + ": no checkpoint_<step>.h5 in this directory");
  return all.back().second;
}

}  // namespace tissue::io
