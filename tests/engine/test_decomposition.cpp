// Domain decomposition of the x-y box: the process grid against hand-computed cases and a brute force,
// owner() and bounds() agreeing to the last bit (on the cuts too), and the halo messages delivering to
// every rank exactly the points of its ghost band, periodic images included.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <iterator>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "engine/domain/decomposition.hpp"
#include "engine/exec/error.hpp"
#include "tests/support.hpp"

using namespace tissue;
using domain::Decomposition;
using domain::HaloSend;
using domain::ProcessGrid;
using domain::Subdomain;
using test::make_box;

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// The InputError message of f(), or "" when it throws none.
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// The halo surface per unit height that choose_process_grid minimises.
double surface(int px, int py, const Box& box) {
  return (px > 1 ? px * static_cast<double>(box.ly) : 0.0) +
         (py > 1 ? py * static_cast<double>(box.lx) : 0.0);
}

/// A y (or x) inside [lo, hi) to pair with a position on a cut.
double inside(double lo, double hi) {
  if (std::isfinite(lo)) return lo;
  if (std::isfinite(hi)) return std::nextafter(hi, -kInfinity);
  return 0.0;
}

/// Floats on and around the cuts i l / p (i = 0..p) of an axis: on the cut, one float either side, and at
/// distance w from it: exactly (as near as floats go), just inside and just outside. Wrapped into [0, l)
/// on a periodic axis.
std::vector<float> boundary_values(float l, int p, double w, bool periodic) {
  std::vector<float> v;
  for (int i = 0; i <= p; ++i) {
    const double e = static_cast<double>(i) * l / p;
    for (const double a : {e, e - w, e + w}) {
      const auto f = static_cast<float>(a);
      v.push_back(f);
      v.push_back(std::nextafter(f, -std::numeric_limits<float>::infinity()));
      v.push_back(std::nextafter(f, std::numeric_limits<float>::infinity()));
    }
  }
  if (periodic)
    for (auto& f : v) f = Box::wrap(f, l);
  return v;
}

}  // namespace

TEST_CASE("choose_process_grid picks the least halo surface in hand-computed cases", "[decomposition]") {
  // surface = (px > 1 ? px ly : 0) + (py > 1 ? py lx : 0); ties: the larger px
  const auto grid = [](int ranks, float lx, float ly, double w) {
    return domain::choose_process_grid(ranks, make_box(lx, ly), w);
  };
  // 1 rank: nothing is split, whatever the widths
  CHECK(grid(1, 0.1f, 0.1f, 5.0).px == 1);
  CHECK(grid(1, 0.1f, 0.1f, 5.0).py == 1);
  // 4 ranks on a 3 x 3 periodic box, width 1: 4 x 1 and 1 x 4 give subdomains 0.75 wide (< 1); 2 x 2 (1.5
  // wide) is the only fit
  CHECK(grid(4, 3, 3, 1.0).px == 2);
  CHECK(grid(4, 3, 3, 1.0).py == 2);
  // 4 ranks on a 10 x 10 periodic box, width 1: 4 x 1 = 4 * 10 = 40, 2 x 2 = 2 * 10 + 2 * 10 = 40, 1 x 4 =
  // 40: a three-way tie (the total cut length is the same), the larger px wins: 4 x 1
  CHECK(grid(4, 10, 10, 1.0).px == 4);
  CHECK(grid(4, 10, 10, 1.0).py == 1);
  // 2 ranks on a 10 x 3 box: 2 x 1 = 2 * 3 = 6 < 1 x 2 = 2 * 10 = 20
  CHECK(grid(2, 10, 3, 1.0).px == 2);
  CHECK(grid(2, 10, 3, 1.0).py == 1);
  // 2 ranks on a 3 x 10 box: 1 x 2 = 2 * 3 = 6 < 2 x 1 = 20
  CHECK(grid(2, 3, 10, 1.0).px == 1);
  CHECK(grid(2, 3, 10, 1.0).py == 2);
  // 6 ranks on a 12 x 6 box, width 1: 6 x 1 = 36 < 3 x 2 = 18 + 24 = 42 < 2 x 3 = 12 + 36 = 48 < 1 x 6 = 72
  CHECK(grid(6, 12, 6, 1.0).px == 6);
  CHECK(grid(6, 12, 6, 1.0).py == 1);
  // the same with width 2.5: 6 x 1 is 2 wide, 2 x 3 and 1 x 6 are 2 and 1 tall: only 3 x 2 (4 x 3) fits
  CHECK(grid(6, 12, 6, 2.5).px == 3);
  CHECK(grid(6, 12, 6, 2.5).py == 2);
  // 8 ranks on a 3 x 3 box, width 0.7: 8 x 1 and 1 x 8 are 0.375 wide; 4 x 2 = 12 + 6 = 18 ties with
  // 2 x 4 = 6 + 12 = 18: 4 x 2
  CHECK(grid(8, 3, 3, 0.7).px == 4);
  CHECK(grid(8, 3, 3, 0.7).py == 2);
  // 16 ranks on a 3 x 3 box, width 0.7: only 4 x 4 (0.75 x 0.75) fits
  CHECK(grid(16, 3, 3, 0.7).px == 4);
  CHECK(grid(16, 3, 3, 0.7).py == 4);
  // an open axis is split like a periodic one
  const auto open = domain::choose_process_grid(2, make_box(10, 3, false, false), 1.0);
  CHECK(open.px == 2);
  CHECK(open.py == 1);
  // a width exactly l / p fits: 12 / 4 = 3
  CHECK(grid(4, 12, 1, 3.0).px == 4);

  // a box too small: the message names the largest rank count that fits (4 x 4 subdomains 0.75 wide)
  CHECK(
      input_error([&] { grid(17, 3, 3, 0.7); }) ==
      "17 ranks cannot split the 3 x 3 box into subdomains at least 0.7 wide (at most 16 ranks fit: 4 x 4)");
  // 7 is prime and 7 x 1 does not fit, though 16 would: the nearest counts that fit are named too (the
  // counts that fit are the products a b with a, b <= 4: 1 2 3 4 6 8 9 12 16)
  CHECK(input_error([&] { grid(7, 3, 3, 0.7); }) ==
        "7 ranks cannot split the 3 x 3 box into subdomains at least 0.7 wide (at most 16 ranks fit: 4 x 4; "
        "the "
        "nearest counts that fit are 6 and 8)");
  CHECK(input_error([&] { grid(2, 1, 1, 0.7); }) ==
        "2 ranks cannot split the 1 x 1 box into subdomains at least 0.7 wide (at most 1 rank fits: 1 x 1)");
}

