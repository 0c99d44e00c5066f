// _tissue: the pybind11 extension under the `tissue` Python package (python/tissue/__init__.py). It exposes
// the engine's own objects thinly: scenarios (io::Scenario), the engine-owned run (Runner) and the World's
// tables and fields as NumPy copies or zero-copy device views. Everything a user calls is wrapped by the
// pure-Python layer, which documents the public API; names here start with an underscore where the Python
// layer renames them.
//
// Errors: io InputError -> tissue.ScenarioError (a ValueError with file, line, column, key and message
// attributes), NumericalError -> tissue.NumericalError, BackendError -> tissue.BackendError (RuntimeErrors).

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <toml++/toml.h>
#include <cmath>
#include <cstring>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"
#include "engine/io/scenario.hpp"
#include "engine/run/runner.hpp"
#include "modules/builtin_modules.hpp"

namespace py = pybind11;
using namespace tissue;

namespace {

// ---- errors ----------------------------------------------------------------------------------------

py::object& scenario_error_type() {
  static py::object type;
  return type;
}

/// Raises tissue.ScenarioError for an InputError message "file:line:column: key: what" (each part optional),
/// with the parts as attributes (None where absent) and `dict_path` (the key as a tuple of dict keys, for
/// scenarios made from a dict).
void raise_scenario_error(const std::string& message) {
  static const std::regex located(R"(^(.+?):(\d+):(\d+): (.*)$)", std::regex::optimize);
  static const std::regex keyed(R"(^([A-Za-z_][A-Za-z0-9_.\-\[\]]*): (.*)$)", std::regex::optimize);
  // "<dict>: key: what", the errors of a scenario dict's conversion (no line in any file)
  static const std::regex unlocated(R"(^(<dict>): (.*)$)", std::regex::optimize);
  py::object file = py::none(), line = py::none(), column = py::none(), key = py::none();
  std::string rest = message;
  std::smatch m;
  if (std::regex_match(message, m, located)) {
    file = py::str(m[1].str());
    line = py::int_(std::stol(m[2].str()));
    column = py::int_(std::stol(m[3].str()));
    rest = m[4].str();
  } else if (std::regex_match(message, m, unlocated)) {
    file = py::str(m[1].str());
    rest = m[2].str();
  }
  std::smatch k;
  const std::string after = rest;
  static const std::regex unknown(R"(^unknown key '([^']+)'.*$)", std::regex::optimize);
  if (std::regex_match(after, k, keyed)) {
    key = py::str(k[1].str());
    rest = k[2].str();
  } else if (std::regex_match(after, k, unknown)) {
    key = py::str(k[1].str());
  }
  py::object error = scenario_error_type()(message);
  error.attr("file") = file;
  error.attr("line") = line;
  error.attr("column") = column;
  error.attr("key") = key;
  error.attr("reason") = py::str(rest);
  PyErr_SetObject(scenario_error_type().ptr(), error.ptr());
}

// ---- scenarios from Python dicts -------------------------------------------------------------------

std::string dict_path(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& p : path) out += (out.empty() || p.front() == '[' ? "" : ".") + p;
  return out.empty() ? "(root)" : out;
}

[[noreturn]] void bad_value(const std::vector<std::string>& path, const std::string& what) {
  throw InputError("<dict>: " + dict_path(path) + ": " + what);
}

toml::table to_toml_table(const py::dict& d, std::vector<std::string>& path);

