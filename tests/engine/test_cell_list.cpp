// The cell list finds exactly the pairs a brute-force search finds, on periodic and open boxes.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "engine/exec/parallel_for.hpp"
#include "engine/spatial/cell_list.hpp"
#include "tests/support.hpp"

using namespace tissue;

namespace {
/// For each point: the number of others within r (min image) and the sum of their indices.
struct CountNeighbours {
  Span<const float> x, y, z;
  CellList::View bins;
  Box box;
  float r2;
  Span<std::int32_t> count;
  Span<std::int64_t> index_sum;
  TISSUE_HD void operator()(std::size_t i) const {
    int n = 0;
    std::int64_t s = 0;
    bins.for_each_candidate(x[i], y[i], z[i], [&](int sorted, const PointTag& q) {
      if (q.tag == static_cast<std::int32_t>(i)) return;
      const float dx = box.min_image_x(x[i] - q.x), dy = box.min_image_y(y[i] - q.y), dz = z[i] - q.z;
      if (dx * dx + dy * dy + dz * dz < r2) {
        ++n;
        s += bins.index[static_cast<std::size_t>(sorted)];
      }
    });
    count[i] = n;
    index_sum[i] = s;
  }
};

/// Random points binned with bins of at least `bin` (r when 0) and queried for pairs closer than r.
/// With move > 0 the points then move by up to `move` in a random direction each, and the queries run on
/// the refreshed list (CellList::refresh / moved_view) at the new positions.
void check_against_brute_force(const Box& box, std::size_t n, float r, float height, unsigned seed,
                               float bin = 0.0f, float move = 0.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> ux(0.0f, box.periodic_x ? box.lx : 5.0f),
      uy(0.0f, box.periodic_y ? box.ly : 5.0f), uz(0.0f, height);
  std::vector<float> x(n), y(n), z(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = ux(rng), y[i] = uy(rng), z[i] = uz(rng);
  DeviceBuffer<float> dx, dy, dz;
  dx.assign(x);
  dy.assign(y);
  dz.assign(z);
  CellList list;
  list.build(dx.span(), dy.span(), dz.span(), Span<const std::int32_t>(), n, box, bin > 0.0f ? bin : r, 2.0f);
  CellList::View view = list.view();
  DeviceBuffer<float> moved;
  if (move > 0.0f) {
    std::normal_distribution<float> normal;
    std::uniform_real_distribution<float> length(0.0f, move);
    float largest = 0.0f;
    for (std::size_t i = 0; i < n; ++i) {
      const float gx = normal(rng), gy = normal(rng), gz = normal(rng);
      const float s = length(rng) / std::sqrt(gx * gx + gy * gy + gz * gz);
      const float nx = box.wrap_x(x[i] + s * gx), ny = box.wrap_y(y[i] + s * gy), nz = z[i] + s * gz;
      const float mx = box.min_image_x(nx - x[i]), my = box.min_image_y(ny - y[i]), mz = nz - z[i];
      largest = std::max(largest, std::sqrt(mx * mx + my * my + mz * mz));
      x[i] = nx, y[i] = ny, z[i] = nz;
    }
    dx.assign(x);
    dy.assign(y);
    dz.assign(z);
    list.refresh(dx.span(), dy.span(), dz.span(), n);
    moved.assign(std::vector<float>{largest});
    view = list.moved_view(std::as_const(moved).span(), r);
  }
  // the whole stencil, and (unmoved) the one trimmed to the reach r
  std::vector<CellList::View> views{view};
  if (move == 0.0f) views.push_back(list.view(r));
  for (const CellList::View& v : views) {
    DeviceBuffer<std::int32_t> count(n);
    DeviceBuffer<std::int64_t> sum(n);
    exec::parallel_for(
        n, CountNeighbours{dx.span(), dy.span(), dz.span(), v, box, r * r, count.span(), sum.span()});
    const auto got_count = count.to_host();
    const auto got_sum = sum.to_host();
    for (std::size_t i = 0; i < n; ++i) {
      int expected = 0;
      std::int64_t expected_sum = 0;
      for (std::size_t j = 0; j < n; ++j) {
        if (j == i) continue;
        // same float arithmetic as the kernel for the borderline cases
        const float ddx = box.min_image_x(x[i] - x[j]), ddy = box.min_image_y(y[i] - y[j]), ddz = z[i] - z[j];
        if (ddx * ddx + ddy * ddy + ddz * ddz < r * r)
          ++expected, expected_sum += static_cast<std::int64_t>(j);
      }
      REQUIRE(got_count[i] == expected);
      REQUIRE(got_sum[i] == expected_sum);
    }
  }
}
}  // namespace

TEST_CASE("cell list neighbours equal brute force on a periodic box", "[cell_list]") {
  Box box;
  box.lx = 6.0f;
  box.ly = 4.5f;
  check_against_brute_force(box, 3000, 0.4f, 3.0f, 1);
}

TEST_CASE("cell list neighbours equal brute force with points above the z extent (aliasing)", "[cell_list]") {
  Box box;
  box.lx = 5.0f;
  box.ly = 5.0f;
  check_against_brute_force(box, 2000, 0.5f, 12.0f, 2);  // extent hint 2, points up to 12
}

TEST_CASE("cell list works with one or two bins across a periodic axis", "[cell_list]") {
  Box box;
  box.lx = 1.0f;   // two bins of 0.5 for r = 0.45
  box.ly = 0.95f;  // two bins as well; 2 r <= L holds
  check_against_brute_force(box, 400, 0.45f, 2.0f, 3);
  box.lx = 1.3f;  // floor(1.3 / 0.6) = 2 bins
  box.ly = 1.25f;
  check_against_brute_force(box, 400, 0.6f, 2.0f, 4);
}

TEST_CASE("cell list on an open box", "[cell_list]") {
  Box box;
  box.periodic_x = box.periodic_y = false;
  check_against_brute_force(box, 2000, 0.35f, 3.0f, 5);
}

TEST_CASE("cell list rejects a periodic box smaller than twice the interaction distance", "[cell_list]") {
  Box box;
  box.lx = 0.7f;
  DeviceBuffer<float> x(1);
  CellList list;
  CHECK_THROWS_AS(list.build(x.span(), x.span(), x.span(), Span<const std::int32_t>(), 1, box, 0.4f, 1.0f),
                  std::invalid_argument);
}

TEST_CASE("a refreshed cell list finds the pairs of the moved points, however far they moved",
          "[cell_list]") {
  // bins of 0.5 for pairs closer than 0.3: up to 0.2 of movement the search stays one bin per side,
  // beyond it widens (0.45: two bins, 1.3: three), and past half the axis it takes the whole axis
  Box box;
  box.lx = 6.0f;
  box.ly = 4.5f;
  for (const float move : {0.05f, 0.2f, 0.45f, 1.3f, 4.0f}) {
    INFO("points moved up to " << move);
    check_against_brute_force(box, 1500, 0.3f, 3.0f, 7, 0.5f, move);
  }
  Box open;
  open.periodic_x = open.periodic_y = false;
  check_against_brute_force(open, 1500, 0.3f, 3.0f, 8, 0.5f, 0.45f);
  box.lx = 1.3f;  // two bins across a periodic axis: each visited once
  box.ly = 1.6f;
  check_against_brute_force(box, 300, 0.3f, 2.0f, 9, 0.6f, 0.5f);
}

TEST_CASE("a cell list refresh needs the points of its build", "[cell_list]") {
  Box box;
  DeviceBuffer<float> x(4);
  x.zero();
  CellList list;
  list.build(x.span(), x.span(), x.span(), Span<const std::int32_t>(), 4, box, 0.4f, 1.0f);
  CHECK_THROWS_AS(list.refresh(x.span(), x.span(), x.span(), 3), std::invalid_argument);
}

namespace {
/// For each point: a hash of the ordered sequence of the (original) indices of the others within r.
struct NeighbourSequence {
  Span<const float> x, y, z;
  CellList::View bins;
  Box box;
  float r2;
  Span<std::uint64_t> hash;
  TISSUE_HD void operator()(std::size_t i) const {
    std::uint64_t h = 1469598103934665603ull;
    bins.for_each_candidate(x[i], y[i], z[i], [&](int sorted, const PointTag& q) {
      if (q.tag == static_cast<std::int32_t>(i)) return;
      const float dx = box.min_image_x(x[i] - q.x), dy = box.min_image_y(y[i] - q.y), dz = z[i] - q.z;
      if (dx * dx + dy * dy + dz * dz < r2)
        h = (h ^ static_cast<std::uint64_t>(bins.index[static_cast<std::size_t>(sorted)])) * 1099511628211ull;
    });
    hash[i] = h;
  }
};
}  // namespace

TEST_CASE("a windowed cell list visits the neighbours of the points in its window in the whole grid's order",
          "[cell_list]") {
  // points of a rank of a decomposed run: x in the window (across the periodic face in the second case), y
  // anywhere; the ordered neighbour sequences equal those of the whole box's grid, point by point
  Box box;
  box.lx = 12.0f;
  box.ly = 9.0f;  // 30 x 22 bins of 0.4
  const float r = 0.4f;
  for (const auto& window : {std::pair<double, double>{2.0, 6.0}, {-1.5, 2.5}}) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> ux(static_cast<float>(window.first),
                                             static_cast<float>(window.second)),
        uy(0.0f, box.ly), uz(0.0f, 2.0f);
    const std::size_t n = 3000;
    std::vector<float> x(n), y(n), z(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = box.wrap_x(ux(rng)), y[i] = uy(rng), z[i] = uz(rng);
    DeviceBuffer<float> dx, dy, dz;
    dx.assign(x);
    dy.assign(y);
    dz.assign(z);
    BinWindow w;
    w.x = true;
    w.x0 = window.first;
    w.x1 = window.second;
    w.y = true;  // the whole of y: left as it is
    w.y0 = 0.0;
    w.y1 = box.ly;
    CellList whole, windowed;
    whole.build(dx.span(), dy.span(), dz.span(), Span<const std::int32_t>(), n, box, r, 2.0f);
    windowed.build(dx.span(), dy.span(), dz.span(), Span<const std::int32_t>(), n, box, r, 2.0f, 0, w);
    CHECK(whole.grid().n[0] == 30);
    CHECK(windowed.grid().n[0] == 13);  // bins 5..15 (or -4..6) and one either side
    CHECK(windowed.grid().n[1] == whole.grid().n[1]);
    CHECK(windowed.grid().n[2] == whole.grid().n[2]);  // z capped by the whole grid's x-y bins
    DeviceBuffer<std::uint64_t> a(n), b(n);
    exec::parallel_for(
        n, NeighbourSequence{dx.span(), dy.span(), dz.span(), whole.view(), box, r * r, a.span()});
    exec::parallel_for(
        n, NeighbourSequence{dx.span(), dy.span(), dz.span(), windowed.view(), box, r * r, b.span()});
    CHECK(a.to_host() == b.to_host());
  }
}

namespace {
/// For each point: how many candidates the search visits (over all its lanes).
struct CountCandidates {
  Span<const float> x, y, z;
  CellList::View bins;
  Span<std::int32_t> count;
  int lanes = 1;  ///< lanes of the search, all counted
  TISSUE_HD void operator()(std::size_t i) const {
    int n = 0;
    for (int lane = 0; lane < lanes; ++lane)
      bins.for_each_candidate(
          x[i], y[i], z[i], [&](int, const PointTag&) { ++n; }, lane, lanes);
    count[i] = n;
  }
};
}  // namespace

TEST_CASE("a search given its reach skips the bins beyond it and finds the same neighbours in the same order",
          "[cell_list]") {
  // bins 1.25 r wide (the SEM's 1.2 cut-offs and more): per axis a query needs 2 of the 3 bins unless it is
  // within r of both faces of its own; on a lattice of pitch r (points at the reach, on bin faces) and on
  // random points, periodic box, open box and a windowed rank
  const float r = 0.4f, bin = 0.5f;
  for (int layout = 0; layout < 4; ++layout) {
    INFO("layout " << layout);
    Box box;
    box.lx = 12.0f;
    box.ly = 9.0f;
    if (layout == 2) box.periodic_x = box.periodic_y = false;
    std::mt19937 rng(21 + layout);
    std::uniform_real_distribution<float> ux(0.0f, box.lx), uy(0.0f, box.ly), uz(0.0f, 2.0f);
    std::vector<float> x, y, z;
    if (layout == 0) {
      for (int k = 0; k < 5; ++k)
        for (int j = 0; j < 22; ++j)
          for (int i = 0; i < 30; ++i) x.push_back(r * i), y.push_back(r * j), z.push_back(r * k);
    } else {
      // a windowed rank queries the points of its window (BinWindow)
      if (layout == 3) ux = std::uniform_real_distribution<float>(2.0f, 6.0f);
      for (int i = 0; i < 3000; ++i) x.push_back(ux(rng)), y.push_back(uy(rng)), z.push_back(uz(rng));
    }
    const std::size_t n = x.size();
    DeviceBuffer<float> dx, dy, dz;
    dx.assign(x);
    dy.assign(y);
    dz.assign(z);
    BinWindow w;  // layout 3: a rank holding x in [2, 6]
    w.x = layout == 3;
    w.x0 = 2.0;
    w.x1 = 6.0;
    CellList list;
    list.build(dx.span(), dy.span(), dz.span(), Span<const std::int32_t>(), n, box, bin, 2.0f, 0, w);
    DeviceBuffer<std::uint64_t> a(n), b(n);
    exec::parallel_for(n,
                       NeighbourSequence{dx.span(), dy.span(), dz.span(), list.view(), box, r * r, a.span()});
    exec::parallel_for(
        n, NeighbourSequence{dx.span(), dy.span(), dz.span(), list.view(r), box, r * r, b.span()});
    CHECK(a.to_host() == b.to_host());
    DeviceBuffer<std::int32_t> all(n), trimmed(n);
    exec::parallel_for(n, CountCandidates{dx.span(), dy.span(), dz.span(), list.view(), all.span()});
    exec::parallel_for(n, CountCandidates{dx.span(), dy.span(), dz.span(), list.view(r), trimmed.span()});
    const auto c_all = all.to_host(), c_trimmed = trimmed.to_host();
    double sum_all = 0.0, sum_trimmed = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      REQUIRE(c_trimmed[i] <= c_all[i]);
      sum_all += c_all[i];
      sum_trimmed += c_trimmed[i];
    }
    // random points: (2 r + bin) / (3 bin) = 0.87 of the bins per axis on average, about 0.66 of the
    // candidates; the lattice's points sit where more of them are needed (0.85)
    CHECK(sum_trimmed < (layout == 0 ? 0.9 : 0.75) * sum_all);
    // with lanes, each lane keeps its share of the whole search (so that partial sums keep their order)
    DeviceBuffer<std::int32_t> laned(n);
    exec::parallel_for(n, CountCandidates{dx.span(), dy.span(), dz.span(), list.view(r), laned.span(), 2});
    CHECK(laned.to_host() == c_all);
  }
}

TEST_CASE("a cell list caps its z bins by the point count it is given, for a rank of a decomposed run",
          "[cell_list]") {
  Box box;
  box.lx = 8.0f;
  box.ly = 8.0f;  // 20 x 20 x-y bins of 0.4
  DeviceBuffer<float> x(100);
  x.zero();
  CellList list;
  // z_extent 8: 20 bins, capped at ceil(4 n / 400): 1 for n = 100, so the minimum of 3
  list.build(x.span(), x.span(), x.span(), Span<const std::int32_t>(), 100, box, 0.4f, 8.0f);
  CHECK(list.grid().n[2] == 3);
  // the same 100 points as a rank's share of a 1000-point tissue: the tissue's cap, ceil(4000 / 400) = 10
  list.build(x.span(), x.span(), x.span(), Span<const std::int32_t>(), 100, box, 0.4f, 8.0f, 1000);
  CHECK(list.grid().n[2] == 10);
  // a cap above the extent's count leaves the extent's
  list.build(x.span(), x.span(), x.span(), Span<const std::int32_t>(), 100, box, 0.4f, 8.0f, 100000);
  CHECK(list.grid().n[2] == 20);
}