TEST_CASE("choose_process_grid against a brute force on random boxes", "[decomposition]") {
  std::mt19937 rng(20261126);
  std::uniform_real_distribution<float> length(1.5f, 10.0f);
  std::uniform_real_distribution<double> width(0.1, 1.5);
  int fitted = 0, refused = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const Box box = make_box(length(rng), length(rng), trial % 2 == 0, trial % 3 == 0);
    const double w = width(rng);
    const auto fits = [&](int px, int py) {
      return (px == 1 || static_cast<double>(box.lx) / px >= w) &&
             (py == 1 || static_cast<double>(box.ly) / py >= w);
    };
    for (int ranks = 1; ranks <= 64; ++ranks) {
      // brute force: every factorisation, the least surface, ties to the larger px
      int best_px = 0;
      for (int px = 1; px <= ranks; ++px) {
        if (ranks % px != 0 || !fits(px, ranks / px)) continue;
        if (best_px == 0 || surface(px, ranks / px, box) <= surface(best_px, ranks / best_px, box))
          best_px = px;
      }
      INFO("box " << box.lx << " x " << box.ly << ", width " << w << ", " << ranks << " ranks");
      if (best_px == 0) {
        ++refused;
        int mx = 1, my = 1;
        while (static_cast<double>(box.lx) / (mx + 1) >= w) ++mx;
        while (static_cast<double>(box.ly) / (my + 1) >= w) ++my;
        const std::string most = std::to_string(mx * my) + (mx * my == 1 ? " rank fits: " : " ranks fit: ") +
                                 std::to_string(mx) + " x " + std::to_string(my);
        CHECK_THAT(input_error([&] { domain::choose_process_grid(ranks, box, w); }),
                   Catch::Contains("at most " + most));
        continue;
      }
      ++fitted;
      const ProcessGrid g = domain::choose_process_grid(ranks, box, w);
      REQUIRE(g.px * g.py == ranks);
      CHECK(g.px == best_px);
      CHECK(fits(g.px, g.py));
      // the decomposition with halo width = min_width accepts it, and its finite subdomains are that wide
      const Decomposition d(g, box, w);
      for (int r = 0; r < d.ranks(); ++r) {
        const Subdomain b = d.bounds(r);
        if (g.px > 1 && std::isfinite(b.x0) && std::isfinite(b.x1)) CHECK(b.x1 - b.x0 >= w);
        if (g.py > 1 && std::isfinite(b.y0) && std::isfinite(b.y1)) CHECK(b.y1 - b.y0 >= w);
      }
    }
  }
  CHECK(fitted > 0);
  CHECK(refused > 0);
}

