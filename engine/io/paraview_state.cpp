#include "engine/io/paraview_state.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <utility>

#include "engine/io/atomic_file.hpp"
#include "engine/io/vtk.hpp"

namespace fs = std::filesystem;

namespace tissue::io {

SeriesView SeriesView::points(std::string color_by, std::array<double, 2> range, double radius,
                              std::array<double, 6> bounds) {
  SeriesView v;
  v.shape = Shape::points;
  v.color_by = std::move(color_by);
  v.color_range = range;
  v.point_radius = radius;
  v.bounds = bounds;
  return v;
}

SeriesView SeriesView::surface(std::string color_by, std::array<double, 2> range,
                               std::array<double, 6> bounds) {
  SeriesView v;
  v.shape = Shape::surface;
  v.color_by = std::move(color_by);
  v.color_range = range;
  v.bounds = bounds;
  return v;
}

SeriesView SeriesView::grid(int layers, std::string color_by, std::array<double, 2> range,
                            std::array<double, 6> bounds) {
  SeriesView v;
  v.shape = layers > 1 ? Shape::grid_3d : Shape::grid_2d;
  v.layers = layers;
  v.color_by = std::move(color_by);
  v.color_range = range;
  v.bounds = bounds;
  return v;
}

namespace {

/// A number as ParaView's own states write it, to 6 significant digits (stable against rounding noise in
/// the last bits of the data it comes from).
std::string num(double v) {
  if (!std::isfinite(v) || v == 0.0) return "0";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

/// Builds the XML of ServerManagerState proxies: <Proxy> elements with <Property> children.
class StateXml {
 public:
  void begin_proxy(const char* group, const char* type, int id, int servers) {
    id_ = id;
    out_ << "    <Proxy group=\"" << group << "\" type=\"" << type << "\" id=\"" << id << "\" servers=\""
         << servers << "\">\n";
  }
  void end_proxy() { out_ << "    </Proxy>\n"; }
  /// A property of values (numbers or text, written as given).
  void values(const char* name, const std::vector<std::string>& values) {
    head(name, values.size());
    for (std::size_t i = 0; i < values.size(); ++i)
      out_ << "        <Element index=\"" << i << "\" value=\"" << xml_escape(values[i]) << "\"/>\n";
    out_ << "      </Property>\n";
  }
  void value(const char* name, const std::string& v) { values(name, {v}); }
  void value(const char* name, double v) { values(name, {num(v)}); }
  /// A property of proxies (`port` >= 0: an input connection to that output port).
  void proxies(const char* name, const std::vector<int>& ids, int port = -1) {
    head(name, ids.size());
    for (const int id : ids) {
      out_ << "        <Proxy value=\"" << id << "\"";
      if (port >= 0) out_ << " output_port=\"" << port << "\"";
      out_ << "/>\n";
    }
    out_ << "      </Property>\n";
  }
  void raw(const std::string& text) { out_ << text; }
  std::string str() const { return out_.str(); }

 private:
  void head(const char* name, std::size_t n) {
    out_ << "      <Property name=\"" << name << "\" id=\"" << id_ << "." << name
         << "\" number_of_elements=\"" << n << "\">\n";
  }
  std::ostringstream out_;
  int id_ = 0;
};

/// One series as the state shows it.
struct Shown {
  std::string file;  ///< the .pvd, relative to the run directory
  std::string name;  ///< its stem, the reader's name in the pipeline browser
  const char* representation_type = nullptr;
  SeriesView view;
  int reader = 0, representation = 0;
};

/// The representation proxy ParaView 5.11 makes for a PVD reader of snapshots of `extension`; null for
/// another type.
const char* representation_type(const std::string& extension) {
  if (extension == ".vtu") return "UnstructuredGridRepresentation";
  if (extension == ".vti") return "UniformGridRepresentation";
  if (extension == ".vts") return "StructuredGridRepresentation";
  if (extension == ".vtp") return "GeometryRepresentation";
  return nullptr;
}

/// One colour map (shared by the series coloured by the same array, as ParaView shares them by name).
struct ColorMap {
  std::array<double, 2> range{0.0, 0.0};
  bool set = false;
  int lut = 0, opacity = 0;
};

// ParaView's default map "Cool to Warm" (Moreland's diverging map): RGB at the low, middle and high end.
constexpr double kCoolToWarm[3][3] = {
    {0.231373, 0.298039, 0.752941}, {0.865003, 0.865003, 0.865003}, {0.705882, 0.0156863, 0.14902}};

// Proxy ids: fixed, so that identical runs give identical files (ParaView maps them to its own on loading).
constexpr int kView = 1, kTimeKeeper = 2, kScene = 3, kLayout = 4;
constexpr int kFirstSeriesId = 100, kIdsPerSeries = 10, kFirstColorMapId = 5000;
constexpr double kHalfViewAngle = 0.2617993877991494;  // 15 degrees: half of ParaView's 30 degree view angle

}  // namespace

std::string paraview_state_xml(const fs::path& dir, const std::vector<PvdSeries*>& series) {
  const fs::path base = fs::absolute(dir).lexically_normal();
  std::vector<Shown> shown;
  for (const PvdSeries* s : series) {
    if (s == nullptr || s->entries().empty()) continue;
    const char* type = representation_type(fs::path(s->entries().front().second).extension().string());
    if (type == nullptr) continue;
    Shown item;
    item.file = fs::absolute(s->path()).lexically_normal().lexically_relative(base).generic_string();
    if (item.file.empty()) item.file = s->path().filename().string();
    item.name = s->path().stem().string();
    item.representation_type = type;
    item.view = s->view();
    item.reader = kFirstSeriesId + kIdsPerSeries * static_cast<int>(shown.size());
    item.representation = item.reader + 1;
    shown.push_back(std::move(item));
  }

  bool tissue_shown = false;  // a visible point cloud: a 3D grid is sliced at its bottom layer, under it
  for (const Shown& s : shown)
    if (s.view.visible && s.view.shape == SeriesView::Shape::points) tissue_shown = true;

  // colour maps by array name, their ranges the union of their series'
  std::map<std::string, ColorMap> maps;
  std::vector<std::string> map_order;  // first use, for the ids and the legends' order
  for (const Shown& s : shown) {
    if (s.view.color_by.empty()) continue;
    auto [it, added] = maps.try_emplace(s.view.color_by);
    ColorMap& m = it->second;
    if (added) {
      m.lut = kFirstColorMapId + 10 * static_cast<int>(map_order.size());
      m.opacity = m.lut + 1;
      map_order.push_back(s.view.color_by);
    }
    const auto r = s.view.color_range;
    if (!m.set) {
      m.range = r;
      m.set = true;
    } else {
      m.range = {std::min(m.range[0], r[0]), std::max(m.range[1], r[1])};
    }
  }
  for (auto& [name, m] : maps)  // one value v: [0, v] (or [v, 0]), and [0, 1] for v = 0
    if (!(m.range[1] > m.range[0]))
      m.range = m.range[0] == 0.0
                    ? std::array<double, 2>{0.0, 1.0}
                    : std::array<double, 2>{std::min(0.0, m.range[0]), std::max(0.0, m.range[0])};

  StateXml x;
  x.raw(
      "<?xml version=\"1.0\"?>\n"
      "<!-- tissue: ParaView (5.11 or later) state of this run directory's series. File names are relative\n"
      "     to this directory: load the state with this directory as the working directory, or choose\n"
      "     \"Search files under specified directory\" (this directory) in ParaView's Load State dialog, or "
      "in\n"
      "     pvpython call LoadState(\"view.pvsm\", data_directory=\"RUN_DIR\"); see docs/runs.md. -->\n"
      "<ParaView>\n  <ServerManagerState version=\"5.11.0\">\n");

  // readers and their representations
  for (const Shown& s : shown) {
    x.begin_proxy("sources", "PVDReader", s.reader, 1);
    x.value("FileName", s.file);
    x.end_proxy();

    const SeriesView& v = s.view;
    x.begin_proxy("representations", s.representation_type, s.representation, 21);
    x.proxies("Input", {s.reader}, 0);
    const char* representation = "Surface";
    if (v.shape == SeriesView::Shape::points) representation = "Point Gaussian";
    if (v.shape == SeriesView::Shape::grid_3d) representation = "Slice";
    x.value("Representation", representation);
    x.value("Visibility", v.visible ? "1" : "0");
    if (v.shape == SeriesView::Shape::points && v.point_radius > 0.0)
      x.value("GaussianRadius", v.point_radius);
    if (v.shape == SeriesView::Shape::grid_3d)
      x.value("Slice", std::to_string(tissue_shown ? 0 : std::max(0, v.layers / 2)));
    if (!v.color_by.empty()) {
      const ColorMap& m = maps.at(v.color_by);
      // (input index, port, connection, field association 0 = point data, array name)
      x.values("ColorArrayName", {"", "", "", "0", v.color_by});
      x.proxies("LookupTable", {m.lut});
      x.proxies("ScalarOpacityFunction", {m.opacity});
    }
    x.end_proxy();
  }

  // colour maps: Cool to Warm over the initial range, growing as time steps are visited
  for (const std::string& name : map_order) {
    const ColorMap& m = maps.at(name);
    const double lo = m.range[0], hi = m.range[1], mid = 0.5 * (lo + hi);
    x.begin_proxy("piecewise_functions", "PiecewiseFunction", m.opacity, 21);
    x.values("Points", {num(lo), "0", "0.5", "0", num(hi), "1", "0.5", "0"});
    x.end_proxy();
    x.begin_proxy("lookup_tables", "PVLookupTable", m.lut, 21);
    const double at[3] = {lo, mid, hi};
    std::vector<std::string> rgb;
    for (int k = 0; k < 3; ++k) {
      rgb.push_back(num(at[k]));
      for (int c = 0; c < 3; ++c) rgb.push_back(num(kCoolToWarm[k][c]));
    }
    x.values("RGBPoints", rgb);
    x.value("ColorSpace", "3");  // diverging
    x.value("ScalarRangeInitialized", "1");
    x.value("AutomaticRescaleRangeMode", "1");  // grow and update every time step
    x.proxies("ScalarOpacityFunction", {m.opacity});
    x.end_proxy();
  }

  // the view: every representation, the camera fitted to the visible series' bounds, looking down -z
  std::array<double, 6> box{1, -1, 1, -1, 1, -1};
  for (const Shown& s : shown) {
    const auto& b = s.view.bounds;
    if (!s.view.visible || b[0] > b[1] || b[2] > b[3] || b[4] > b[5]) continue;
    for (int k = 0; k < 3; ++k) {
      const bool first = box[2 * k] > box[2 * k + 1];
      box[2 * k] = first ? b[2 * k] : std::min(box[2 * k], b[2 * k]);
      box[2 * k + 1] = first ? b[2 * k + 1] : std::max(box[2 * k + 1], b[2 * k + 1]);
    }
  }
  x.begin_proxy("views", "RenderView", kView, 21);
  std::vector<int> representations;
  for (const Shown& s : shown) representations.push_back(s.representation);
  x.proxies("Representations", representations);
  if (box[0] <= box[1]) {
    // as vtkRenderer::ResetCamera: the bounding sphere fills the 30 degree view angle
    const double c[3] = {0.5 * (box[0] + box[1]), 0.5 * (box[2] + box[3]), 0.5 * (box[4] + box[5])};
    double radius =
        0.5 * std::sqrt((box[1] - box[0]) * (box[1] - box[0]) + (box[3] - box[2]) * (box[3] - box[2]) +
                        (box[5] - box[4]) * (box[5] - box[4]));
    if (!(radius > 0.0)) radius = 0.5;
    const double distance = radius / std::sin(kHalfViewAngle);
    x.values("CameraPosition", {num(c[0]), num(c[1]), num(c[2] + distance)});
    x.values("CameraFocalPoint", {num(c[0]), num(c[1]), num(c[2])});
    x.values("CameraViewUp", {"0", "1", "0"});
    x.value("CameraParallelScale", radius);
    x.values("CenterOfRotation", {num(c[0]), num(c[1]), num(c[2])});
  }
  x.end_proxy();

  // time: the readers' snapshots drive the time keeper; the animation snaps to them
  std::vector<int> readers;
  for (const Shown& s : shown) readers.push_back(s.reader);
  x.begin_proxy("misc", "TimeKeeper", kTimeKeeper, 16);
  x.proxies("TimeSources", readers);
  x.proxies("Views", {kView});
  x.end_proxy();
  x.begin_proxy("animation", "AnimationScene", kScene, 16);
  x.proxies("TimeKeeper", {kTimeKeeper});
  x.proxies("ViewModules", {kView});
  x.value("PlayMode", "2");  // snap to time steps
  x.end_proxy();
  x.begin_proxy("misc", "ViewLayout", kLayout, 20);
  x.raw("      <Layout number_of_elements=\"1\">\n        <Item direction=\"0\" fraction=\"0.5\" view=\"" +
        std::to_string(kView) + "\"/>\n      </Layout>\n");
  x.end_proxy();

  // registration names (the pipeline browser's, and ParaView's per-array colour map names)
  const auto collection = [&x](const char* name, const std::vector<std::pair<int, std::string>>& items) {
    if (items.empty()) return;
    x.raw(std::string("    <ProxyCollection name=\"") + name + "\">\n");
    for (const auto& [id, item] : items)
      x.raw("      <Item id=\"" + std::to_string(id) + "\" name=\"" + xml_escape(item) + "\"/>\n");
    x.raw("    </ProxyCollection>\n");
  };
  std::vector<std::pair<int, std::string>> sources, reps, luts, opacities;
  for (const Shown& s : shown) {
    sources.emplace_back(s.reader, s.name);
    reps.emplace_back(s.representation, s.name + "Representation");
  }
  for (const std::string& name : map_order) {
    luts.emplace_back(maps.at(name).lut, name + ".PVLookupTable");
    opacities.emplace_back(maps.at(name).opacity, name + ".PiecewiseFunction");
  }
  collection("animation", {{kScene, "AnimationScene1"}});
  collection("layouts", {{kLayout, "Layout #1"}});
  collection("lookup_tables", luts);
  collection("piecewise_functions", opacities);
  collection("representations", reps);
  collection("sources", sources);
  collection("timekeeper", {{kTimeKeeper, "TimeKeeper1"}});
  collection("views", {{kView, "RenderView1"}});
  x.raw("  </ServerManagerState>\n</ParaView>\n");
  return x.str();
}

void write_paraview_state(const fs::path& dir, const std::vector<PvdSeries*>& series) {
  write_file_atomic(dir / kParaviewStateFileName, paraview_state_xml(dir, series));
}

}  // namespace tissue::io