/// A Python value as a TOML node: bool, int, float, str, dict (table), list/tuple (array; of dicts: an
/// array of tables), NumPy scalars through .item(). @throws InputError naming the dict path otherwise.
std::unique_ptr<toml::node> to_toml_node(py::handle value, std::vector<std::string>& path) {
  if (py::isinstance<py::bool_>(value)) return std::make_unique<toml::value<bool>>(value.cast<bool>());
  if (py::isinstance<py::int_>(value)) {
    try {
      return std::make_unique<toml::value<std::int64_t>>(value.cast<std::int64_t>());
    } catch (const py::cast_error&) {
      bad_value(path, "integer out of the 64-bit range");
    }
  }
  if (py::isinstance<py::float_>(value)) return std::make_unique<toml::value<double>>(value.cast<double>());
  if (py::isinstance<py::str>(value))
    return std::make_unique<toml::value<std::string>>(value.cast<std::string>());
  if (py::isinstance<py::dict>(value))
    return std::make_unique<toml::table>(to_toml_table(value.cast<py::dict>(), path));
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    auto array = std::make_unique<toml::array>();
    std::size_t i = 0;
    for (py::handle item : value) {
      path.push_back("[" + std::to_string(i++) + "]");
      array->push_back(std::move(*to_toml_node(item, path)));
      path.pop_back();
    }
    return array;
  }
  if (py::hasattr(value, "item") && py::hasattr(value, "dtype"))  // a NumPy scalar
    return to_toml_node(value.attr("item")(), path);
  bad_value(path, "a bool, int, float, str, dict or list, got a " +
                      py::str(py::type::of(value).attr("__name__")).cast<std::string>());
}

toml::table to_toml_table(const py::dict& d, std::vector<std::string>& path) {
  toml::table table;
  for (auto [key, value] : d) {
    if (!py::isinstance<py::str>(key))
      bad_value(path, "keys must be strings, got " + py::repr(key).cast<std::string>());
    const std::string name = key.cast<std::string>();
    path.push_back(name);
    auto node = to_toml_node(value, path);
    table.insert(name, std::move(*node));
    path.pop_back();
  }
  return table;
}

/// The TOML text of a scenario given as a Python dict.
std::string dict_to_toml(const py::dict& d) {
  std::vector<std::string> path;
  const toml::table table = to_toml_table(d, path);
  std::ostringstream text;
  text << table << "\n";
  return text.str();
}

// ---- runs ---------------------------------------------------------------------------------------------

/// The process's backend is chosen once per live simulation: two simulations on different backends at once
/// would mix buffers of both.
int live_runs = 0;

void select_backend_for(const std::string& backend) {
  if (live_runs > 0 && !backend.empty() && exec::parse_backend(backend) != exec::backend())
    throw InputError("backend '" + backend + "' asked for while a simulation on the '" +
                     std::string(exec::to_string(exec::backend())) +
                     "' backend is alive: one backend per process at a time (close the other first)");
  if (live_runs == 0) select_backend(backend);
}

py::dtype dtype_of(ScalarType t) {
  switch (t) {
    case ScalarType::f32:
      return py::dtype::of<float>();
    case ScalarType::f64:
      return py::dtype::of<double>();
    case ScalarType::i32:
      return py::dtype::of<std::int32_t>();
    case ScalarType::i64:
      return py::dtype::of<std::int64_t>();
    case ScalarType::u32:
      return py::dtype::of<std::uint32_t>();
    default:
      return py::dtype::of<std::uint8_t>();
  }
}

/// Columns a driver may not write: they are the engine's structure (cell <-> element ranges, stable ids).
bool structural(const std::string& table, const std::string& column) {
  return (table == "cells" && (column == "first" || column == "count" || column == "id")) ||
         (table == "elements" && column == "cell");
}

/// One run, as the Python Simulation holds it.
class PyRun {
 public:
  PyRun(std::optional<io::Scenario> scenario, const std::string& restart, const std::string& backend,
        std::optional<std::string> out, bool overwrite, std::optional<std::int64_t> steps,
        std::optional<std::int64_t> every, std::optional<std::int64_t> checkpoint_every, bool verbose,
        std::vector<std::string> command) {
    select_backend_for(backend);
    RunRequest request;
    request.parsed = std::move(scenario);
    request.restart = restart;
    request.steps = steps;
    request.every = every;
    request.checkpoint_every = checkpoint_every;
    request.write_output = out.has_value();
    if (out) request.out = *out;
    request.overwrite = overwrite;
    request.command = std::move(command);
    request.log = verbose ? stdout : nullptr;
    request.progress_bar = false;
    runner_ = std::make_unique<Runner>(builtin_modules(), std::move(request));
    ++live_runs;
  }
  /// A simulation dropped without close() still records how its run ended (run.json completed).
  ~PyRun() {
    try {
      if (runner_) runner_->close();
    } catch (const std::exception&) {  // a destructor must not throw; the run's files stay as they are
    }
    release();
  }
  PyRun(const PyRun&) = delete;
  PyRun& operator=(const PyRun&) = delete;