TEST_CASE("owner and bounds agree on random points and exactly on the cuts", "[decomposition]") {
  std::mt19937 rng(7);
  for (const Box shape : {make_box(1, 1), make_box(0.3f, 7.3f), make_box(10, 3)})
    for (const int periodic : {0, 1, 2, 3})
      for (int px = 1; px <= 7; px += 2)
        for (int py = 1; py <= 5; ++py) {
          Box box = shape;
          box.periodic_x = (periodic & 1) != 0;
          box.periodic_y = (periodic & 2) != 0;
          const Decomposition d(ProcessGrid{px, py}, box, 0.01);
          INFO(px << " x " << py << " on " << box.lx << " x " << box.ly << ", periodic " << periodic);
          REQUIRE(d.ranks() == px * py);
          for (int r = 0; r < d.ranks(); ++r) {
            const auto c = d.coords(r);
            CHECK(c[0] + px * c[1] == r);
            CHECK(d.rank_at(c[0], c[1]) == r);
            // one period away: the same rank on a periodic axis, none on an open one
            CHECK(d.rank_at(c[0] + px, c[1]) == (box.periodic_x ? r : -1));
            CHECK(d.rank_at(c[0] - 2 * px, c[1]) == (box.periodic_x ? r : -1));
            CHECK(d.rank_at(c[0], c[1] - py) == (box.periodic_y ? r : -1));

            // the cuts: x0 belongs to the rank, the float below it to the left neighbour; the double below
            // x1 to the rank, x1 to the right neighbour (wrapping to column 0 on a periodic axis)
            const Subdomain b = d.bounds(r);
            CHECK(b.x0 < b.x1);
            CHECK(b.y0 < b.y1);
            CHECK(std::isinf(b.x0) == (!box.periodic_x && c[0] == 0));
            CHECK(std::isinf(b.x1) == (!box.periodic_x && c[0] == px - 1));
            const double ym = inside(b.y0, b.y1), xm = inside(b.x0, b.x1);
            if (std::isfinite(b.x0)) {
              CHECK(b.x0 == static_cast<double>(c[0]) * box.lx / px);
              CHECK(d.owner(b.x0, ym) == r);
              if (c[0] > 0) CHECK(d.owner(std::nextafter(b.x0, -kInfinity), ym) == d.rank_at(c[0] - 1, c[1]));
            }
            if (std::isfinite(b.x1)) {
              CHECK(d.owner(std::nextafter(b.x1, -kInfinity), ym) == r);
              CHECK(d.owner(b.x1, ym) == d.rank_at(c[0] + 1, c[1]));
            }
            if (std::isfinite(b.y0)) {
              CHECK(d.owner(xm, b.y0) == r);
              if (c[1] > 0) CHECK(d.owner(xm, std::nextafter(b.y0, -kInfinity)) == d.rank_at(c[0], c[1] - 1));
            }
            if (std::isfinite(b.y1)) {
              CHECK(d.owner(xm, std::nextafter(b.y1, -kInfinity)) == r);
              CHECK(d.owner(xm, b.y1) == d.rank_at(c[0], c[1] + 1));
            }
            // neighbouring subdomains share their cut exactly
            if (c[0] + 1 < px) CHECK(d.bounds(d.rank_at(c[0] + 1, c[1])).x0 == b.x1);
            if (c[1] + 1 < py) CHECK(d.bounds(d.rank_at(c[0], c[1] + 1)).y0 == b.y1);
          }

          // random points (beyond the box on open axes, wrapped into it on periodic ones) and the float cuts:
          // exactly one subdomain holds each, the owner's
          std::uniform_real_distribution<float> ux(box.periodic_x ? 0.0f : -0.5f * box.lx, 1.5f * box.lx);
          std::uniform_real_distribution<float> uy(box.periodic_y ? 0.0f : -0.5f * box.ly, 1.5f * box.ly);
          std::vector<std::array<float, 2>> points;
          for (int i = 0; i < 200; ++i) points.push_back({box.wrap_x(ux(rng)), box.wrap_y(uy(rng))});
          for (const float x : boundary_values(box.lx, px, 0.01, box.periodic_x))
            for (const float y : boundary_values(box.ly, py, 0.01, box.periodic_y)) points.push_back({x, y});
          for (const auto& p : points) {
            const int o = d.owner(p[0], p[1]);
            REQUIRE(o >= 0);
            REQUIRE(o < d.ranks());
            int holders = 0;
            for (int r = 0; r < d.ranks(); ++r) holders += d.bounds(r).contains(p[0], p[1]) ? 1 : 0;
            CHECK(holders == 1);
            CHECK(d.bounds(o).contains(p[0], p[1]));
            // a period away (exact: dyadic shifts of these floats) is the same owner on a periodic axis
            if (box.periodic_x) CHECK(d.owner(p[0] + static_cast<double>(box.lx), p[1]) == o);
            if (box.periodic_y) CHECK(d.owner(p[0], p[1] - static_cast<double>(box.ly)) == o);
          }
        }
}

