#include "modules/sem/sem_layout.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "engine/exec/host_for.hpp"
#include "engine/mesh/mesh_operators.hpp"
#include "engine/util/random.hpp"
#include "modules/sem/sem.hpp"

namespace tissue::sem {

MonolayerParams read_monolayer_params(const io::ScenarioTable& t) {
  MonolayerParams p;
  t.string("layout", "monolayer", {"monolayer"});
  p.cells_x = static_cast<int>(t.integer("cells_x", p.cells_x, io::Range::closed(1, 100000)));
  p.cells_y = static_cast<int>(t.integer("cells_y", p.cells_y, io::Range::closed(1, 100000)));
  p.elements_per_cell =
      static_cast<int>(t.integer("elements_per_cell", p.elements_per_cell, io::Range::closed(1, 10000)));
  p.adhesive_elements =
      static_cast<int>(t.integer("adhesive_elements", p.adhesive_elements, io::Range::non_negative()));
  if (p.adhesive_elements > p.elements_per_cell)
    t.fail("adhesive_elements",
           "must not exceed elements_per_cell (" + std::to_string(p.elements_per_cell) + ")");
  p.spacing = t.number("spacing", p.spacing, io::Range::positive());
  p.cell_radius = t.number("cell_radius", p.cell_radius, io::Range::positive());
  return p;
}

namespace {

/// Fills element rows [e0, e0 + n) as cell c's ball (add_ball_cell's elements, in its order). Writes only
/// those rows: cells may be filled in parallel.
void fill_ball_cell(World& w, Column<std::int32_t>& types, std::int32_t c, std::size_t e0, float cx, float cy,
                    float cz, int n, float radius, int adhesive, const std::array<float, 3>& up) {
  const auto id = static_cast<std::uint64_t>(w.cell_id.host(static_cast<std::size_t>(c)));
  std::vector<float> px(static_cast<std::size_t>(n)), py(px.size()), pz(px.size());
  for (int k = 0; k < n; ++k) {
    const auto u = random::uniform4(w.seed, random::kInitialLayout, id, static_cast<std::uint32_t>(k));
    const float r = radius * std::cbrt(u.v[0]);
    const float cos_t = 2.0f * u.v[1] - 1.0f;
    const float sin_t = std::sqrt(std::max(0.0f, 1.0f - cos_t * cos_t));
    const float phi = 6.28318530717958647692f * u.v[2];
    px[static_cast<std::size_t>(k)] = cx + r * sin_t * std::cos(phi);
    py[static_cast<std::size_t>(k)] = cy + r * sin_t * std::sin(phi);
    pz[static_cast<std::size_t>(k)] = cz + r * cos_t;
  }
  std::vector<int> order(px.size());
  std::iota(order.begin(), order.end(), 0);
  const auto height = [&](int k) {
    const auto i = static_cast<std::size_t>(k);
    return up[0] * (px[i] - cx) + up[1] * (py[i] - cy) + up[2] * (pz[i] - cz);
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return height(a) < height(b); });
  std::vector<std::int32_t> type(px.size(), 0);
  for (int k = 0; k < std::min(adhesive, n); ++k)
    type[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] = kAdhesiveElement;
  for (std::size_t k = 0; k < px.size(); ++k) {
    w.set_element_host(e0 + k, c, px[k], py[k], pz[k]);
    types.host(e0 + k) = type[k];
  }
}

/// Balls of `n` elements for `centres.size()` new cells (centre and up direction each), appended in order
/// with their rows filled on the host's threads: the same world as add_ball_cell() for each in turn.
void add_ball_cells(World& w, const std::vector<std::array<float, 3>>& centres,
                    const std::vector<std::array<float, 3>>& ups, int n, float radius, int adhesive) {
  auto& types = add_sem_columns(w);
  const std::size_t c0 = w.add_cells_host(centres.size());
  const std::size_t e0 = w.add_elements_host(centres.size() * static_cast<std::size_t>(n));
  exec::host_for(centres.size(), [&](std::size_t k) {
    fill_ball_cell(w, types, static_cast<std::int32_t>(c0 + k), e0 + k * static_cast<std::size_t>(n),
                   centres[k][0], centres[k][1], centres[k][2], n, radius, adhesive, ups[k]);
  });
}

}  // namespace

std::int32_t add_ball_cell(World& w, float cx, float cy, float cz, int n, float radius, int adhesive,
                           const std::array<float, 3>& up) {
  auto& types = add_sem_columns(w);
  const std::int32_t c = w.add_cell_host();
  const std::size_t e0 = w.add_elements_host(static_cast<std::size_t>(n));
  fill_ball_cell(w, types, c, e0, cx, cy, cz, n, radius, adhesive, up);
  return c;
}

