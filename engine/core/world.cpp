#include "engine/core/world.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/error.hpp"
#include "engine/exec/host_for.hpp"

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
  return static_cast<std::int32_t>(add_cells_host(1));
}

std::size_t World::add_cells_host(std::size_t n) {
  const std::size_t c0 = cells.append_host(n);
  for (std::size_t k = 0; k < n; ++k) cell_id.host(c0 + k) = next_cell_id++;
  return c0;
}

std::size_t World::add_daughters_host(const std::vector<std::int32_t>& mothers) {
  if (!daughter_ids) return add_cells_host(mothers.size());
  std::vector<std::int64_t> mother_ids(mothers.size()), ids(mothers.size());
  for (std::size_t k = 0; k < mothers.size(); ++k)
    mother_ids[k] = cell_id.host(static_cast<std::size_t>(mothers[k]));
  daughter_ids(*this, mother_ids, ids);
  const std::size_t c0 = cells.append_host(mothers.size());
  for (std::size_t k = 0; k < mothers.size(); ++k) cell_id.host(c0 + k) = ids[k];
  return c0;
}

std::int32_t World::add_element_host(std::int32_t c, float px, float py, float pz) {
  const std::size_t e = add_elements_host(1);
  set_element_host(e, c, px, py, pz);
  return static_cast<std::int32_t>(e);
}

std::size_t World::add_elements_host(std::size_t n) {
  return elements.append_host(n);
}

void World::set_element_host(std::size_t e, std::int32_t c, float px, float py, float pz) {
  x.host(e) = box.wrap_x(px);
  y.host(e) = box.wrap_y(py);
  z.host(e) = box.clamp_z(pz);
  cell.host(e) = c;
}

void World::download() {
  cells.download();
  elements.download();
  for (auto& f : fields) f->download();
}

void World::commit() {
  ++revision;
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

  // 2. elements: counting sort by new owning cell (stable), dropping those of dead cells. In parallel: each
  //    element takes a slot of its cell's range by an atomic cursor, then each range is sorted by old index,
  //    which gives the stable order whatever the threads did.
  const std::size_t n_elements = elements.size();
  // per-element scratch is left uninitialised and first written by the parallel loops, so that its pages
  // are faulted in by all threads instead of one memset
  std::unique_ptr<std::int32_t[]> owner(new std::int32_t[n_elements]);
  std::vector<std::int32_t> counts(alive, 0);
  exec::host_for(n_elements, [&](std::size_t e) {
    const std::int32_t old = cell.host(e);  // -1: removed from its cell by a hook
    const std::int32_t c = old < 0 ? -1 : new_index[static_cast<std::size_t>(old)];
    owner[e] = c;
    if (c >= 0) {
#pragma omp atomic update
      ++counts[static_cast<std::size_t>(c)];
    }
  });
  std::vector<std::int32_t> offsets(alive, 0);
  std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), 0);
  const std::size_t kept = alive == 0 ? 0 : static_cast<std::size_t>(offsets.back() + counts.back());
  std::unique_ptr<std::int32_t[]> element_order(new std::int32_t[kept]);
  std::vector<std::int32_t> cursor = offsets;
  exec::host_for(n_elements, [&](std::size_t e) {
    const std::int32_t c = owner[e];
    if (c < 0) return;
    std::int32_t slot = 0;
#pragma omp atomic capture
    slot = cursor[static_cast<std::size_t>(c)]++;
    element_order[static_cast<std::size_t>(slot)] = static_cast<std::int32_t>(e);
  });
  exec::host_for(alive, [&](std::size_t c) {
    std::int32_t* begin = element_order.get() + offsets[c];
    std::int32_t* end = begin + counts[c];
    if (!std::is_sorted(begin, end)) std::sort(begin, end);
  });

  // nothing moved (a seeding's commit, a hook that changed no structure): no gather, no second mirror
  bool identity = alive == n_cells && kept == n_elements;
  if (identity) {
    const auto count_el = static_cast<std::int64_t>(kept);
#pragma omp parallel for schedule(static) reduction(&& : identity) if (kept >= exec::kMinParallelIterations)
    for (std::int64_t e = 0; e < count_el; ++e) identity = identity && element_order[e] == e;
  }
  if (!identity) {
    cells.gather_host(cell_order);
    elements.gather_host(element_order.get(), kept);
    exec::host_for(kept,
                   [&](std::size_t e) { cell.host(e) = owner[static_cast<std::size_t>(element_order[e])]; });
  }
  exec::host_for(alive, [&](std::size_t c) {
    first.host(c) = offsets[c];
    count.host(c) = counts[c];
  });
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