  /// Ends the run (run.json completed) and frees its memory; later calls fail.
  void close() {
    if (!runner_) return;
    runner_->close();
    release();
  }

  int step(std::int64_t n) {
    if (n < 0) throw InputError("step(n): n must be >= 0, got " + std::to_string(n));
    Runner& r = runner();
    if (views_out_) exec::synchronize();  // what a consumer wrote into a device view is complete
    views_out_ = false;
    ++version_;
    downloaded_.clear();
    return r.step(n);
  }

  Runner& runner() {
    if (!runner_) throw std::runtime_error("this simulation is closed");
    return *runner_;
  }
  World& world() { return *runner().simulation().world; }
  std::int64_t version() const { return version_; }

  Table& table(const std::string& name) {
    World& w = world();
    if (name == "cells") return w.cells;
    if (name == "elements") return w.elements;
    throw py::key_error("no table '" + name + "' (tables: cells, elements)");
  }

  /// Resolves a column name or a component name (a species) of `table`: (column, component or -1).
  std::pair<ColumnBase*, int> resolve(const std::string& table_name, const std::string& name) {
    Table& t = table(table_name);
    if (ColumnBase* c = t.find(name)) return {c, -1};
    for (const auto& c : t.columns())
      if (const int k = c->component_index(name); k >= 0) return {c.get(), k};
    std::string names;
    for (const auto& c : t.columns()) {
      names += (names.empty() ? "" : ", ") + c->name();
      for (const auto& n : c->component_names()) names += ", " + n;
    }
    throw py::key_error("table '" + table_name + "' has no column or component '" + name +
                        "' (it has: " + names + ")");
  }

  /// (name, dtype, components, component names) of every column of `table`.
  py::list columns(const std::string& table_name) {
    py::list out;
    for (const auto& c : table(table_name).columns())
      out.append(
          py::make_tuple(c->name(), dtype_of(c->scalar_type()), c->components(), c->component_names()));
    return out;
  }

  std::size_t rows(const std::string& table_name) { return table(table_name).size(); }

  /// Host copy of a column: (rows,) for one component or a named component, (rows, components) otherwise.
  py::array get(const std::string& table_name, const std::string& name) {
    auto [column, component] = resolve(table_name, name);
    const std::size_t n = table(table_name).size();
    download(table_name, *column);
    const std::size_t item = size_of(column->scalar_type()), cap = column->capacity();
    const auto* bytes = static_cast<const char*>(column->host_bytes());
    const int k = column->components();
    if (k == 1 || component >= 0) {
      py::array out(dtype_of(column->scalar_type()), std::vector<py::ssize_t>{static_cast<py::ssize_t>(n)});
      const std::size_t c = component >= 0 ? static_cast<std::size_t>(component) : 0;
      if (n > 0) std::memcpy(out.mutable_data(), bytes + c * cap * item, n * item);
      return out;
    }
    py::array out(dtype_of(column->scalar_type()),
                  std::vector<py::ssize_t>{static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(k)});
    auto* dst = static_cast<char*>(out.mutable_data());
    for (std::size_t i = 0; i < n; ++i)
      for (int c = 0; c < k; ++c) std::memcpy(dst + (i * k + c) * item, bytes + (c * cap + i) * item, item);
    return out;
  }