TEST_CASE("halo messages deliver exactly the ghost band of every rank", "[decomposition]") {
  // Brute force: a receiver R with bounds [x0, x1) x [y0, y1) gets (source rank, source index, shift) for
  // every point of every rank and every shift in {-l, 0, l} on each periodic axis ({0} on an open one)
  // whose shifted position q is in the band: x0 - qx < w, qx - x1 < w, y0 - qy < w, qy - y1 < w, and not
  // in [x0, x1) x [y0, y1). The senders' messages must deliver the same multiset to each receiver.
  std::mt19937 rng(1234);
  const std::vector<std::array<int, 2>> grids = {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {3, 2}, {4, 3}, {2, 3}};
  struct Case {
    Box shape;
    double w;
  };
  // 12 x 6 cuts exactly (multiples of 1 for px, py <= 4 and 3); w = 0.75 is a float, so distances of
  // exactly w occur; w = 2 is wider than half a subdomain (points near two opposite faces) and exactly the
  // height of a 3-row subdomain; 7.3 x 5.1 cuts inexactly
  const std::vector<Case> cases = {
      {make_box(12, 6), 0.75}, {make_box(12, 6), 2.0}, {make_box(7.3f, 5.1f), 0.9}};
  long long delivered_total = 0, repeated = 0, exact_distance = 0;
  for (const Case& k : cases)
    for (const int periodic : {0, 1, 2, 3})
      for (const auto& pg : grids) {
        Box box = k.shape;
        box.periodic_x = (periodic & 1) != 0;
        box.periodic_y = (periodic & 2) != 0;
        const double w = k.w;
        const Decomposition d(ProcessGrid{pg[0], pg[1]}, box, w);
        INFO(pg[0] << " x " << pg[1] << " on " << box.lx << " x " << box.ly << ", periodic " << periodic
                   << ", w " << w);
        const int n_ranks = d.ranks();

        // points: uniform (beyond the box on open axes), and on / around every cut and at distance w of it
        std::vector<std::array<float, 2>> points;
        std::uniform_real_distribution<float> ux(box.periodic_x ? 0.0f : -0.3f * box.lx, 1.3f * box.lx);
        std::uniform_real_distribution<float> uy(box.periodic_y ? 0.0f : -0.3f * box.ly, 1.3f * box.ly);
        for (int i = 0; i < 400; ++i) points.push_back({box.wrap_x(ux(rng)), box.wrap_y(uy(rng))});
        const auto bx = boundary_values(box.lx, pg[0], w, box.periodic_x);
        const auto by = boundary_values(box.ly, pg[1], w, box.periodic_y);
        for (const float x : bx) {
          points.push_back({x, box.wrap_y(uy(rng))});
          for (const float y : by) points.push_back({x, y});
        }
        for (const float y : by) points.push_back({box.wrap_x(ux(rng)), y});

        // each rank's own points, by owner()
        std::vector<std::vector<float>> xs(static_cast<std::size_t>(n_ranks)), ys(xs.size());
        for (const auto& p : points) {
          const auto o = static_cast<std::size_t>(d.owner(p[0], p[1]));
          REQUIRE(d.bounds(static_cast<int>(o)).contains(p[0], p[1]));
          xs[o].push_back(p[0]);
          ys[o].push_back(p[1]);
        }

        using Entry = std::tuple<int, int, float, float>;  // source rank, source index, shift x, shift y
        std::vector<std::vector<Entry>> got(xs.size()), want(xs.size());
        for (int s = 0; s < n_ranks; ++s) {
          const auto& sx = xs[static_cast<std::size_t>(s)];
          const auto& sy = ys[static_cast<std::size_t>(s)];
          const auto sends = d.halo_sends(s, Span<const float>(sx.data(), sx.size()),
                                          Span<const float>(sy.data(), sy.size()));
          // one message per existing neighbour direction, in order, each to rank_at(ix + dx, iy + dy)
          const auto c = d.coords(s);
          std::size_t m = 0;
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              if ((dx == 0 && dy == 0) || d.rank_at(c[0] + dx, c[1] + dy) < 0) continue;
              REQUIRE(m < sends.size());
              const HaloSend& h = sends[m++];
              CHECK(h.dx == dx);
              CHECK(h.dy == dy);
              CHECK(h.to == d.rank_at(c[0] + dx, c[1] + dy));
              CHECK(std::is_sorted(h.index.begin(), h.index.end()));
              CHECK(std::adjacent_find(h.index.begin(), h.index.end()) == h.index.end());
            }
          CHECK(m == sends.size());
          for (const HaloSend& h : sends)
            for (const auto i : h.index) {
              REQUIRE(i >= 0);
              REQUIRE(static_cast<std::size_t>(i) < sx.size());
              got[static_cast<std::size_t>(h.to)].emplace_back(s, i, h.shift_x, h.shift_y);
            }
        }

        const std::vector<float> shifts_x =
            box.periodic_x ? std::vector<float>{-box.lx, 0.0f, box.lx} : std::vector<float>{0.0f};
        const std::vector<float> shifts_y =
            box.periodic_y ? std::vector<float>{-box.ly, 0.0f, box.ly} : std::vector<float>{0.0f};
        for (int r = 0; r < n_ranks; ++r) {
          const Subdomain b = d.bounds(r);
          for (int s = 0; s < n_ranks; ++s) {
            const auto& sx = xs[static_cast<std::size_t>(s)];
            const auto& sy = ys[static_cast<std::size_t>(s)];
            for (std::size_t i = 0; i < sx.size(); ++i)
              for (const float tx : shifts_x)
                for (const float ty : shifts_y) {
                  const double qx = static_cast<double>(sx[i]) + tx, qy = static_cast<double>(sy[i]) + ty;
                  if (b.x0 - qx < w && qx - b.x1 < w && b.y0 - qy < w && qy - b.y1 < w && !b.contains(qx, qy))
                    want[static_cast<std::size_t>(r)].emplace_back(s, static_cast<int>(i), tx, ty);
                  if (b.x0 - qx == w || qx - b.x1 == w || b.y0 - qy == w || qy - b.y1 == w) ++exact_distance;
                }
          }
        }
        for (std::size_t r = 0; r < got.size(); ++r) {
          std::sort(got[r].begin(), got[r].end());
          std::sort(want[r].begin(), want[r].end());
          INFO("receiver " << r);
          CHECK(got[r].size() == want[r].size());
          CHECK(got[r] == want[r]);
          delivered_total += static_cast<long long>(got[r].size());
          // the same source point reaching one receiver twice (different shifts): px or py 1 or 2, periodic
          for (std::size_t e = 1; e < got[r].size(); ++e)
            if (std::get<0>(got[r][e]) == std::get<0>(got[r][e - 1]) &&
                std::get<1>(got[r][e]) == std::get<1>(got[r][e - 1]))
              ++repeated;
        }
      }
  CHECK(delivered_total > 10000);
  CHECK(repeated > 0);
  CHECK(exact_distance > 0);
}