void seed_monolayer(World& w, const MonolayerParams& p) {
  if (w.cells.size() != 0) throw std::logic_error("seed_monolayer needs an empty world");
  const auto spacing = static_cast<float>(p.spacing);
  const auto radius = static_cast<float>(p.cell_radius);
  const std::size_t cells = static_cast<std::size_t>(p.cells_x) * static_cast<std::size_t>(p.cells_y);
  std::vector<std::array<float, 3>> centres(cells), ups(cells, {0.0f, 0.0f, 1.0f});
  for (int j = 0; j < p.cells_y; ++j)
    for (int i = 0; i < p.cells_x; ++i)
      centres[static_cast<std::size_t>(j) * static_cast<std::size_t>(p.cells_x) +
              static_cast<std::size_t>(i)] = {(static_cast<float>(i) + 0.5f) * spacing,
                                              (static_cast<float>(j) + 0.5f) * spacing, radius};
  add_ball_cells(w, centres, ups, p.elements_per_cell, radius, p.adhesive_elements);
  w.commit();
}

MembraneLayoutParams read_membrane_layout_params(const io::ScenarioTable& t) {
  MembraneLayoutParams p;
  t.string("layout", "membrane", {"membrane"});
  p.elements_per_cell =
      static_cast<int>(t.integer("elements_per_cell", p.elements_per_cell, io::Range::closed(1, 10000)));
  p.adhesive_elements =
      static_cast<int>(t.integer("adhesive_elements", p.adhesive_elements, io::Range::non_negative()));
  if (p.adhesive_elements > p.elements_per_cell)
    t.fail("adhesive_elements",
           "must not exceed elements_per_cell (" + std::to_string(p.elements_per_cell) + ")");
  p.spacing = t.number("spacing", p.spacing, io::Range::positive());
  p.cell_radius = t.number("cell_radius", p.cell_radius, io::Range::positive());
  p.max_cells = static_cast<std::size_t>(t.integer("max_cells", 0, io::Range::closed(0, 1e8)));
  return p;
}

std::size_t seed_on_membrane(World& w, const mesh::TriangleMesh& m, const MembraneLayoutParams& p) {
  if (w.cells.size() != 0) throw std::logic_error("seed_on_membrane needs an empty world");
  add_sem_columns(w);
  const auto normals = mesh::vertex_normals(m);
  // greedy Poisson-disk subset of the vertices, with a hash grid of the kept ones (cells of the spacing)
  const double s = p.spacing, s2 = s * s;
  std::unordered_map<std::int64_t, std::vector<std::size_t>> grid;
  const auto key = [](std::int64_t i, std::int64_t j, std::int64_t k) {
    return (i * 73856093) ^ (j * 19349663) ^ (k * 83492791);
  };
  const auto cell_of = [&](double v) { return static_cast<std::int64_t>(std::floor(v / s)); };
  std::vector<std::size_t> kept;
  for (std::size_t v = 0; v < m.vertex_count(); ++v) {
    if (p.max_cells > 0 && kept.size() >= p.max_cells) break;
    const std::int64_t i = cell_of(m.x[v]), j = cell_of(m.y[v]), k = cell_of(m.z[v]);
    bool free = true;
    for (std::int64_t a = i - 1; a <= i + 1 && free; ++a)
      for (std::int64_t b = j - 1; b <= j + 1 && free; ++b)
        for (std::int64_t c = k - 1; c <= k + 1 && free; ++c) {
          const auto it = grid.find(key(a, b, c));
          if (it == grid.end()) continue;
          for (std::size_t u : it->second) {
            const double dx = m.x[u] - m.x[v], dy = m.y[u] - m.y[v], dz = m.z[u] - m.z[v];
            if (dx * dx + dy * dy + dz * dz < s2) {
              free = false;
              break;
            }
          }
        }
    if (!free) continue;
    kept.push_back(v);
    grid[key(i, j, k)].push_back(v);
  }
  const auto r = static_cast<float>(p.cell_radius);
  std::vector<std::array<float, 3>> centres, ups;
  for (std::size_t v : kept) {
    const std::array<float, 3> up{static_cast<float>(normals[v][0]), static_cast<float>(normals[v][1]),
                                  static_cast<float>(normals[v][2])};
    centres.push_back({static_cast<float>(m.x[v]) + r * up[0], static_cast<float>(m.y[v]) + r * up[1],
                       static_cast<float>(m.z[v]) + r * up[2]});
    ups.push_back(up);
  }
  add_ball_cells(w, centres, ups, p.elements_per_cell, r, p.adhesive_elements);
  w.commit();
  return kept.size();
}

}  // namespace tissue::sem