  /// Writes `values` into a column (or one named component) on the host mirror and the device.
  void set(const std::string& table_name, const std::string& name, const py::array& values) {
    auto [column, component] = resolve(table_name, name);
    if (structural(table_name, column->name()))
      throw InputError("column '" + table_name + "." + column->name() +
                       "' is the engine's structure (cell and element ranges, stable ids) and cannot be set");
    const std::size_t n = table(table_name).size();
    const int k = column->components();
    const bool one = k == 1 || component >= 0;
    std::vector<py::ssize_t> expected = one ? std::vector<py::ssize_t>{static_cast<py::ssize_t>(n)}
                                            : std::vector<py::ssize_t>{static_cast<py::ssize_t>(n), k};
    std::vector<py::ssize_t> got(values.shape(), values.shape() + values.ndim());
    if (got != expected) {
      const auto shape = [](const std::vector<py::ssize_t>& s) {
        std::string out = "(";
        for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
        return out + (s.size() == 1 ? ",)" : ")");
      };
      throw InputError("set_column('" + table_name + "', '" + name + "'): expected an array of shape " +
                       shape(expected) + ", got " + shape(got));
    }
    const ScalarType type = column->scalar_type();
    const char kind = values.dtype().kind();
    const bool target_float = type == ScalarType::f32 || type == ScalarType::f64;
    if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b')
      throw InputError("set_column('" + table_name + "', '" + name + "'): expected numbers, got dtype " +
                       py::str(values.dtype()).cast<std::string>());
    if (!target_float && kind == 'f')
      throw InputError("set_column('" + table_name + "', '" + name + "'): the column holds " + name_of(type) +
                       "; convert floating-point values explicitly (e.g. .astype(int))");
    // cast to the column's type, C order
    py::array cast = py::array::ensure(values.attr("astype")(dtype_of(type)), py::array::c_style);
    if (kind == 'f') {
      py::array_t<double> check = py::array_t<double, py::array::forcecast>::ensure(values);
      const double* v = check.data();
      for (py::ssize_t i = 0; i < check.size(); ++i)
        if (!std::isfinite(v[i]))
          throw InputError("set_column('" + table_name + "', '" + name + "'): value " + std::to_string(i) +
                           " is not finite");
    }
    download(table_name, *column);
    const std::size_t item = size_of(type), cap = column->capacity();
    auto* bytes = static_cast<char*>(column->host_bytes());
    const auto* src = static_cast<const char*>(cast.data());
    if (one) {
      const std::size_t c = component >= 0 ? static_cast<std::size_t>(component) : 0;
      if (n > 0) std::memcpy(bytes + c * cap * item, src, n * item);
    } else {
      for (std::size_t i = 0; i < n; ++i)
        for (int c = 0; c < k; ++c) std::memcpy(bytes + (c * cap + i) * item, src + (i * k + c) * item, item);
    }
    column->upload(n);
    ++version_;
  }