TEST_CASE("decomposition errors", "[decomposition]") {
  const Box box = make_box(3, 3);
  // a halo wider than a subdomain: 4 columns of 0.75 with a halo of 1
  CHECK_THAT(input_error([&] {
               Decomposition(ProcessGrid{4, 1}, box, 1.0);
             }),
             Catch::Contains("narrower than the halo width 1 (at most 3 ranks along x fit)"));
  CHECK_THAT(input_error([&] {
               Decomposition(ProcessGrid{1, 5}, box, 0.7);
             }),
             Catch::Contains("along y, narrower than the halo width 0.7"));
  // exactly as wide is fine; a periodic axis that is not split but shorter than the halo is not
  CHECK_NOTHROW(Decomposition(ProcessGrid{3, 1}, box, 1.0));
  CHECK_THAT(input_error([&] {
               Decomposition(ProcessGrid{1, 1}, make_box(0.5f, 3), 1.0);
             }),
             Catch::Contains("periodic x length"));
  CHECK_NOTHROW(Decomposition(ProcessGrid{1, 1}, make_box(0.5f, 3, false, true), 1.0));
  CHECK_THROWS_AS(Decomposition(ProcessGrid{0, 1}, box, 0.1), InputError);
  CHECK_THROWS_AS(Decomposition(ProcessGrid{2, 2}, box, 0.0), InputError);
  CHECK_THROWS_AS(Decomposition(ProcessGrid{2, 2}, make_box(-1, 3), 0.1), InputError);

  // rank counts below 1, widths not positive
  CHECK_THAT(input_error([&] { domain::choose_process_grid(0, box, 0.5); }),
             Catch::Contains("rank count must be at least 1 (got 0)"));
  CHECK_THROWS_AS(domain::choose_process_grid(-3, box, 0.5), InputError);
  CHECK_THROWS_AS(domain::choose_process_grid(4, box, 0.0), InputError);
  CHECK_THROWS_AS(domain::choose_process_grid(4, box, -1.0), InputError);
  CHECK_THROWS_AS(domain::choose_process_grid(4, box, std::nan("")), InputError);

  // programming errors: ranks out of range, points farther outside the sender's subdomain than the slack
  // (the narrowest subdomain less w: 0.25 on 4 x 1, where x = 1.5 is 0.75 from rank 0's [0, 0.75) and 1.5
  // from it through the period), non-finite positions; within the slack (1.0 on 2 x 2) is fine
  const Decomposition d(ProcessGrid{2, 2}, box, 0.5);
  CHECK_THROWS_AS(d.bounds(4), std::invalid_argument);
  CHECK_THROWS_AS(d.coords(-1), std::invalid_argument);
  CHECK_THROWS_AS(d.owner(std::nan(""), 1.0), NumericalError);
  const std::vector<float> within = {0.5f, 2.5f}, wy = {0.5f, 0.5f};
  CHECK_NOTHROW(d.halo_sends(0, Span<const float>(within.data(), 2), Span<const float>(wy.data(), 2)));
  const std::vector<float> x = {0.5f, 1.5f}, y = {0.5f, 0.5f};
  const Decomposition d4(ProcessGrid{4, 1}, box, 0.5);
  CHECK_THROWS_WITH(
      d4.halo_sends(0, Span<const float>(x.data(), 2), Span<const float>(y.data(), 2)),
      Catch::Contains("lies 0.75 outside its subdomain [0, 0.75) x [0, 3), farther than the 0.25"));
  CHECK_THROWS_AS(d.halo_sends(0, Span<const float>(x.data(), 1), Span<const float>(y.data(), 2)),
                  std::invalid_argument);
  CHECK_NOTHROW(d.halo_sends(0, Span<const float>(x.data(), 1), Span<const float>(y.data(), 1)));
}

