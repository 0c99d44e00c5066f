#include "engine/io/tissue_output.hpp"

#include <cstdio>

namespace tissue::io {

TissueWriter::TissueWriter(std::filesystem::path dir, std::vector<std::string> species_names, bool elements,
                           bool cells, std::vector<std::string> cell_columns)
    : dir_(std::move(dir)),
      species_names_(std::move(species_names)),
      cell_columns_(std::move(cell_columns)),
      elements_(elements),
      cells_(cells),
      element_series_(dir_ / "elements.pvd"),
      cell_series_(dir_ / "cells.pvd") {}

namespace {

/// Per-point arrays of each point's owning cell (owner[i] = dense cell index): stable id, state, species,
/// and the named float cell columns (components interleaved per point).
std::vector<VtkArray> owner_arrays(World& w, const std::vector<std::size_t>& owner,
                                   const std::vector<std::string>& species_names, int n_species,
                                   const std::vector<std::string>& cell_columns) {
  const std::size_t n = owner.size();
  std::vector<std::int64_t> cell_id(n);
  std::vector<std::uint8_t> state(n);
  for (std::size_t i = 0; i < n; ++i) {
    cell_id[i] = w.cell_id.host(owner[i]);
    state[i] = (w.flags.host(owner[i]) & cell_flags::suprabasal) ? 1 : 0;
  }
  std::vector<VtkArray> arrays{VtkArray::of("cell_id", cell_id), VtkArray::of("suprabasal", state)};
  for (int s = 0; s < n_species; ++s) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = w.species.host(owner[i], s);
    arrays.push_back(VtkArray::of(species_names[static_cast<std::size_t>(s)], v));
  }
  for (const auto& name : cell_columns) {
    auto& column = w.cells.column<float>(name);
    const int nc = column.components();
    std::vector<float> v(n * static_cast<std::size_t>(nc));
    for (std::size_t i = 0; i < n; ++i)
      for (int c = 0; c < nc; ++c)
        v[i * static_cast<std::size_t>(nc) + static_cast<std::size_t>(c)] = column.host(owner[i], c);
    arrays.push_back(VtkArray::of(name, v, nc));
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
  const int n_species = std::min<int>(w.species_count(), static_cast<int>(species_names_.size()));

  if (elements_) {
    std::vector<float> points(3 * n_el);
    std::vector<std::size_t> owner(n_el);
    std::vector<std::int32_t> type(n_el);
    for (std::size_t e = 0; e < n_el; ++e) {
      points[3 * e] = w.x.host(e);
      points[3 * e + 1] = w.y.host(e);
      points[3 * e + 2] = w.z.host(e);
      owner[e] = static_cast<std::size_t>(w.cell.host(e));
      type[e] = w.type.host(e);
    }
    auto arrays = owner_arrays(w, owner, species_names_, n_species, cell_columns_);
    arrays.push_back(VtkArray::of("element_type", type));
    const std::string file = std::string("elements_") + tag + ".vtu";
    write_vtu_points(dir_ / file, points, arrays);
    element_series_.add(w.time, file);
  }
  if (cells_) {
    std::vector<float> points(3 * n_cells);
    std::vector<std::size_t> owner(n_cells);
    std::vector<std::int32_t> count(n_cells), adhesive(n_cells, 0);
    for (std::size_t e = 0; e < n_el; ++e)
      if (w.type.host(e) == kAdhesiveElement) ++adhesive[static_cast<std::size_t>(w.cell.host(e))];
    for (std::size_t c = 0; c < n_cells; ++c) {
      points[3 * c] = w.cx.host(c);
      points[3 * c + 1] = w.cy.host(c);
      points[3 * c + 2] = w.cz.host(c);
      owner[c] = c;
      count[c] = w.count.host(c);
    }
    auto arrays = owner_arrays(w, owner, species_names_, n_species, cell_columns_);
    arrays.push_back(VtkArray::of("element_count", count));
    arrays.push_back(VtkArray::of("adhesive_elements", adhesive));
    const std::string file = std::string("cells_") + tag + ".vtu";
    write_vtu_points(dir_ / file, points, arrays);
    cell_series_.add(w.time, file);
  }
}

}  // namespace tissue::io
