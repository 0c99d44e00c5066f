#include "modules/surface_rd/surface_initial_field.hpp"

#include <muParserBase.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "engine/exec/error.hpp"
#include "engine/io/vertex_arrays.hpp"
#include "modules/gene_network/expression_language.hpp"

namespace tissue::surface_rd {

namespace fs = std::filesystem;

namespace {

double fn_sin(double v) {
  return std::sin(v);
}
double fn_cos(double v) {
  return std::cos(v);
}
double fn_tan(double v) {
  return std::tan(v);
}
double fn_asin(double v) {
  return std::asin(v);
}
double fn_acos(double v) {
  return std::acos(v);
}
double fn_atan(double v) {
  return std::atan(v);
}
double fn_atan2(double y, double x) {
  return std::atan2(y, x);
}
double fn_sinh(double v) {
  return std::sinh(v);
}
double fn_cosh(double v) {
  return std::cosh(v);
}
double fn_tanh(double v) {
  return std::tanh(v);
}

/// The vertex variables of an expression.
struct VertexVariables {
  double x = 0, y = 0, z = 0, r = 0, theta = 0, phi = 0;
};

/// Adds to the gene-network language (grn::ExpressionParser) the trigonometric functions, pi and the
/// vertex variables x, y, z, r, theta, phi bound to `v`.
void extend(grn::ExpressionParser& p, VertexVariables& v) {
  p.DefineFun("sin", fn_sin);
  p.DefineFun("cos", fn_cos);
  p.DefineFun("tan", fn_tan);
  p.DefineFun("asin", fn_asin);
  p.DefineFun("acos", fn_acos);
  p.DefineFun("atan", fn_atan);
  p.DefineFun("atan2", fn_atan2);
  p.DefineFun("sinh", fn_sinh);
  p.DefineFun("cosh", fn_cosh);
  p.DefineFun("tanh", fn_tanh);
  p.DefineConst("pi", M_PI);
  p.DefineVar("x", &v.x);
  p.DefineVar("y", &v.y);
  p.DefineVar("z", &v.z);
  p.DefineVar("r", &v.r);
  p.DefineVar("theta", &v.theta);
  p.DefineVar("phi", &v.phi);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// "a, b, c" (at most 12 names).
std::string list(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 12; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 12) out += ", ...";
  return out.empty() ? "none" : out;
}

}  // namespace

std::vector<double> evaluate_vertex_expression(const std::string& expr, const mesh::TriangleMesh& m,
                                               const std::string& where) {
  if (expr.find_first_not_of(" \t\n") == std::string::npos)
    grn::expression_error(where, expr, "empty expression");
  if (const auto at = expr.find('^'); at != std::string::npos)
    grn::expression_error(where, expr,
                          "token \"^\" at column " + std::to_string(at + 1) + ": write powers as pow(x, n)");
  grn::ExpressionParser parser;
  VertexVariables p;
  std::vector<double> values(m.vertex_count());
  try {
    extend(parser, p);
    parser.SetExpr(expr);
    for (std::size_t v = 0; v < m.vertex_count(); ++v) {
      p.x = m.x[v];
      p.y = m.y[v];
      p.z = m.z[v];
      p.r = std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z);
      p.theta = p.r > 0.0 ? std::acos(std::clamp(p.z / p.r, -1.0, 1.0)) : 0.0;
      p.phi = std::atan2(p.y, p.x);
      values[v] = parser.Eval();
      if (v == 0 && parser.GetNumResults() != 1)
        grn::expression_error(where, expr,
                              "one expression per species (a comma outside a function's arguments)");
    }
  } catch (const mu::ParserError& e) {
    const auto pos = static_cast<std::size_t>(std::max(0, e.GetPos()));
    const std::string token = e.GetToken();
    std::string what;
    if (e.GetCode() == mu::ecUNASSIGNABLE_TOKEN) {
      what = "unknown name \"" + token + "\" at column " + std::to_string(pos + 1) +
             " (the variables are x, y, z, r, theta, phi; the constant pi)";
    } else {
      std::string msg = e.GetMsg();
      for (const char* tail : {" at expression position ", " at position "}) {
        const auto at = msg.find(tail);
        if (at != std::string::npos) msg.erase(at);
      }
      what = msg + (token.empty() ? std::string() : " (token \"" + token + "\")") + " at column " +
             std::to_string(pos + 1);
    }
    grn::expression_error(where, expr, what);
  }
  return values;
}

