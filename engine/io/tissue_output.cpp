#include "engine/io/tissue_output.hpp"

#include <cstdio>

namespace tissue::io {

TissueWriter::TissueWriter(std::filesystem::path dir, bool elements, bool cells)
    : dir_(std::move(dir)),
      elements_(elements),
      cells_(cells),
      element_series_(dir_ / "elements.pvd"),
      cell_series_(dir_ / "cells.pvd") {}

namespace {

using Kind = TissueOutput::Kind;

/// Per-point arrays of each point's owning cell (owner[i] = dense cell index): the stable id, then the
/// per-cell outputs the modules declared (components interleaved per point).
std::vector<VtkArray> owner_arrays(World& w, const std::vector<std::size_t>& owner) {
  const std::size_t n = owner.size();
  std::vector<std::int64_t> cell_id(n);
  for (std::size_t i = 0; i < n; ++i) cell_id[i] = w.cell_id.host(owner[i]);
  std::vector<VtkArray> arrays{VtkArray::of("cell_id", cell_id)};
  // by kind (states, then per-component columns such as species, then whole columns such as sampled
  // fields, then integer columns such as the cell type), and in declaration order within a kind
  for (const Kind kind : {Kind::flag, Kind::cell_components, Kind::cell_column, Kind::cell_int_column})
    for (const auto& out : w.outputs()) {
      if (out.kind != kind) continue;
      if (kind == Kind::flag) {
        std::vector<std::uint8_t> state(n);
        for (std::size_t i = 0; i < n; ++i) state[i] = (w.flags.host(owner[i]) & out.bit) ? 1 : 0;
        arrays.push_back(VtkArray::of(out.name, state));
      } else if (kind == Kind::cell_int_column) {
        auto& column = w.cells.column<std::int32_t>(out.column);
        std::vector<std::int32_t> v(n);
        for (std::size_t i = 0; i < n; ++i) v[i] = column.host(owner[i]);
        arrays.push_back(VtkArray::of(out.name, v));
      } else if (kind == Kind::cell_components) {
        auto& column = w.cells.column<float>(out.column);
        const auto& names = column.component_names();
        for (int s = 0; s < column.components(); ++s) {
          std::vector<float> v(n);
          for (std::size_t i = 0; i < n; ++i) v[i] = column.host(owner[i], s);
          arrays.push_back(VtkArray::of(s < static_cast<int>(names.size())
                                            ? names[static_cast<std::size_t>(s)]
                                            : out.column + "_" + std::to_string(s),
                                        v));
        }
      } else {
        auto& column = w.cells.column<float>(out.column);
        const int nc = column.components();
        std::vector<float> v(n * static_cast<std::size_t>(nc));
        for (std::size_t i = 0; i < n; ++i)
          for (int c = 0; c < nc; ++c)
            v[i * static_cast<std::size_t>(nc) + static_cast<std::size_t>(c)] = column.host(owner[i], c);
        arrays.push_back(VtkArray::of(out.name, v, nc));
      }
    }
  return arrays;
}

}  // namespace

void TissueWriter::write(World& w) {
  w.download();
  char tag[32];
  std::snprintf(tag, sizeof tag, "%09lld", static_cast<long long>(w.step));
  const std::size_t n_cells = w.cells.size();
  const std::size_t n_el = w.elements.size();

  if (elements_) {
    std::vector<float> points(3 * n_el);
    std::vector<std::size_t> owner(n_el);
    for (std::size_t e = 0; e < n_el; ++e) {
      points[3 * e] = w.x.host(e);
      points[3 * e + 1] = w.y.host(e);
      points[3 * e + 2] = w.z.host(e);
      owner[e] = static_cast<std::size_t>(w.cell.host(e));
    }
    auto arrays = owner_arrays(w, owner);
    for (const auto& out : w.outputs()) {
      if (out.kind != Kind::element_column) continue;
      auto& column = w.elements.column<std::int32_t>(out.column);
      std::vector<std::int32_t> v(n_el);
      for (std::size_t e = 0; e < n_el; ++e) v[e] = column.host(e);
      arrays.push_back(VtkArray::of(out.name, v));
    }
    const std::string file = std::string("elements_") + tag + ".vtu";
    write_vtu_points(dir_ / file, points, arrays);
    element_series_.add(w.time, file);
  }
  if (cells_) {
    std::vector<float> points(3 * n_cells);
    std::vector<std::size_t> owner(n_cells);
    std::vector<std::int32_t> count(n_cells);
    for (std::size_t c = 0; c < n_cells; ++c) {
      points[3 * c] = w.cx.host(c);
      points[3 * c + 1] = w.cy.host(c);
      points[3 * c + 2] = w.cz.host(c);
      owner[c] = c;
      count[c] = w.count.host(c);
    }
    auto arrays = owner_arrays(w, owner);
    arrays.push_back(VtkArray::of("element_count", count));
    for (const auto& out : w.outputs()) {
      if (out.kind != Kind::element_count) continue;
      auto& column = w.elements.column<std::int32_t>(out.column);
      std::vector<std::int32_t> matching(n_cells, 0);
      for (std::size_t e = 0; e < n_el; ++e)
        if (column.host(e) == out.value) ++matching[static_cast<std::size_t>(w.cell.host(e))];
      arrays.push_back(VtkArray::of(out.name, matching));
    }
    const std::string file = std::string("cells_") + tag + ".vtu";
    write_vtu_points(dir_ / file, points, arrays);
    cell_series_.add(w.time, file);
  }
}

}  // namespace tissue::io
