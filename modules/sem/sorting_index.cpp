#include "modules/sem/sorting_index.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "modules/sem/sem.hpp"

namespace tissue::sem {

std::vector<std::vector<int>> cell_contacts(const std::vector<float>& x, const std::vector<float>& y,
                                            const std::vector<float>& z, const std::vector<int>& cell,
                                            int n_cells, const Box& box, double contact) {
  // elements binned on a grid of cubes `contact` wide; each element visits the 27 bins around it (periodic
  // directions: the bin index wraps, and the bins tile the box when it is at least 3 bins wide)
  const double h = contact;
  const auto bins_along = [&](bool periodic, float l) {
    return periodic ? std::max(1, static_cast<int>(std::floor(l / h))) : 0;
  };
  const int nx = bins_along(box.periodic_x, box.lx), ny = bins_along(box.periodic_y, box.ly);
  const auto bin = [&](double v, int n, float l) {
    if (n == 0) return static_cast<int>(std::floor(v / h));
    return std::min(n - 1, std::max(0, static_cast<int>(std::floor(v / (l / n)))));
  };
  std::map<std::tuple<int, int, int>, std::vector<std::size_t>> grid;
  for (std::size_t e = 0; e < x.size(); ++e)
    grid[{bin(x[e], nx, box.lx), bin(y[e], ny, box.ly), static_cast<int>(std::floor(z[e] / h))}].push_back(e);
  const auto wrap = [](int i, int n) { return n == 0 ? i : ((i % n) + n) % n; };
  std::vector<std::set<int>> sets(static_cast<std::size_t>(n_cells));
  const double c2 = contact * contact;
  for (std::size_t e = 0; e < x.size(); ++e) {
    const int bx = bin(x[e], nx, box.lx), by = bin(y[e], ny, box.ly),
              bz = static_cast<int>(std::floor(z[e] / h));
    std::set<std::tuple<int, int, int>> visited;  // a narrow periodic box maps several offsets to one bin
    for (int i = -1; i <= 1; ++i)
      for (int j = -1; j <= 1; ++j)
        for (int k = -1; k <= 1; ++k) {
          const std::tuple<int, int, int> key{wrap(bx + i, nx), wrap(by + j, ny), bz + k};
          if (!visited.insert(key).second) continue;
          const auto it = grid.find(key);
          if (it == grid.end()) continue;
          for (const std::size_t f : it->second) {
            if (cell[f] == cell[e]) continue;
            const double dx = box.min_image_x(x[e] - x[f]), dy = box.min_image_y(y[e] - y[f]),
                         dz = static_cast<double>(z[e]) - z[f];
            if (dx * dx + dy * dy + dz * dz < c2) sets[static_cast<std::size_t>(cell[e])].insert(cell[f]);
          }
        }
  }
  std::vector<std::vector<int>> contacts(sets.size());
  for (std::size_t c = 0; c < sets.size(); ++c) contacts[c].assign(sets[c].begin(), sets[c].end());
  return contacts;
}

double sorting_index(const std::vector<std::vector<int>>& contacts, const std::vector<int>& type) {
  double sum = 0.0;
  int counted = 0;
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    if (contacts[c].empty()) continue;
    int same = 0;
    for (const int b : contacts[c]) same += type[static_cast<std::size_t>(b)] == type[c] ? 1 : 0;
    sum += static_cast<double>(same) / static_cast<double>(contacts[c].size());
    ++counted;
  }
  return counted ? sum / counted : std::numeric_limits<double>::quiet_NaN();
}

double sorting_index(World& w, double contact) {
  const std::size_t n = w.elements.size();
  std::vector<float> x(n), y(n), z(n);
  std::vector<int> cell(n);
  for (std::size_t e = 0; e < n; ++e) {
    x[e] = w.x.host(e);
    y[e] = w.y.host(e);
    z[e] = w.z.host(e);
    cell[e] = w.cell.host(e);
  }
  const auto& column = w.cells.column<std::int32_t>(kCellTypeColumn);
  std::vector<int> type(w.cells.size());
  for (std::size_t c = 0; c < type.size(); ++c) type[c] = column.host(c);
  return sorting_index(cell_contacts(x, y, z, cell, static_cast<int>(w.cells.size()), w.box, contact), type);
}

}  // namespace tissue::sem