TEST_CASE(
    "points outside their subdomain (cells owned by their centre) reach exactly the bands that hold "
    "them",
    "[decomposition]") {
  // Each point belongs to the rank that owns its "centre", and lies up to the slack (the narrowest subdomain
  // less w) away from it, on either side of a cut or of a periodic face. Brute force: receiver R gets every
  // image (shift in {-l, 0, l} on periodic axes) of every point of every rank in its open box
  // (x0 - w, x1 + w) x (y0 - w, y1 + w), except its own points unshifted; a point's images are those of its
  // image nearest its owner's subdomain, the shift counted from where it is stored.
  std::mt19937 rng(77);
  long long delivered = 0, outside = 0, inside_other = 0;
  for (const int periodic : {0, 1, 2, 3})
    for (const std::array<int, 2> pg :
         std::vector<std::array<int, 2>>{{2, 1}, {3, 2}, {4, 1}, {1, 3}, {2, 2}}) {
      Box box = make_box(12, 9, (periodic & 1) != 0, (periodic & 2) != 0);
      const double w = 0.8;
      const Decomposition d(ProcessGrid{pg[0], pg[1]}, box, w);
      INFO(pg[0] << " x " << pg[1] << ", periodic " << periodic);
      const double slack_x = pg[0] > 1 ? 12.0 / pg[0] - w : 0.0, slack_y = pg[1] > 1 ? 9.0 / pg[1] - w : 0.0;
      std::uniform_real_distribution<float> u(0.0f, 1.0f);
      std::vector<std::vector<float>> xs(static_cast<std::size_t>(d.ranks())), ys(xs.size());
      for (int i = 0; i < 3000; ++i) {
        const float cx = u(rng) * box.lx, cy = u(rng) * box.ly;
        const int o = d.owner(cx, cy);
        const Subdomain b = d.bounds(o);
        // a position up to the slack outside the owner's subdomain (clamped to the box on open axes)
        const double sx = slack_x * 0.999, sy = slack_y * 0.999;
        double px = std::isfinite(b.x0) ? b.x0 - sx + u(rng) * (b.x1 - b.x0 + 2 * sx) : cx;
        double py = std::isfinite(b.y0) ? b.y0 - sy + u(rng) * (b.y1 - b.y0 + 2 * sy) : cy;
        if (!std::isfinite(b.x1)) px = cx;
        if (!std::isfinite(b.y1)) py = cy;
        const float fx = box.wrap_x(static_cast<float>(px)), fy = box.wrap_y(static_cast<float>(py));
        if (!b.contains(fx, fy)) ++outside;
        xs[static_cast<std::size_t>(o)].push_back(fx);
        ys[static_cast<std::size_t>(o)].push_back(fy);
      }
      using Entry = std::tuple<int, int, float, float>;
      std::vector<std::vector<Entry>> got(xs.size()), want(xs.size());
      for (int s = 0; s < d.ranks(); ++s) {
        const auto& sx = xs[static_cast<std::size_t>(s)];
        const auto& sy = ys[static_cast<std::size_t>(s)];
        for (const HaloSend& h : d.halo_sends(s, Span<const float>(sx.data(), sx.size()),
                                              Span<const float>(sy.data(), sy.size())))
          for (std::size_t k = 0; k < h.index.size(); ++k) {
            const std::uint8_t image = h.image.empty() ? 0 : h.image[k];
            got[static_cast<std::size_t>(h.to)].emplace_back(s, h.index[k],
                                                             h.shift_x + ((image & 1) ? h.image_x : 0.0f),
                                                             h.shift_y + ((image & 2) ? h.image_y : 0.0f));
          }
      }
      const std::vector<float> shifts_x =
          box.periodic_x ? std::vector<float>{-box.lx, 0.0f, box.lx} : std::vector<float>{0.0f};
      const std::vector<float> shifts_y =
          box.periodic_y ? std::vector<float>{-box.ly, 0.0f, box.ly} : std::vector<float>{0.0f};
      for (int r = 0; r < d.ranks(); ++r) {
        const Subdomain b = d.bounds(r);
        for (int s = 0; s < d.ranks(); ++s) {
          const auto& sx = xs[static_cast<std::size_t>(s)];
          const auto& sy = ys[static_cast<std::size_t>(s)];
          const Subdomain own = d.bounds(s);
          for (std::size_t i = 0; i < sx.size(); ++i) {
            // the point's image nearest its owner's subdomain (what it is one period off from, if wrapped)
            const auto nearest = [](double v, double lo, double hi, float l, bool split) {
              if (!split || (lo <= v && v < hi)) return 0.0f;
              const auto out = [&](double p) { return p < lo ? lo - p : (p >= hi ? p - hi : 0.0); };
              return out(v - l) < out(v) ? -l : (out(v + l) < out(v) ? l : 0.0f);
            };
            const float cx = nearest(sx[i], own.x0, own.x1, box.lx, box.periodic_x && pg[0] > 1);
            const float cy = nearest(sy[i], own.y0, own.y1, box.ly, box.periodic_y && pg[1] > 1);
            for (const float tx : shifts_x)
              for (const float ty : shifts_y) {
                const double qx = static_cast<double>(sx[i]) + cx + tx,
                             qy = static_cast<double>(sy[i]) + cy + ty;
                if (s == r && tx == 0.0f && ty == 0.0f) continue;
                if (b.x0 - qx < w && qx - b.x1 < w && b.y0 - qy < w && qy - b.y1 < w) {
                  want[static_cast<std::size_t>(r)].emplace_back(s, static_cast<int>(i), cx + tx, cy + ty);
                  if (s != r && b.contains(qx, qy)) ++inside_other;
                }
              }
          }
        }
        std::sort(got[static_cast<std::size_t>(r)].begin(), got[static_cast<std::size_t>(r)].end());
        std::sort(want[static_cast<std::size_t>(r)].begin(), want[static_cast<std::size_t>(r)].end());
        const auto& g = got[static_cast<std::size_t>(r)];
        const auto& h = want[static_cast<std::size_t>(r)];
        std::vector<Entry> missing, extra;
        std::set_difference(h.begin(), h.end(), g.begin(), g.end(), std::back_inserter(missing));
        std::set_difference(g.begin(), g.end(), h.begin(), h.end(), std::back_inserter(extra));
        const auto describe = [&](const std::vector<Entry>& v) {
          if (v.empty()) return std::string("none");
          const auto& [s, i, tx, ty] = v[0];
          return std::to_string(v.size()) + ", e.g. rank " + std::to_string(s) + " point (" +
                 std::to_string(xs[static_cast<std::size_t>(s)][static_cast<std::size_t>(i)]) + ", " +
                 std::to_string(ys[static_cast<std::size_t>(s)][static_cast<std::size_t>(i)]) + ") shift (" +
                 std::to_string(tx) + ", " + std::to_string(ty) + ")";
        };
        INFO("receiver " << r << ": missing " << describe(missing) << "; extra " << describe(extra));
        CHECK(g == h);
        delivered += static_cast<long long>(g.size());
      }
    }
  CHECK(delivered > 10000);
  CHECK(outside > 1000);       // points beyond their subdomain
  CHECK(inside_other > 1000);  // ... delivered into the subdomain of the rank they stick into
}

