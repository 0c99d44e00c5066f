// The run directory's ParaView state (view.pvsm): well-formed XML, deterministic, naming the series relative
// to the directory, and showing each series as its SeriesView says. (That ParaView 5.11 loads it and shows
// the right data is checked by tests/scenarios/paraview_state_test.py, where ParaView is installed.)
#include <unistd.h>
#include <catch2/catch.hpp>

#include <array>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "engine/io/paraview_state.hpp"
#include "engine/io/vtk.hpp"

using namespace tissue;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("tissue_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

/// Empty if `xml` is well-formed as far as a state file needs: one prolog, comments closed, every element
/// closed in order, one root, attribute values quoted, no '<' or unescaped '&' in text or values; else what
/// is wrong.
std::string xml_problem(const std::string& xml) {
  std::vector<std::string> open;
  int roots = 0;
  std::size_t i = 0;
  const auto bad_text = [](const std::string& t) {
    const std::regex entity(R"(&(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)");
    return std::regex_replace(t, entity, "").find('&') != std::string::npos;
  };
  while (i < xml.size()) {
    const std::size_t lt = xml.find('<', i);
    const std::string text = xml.substr(i, lt == std::string::npos ? std::string::npos : lt - i);
    if (bad_text(text) || text.find('>') != std::string::npos) return "bad text: " + text;
    if (open.empty() && text.find_first_not_of(" \n") != std::string::npos) return "text outside the root";
    if (lt == std::string::npos) break;
    if (xml.compare(lt, 4, "<!--") == 0) {
      const std::size_t end = xml.find("-->", lt + 4);
      if (end == std::string::npos) return "unclosed comment";
      if (xml.substr(lt + 4, end - lt - 4).find("--") != std::string::npos) return "'--' in a comment";
      i = end + 3;
      continue;
    }
    const std::size_t gt = xml.find('>', lt);
    if (gt == std::string::npos) return "unclosed tag";
    const std::string tag = xml.substr(lt + 1, gt - lt - 1);
    i = gt + 1;
    if (tag.front() == '?') {
      if (lt != 0 || tag.back() != '?') return "misplaced prolog";
      continue;
    }
    if (tag.find('<') != std::string::npos) return "'<' in a tag: " + tag;
    if (tag.front() == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return "mismatched </" + tag.substr(1) + ">";
      open.pop_back();
      continue;
    }
    static const std::regex element(R"re(([A-Za-z_][\w.-]*)(\s+[A-Za-z_][\w.-]*="[^"]*")*\s*(/?))re");
    std::smatch m;
    if (!std::regex_match(tag, m, element)) return "malformed tag <" + tag + ">";
    if (bad_text(tag)) return "unescaped '&' in <" + tag + ">";
    if (open.empty()) ++roots;
    if (m[3].length() == 0) open.push_back(m[1]);
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  return roots == 1 ? "" : "not one root element";
}

/// The values of every `<Property name="NAME" ...>`'s elements, in order, one string per property.
std::vector<std::string> property_values(const std::string& xml, const std::string& name) {
  std::vector<std::string> out;
  const std::string head = "<Property name=\"" + name + "\"";
  for (std::size_t at = xml.find(head); at != std::string::npos; at = xml.find(head, at + 1)) {
    const std::size_t end = xml.find("</Property>", at);
    const std::string body = xml.substr(at, end - at);
    static const std::regex value(R"re(<(?:Element index="[0-9]+" value|Proxy value)="([^"]*)")re");
    std::string joined;
    for (std::sregex_iterator it(body.begin(), body.end(), value), last; it != last; ++it)
      joined += (joined.empty() ? "" : " ") + (*it)[1].str();
    out.push_back(joined);
  }
  return out;
}

/// A run directory's series as the writers leave them: elements and cells (point clouds, the cells hidden),
/// a 3D grid field, a surface, a series without snapshots and one of an unknown file type.
struct Series {
  io::PvdSeries elements, cells, field, surface, empty, other;
  explicit Series(const fs::path& dir)
      : elements(dir / "elements.pvd"),
        cells(dir / "cells.pvd"),
        field(dir / "rd.pvd"),
        surface(dir / "surface.pvd"),
        empty(dir / "graph.pvd"),
        other(dir / "mesh.pvd") {
    elements.add(0.0, "elements_000000000.vtu");
    elements.add(0.5, "elements_000000050.vtu");
    elements.set_view(io::SeriesView::points("cell_type", {0, 2}, 0.085, {0, 6, 0, 6, 0, 1}));
    cells.add(0.0, "cells_000000000.vtu");
    auto hidden = io::SeriesView::points("cell_type", {0, 3}, 0.3, {0, 6, 0, 6, 0, 1});
    hidden.visible = false;
    cells.set_view(hidden);
    field.add(0.0, "rd_000000000.vti");
    field.set_view(io::SeriesView::grid(16, "tgfb", {0.25, 0.25}, {0, 12, 0, 12, 0, 7.5}));
    surface.add(0.0, "surface_000000000.vtu");
    surface.set_view(io::SeriesView::surface("a & b", {-1, 1}, {-2, 2, -2, 2, -2, 2}));
    other.add(0.0, "mesh_000000000.obj");
  }
  std::vector<io::PvdSeries*> all() { return {&elements, &cells, &field, &surface, &empty, &other}; }
};

}  // namespace

TEST_CASE("view.pvsm is well-formed XML naming the series relative to the run directory", "[io][paraview]") {
  const fs::path dir = temp_dir("pvsm");
  Series s(dir);
  io::write_paraview_state(dir, s.all());
  const std::string xml = slurp(dir / "view.pvsm");
  INFO(xml);
  CHECK(xml_problem(xml).empty());
  for (const char* broken :
       {"<a><b></a>", "<a x=1/>", "<a/><b/>", "<a>&</a>", "<a><!-- x -- y --></a>", "<a>"})
    CHECK_FALSE(xml_problem(broken).empty());  // the checker itself
  CHECK(xml.rfind("<?xml version=\"1.0\"?>\n", 0) == 0);
  CHECK(xml.find("<ServerManagerState version=\"5.11.0\">") != std::string::npos);
  // relative names of the series with snapshots and a representation ParaView has; no path of this machine
  CHECK(property_values(xml, "FileName") ==
        std::vector<std::string>{"elements.pvd", "cells.pvd", "rd.pvd", "surface.pvd"});
  CHECK(xml.find(dir.string()) == std::string::npos);
  CHECK(xml.find("=\"/") == std::string::npos);
  // each as its view says: spheres of the radius, hidden cells, the field sliced under the tissue
  CHECK(property_values(xml, "Representation") ==
        std::vector<std::string>{"Point Gaussian", "Point Gaussian", "Slice", "Surface"});
  CHECK(property_values(xml, "GaussianRadius") == std::vector<std::string>{"0.085", "0.3"});
  CHECK(property_values(xml, "Visibility") == std::vector<std::string>{"1", "0", "1", "1"});
  CHECK(property_values(xml, "Slice") == std::vector<std::string>{"0"});
  CHECK(property_values(xml, "ColorArrayName") ==
        std::vector<std::string>{"0 cell_type", "0 cell_type", "0 tgfb", "0 a &amp; b"});
  // one colour map per array, over the union of its series' ranges; a one-value range widened to [0, v]
  CHECK(xml.find("<Item id=\"5000\" name=\"cell_type.PVLookupTable\"/>") != std::string::npos);
  const auto points = property_values(xml, "RGBPoints");
  REQUIRE(points.size() == 3);
  CHECK(points[0].rfind("0 ", 0) == 0);
  CHECK(points[0].find(" 1.5 ") != std::string::npos);
  CHECK(points[0].find(" 3 ") != std::string::npos);
  CHECK(points[1].rfind("0 ", 0) == 0);
  CHECK(points[1].find(" 0.25 ") != std::string::npos);
  // the camera looks down -z at the centre of the visible series' bounds (x, y in [-2, 12], z in [-2, 7.5])
  CHECK(property_values(xml, "CameraFocalPoint") == std::vector<std::string>{"5 5 2.75"});
  CHECK(property_values(xml, "CameraViewUp") == std::vector<std::string>{"0 1 0"});
  CHECK(property_values(xml, "TimeSources") == std::vector<std::string>{"100 110 120 130"});
  // the sources keep the series' names in the pipeline browser
  CHECK(xml.find("<Item id=\"100\" name=\"elements\"/>") != std::string::npos);
}

TEST_CASE("view.pvsm is deterministic: the same series in another directory give the same bytes",
          "[io][paraview]") {
  const fs::path a = temp_dir("pvsm_a"), b = temp_dir("pvsm_b") / "moved" / "run";
  fs::create_directories(b);
  Series sa(a), sb(b);
  io::write_paraview_state(a, sa.all());
  io::write_paraview_state(b, sb.all());
  CHECK(slurp(a / "view.pvsm") == slurp(b / "view.pvsm"));
  io::write_paraview_state(a, sa.all());  // rewritten: the same again, and no temporary left
  CHECK(slurp(a / "view.pvsm") == slurp(b / "view.pvsm"));
  for (const auto& entry : fs::directory_iterator(a))
    CHECK(entry.path().filename().string().find(".tmp-") == std::string::npos);
  // a relative directory names the series the same way
  const fs::path cwd = fs::current_path();
  fs::current_path(a.parent_path());
  const std::string relative = io::paraview_state_xml(a.filename(), sa.all());
  fs::current_path(cwd);
  CHECK(relative == slurp(a / "view.pvsm"));
}

TEST_CASE("a 3D grid alone is sliced at its middle layer, and no series gives a state without sources",
          "[io][paraview]") {
  const fs::path dir = temp_dir("pvsm_grid");
  io::PvdSeries field(dir / "rd.pvd");
  field.add(0.0, "rd_000000000.vti");
  field.set_view(io::SeriesView::grid(128, "a", {0.5, 1.0}, {0, 1, 0, 1, 0, 1}));
  const std::string xml = io::paraview_state_xml(dir, {&field});
  CHECK(xml_problem(xml).empty());
  CHECK(property_values(xml, "Slice") == std::vector<std::string>{"64"});
  CHECK(property_values(xml, "CameraFocalPoint") == std::vector<std::string>{"0.5 0.5 0.5"});

  const std::string none = io::paraview_state_xml(dir, {});
  CHECK(xml_problem(none).empty());
  CHECK(none.find("PVDReader") == std::string::npos);
  CHECK(none.find("CameraPosition") == std::string::npos);
}

TEST_CASE("the view helpers: bounds and ranges skip non-finite values", "[io][paraview]") {
  const std::vector<float> xyz{1, 2, 3, -1, 5, std::numeric_limits<float>::quiet_NaN(), 0, 0, 9};
  CHECK(io::point_bounds(xyz) == std::array<double, 6>{-1, 1, 0, 5, 3, 9});
  CHECK(io::point_bounds(std::vector<double>{}) == std::array<double, 6>{1, -1, 1, -1, 1, -1});
  const double v[] = {2.0, std::numeric_limits<double>::infinity(), -3.0};
  CHECK(io::value_range(v, 3) == std::array<double, 2>{-3.0, 2.0});
  CHECK(io::value_range(v, 0) == std::array<double, 2>{0.0, 1.0});
}
