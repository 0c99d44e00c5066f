#include "engine/io/tissue_output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "engine/exec/host_for.hpp"
#include "engine/io/atomic_file.hpp"

namespace tissue::io {

TissueWriter::TissueWriter(std::filesystem::path dir, bool elements, bool cells, OutputPiece piece)
    : dir_(std::move(dir)),
      elements_(elements),
      cells_(cells),
      piece_(piece),
      element_series_(dir_ / "elements.pvd"),
      cell_series_(dir_ / "cells.pvd") {}

namespace {

using Kind = TissueOutput::Kind;

/// Per-point arrays of each of `n` points' owning cell (owner(i) = dense cell index): the stable id, then the
/// per-cell outputs the modules declared (components interleaved per point).
template <class Owner>
std::vector<VtkArray> owner_arrays(World& w, std::size_t n, const Owner& owner_of) {
  std::vector<VtkArray> arrays{VtkArray::generated<std::int64_t>(
      "cell_id", n, 1, [&](std::size_t i) { return w.cell_id.host(owner_of(i)); })};
  // by kind (states, then per-component columns such as species, then whole columns such as sampled
  // fields, then integer columns such as the cell type), and in declaration order within a kind
  for (const Kind kind : {Kind::flag, Kind::cell_components, Kind::cell_column, Kind::cell_int_column})
    for (const auto& out : w.outputs()) {
      if (out.kind != kind) continue;
      if (kind == Kind::flag) {
        arrays.push_back(VtkArray::generated<std::uint8_t>(out.name, n, 1, [&](std::size_t i) {
          return static_cast<std::uint8_t>((w.flags.host(owner_of(i)) & out.bit) ? 1 : 0);
        }));
      } else if (kind == Kind::cell_int_column) {
        auto& column = w.cells.column<std::int32_t>(out.column);
        arrays.push_back(VtkArray::generated<std::int32_t>(
            out.name, n, 1, [&](std::size_t i) { return column.host(owner_of(i)); }));
      } else if (kind == Kind::cell_components) {
        auto& column = w.cells.column<float>(out.column);
        const auto& names = column.component_names();
        for (int s = 0; s < column.components(); ++s)
          arrays.push_back(VtkArray::generated<float>(
              s < static_cast<int>(names.size()) ? names[static_cast<std::size_t>(s)]
                                                 : out.column + "_" + std::to_string(s),
              n, 1, [&](std::size_t i) { return column.host(owner_of(i), s); }));
      } else {
        auto& column = w.cells.column<float>(out.column);
        const auto nc = static_cast<std::size_t>(column.components());
        arrays.push_back(VtkArray::generated<float>(
            out.name, n * nc, static_cast<int>(nc),
            [&](std::size_t i) { return column.host(owner_of(i / nc), static_cast<int>(i % nc)); }));
      }
    }
  return arrays;
}

/// The point array that colours the tissue: the first integer cell column (the cell type), else the first
/// state flag, else the first per-cell component (a species), else the cell id.
std::string color_array(World& w) {
  for (const Kind kind : {Kind::cell_int_column, Kind::flag})
    for (const auto& out : w.outputs())
      if (out.kind == kind) return out.name;
  for (const auto& out : w.outputs())
    if (out.kind == Kind::cell_components) {  // named as owner_arrays() names its first component
      const auto& names = w.cells.column<float>(out.column).component_names();
      return names.empty() ? out.column + "_0" : names.front();
    }
  return "cell_id";
}

/// The initial colour range of a one-component array: [0, 1] for a flag (UInt8), else its values' range (an
/// integer array at least one wide).
std::array<double, 2> color_range(const std::vector<VtkArray>& arrays, const std::string& name) {
  for (const auto& a : arrays) {
    if (a.name != name || a.components != 1) continue;
    const std::size_t n = a.bytes.size();
    std::array<double, 2> r{0.0, 1.0};
    if (a.type == "UInt8") return r;
    if (a.type == "Int32") r = value_range(reinterpret_cast<const std::int32_t*>(a.bytes.data()), n / 4);
    if (a.type == "Int64") r = value_range(reinterpret_cast<const std::int64_t*>(a.bytes.data()), n / 8);
    if (a.type == "Float32") r = value_range(reinterpret_cast<const float*>(a.bytes.data()), n / 4);
    if (a.type == "Float64") r = value_range(reinterpret_cast<const double*>(a.bytes.data()), n / 8);
    if ((a.type == "Int32" || a.type == "Int64") && r[1] < r[0] + 1) r[1] = r[0] + 1;
    return r;
  }
  return {0.0, 1.0};
}

/// Sphere radii that show the tissue [length]: (element, cell). A cell of n elements whose mean squared
/// distance from their centroid is <r^2> is taken as a ball of radius R = sqrt(5/3 <r^2>) (a uniform ball);
/// each element fills 1/n of it, a ball of diameter R (4 pi / 3 / n)^(1/3), and the cell centre is drawn as a
/// ball of radius R. Medians over the cells of two or more elements; 0 when there is none.
std::array<double, 2> sphere_radii(World& w) {
  const std::size_t n_cells = w.cells.size(), n_el = w.elements.size();
  std::vector<double> sum(4 * n_cells, 0.0);  // per cell: x, y, z, x^2 + y^2 + z^2
  std::vector<std::size_t> count(n_cells, 0);
  // a cell's elements are its contiguous range (the world between hooks), summed in element order
  exec::host_for(n_cells, [&](std::size_t c) {
    const auto from = static_cast<std::size_t>(w.first.host(c));
    const auto to = std::min(n_el, from + static_cast<std::size_t>(w.count.host(c)));
    for (std::size_t e = from; e < to; ++e) {
      const double x = w.x.host(e), y = w.y.host(e), z = w.z.host(e);
      sum[4 * c] += x;
      sum[4 * c + 1] += y;
      sum[4 * c + 2] += z;
      sum[4 * c + 3] += x * x + y * y + z * z;
    }
    count[c] = to > from ? to - from : 0;
  });
  std::vector<double> element, cell;
  for (std::size_t c = 0; c < n_cells; ++c) {
    if (count[c] < 2) continue;
    const double n = static_cast<double>(count[c]);
    const double mx = sum[4 * c] / n, my = sum[4 * c + 1] / n, mz = sum[4 * c + 2] / n;
    const double r2 = std::max(0.0, sum[4 * c + 3] / n - (mx * mx + my * my + mz * mz));
    const double radius = std::sqrt(5.0 / 3.0 * r2);
    if (!(radius > 0.0) || !std::isfinite(radius)) continue;
    cell.push_back(radius);
    element.push_back(0.5 * radius * std::cbrt(4.0 * M_PI / 3.0 / n));
  }
  const auto median = [](std::vector<double>& v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  return {median(element), median(cell)};
}

}  // namespace

void TissueWriter::write(World& w) {
  w.download();
  char tag[32];
  std::snprintf(tag, sizeof tag, "%09lld", static_cast<long long>(w.step));
  const std::size_t n_cells = w.cells.size();
  const std::size_t n_el = w.elements.size();
  const std::array<double, 2> radii = sphere_radii(w);
  const std::string color = color_array(w);

  if (elements_) {
    std::vector<float> points(3 * n_el);
    exec::host_for(n_el, [&](std::size_t e) {
      points[3 * e] = w.x.host(e);
      points[3 * e + 1] = w.y.host(e);
      points[3 * e + 2] = w.z.host(e);
    });
    auto arrays =
        owner_arrays(w, n_el, [&](std::size_t e) { return static_cast<std::size_t>(w.cell.host(e)); });
    for (const auto& out : w.outputs()) {
      if (out.kind != Kind::element_column) continue;
      auto& column = w.elements.column<std::int32_t>(out.column);
      arrays.push_back(VtkArray::generated<std::int32_t>(out.name, n_el, 1,
                                                         [&](std::size_t e) { return column.host(e); }));
    }
    element_series_.set_view(
        SeriesView::points(color, color_range(arrays, color), radii[0], point_bounds(points)));
    queue("elements", tag, std::move(points), std::move(arrays), element_series_, w.time);
  }
  if (cells_) {
    std::vector<float> points(3 * n_cells);
    std::vector<std::int32_t> count(n_cells);
    exec::host_for(n_cells, [&](std::size_t c) {
      points[3 * c] = w.cx.host(c);
      points[3 * c + 1] = w.cy.host(c);
      points[3 * c + 2] = w.cz.host(c);
      count[c] = w.count.host(c);
    });
    auto arrays = owner_arrays(w, n_cells, [](std::size_t c) { return c; });
    arrays.push_back(VtkArray::of("element_count", count));
    for (const auto& out : w.outputs()) {
      if (out.kind != Kind::element_count) continue;
      auto& column = w.elements.column<std::int32_t>(out.column);
      std::vector<std::int32_t> matching(n_cells, 0);
      exec::host_for(n_cells, [&](std::size_t c) {
        const auto from = static_cast<std::size_t>(w.first.host(c));
        const auto to = std::min(n_el, from + static_cast<std::size_t>(w.count.host(c)));
        for (std::size_t e = from; e < to; ++e) matching[c] += column.host(e) == out.value ? 1 : 0;
      });
      arrays.push_back(VtkArray::of(out.name, matching));
    }
    auto view = SeriesView::points(color, color_range(arrays, color), radii[1], point_bounds(points));
    view.visible = !elements_;  // the elements show the cells already
    cell_series_.set_view(std::move(view));
    queue("cells", tag, std::move(points), std::move(arrays), cell_series_, w.time);
  }
}

void TissueWriter::queue(const std::string& kind, const std::string& tag, std::vector<float> points,
                         std::vector<VtkArray> arrays, PvdSeries& series, double time) {
  const std::string base = kind + "_" + tag;
  const bool pieces = piece_.ranks > 1;
  const std::string index = base + (pieces ? ".pvtu" : ".vtu");
  series.append(time, index);
  // std::function needs a copyable callable: the arrays travel behind a shared pointer
  struct Snapshot {
    std::filesystem::path file, pvtu, series;
    std::vector<std::string> pieces;
    std::vector<float> points;
    std::vector<VtkArray> arrays;
    std::string index_xml;
  };
  auto s = std::make_shared<Snapshot>();
  s->file = dir_ / (pieces ? base + "_" + std::to_string(piece_.rank) + ".vtu" : index);
  if (piece_.rank == 0) {
    s->series = series.path();
    s->index_xml = series.index_xml();
    if (pieces) {
      s->pvtu = dir_ / index;
      for (int r = 0; r < piece_.ranks; ++r) s->pieces.push_back(base + "_" + std::to_string(r) + ".vtu");
    }
  }
  s->points = std::move(points);
  s->arrays = std::move(arrays);
  background_.submit([s] {
    write_vtu_points(s->file, s->points, s->arrays);
    if (!s->pvtu.empty()) write_pvtu_points(s->pvtu, s->arrays, s->pieces);
    // the index names the file only once it is complete
    if (!s->series.empty()) write_file_atomic(s->series, s->index_xml);
  });
}

}  // namespace tissue::io
