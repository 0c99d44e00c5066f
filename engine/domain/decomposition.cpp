#include "engine/domain/decomposition.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "engine/exec/error.hpp"

namespace tissue::domain {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// Cut i of an axis of length l split into p parts: i l / p. The one formula for every cut.
double cut(int i, double l, int p) {
  return static_cast<double>(i) * l / p;
}

/// Whether every part of an axis of length l split into p > 1 parts is at least w wide (the distances of
/// consecutive cuts). Each distance is within 2 l eps of l / p (the cuts' and the difference's rounding), so
/// the cuts are only looked at when l / p is that close to w.
bool parts_fit(double l, int p, double w) {
  const double mean = l / p, slack = 4.0 * l * std::numeric_limits<double>::epsilon();
  if (mean - w > slack) return true;
  if (w - mean > slack) return false;
  for (int i = 0; i < p; ++i)
    if (cut(i + 1, l, p) - cut(i, l, p) < w) return false;
  return true;
}

/// The largest p in [1, cap] whose parts fit (an unsplit axis always fits).
int most_parts(double l, double w, int cap) {
  const double guess = std::floor(l / w) + 1.0;  // l / (guess) < w up to rounding
  int p = guess >= static_cast<double>(cap) ? cap : static_cast<int>(guess);
  while (p > 1 && !parts_fit(l, p, w)) --p;
  return p;
}

/// v wrapped into [0, l): the exact remainder, the rounding case -tiny + l -> l mapped to 0. v finite.
double wrap(double v, double l) {
  double w = std::fmod(v, l);
  if (w < 0.0) w += l;
  return w >= l ? 0.0 : w;
}

/// The part i of an axis of length l split into p with cut(i) <= v < cut(i + 1), the outer parts unbounded:
/// floor(v p / l) clamped to [0, p - 1], then stepped to agree with the cuts where the rounding of the
/// quotient and of the cuts differ. v finite.
int part_of(double v, double l, int p) {
  const double guess = std::floor(v * p / l);
  int i = guess <= 0.0 ? 0 : (guess >= p - 1 ? p - 1 : static_cast<int>(guess));
  while (i > 0 && v < cut(i, l, p)) --i;
  while (i < p - 1 && v >= cut(i + 1, l, p)) ++i;
  return i;
}

std::string str(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string box_name(const Box& box) {
  return str(box.lx) + " x " + str(box.ly) + " box";
}

void check_box(const Box& box) {
  if (!(box.lx > 0.0f) || !(box.ly > 0.0f) || !std::isfinite(box.lx) || !std::isfinite(box.ly))
    throw InputError("the box lengths must be positive and finite to place the subdomain cuts (got " +
                     str(box.lx) + " x " + str(box.ly) + ")");
}

std::string ranks_name(long long n) {
  return std::to_string(n) + (n == 1 ? " rank" : " ranks");
}

/// The message for a rank count that no factorisation fits: the largest count that fits and, when smaller
/// counts do not all fit, the nearest ones below and above.
std::string no_grid_message(int ranks, const Box& box, double min_width) {
  // no fit means px = ranks does not fit along x, nor py = ranks along y: both maxima are below ranks
  const int mx = most_parts(box.lx, min_width, ranks), my = most_parts(box.ly, min_width, ranks);
  const long long most = static_cast<long long>(mx) * my;
  std::string m = ranks_name(ranks) + " cannot split the " + box_name(box) + " into subdomains at least " +
                  str(min_width) + " wide (at most " + ranks_name(most) + (most == 1 ? " fits: " : " fit: ") +
                  std::to_string(mx) + " x " + std::to_string(my);
  if (most > ranks) {
    long long below = 1, above = most;
    for (long long a = 1; a <= mx; ++a) {
      const long long b_below = std::min<long long>(my, ranks / a), b_above = ranks / a + 1;
      if (a * b_below < ranks && a * b_below > below) below = a * b_below;
      if (b_above <= my && a * b_above < above) above = a * b_above;
    }
    m += "; the nearest counts that fit are " + std::to_string(below) + " and " + std::to_string(above);
  }
  return m + ")";
}

/// A position outside [lo, hi) on a periodic axis split in parts: its image nearest the part (exact: a float
/// plus a float length in double).
double nearest_image(double v, double lo, double hi, double length) {
  if (lo <= v && v < hi) return v;
  const auto outside = [&](double u) { return u < lo ? lo - u : (u >= hi ? u - hi : 0.0); };
  double best = v;
  for (const double u : {v - length, v + length})
    if (outside(u) < outside(best)) best = u;
  return best;
}

}  // namespace

ProcessGrid choose_process_grid(int ranks, const Box& box, double min_width) {
  if (ranks < 1) throw InputError("the rank count must be at least 1 (got " + std::to_string(ranks) + ")");
  if (!(min_width > 0.0) || !std::isfinite(min_width))
    throw InputError("the smallest subdomain width must be positive and finite (got " + str(min_width) + ")");
  check_box(box);
  ProcessGrid best{0, 0};
  double best_surface = kInfinity;
  const auto consider = [&](int px, int py) {
    if ((px > 1 && !parts_fit(box.lx, px, min_width)) || (py > 1 && !parts_fit(box.ly, py, min_width)))
      return;
    const double surface =
        (px > 1 ? px * static_cast<double>(box.ly) : 0.0) + (py > 1 ? py * static_cast<double>(box.lx) : 0.0);
    if (best.px == 0 || surface < best_surface || (surface == best_surface && px > best.px)) {
      best = ProcessGrid{px, py};
      best_surface = surface;
    }
  };
  for (int d = 1; d <= ranks / d; ++d)
    if (ranks % d == 0) {
      consider(d, ranks / d);
      if (d != ranks / d) consider(ranks / d, d);
    }
  if (best.px == 0) throw InputError(no_grid_message(ranks, box, min_width));
  return best;
}

Decomposition::Decomposition(ProcessGrid grid, const Box& box, double halo_width)
    : grid_(grid), box_(box), halo_width_(halo_width) {
  if (grid.px < 1 || grid.py < 1)
    throw InputError("the process grid " + std::to_string(grid.px) + " x " + std::to_string(grid.py) +
                     " needs at least one rank along each axis");
  if (grid.px > INT_MAX / grid.py)
    throw InputError("the process grid " + std::to_string(grid.px) + " x " + std::to_string(grid.py) +
                     " has more ranks than an int counts");
  check_box(box);
  if (!(halo_width > 0.0) || !std::isfinite(halo_width))
    throw InputError("the halo width must be positive and finite (got " + str(halo_width) + ")");
  const auto check_axis = [&](const char* axis, double l, int p, bool periodic) {
    if (p > 1 && !parts_fit(l, p, halo_width))
      throw InputError("the " + std::to_string(grid.px) + " x " + std::to_string(grid.py) +
                       " process grid cuts the " + box_name(box) + " into subdomains " + str(l / p) +
                       " wide along " + axis + ", narrower than the halo width " + str(halo_width) +
                       " (at most " + std::to_string(most_parts(l, halo_width, p)) + " ranks along " + axis +
                       " fit)");
    if (p == 1 && periodic && l < halo_width)
      throw InputError("the periodic " + std::string(axis) + " length of the " + box_name(box) +
                       " is shorter than the halo width " + str(halo_width) +
                       " (a point would be its own neighbour more than once)");
  };
  check_axis("x", box.lx, grid.px, box.periodic_x);
  check_axis("y", box.ly, grid.py, box.periodic_y);
}

std::array<int, 2> Decomposition::coords(int rank) const {
  if (rank < 0 || rank >= ranks())
    throw std::invalid_argument("Decomposition: rank " + std::to_string(rank) + " is not in [0, " +
                                std::to_string(ranks()) + ")");
  return {rank % grid_.px, rank / grid_.px};
}

int Decomposition::rank_at(int ix, int iy) const {
  const auto along = [](int i, int p, bool periodic) {
    if (i >= 0 && i < p) return i;
    if (!periodic) return -1;
    const int r = i % p;
    return r < 0 ? r + p : r;
  };
  const int jx = along(ix, grid_.px, box_.periodic_x), jy = along(iy, grid_.py, box_.periodic_y);
  return jx < 0 || jy < 0 ? -1 : jx + grid_.px * jy;
}

Subdomain Decomposition::bounds(int rank) const {
  const auto c = coords(rank);
  const int px = grid_.px, py = grid_.py;
  const bool open_x = !box_.periodic_x, open_y = !box_.periodic_y;
  return Subdomain{c[0] == 0 && open_x ? -kInfinity : cut(c[0], box_.lx, px),
                   c[0] == px - 1 && open_x ? kInfinity : cut(c[0] + 1, box_.lx, px),
                   c[1] == 0 && open_y ? -kInfinity : cut(c[1], box_.ly, py),
                   c[1] == py - 1 && open_y ? kInfinity : cut(c[1] + 1, box_.ly, py)};
}

int Decomposition::owner(double x, double y) const {
  if (!std::isfinite(x) || !std::isfinite(y))
    throw NumericalError("Decomposition::owner: position (" + str(x) + ", " + str(y) + ") is not finite");
  if (box_.periodic_x) x = wrap(x, box_.lx);
  if (box_.periodic_y) y = wrap(y, box_.ly);
  return part_of(x, box_.lx, grid_.px) + grid_.px * part_of(y, box_.ly, grid_.py);
}

std::vector<HaloSend> Decomposition::halo_sends(int rank, Span<const float> x, Span<const float> y) const {
  if (x.size() != y.size())
    throw std::invalid_argument("Decomposition::halo_sends: " + std::to_string(x.size()) + " x but " +
                                std::to_string(y.size()) + " y positions");
  if (x.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw std::invalid_argument("Decomposition::halo_sends: more points than 32-bit indices count");
  const auto c = coords(rank);
  const Subdomain b = bounds(rank);
  const double w = halo_width_;

  // the messages, in the order dy = -1..1, then dx = -1..1; slot[dy + 1][dx + 1] indexes them (-1: none)
  std::vector<HaloSend> sends;
  int slot[3][3] = {{-1, -1, -1}, {-1, -1, -1}, {-1, -1, -1}};
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      if (dx == 0 && dy == 0) continue;
      const int to = rank_at(c[0] + dx, c[1] + dy);
      if (to < 0) continue;
      HaloSend s;
      s.to = to;
      s.dx = dx;
      s.dy = dy;
      const int jx = c[0] + dx, jy = c[1] + dy;
      s.shift_x = jx < 0 ? box_.lx : (jx >= grid_.px ? -box_.lx : 0.0f);
      s.shift_y = jy < 0 ? box_.ly : (jy >= grid_.py ? -box_.ly : 0.0f);
      slot[dy + 1][dx + 1] = static_cast<int>(sends.size());
      sends.push_back(std::move(s));
    }

  // how far a point may lie outside the subdomain along each split axis: the narrowest part less w, so that
  // only the neighbours' bands can reach it (an axis not split holds every position)
  const auto slack = [&](int parts, double length) {
    if (parts == 1) return 0.0;
    double narrowest = length;
    for (int i = 0; i < parts; ++i)
      narrowest = std::min(narrowest, cut(i + 1, length, parts) - cut(i, length, parts));
    return narrowest - w;
  };
  const double slack_x = slack(grid_.px, box_.lx), slack_y = slack(grid_.py, box_.ly);

  for (std::size_t i = 0; i < x.size(); ++i) {
    double xi = x[i], yi = y[i];
    std::uint8_t image = 0;
    if (!std::isfinite(xi) || !std::isfinite(yi))
      throw NumericalError("Decomposition::halo_sends: point " + std::to_string(i) + " at (" + str(xi) +
                           ", " + str(yi) + ") of rank " + std::to_string(rank) + " is not finite");
    if (!b.contains(xi, yi)) {
      if (box_.periodic_x && grid_.px > 1) xi = nearest_image(xi, b.x0, b.x1, box_.lx);
      if (box_.periodic_y && grid_.py > 1) yi = nearest_image(yi, b.y0, b.y1, box_.ly);
      image = static_cast<std::uint8_t>((xi != x[i] ? 1 : 0) | (yi != y[i] ? 2 : 0));
      const double out_x = xi < b.x0 ? b.x0 - xi : (xi >= b.x1 ? xi - b.x1 : 0.0);
      const double out_y = yi < b.y0 ? b.y0 - yi : (yi >= b.y1 ? yi - b.y1 : 0.0);
      if ((out_x > 0.0 && !(out_x <= slack_x)) || (out_y > 0.0 && !(out_y <= slack_y)))
        throw std::invalid_argument(
            "Decomposition::halo_sends: point " + std::to_string(i) + " at (" + str(x[i]) + ", " + str(y[i]) +
            ") of rank " + std::to_string(rank) + " lies " + str(std::max(out_x, out_y)) +
            " outside its subdomain [" + str(b.x0) + ", " + str(b.x1) + ") x [" + str(b.y0) + ", " +
            str(b.y1) + "), farther than the " + str(out_x > 0.0 && !(out_x <= slack_x) ? slack_x : slack_y) +
            " its neighbours' bands allow (narrowest subdomain less the halo width): "
            "migrate first, or widen the subdomains");
    }
    // near[d + 1]: within w of the face facing direction d, or beyond it; d = 0: within w of the subdomain
    const bool near_x[3] = {xi - b.x0 < w, b.x0 - xi < w && xi - b.x1 < w, b.x1 - xi < w};
    const bool near_y[3] = {yi - b.y0 < w, b.y0 - yi < w && yi - b.y1 < w, b.y1 - yi < w};
    if (!near_x[0] && !near_x[2] && !near_y[0] && !near_y[2]) continue;
    for (int dy = 0; dy < 3; ++dy) {
      if (!near_y[dy]) continue;
      for (int dx = 0; dx < 3; ++dx) {
        if (!near_x[dx] || slot[dy][dx] < 0) continue;
        HaloSend& h = sends[static_cast<std::size_t>(slot[dy][dx])];
        // the flags are kept from the first flagged point on, with zeros for the points before it
        if (image != 0 && h.image.size() < h.index.size()) h.image.assign(h.index.size(), 0);
        if (image != 0 || !h.image.empty()) h.image.push_back(image);
        h.index.push_back(static_cast<std::int32_t>(i));
        if (image & 1) h.image_x = static_cast<float>(xi - static_cast<double>(x[i]));
        if (image & 2) h.image_y = static_cast<float>(yi - static_cast<double>(y[i]));
      }
    }
  }
  return sends;
}

double Decomposition::outside(int rank, float x, float y) const {
  return outside(rank, Span<const float>(&x, 1), Span<const float>(&y, 1));
}

double Decomposition::outside(int rank, Span<const float> x, Span<const float> y) const {
  if (x.size() != y.size())
    throw std::invalid_argument("Decomposition::outside: " + std::to_string(x.size()) + " x but " +
                                std::to_string(y.size()) + " y positions");
  const Subdomain b = bounds(rank);
  const bool image_x = box_.periodic_x && grid_.px > 1, image_y = box_.periodic_y && grid_.py > 1;
  double farthest = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    double xi = x[i], yi = y[i];
    if (!std::isfinite(xi) || !std::isfinite(yi))
      throw NumericalError("Decomposition::outside: position (" + str(xi) + ", " + str(yi) +
                           ") is not finite");
    if (b.contains(xi, yi)) continue;
    if (image_x) xi = nearest_image(xi, b.x0, b.x1, box_.lx);
    if (image_y) yi = nearest_image(yi, b.y0, b.y1, box_.ly);
    const double out_x = grid_.px == 1 ? 0.0 : (xi < b.x0 ? b.x0 - xi : (xi >= b.x1 ? xi - b.x1 : 0.0));
    const double out_y = grid_.py == 1 ? 0.0 : (yi < b.y0 ? b.y0 - yi : (yi >= b.y1 ? yi - b.y1 : 0.0));
    farthest = std::max({farthest, out_x, out_y});
  }
  return farthest;
}

}  // namespace tissue::domain