std::vector<std::vector<double>> read_initial_field(const io::ScenarioTable& it, const std::string& type,
                                                    const mesh::TriangleMesh& m,
                                                    const std::vector<std::string>& species,
                                                    const std::string& field,
                                                    const std::string& scenario_path, bool non_negative) {
  const std::size_t n = m.vertex_count();
  std::vector<std::vector<double>> values;
  // where each species' values came from, for messages
  std::vector<std::string> source(species.size());
  std::string key_of_values;  // the key an error in the values points at
  if (type == "expression") {
    for (const auto& s : species) {
      if (!it.has(s)) it.fail("type", "type = \"expression\" needs an expression for species " + s);
      const std::string expr = it.string(s, "");
      values.push_back(evaluate_vertex_expression(
          expr, m, it.where(s) + ": " + (it.path().empty() ? "" : it.path() + ".") + s));
    }
    for (std::size_t s = 0; s < species.size(); ++s) source[s] = "the expression " + species[s];
  } else {
    if (!it.has("file")) it.fail("type", "type = \"file\" needs a file");
    fs::path file = it.string("file", "");
    if (file.empty()) it.fail("file", "must not be empty");
    if (file.is_relative()) file = fs::path(scenario_path).parent_path() / file;
    const std::string ext = lower(file.extension().string());
    const bool h5 = ext == ".h5" || ext == ".hdf5";
    if (ext != ".vtu" && ext != ".vtp" && ext != ".ply" && !h5)
      it.fail("file",
              file.string() + ": unknown format (extension \"" + ext + "\"): .vtu, .vtp, .ply or .h5");
    // array (or dataset) name per species
    const auto arrays_table = it.table("arrays");
    for (const auto& k : arrays_table.keys())
      if (std::find(species.begin(), species.end(), k) == species.end())
        arrays_table.fail(k, "not a species of the model (" + list(species) + ")");
    const bool check_points = it.boolean("check_points", true);
    double diagonal = 0.0;
    if (n > 0) {
      const auto [x0, x1] = std::minmax_element(m.x.begin(), m.x.end());
      const auto [y0, y1] = std::minmax_element(m.y.begin(), m.y.end());
      const auto [z0, z1] = std::minmax_element(m.z.begin(), m.z.end());
      diagonal = std::hypot(*x1 - *x0, *y1 - *y0, *z1 - *z0);
    }
    const double tolerance = it.number("point_tolerance", 1e-5 * diagonal, io::Range::non_negative());
    std::vector<double> points;
    std::size_t count = 0;
    std::vector<std::string> names;
    try {
      if (h5) {
        for (const auto& s : species) {
          std::string name = arrays_table.string(s, "");
          if (name.empty())
            name = io::hdf5_has_dataset(file, "/fields/" + field + "/" + s) ? "/fields/" + field + "/" + s
                                                                            : "/" + s;
          if (!io::hdf5_has_dataset(file, name))
            it.fail(arrays_table.has(s) ? "arrays" : "file",
                    file.string() + ": no dataset \"" + name + "\" for species " + s +
                        (arrays_table.has(s) ? "" : " (name it in initial.arrays)"));
          std::vector<std::size_t> dims;
          values.push_back(io::read_hdf5_dataset(file, name, dims));
          if (values.back().size() != n)
            it.fail("file", file.string() + ": dataset \"" + name + "\" has " +
                                std::to_string(values.back().size()) + " values, the mesh has " +
                                std::to_string(n) + " vertices (an array of another mesh?)");
          names.push_back(name);
        }
        for (const char* p : {"mesh/points", ""}) {
          const std::string name = *p ? "/fields/" + field + "/" + p : "/points";
          if (io::hdf5_has_dataset(file, name)) {
            std::vector<std::size_t> dims;
            points = io::read_hdf5_dataset(file, name, dims);
            if (points.size() != 3 * n)
              it.fail("file", file.string() + ": dataset \"" + name + "\" has " +
                                  std::to_string(points.size() / 3) + " points, the mesh has " +
                                  std::to_string(n) + " vertices (a field of another mesh?)");
            break;
          }
        }
        count = n;
      } else {
        io::VertexArrays a = ext == ".ply" ? io::read_ply_vertices(file) : io::read_vtu_point_data(file);
        count = a.vertices;
        if (count != n)
          it.fail("file", file.string() + ": " + std::to_string(count) + " vertices, the mesh has " +
                              std::to_string(n) + " (a field of another mesh?)");
        std::vector<std::string> have;
        for (const auto& [k, v] : a.arrays) have.push_back(k);
        for (const auto& s : species) {
          const std::string name = arrays_table.string(s, s);
          const auto found = a.arrays.find(name);
          if (found == a.arrays.end())
            it.fail(arrays_table.has(s) ? "arrays" : "file",
                    file.string() + ": no scalar " + (ext == ".ply" ? "vertex property" : "point array") +
                        " \"" + name + "\" for species " + s + " (the file has: " + list(have) + ")");
          values.push_back(found->second);
          names.push_back(name);
        }
        points = std::move(a.points);
      }
    } catch (const InputError& e) {
      const std::string what = e.what();
      // errors of the key already carry the scenario position; the readers' do not
      if (what.find(file.string()) == 0) it.fail("file", what);
      throw;
    }
    if (check_points && !points.empty())
      for (std::size_t v = 0; v < n; ++v) {
        const double d =
            std::hypot(points[3 * v] - m.x[v], points[3 * v + 1] - m.y[v], points[3 * v + 2] - m.z[v]);
        if (!(d <= tolerance)) {
          std::ostringstream msg;
          msg << file.string() << ": vertex " << v << " lies at (" << points[3 * v] << ", "
              << points[3 * v + 1] << ", " << points[3 * v + 2] << "), the mesh's at (" << m.x[v] << ", "
              << m.y[v] << ", " << m.z[v] << "): " << d << " apart, more than "
              << (it.path().empty() ? "" : it.path() + ".") << "point_tolerance = " << tolerance
              << " (another mesh or vertex order?)";
          it.fail("file", msg.str());
        }
      }
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    it.record_input_file(fs::absolute(file).lexically_normal(), bytes);
    for (std::size_t s = 0; s < species.size(); ++s)
      source[s] = file.string() + ": " + (h5 ? "dataset \"" : "array \"") + names[s] + "\"";
  }
  for (std::size_t s = 0; s < species.size(); ++s)
    for (std::size_t v = 0; v < n; ++v) {
      const double x = values[s][v];
      if (!std::isfinite(x) || (non_negative && x < 0.0)) {
        std::ostringstream msg;
        msg << source[s] << " (species " << species[s] << "): vertex " << v << " has the value ";
        if (std::isnan(x))
          msg << "NaN, not finite";
        else if (std::isinf(x))
          msg << (x > 0 ? "inf" : "-inf") << ", not finite";
        else
          msg << x << "; the model's densities must be >= 0";
        it.fail(type == "expression" ? species[s] : "file", msg.str());
      }
    }
  return values;
}

}  // namespace tissue::surface_rd
