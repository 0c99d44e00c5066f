#include "engine/core/world.hpp"

#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/error.hpp"

namespace tissue {

World::World(Box b)
    : box(b),
      cell_id(cells.add_column<std::int64_t>("id")),
      first(cells.add_column<std::int32_t>("first")),
      count(cells.add_column<std::int32_t>("count")),
      cx(cells.add_column<float>("cx")),
      cy(cells.add_column<float>("cy")),
      cz(cells.add_column<float>("cz")),
      flags(cells.add_column<std::uint32_t>("flags")),
      x(elements.add_column<float>("x")),
      y(elements.add_column<float>("y")),
      z(elements.add_column<float>("z")),
      cell(elements.add_column<std::int32_t>("cell")) {}

std::uint32_t World::flag_bit(const std::string& name) {
  for (std::size_t k = 0; k < flag_names_.size(); ++k)
    if (flag_names_[k] == name) return 1u << (k + 1);
  if (flag_names_.size() >= 31)
    throw std::length_error("the cells' flags have no bit left for '" + name + "' (31 are taken)");
  flag_names_.push_back(name);
  return 1u << flag_names_.size();
}

std::int32_t World::add_cell_host() {
  const auto c = static_cast<std::int32_t>(cells.append_host(1));
  cell_id.host(static_cast<std::size_t>(c)) = next_cell_id++;
  return c;
}

std::int32_t World::add_element_host(std::int32_t c, float px, float py, float pz) {
  const auto e = elements.append_host(1);
  x.host(e) = box.wrap_x(px);
  y.host(e) = box.wrap_y(py);
  z.host(e) = box.clamp_z(pz);
  cell.host(e) = c;
  return static_cast<std::int32_t>(e);
}

void World::download() {
  cells.download();
  elements.download();
  for (auto& f : fields) f->download();
}

void World::commit() {
  compact_host();
  cells.upload();
  elements.upload();
}

void World::compact_host() {
  // 1. cells: keep the living ones, in order; old -> new index map
  const std::size_t n_cells = cells.size();
  std::vector<std::int32_t> cell_order;
  std::vector<std::int32_t> new_index(n_cells, -1);
  cell_order.reserve(n_cells);
  for (std::size_t c = 0; c < n_cells; ++c) {
    if (flags.host(c) & cell_flags::dead) continue;
    new_index[c] = static_cast<std::int32_t>(cell_order.size());
    cell_order.push_back(static_cast<std::int32_t>(c));
  }
  const std::size_t alive = cell_order.size();

  // 2. elements: counting sort by new owning cell (stable), dropping those of dead cells
  const std::size_t n_elements = elements.size();
  std::vector<std::int32_t> counts(alive, 0);
  // an element whose owner is -1 was removed by a hook
  const auto new_owner = [&](std::size_t e) {
    const std::int32_t owner = cell.host(e);
    return owner < 0 ? -1 : new_index[static_cast<std::size_t>(owner)];
  };
  for (std::size_t e = 0; e < n_elements; ++e) {
    const std::int32_t c = new_owner(e);
    if (c >= 0) ++counts[static_cast<std::size_t>(c)];
  }
  std::vector<std::int32_t> offsets(alive, 0);
  std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), 0);
  const std::size_t kept = alive == 0 ? 0 : static_cast<std::size_t>(offsets.back() + counts.back());
  std::vector<std::int32_t> element_order(kept);
  std::vector<std::int32_t> cursor = offsets;
  for (std::size_t e = 0; e < n_elements; ++e) {
    const std::int32_t c = new_owner(e);
    if (c >= 0)
      element_order[static_cast<std::size_t>(cursor[static_cast<std::size_t>(c)]++)] =
          static_cast<std::int32_t>(e);
  }

  cells.gather_host(cell_order);
  elements.gather_host(element_order);
  for (std::size_t e = 0; e < kept; ++e) cell.host(e) = new_index[static_cast<std::size_t>(cell.host(e))];
  for (std::size_t c = 0; c < alive; ++c) {
    first.host(c) = offsets[c];
    count.host(c) = counts[c];
  }
}

std::string World::check_consistency() const {
  std::size_t expected_first = 0;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    const auto f = static_cast<std::size_t>(first.host(c));
    const auto n = static_cast<std::size_t>(count.host(c));
    if (f != expected_first)
      return "cell " + std::to_string(c) + " starts at element " + std::to_string(f) + ", expected " +
             std::to_string(expected_first);
    for (std::size_t e = f; e < f + n; ++e)
      if (cell.host(e) != static_cast<std::int32_t>(c))
        return "element " + std::to_string(e) + " in the range of cell " + std::to_string(c) +
               " belongs to cell " + std::to_string(cell.host(e));
    expected_first += n;
  }
  if (expected_first != elements.size())
    return "cells cover " + std::to_string(expected_first) + " elements of " +
           std::to_string(elements.size());
  return {};
}

namespace {
/// Why element coordinate `v` on axis `axis` (0, 1, 2) is invalid in `box`, or nullptr if it is valid.
const char* coordinate_problem(const Box& box, int axis, float v) {
  if (!std::isfinite(v)) return "not finite";
  if (axis == 0 && box.periodic_x && !(v >= 0.0f && v < box.lx)) return "outside the periodic box [0, lx)";
  if (axis == 1 && box.periodic_y && !(v >= 0.0f && v < box.ly)) return "outside the periodic box [0, ly)";
  if (axis == 2 && box.floor && v < 0.0f) return "below the floor z = 0";
  return nullptr;
}
}  // namespace

void check_element_positions(World& w) {
  const std::size_t n = w.elements.size();
  if (n == 0) return;
  const Span<const float> x(w.x.span().data(), n), y(w.y.span().data(), n), z(w.z.span().data(), n);
  // device-side reductions; nothing is downloaded unless something is wrong
  bool bad = exec::count_non_finite(x) + exec::count_non_finite(y) + exec::count_non_finite(z) > 0;
  if (!bad && w.box.periodic_x) bad = exec::min_value(x) < 0.0f || exec::max_value(x) >= w.box.lx;
  if (!bad && w.box.periodic_y) bad = exec::min_value(y) < 0.0f || exec::max_value(y) >= w.box.ly;
  if (!bad && w.box.floor) bad = exec::min_value(z) < 0.0f;
  if (!bad) return;
  w.download();
  std::size_t count = 0, first = n;
  int axis = 0;
  for (std::size_t e = 0; e < n; ++e)
    for (int a = 0; a < 3; ++a) {
      const float v = a == 0 ? w.x.host(e) : a == 1 ? w.y.host(e) : w.z.host(e);
      if (coordinate_problem(w.box, a, v) == nullptr) continue;
      ++count;
      if (first == n) first = e, axis = a;
    }
  const float v = axis == 0 ? w.x.host(first) : axis == 1 ? w.y.host(first) : w.z.host(first);
  const auto cell = static_cast<std::size_t>(w.cell.host(first));
  std::ostringstream msg;
  msg << "step " << w.step << ": " << count << " element coordinate(s) invalid; the first: element " << first
      << " of cell id " << (cell < w.cells.size() ? w.cell_id.host(cell) : -1) << ", "
      << "xyz"[axis] << " = " << v << " (" << coordinate_problem(w.box, axis, v)
      << "); the time step is probably too large for the forces (reduce simulation.dt)";
  throw NumericalError(msg.str());
}

}  // namespace tissue