TEST_CASE("outside() is the Chebyshev distance to the subdomain at the nearest image, against a brute force",
          "[decomposition]") {
  // Brute force: the smallest, over the images (shifts 0, ±l on a periodic split axis; x unchanged on an axis
  // that is not split, which holds every position), of the larger of the distances along x and y to the
  // subdomain's intervals (0 along an axis that is not split).
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-0.2f, 1.2f);
  long long outside = 0;
  for (const int periodic : {0, 1, 2, 3})
    for (const std::array<int, 2> pg :
         std::vector<std::array<int, 2>>{{1, 1}, {2, 1}, {3, 2}, {1, 3}, {2, 2}}) {
      const Box box = make_box(12, 9, (periodic & 1) != 0, (periodic & 2) != 0);
      const Decomposition d(ProcessGrid{pg[0], pg[1]}, box, 0.8);
      for (int rank = 0; rank < d.ranks(); ++rank) {
        const Subdomain b = d.bounds(rank);
        const auto along = [](double v, double lo, double hi) {
          return v < lo ? lo - v : (v >= hi ? v - hi : 0.0);
        };
        const auto best = [&](double v, double lo, double hi, double l, bool periodic_axis, int parts) {
          if (parts == 1) return 0.0;
          double m = along(v, lo, hi);
          if (periodic_axis) m = std::min({m, along(v - l, lo, hi), along(v + l, lo, hi)});
          return m;
        };
        for (int i = 0; i < 400; ++i) {
          float x = u(rng) * box.lx, y = u(rng) * box.ly;
          if (box.periodic_x) x = box.wrap_x(x);
          if (box.periodic_y) y = box.wrap_y(y);
          const double want = std::max(best(x, b.x0, b.x1, box.lx, box.periodic_x, pg[0]),
                                       best(y, b.y0, b.y1, box.ly, box.periodic_y, pg[1]));
          INFO(pg[0] << " x " << pg[1] << ", periodic " << periodic << ", rank " << rank << " at (" << x
                     << ", " << y << ")");
          REQUIRE(d.outside(rank, x, y) == want);
          if (want > 0.0) ++outside;
        }
      }
    }
  CHECK(outside > 1000);
  const Decomposition d(ProcessGrid{2, 1}, make_box(12, 9, true, true), 0.8);
  CHECK_THROWS_AS(d.outside(0, std::nanf(""), 1.0f), NumericalError);
  CHECK_THROWS_AS(d.outside(2, 1.0f, 1.0f), std::invalid_argument);
}