  /// `__cuda_array_interface__` (version 3) of a column or component on the CUDA backend.
  py::dict device_interface(const std::string& table_name, const std::string& name) {
    if (exec::backend() != exec::Backend::cuda)
      throw std::runtime_error("device views need the cuda backend (this simulation runs on '" +
                               std::string(exec::to_string(exec::backend())) + "'); use the host copies");
    auto [column, component] = resolve(table_name, name);
    const std::size_t n = table(table_name).size();
    const std::size_t item = size_of(column->scalar_type()), cap = column->capacity();
    auto* base = static_cast<char*>(column->device_bytes());
    exec::synchronize();  // the state is complete: consumers need not synchronize with our stream
    views_out_ = true;
    py::dict cai;
    cai["version"] = 3;
    cai["typestr"] = dtype_of(column->scalar_type()).attr("str");  // "<f4", ...
    cai["stream"] = py::none();
    if (column->components() == 1 || component >= 0) {
      const std::size_t c = component >= 0 ? static_cast<std::size_t>(component) : 0;
      cai["shape"] = py::make_tuple(n);
      cai["strides"] = py::none();
      cai["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(base + c * cap * item), false);
    } else {
      cai["shape"] = py::make_tuple(n, column->components());
      cai["strides"] = py::make_tuple(item, cap * item);
      cai["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(base), false);
    }
    return cai;
  }

  py::list field_names() {
    py::list out;
    for (const auto& f : world().fields) out.append(f->name());
    return out;
  }

  FieldBase& field(const std::string& name) {
    for (const auto& f : world().fields)
      if (f->name() == name) return *f;
    std::string names;
    for (const auto& f : world().fields) names += (names.empty() ? "" : ", ") + f->name();
    throw py::key_error("no field '" + name + "' (fields: " + (names.empty() ? "none" : names) + ")");
  }

  /// {array name: host copy shaped as the field stores it ((nz, ny, nx) for grids, (vertices,) on meshes)}.
  py::dict field_arrays(const std::string& name) {
    FieldBase& f = field(name);
    f.download();
    py::dict out;
    for (const HostArray& a : f.host_arrays()) {
      std::vector<py::ssize_t> shape(a.dims.begin(), a.dims.end());
      py::array array(dtype_of(a.type), shape);
      if (a.count() > 0) std::memcpy(array.mutable_data(), a.data, a.count() * size_of(a.type));
      out[py::str(a.name)] = array;
    }
    return out;
  }

  void set_field_array(const std::string& name, const std::string& array_name, const py::array& values) {
    FieldBase& f = field(name);
    f.download();
    for (HostArray& a : f.host_arrays()) {
      if (a.name != array_name) continue;
      std::vector<py::ssize_t> shape(a.dims.begin(), a.dims.end());
      std::vector<py::ssize_t> got(values.shape(), values.shape() + values.ndim());
      if (got != shape)
        throw InputError("set_field('" + name + "', '" + array_name +
                         "'): the array's shape differs from the " + "field's (see sim.fields['" + name +
                         "'].shape)");
      const char kind = values.dtype().kind();
      if (kind != 'f' && kind != 'i' && kind != 'u')
        throw InputError("set_field('" + name + "', '" + array_name + "'): expected numbers");
      py::array_t<double, py::array::c_style | py::array::forcecast> v(values);
      for (py::ssize_t i = 0; i < v.size(); ++i)
        if (!std::isfinite(v.data()[i]))
          throw InputError("set_field('" + name + "', '" + array_name + "'): value " + std::to_string(i) +
                           " is not finite");
      py::array cast = py::array::ensure(values.attr("astype")(dtype_of(a.type)), py::array::c_style);
      std::memcpy(a.data, cast.data(), a.count() * size_of(a.type));
      f.upload();
      ++version_;
      return;
    }
    throw py::key_error("field '" + name + "' has no array '" + array_name + "'");
  }

  /// (points (n, 3) float64, triangles (m, 3) int32) of a field on a triangle mesh, or None.
  py::object field_geometry(const std::string& name) {
    std::vector<double> points;
    std::vector<std::int32_t> triangles;
    if (!field(name).surface_geometry(points, triangles)) return py::none();
    py::array_t<double> p({static_cast<py::ssize_t>(points.size() / 3), py::ssize_t{3}});
    std::memcpy(p.mutable_data(), points.data(), points.size() * sizeof(double));
    py::array_t<std::int32_t> t({static_cast<py::ssize_t>(triangles.size() / 3), py::ssize_t{3}});
    std::memcpy(t.mutable_data(), triangles.data(), triangles.size() * sizeof(std::int32_t));
    return py::make_tuple(p, t);
  }

  double field_spacing(const std::string& name) { return field(name).grid_spacing(); }

 private:
  void release() {
    if (runner_) {
      runner_.reset();
      --live_runs;
    }
  }
  /// Device -> host for a column once per state (a step or a write invalidates).
  void download(const std::string& table_name, ColumnBase& column) {
    const std::string key = table_name + "/" + column.name();
    if (views_out_) exec::synchronize();  // a consumer of a device view may have written: never cached
    if (!views_out_ && downloaded_.count(key)) return;
    column.download(table(table_name).size());
    downloaded_.insert(key);
  }

  std::unique_ptr<Runner> runner_;
  std::int64_t version_ = 0;  ///< bumped by every step and write: device views of older versions are stale
  bool views_out_ = false;
  std::set<std::string> downloaded_;
};

}  // namespace

PYBIND11_MODULE(_tissue, m) {
  m.doc() = "tissue's engine (use the `tissue` package, not this module)";

  scenario_error_type() = py::reinterpret_borrow<py::object>(
      py::exception<InputError>(m, "ScenarioError", PyExc_ValueError).ptr());
  static py::exception<NumericalError> numerical_error(m, "NumericalError", PyExc_RuntimeError);
  static py::exception<BackendError> backend_error(m, "BackendError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      raise_scenario_error(e.what());
    } catch (const NumericalError& e) {
      PyErr_SetString(numerical_error.ptr(), e.what());
    } catch (const BackendError& e) {
      PyErr_SetString(backend_error.ptr(), e.what());
    }
  });

  m.attr("version") = version_string();
  m.attr("exit_interrupted_base") = 128;
  m.def("cuda_available", &exec::cuda_available,
        "True when the CUDA backend is compiled in and a GPU is usable");
  m.def(
      "backend", [] { return std::string(exec::to_string(exec::backend())); },
      "The backend kernels use now ('cpu' or 'cuda')");
  m.def(
      "modules", [] { return builtin_modules().describe(); }, "What `tissue modules` prints");

  py::class_<io::Scenario>(m, "_Scenario")
      .def_static("from_file", &io::Scenario::from_file, py::arg("path"))
      .def_static("from_string", &io::Scenario::from_string, py::arg("text"), py::arg("name"))
      .def_static(
          "from_dict",
          [](const py::dict& d, const std::string& name) {
            return io::Scenario::from_string(dict_to_toml(d), name);
          },
          py::arg("d"), py::arg("name"))
      .def_static("dict_to_toml", &dict_to_toml, py::arg("d"))
      .def_property_readonly("path", &io::Scenario::path)
      .def_property_readonly("text", &io::Scenario::text)
      .def(
          "check",
          [](const io::Scenario& scenario, const std::string& backend) {
            // "": the backend of the live simulations, else the CPU (as `tissue check`)
            select_backend_for(backend.empty() && live_runs == 0 ? std::string("cpu") : backend);
            auto sim = builtin_modules().build_simulation(scenario);
            py::dict out;
            out["model"] = sim->model;
            out["description"] = sim->description;
            out["steps"] = sim->steps;
            out["dt"] = sim->dt;
            out["output_every"] = sim->output_every;
            out["systems"] = sim->schedule.system_names();
            out["schedule"] = sim->schedule.describe();
            out["memory_host"] = sim->memory.host;
            out["memory_device"] = sim->memory.device;
            return out;
          },
          py::arg("backend"));

  py::class_<PyRun>(m, "_Run")
      .def(
          py::init<std::optional<io::Scenario>, const std::string&, const std::string&,
                   std::optional<std::string>, bool, std::optional<std::int64_t>, std::optional<std::int64_t>,
                   std::optional<std::int64_t>, bool, std::vector<std::string>>(),
          py::arg("scenario"), py::arg("restart"), py::arg("backend"), py::arg("out"), py::arg("overwrite"),
          py::arg("steps"), py::arg("every"), py::arg("checkpoint_every"), py::arg("verbose"),
          py::arg("command"))
      .def("step", &PyRun::step, py::arg("n"), py::call_guard<py::gil_scoped_release>())
      .def("close", &PyRun::close)
      .def_property_readonly("finished", [](PyRun& r) { return r.runner().finished(); })
      .def_property_readonly("step_index", [](PyRun& r) { return r.world().step; })
      .def_property_readonly("time", [](PyRun& r) { return r.world().time; })
      .def_property_readonly("dt", [](PyRun& r) { return r.runner().simulation().dt; })
      .def_property_readonly("end_step", [](PyRun& r) { return r.runner().end_step(); })
      .def_property_readonly("output_every", [](PyRun& r) { return r.runner().output_every(); })
      .def_property_readonly("model", [](PyRun& r) { return r.runner().simulation().model; })
      .def_property_readonly("version", &PyRun::version)
      .def_property_readonly("output_dir",
                             [](PyRun& r) -> py::object {
                               const auto& d = r.runner().output_dir();
                               return d.empty() ? py::object(py::none()) : py::object(py::str(d.string()));
                             })
      .def_property_readonly("scenario_text",
                             [](PyRun& r) { return r.runner().checkpoint_header().scenario_text; })
      .def("summary",
           [](PyRun& r) {
             auto& sim = r.runner().simulation();
             sim.world->download();
             return sim.summary ? sim.summary(*sim.world) : std::string();
           })
      .def("checkpoint", [](PyRun& r, const std::string& path) { r.runner().write_checkpoint_to(path); })
      .def("rows", &PyRun::rows)
      .def("columns", &PyRun::columns)
      .def("get", &PyRun::get)
      .def("set", &PyRun::set)
      .def("device_interface", &PyRun::device_interface)
      .def("field_names", &PyRun::field_names)
      .def("field_arrays", &PyRun::field_arrays)
      .def("set_field_array", &PyRun::set_field_array)
      .def("field_geometry", &PyRun::field_geometry)
      .def("field_spacing", &PyRun::field_spacing);
}
