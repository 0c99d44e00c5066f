// Chemotaxis of cells up a grid field (modules/chemotaxis): the chemotactic velocity (force / friction)
// equals chi(c) times the sampled gradient against an independent double-precision trilinear evaluation; a
// point source adds exactly rate dt; one cell in a linear field drifts at the velocity the force balance
// predicts (with and without receptor saturation, whatever the SEM's friction); in the shipped scenario
// chemotaxis_source the cells approach the source at every step checked; bad input is refused.
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/exec/device_buffer.hpp"
#include "engine/exec/error.hpp"
#include "engine/io/scenario.hpp"
#include "modules/builtin_modules.hpp"
#include "modules/chemotaxis/chemotaxis.hpp"
#include "modules/chemotaxis/point_source.hpp"

using namespace tissue;
using chemotaxis::ChemotaxisParams;
using chemotaxis::ChemotaxisSystem;

namespace {

/// Independent transcription of a trilinear interpolant of node values (nodes at (i + 1/2) h) and its
/// gradient at p, in double: ghosts beyond a face are the node on the other side (periodic), the mirrored
/// inside node (Neumann) or `ghost` (Dirichlet). p must lie inside the grid's extent.
struct Trilinear {
  std::array<int, 3> n;
  double h;
  std::array<GridBoundary, 6> faces;
  std::array<double, 6> ghost;
  std::vector<double> u;  ///< (k * ny + j) * nx + i

  double node(std::array<int, 3> idx) const {
    for (int d = 0; d < 3; ++d) {
      if (idx[d] >= 0 && idx[d] < n[d]) continue;
      const int face = 2 * d + (idx[d] < 0 ? 0 : 1);
      switch (faces[static_cast<std::size_t>(face)]) {
        case GridBoundary::periodic:
          idx[d] = (idx[d] + n[d]) % n[d];
          break;
        case GridBoundary::neumann:
          idx[d] = idx[d] < 0 ? 0 : n[d] - 1;
          break;
        case GridBoundary::dirichlet:
          return ghost[static_cast<std::size_t>(face)];
      }
    }
    return u[(static_cast<std::size_t>(idx[2]) * n[1] + idx[1]) * n[0] + idx[0]];
  }
  /// Value at p; the gradient into g.
  double eval(const std::array<double, 3>& p, std::array<double, 3>& g) const {
    std::array<int, 3> lo;
    std::array<double, 3> f;
    for (int d = 0; d < 3; ++d) {
      const double s = p[static_cast<std::size_t>(d)] / h - 0.5;
      lo[d] = static_cast<int>(std::floor(s));
      f[d] = s - std::floor(s);
    }
    double value = 0.0;
    g = {0.0, 0.0, 0.0};
    for (int c = 0; c < 2; ++c)
      for (int b = 0; b < 2; ++b)
        for (int a = 0; a < 2; ++a) {
          const double v = node({lo[0] + a, lo[1] + b, lo[2] + c});
          const double w[3] = {a ? f[0] : 1 - f[0], b ? f[1] : 1 - f[1], c ? f[2] : 1 - f[2]};
          const double dw[3] = {a ? 1 / h : -1 / h, b ? 1 / h : -1 / h, c ? 1 / h : -1 / h};
          value += w[0] * w[1] * w[2] * v;
          g[0] += dw[0] * w[1] * w[2] * v;
          g[1] += w[0] * dw[1] * w[2] * v;
          g[2] += w[0] * w[1] * dw[2] * v;
        }
    return value;
  }
};

/// A World of one cell holding `count` elements at uniformly random points of [lo, hi]^3 per axis, and a
/// float grid field "c" of random values in [0, 2) on `t`'s grid, the same values in `t.u`.
std::unique_ptr<World> random_world(Trilinear& t, std::mt19937& rng, int count,
                                    const std::array<double, 3>& lo, const std::array<double, 3>& hi,
                                    GridField<float>*& field) {
  Box box;
  box.periodic_x = t.faces[0] == GridBoundary::periodic;
  box.periodic_y = t.faces[2] == GridBoundary::periodic;
  box.lx = static_cast<float>(t.n[0] * t.h);
  box.ly = static_cast<float>(t.n[1] * t.h);
  auto w = std::make_unique<World>(box);
  const std::int32_t cell = w->add_cell_host();
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int e = 0; e < count; ++e) {
    float p[3];
    for (int d = 0; d < 3; ++d)
      p[d] =
          static_cast<float>(lo[static_cast<std::size_t>(d)] +
                             (hi[static_cast<std::size_t>(d)] - lo[static_cast<std::size_t>(d)]) * unit(rng));
    w->add_element_host(cell, p[0], p[1], p[2]);
  }
  w->commit();
  const GridShape shape{t.n[0], t.n[1], t.n[2], t.h};
  auto geometry = make_grid_geometry<float>(shape, t.faces, 1, [&](int f, int) { return t.ghost[f]; });
  field =
      &w->add_field(std::make_unique<GridField<float>>("c", shape, std::vector<std::string>{"c"}, geometry));
  t.u.resize(shape.cells());
  for (std::size_t k = 0; k < shape.cells(); ++k) {
    field->host()[k] = static_cast<float>(2.0 * unit(rng));
    t.u[k] = static_cast<double>(field->host()[k]);
  }
  field->upload();
  return w;
}

}  // namespace

TEST_CASE(
    "chemotaxis: the velocity (force / friction) is chi(c) times the sampled gradient, evaluated "
    "independently",
    "[chemotaxis]") {
  std::mt19937 rng(31);
  struct Case {
    const char* what;
    std::array<GridBoundary, 6> faces;
    std::array<double, 3> lo, hi;  // where the elements are
  };
  const auto P = GridBoundary::periodic, N = GridBoundary::neumann, D = GridBoundary::dirichlet;
  const double h = 0.25;
  const std::array<int, 3> n{10, 8, 6};
  // the whole extent: the half cells at the faces exercise the ghosts (mirror, Dirichlet value, wrap)
  const std::vector<Case> cases{
      {"zero-flux box", {N, N, N, N, N, N}, {0.0, 0.0, 0.0}, {n[0] * h, n[1] * h, n[2] * h}},
      {"periodic in x and y, Dirichlet top",
       {P, P, P, P, N, D},
       {0.0, 0.0, 0.0},
       {n[0] * h, n[1] * h, n[2] * h}},
  };
  for (const auto& k : cases)
    for (const double saturation : {0.0, 0.7}) {
      INFO(k.what << ", c_sat = " << saturation);
      Trilinear t{n, h, k.faces, {0.0, 0.0, 0.0, 0.0, 0.0, 1.3}, {}};
      GridField<float>* field = nullptr;
      const int count = 500;
      auto w = random_world(t, rng, count, k.lo, k.hi, field);
      ChemotaxisParams params;
      params.field = "c";
      params.chi = {0.8, saturation};
      ChemotaxisSystem<float> system(params, *field);
      std::vector<std::array<double, 3>> before(count);
      for (std::size_t e = 0; e < before.size(); ++e) before[e] = {w->x.host(e), w->y.host(e), w->z.host(e)};
      DeviceBuffer<float> vx(count), vy(count), vz(count);
      system.velocities(*w, vx.span(), vy.span(), vz.span());
      const std::vector<float> v[3] = {vx.to_host(), vy.to_host(), vz.to_host()};
      const double dt = 0.05;
      system.run(*w, StepContext{0, 0.0, dt});
      w->download();
      double worst_velocity = 0.0, worst_step = 0.0, largest = 0.0;
      for (std::size_t e = 0; e < before.size(); ++e) {
        std::array<double, 3> g;
        const double c = t.eval(before[e], g);
        const double chi = saturation > 0.0 ? 0.8 / std::pow(1.0 + c / saturation, 2) : 0.8;
        const double after[3] = {w->x.host(e), w->y.host(e), w->z.host(e)};
        for (std::size_t d = 0; d < 3; ++d) {
          const double expected = chi * g[d];
          largest = std::max(largest, std::abs(expected));
          worst_velocity = std::max(worst_velocity, std::abs(v[d][e] - expected));
          double moved = after[d] - before[e][d];
          const double period = d == 0 ? w->box.lx : w->box.ly;
          if (d < 2 && k.faces[2 * d] == P) moved -= period * std::round(moved / period);  // wrapped
          if (d == 2 && before[e][2] + dt * expected < 0.0) continue;                      // the floor
          worst_step = std::max(worst_step, std::abs(moved - dt * expected));
        }
      }
      INFO("largest velocity " << largest << ", worst velocity error " << worst_velocity
                               << ", worst step error " << worst_step);
      CHECK(largest > 1.0);                    // the random field has gradients of order 2 / h
      CHECK(worst_velocity < 2e-6 * largest);  // float output of a double evaluation
      CHECK(worst_step < 1e-6);                // float positions of order 2.5: a few ulp
      if (k.faces[0] == P) {                   // positions stay wrapped into the periodic box
        for (std::size_t e = 0; e < before.size(); ++e) {
          CHECK(w->x.host(e) >= 0.0f);
          CHECK(w->x.host(e) < w->box.lx);
        }
      }
    }
}

TEST_CASE(
    "chemotaxis: a point source adds exactly rate dt, centred on the source (cloud-in-cell), folded at a "
    "face",
    "[chemotaxis]") {
  const double h = 0.2, rate = 3.0, dt = 0.01;
  const GridShape shape{12, 10, 8, h};
  const std::array<GridBoundary, 6> faces{GridBoundary::neumann, GridBoundary::neumann,
                                          GridBoundary::neumann, GridBoundary::neumann,
                                          GridBoundary::neumann, GridBoundary::neumann};
  for (const std::array<double, 3> at : {std::array<double, 3>{1.03, 0.77, 0.61}, {0.0, 1.13, 0.0}}) {
    INFO("source at " << at[0] << ", " << at[1] << ", " << at[2]);
    World w;
    auto& field = w.add_field(std::make_unique<GridField<float>>(
        "s", shape, std::vector<std::string>{"s"},
        make_grid_geometry<float>(shape, faces, 1, [](int, int) { return 0.0; })));
    chemotaxis::PointSourceParams p;
    p.field = "s";
    p.position[0] = at[0];
    p.position[1] = at[1];
    p.position[2] = at[2];
    p.rate = rate;
    chemotaxis::PointSourceSystem<float> source(p, field);
    const int steps = 7;
    for (int k = 0; k < steps; ++k) source.run(w, StepContext{k, k * dt, dt});
    field.download();
    double amount = 0.0, moment[3] = {0.0, 0.0, 0.0};
    int touched = 0;
    for (int k = 0; k < shape.nz; ++k)
      for (int j = 0; j < shape.ny; ++j)
        for (int i = 0; i < shape.nx; ++i) {
          const double m = field.host_at(0, i, j, k) * h * h * h;
          CHECK(m >= 0.0);
          touched += m > 0.0 ? 1 : 0;
          amount += m;
          moment[0] += m * (i + 0.5) * h;
          moment[1] += m * (j + 0.5) * h;
          moment[2] += m * (k + 0.5) * h;
        }
    CHECK(amount == Approx(rate * dt * steps).epsilon(1e-6));
    CHECK(touched <= 8);
    CHECK(moment[1] / amount == Approx(at[1]).epsilon(1e-6));  // the first moment of CIC weights: exact
    if (at[0] > 0.0) {
      CHECK(touched == 8);
      CHECK(moment[0] / amount == Approx(at[0]).epsilon(1e-6));
      CHECK(moment[2] / amount == Approx(at[2]).epsilon(1e-6));
    } else {
      CHECK(touched == 2);  // on the -x and -z faces: the ghost corners fold onto the face nodes
      CHECK(moment[0] / amount == Approx(h / 2).epsilon(1e-6));
      CHECK(moment[2] / amount == Approx(h / 2).epsilon(1e-6));
    }
  }
}

namespace {

/// One cell of 20 non-adhesive elements at (2, 2, 0.3) in an open 4 x 4 box, a field "c" on a grid of
/// spacing 0.5 (zero-flux faces, no transport), the step chemotaxis -> sem -> cell_centres.
std::string single_cell_scenario(const std::string& chemotaxis, double friction) {
  return R"(
[simulation]
entities = ["tissue", "signals"]
modules = ["chemotaxis", "sem", "cell_centres"]
dt = 0.01
steps = 0
[domain]
periodic = false
[initial]
cells_x = 1
cells_y = 1
elements_per_cell = 20
adhesive_elements = 0
spacing = 4.0
cell_radius = 0.3
[sem]
friction = )" +
         std::to_string(friction) +
         R"(
[signal.c]
spacing = 0.5
height = 2.0
diffusivity = 0.0
decay = 0.0
top = { boundary = "neumann" }
[cell_chemotaxis]
field = "c"
)" + chemotaxis;
}

/// What one cell did in the field c = c0 + g x.
struct Drift {
  double x0 = 0.0;        ///< initial centre x
  double moved = 0.0;     ///< centre x displacement
  double balance = 0.0;   ///< the force balance's displacement: sum over steps of dt times the mean over
                          ///< the elements of chi(c(x_e)) g, at the positions chemotaxis saw
  double y_change = 0.0;  ///< centre y displacement (0 by symmetry)
};

/// Runs `steps` steps of one cell in c = c0 + g x with sensitivity chi(c) (the scenario's [cell_chemotaxis]
/// must say the same).
template <class Chi>
Drift drift(const std::string& chemotaxis, double friction, double c0, double g, int steps, Chi chi) {
  auto sim =
      build_simulation(io::Scenario::from_string(single_cell_scenario(chemotaxis, friction), "one.toml"));
  World& w = *sim->world;
  auto* field = chemotaxis::find_grid_field<float>(w, "c");
  REQUIRE(field != nullptr);
  const double h = field->shape().h;
  for (int k = 0; k < field->shape().nz; ++k)
    for (int j = 0; j < field->shape().ny; ++j)
      for (int i = 0; i < field->shape().nx; ++i)
        field->host_at(0, i, j, k) = static_cast<float>(c0 + g * (i + 0.5) * h);
  field->upload();
  w.download();
  Drift d;
  d.x0 = w.cx.host(0);
  const double y0 = w.cy.host(0);
  for (int k = 0; k < steps; ++k) {
    double mean = 0.0;
    for (std::size_t e = 0; e < w.elements.size(); ++e) mean += chi(c0 + g * w.x.host(e)) * g;
    d.balance += sim->dt * mean / static_cast<double>(w.elements.size());
    sim->advance(1);
    w.download();
  }
  d.moved = w.cx.host(0) - d.x0;
  d.y_change = w.cy.host(0) - y0;
  return d;
}

}  // namespace

TEST_CASE("chemotaxis: one cell in a linear field drifts at the velocity of the force balance, chi(c) g",
          "[chemotaxis]") {
  // The SEM's forces within a cell cancel in pairs, so the centre moves at the mean of the elements'
  // chemotactic velocities; in c = c0 + g x the gradient is g everywhere (trilinear sampling is exact).
  // Float positions round every update to the nearest multiple of the ulp (2.4e-7 for x in [2, 4)): a
  // systematic error of up to half an ulp per step for an increment as regular as dt chi g, another from
  // the SEM's stage: at most one ulp per step in all.
  const double c0 = 1.0, g = 0.25, chi = 0.5, dt = 0.01;
  const int steps = 800;  // t = 8: the centre moves from 2 to 3, inside the grid's exact range [0.25, 3.75]
  const double t = steps * dt, rounding = steps * std::ldexp(1.0, -22);  // ulp of [2, 4) = 2^-22
  SECTION("constant sensitivity: v = chi g, whatever the SEM's friction (F = eta chi grad c)") {
    for (const double friction : {1.0, 4.0}) {
      const Drift d = drift("chi = 0.5\n", friction, c0, g, steps, [&](double) { return chi; });
      const double predicted = chi * g * t;  // 1.0
      INFO("friction " << friction << ": moved " << d.moved << ", predicted " << predicted
                       << ", rounding bound " << rounding);
      CHECK(d.balance == Approx(predicted).epsilon(1e-12));
      CHECK(std::abs(d.moved - predicted) < rounding);
      CHECK(std::abs(d.y_change) < rounding);
    }
  }
  SECTION("receptor saturation: the mean of chi g / (1 + c(x_e) / c_sat)^2 over the elements") {
    const double c_sat = 1.0;
    const auto law = [&](double c) { return chi / std::pow(1.0 + c / c_sat, 2); };
    const Drift d = drift("chi = 0.5\nsaturation = 1.0\n", 1.0, c0, g, steps, law);
    // the centre alone: with u = 1 + c(x) / c_sat, du/dt = chi g^2 / (c_sat u^2), so u^3 = u0^3 + 3 chi g^2 t
    // / c_sat; the elements' spread about the centre (~0.15 in x) adds O(3 var(c) / (c_sat u)^2) ~ 1e-3
    const double u0 = 1.0 + (c0 + g * d.x0) / c_sat;
    const double u = std::cbrt(u0 * u0 * u0 + 3.0 * chi * g * g * t / c_sat);
    const double centre = (u - u0) * c_sat / g;
    INFO("moved " << d.moved << ", force balance " << d.balance << ", centre ODE " << centre
                  << " (unsaturated " << chi * g * t << ")");
    CHECK(std::abs(d.moved - d.balance) < rounding);
    CHECK(std::abs(d.moved - centre) < 5e-3 * centre);
    CHECK(d.moved < 0.2 * chi * g * t);  // saturation slows the cell more than five-fold here
    CHECK(std::abs(d.y_change) < rounding);
  }
}

TEST_CASE("chemotaxis_source: the mean distance of the cell centres to the source falls at every check",
          "[chemotaxis][scenario]") {
  auto sim = build_simulation(io::Scenario::from_file(TISSUE_SOURCE_DIR "/scenarios/chemotaxis_source.toml"));
  const chemotaxis::PointSourceParams* source = nullptr;
  for (std::size_t s = 0; s < sim->schedule.system_count(); ++s)
    if (auto* p = dynamic_cast<chemotaxis::PointSourceSystem<float>*>(&sim->schedule.system(s)))
      source = &p->params();
  REQUIRE(source != nullptr);
  World& w = *sim->world;
  const auto mean_distance = [&] {
    w.download();
    double sum = 0.0;
    for (std::size_t c = 0; c < w.cells.size(); ++c)
      sum += std::hypot(w.cx.host(c) - source->position[0], w.cy.host(c) - source->position[1],
                        w.cz.host(c) - source->position[2]);
    return sum / static_cast<double>(w.cells.size());
  };
  const std::int64_t every = 250;
  REQUIRE(sim->steps % every == 0);
  std::vector<double> series{mean_distance()};
  for (std::int64_t k = 0; k < sim->steps; k += every) {
    sim->advance(every);
    series.push_back(mean_distance());
  }
  std::string text;
  for (const double d : series) text += std::to_string(d) + " ";
  INFO("mean distance every " << every << " steps: " << text);
  for (std::size_t k = 1; k < series.size(); ++k) CHECK(series[k] < series[k - 1]);
  CHECK(series.back() < 0.6 * series.front());  // a visible migration, not drift within rounding
  WARN("chemotaxis_source mean distance every " << every << " steps: " << text);
}

TEST_CASE("chemotaxis: malformed input is refused before the first step with its place", "[chemotaxis]") {
  const auto error_of = [](const std::string& text) {
    try {
      build_simulation(io::Scenario::from_string(text, "bad.toml"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string base = single_cell_scenario("chi = 0.5\n", 1.0);
  // a field that does not exist: the message names the grid fields there are
  std::string unknown = base;
  unknown.replace(unknown.find("field = \"c\""), 11, "field = \"cc\"");
  CHECK_THAT(error_of(unknown), Catch::Contains("bad.toml:") &&
                                    Catch::Contains("cell_chemotaxis.field: no grid field named 'cc'") &&
                                    Catch::Contains("'c'"));
  // chi is required
  std::string no_chi = single_cell_scenario("saturation = 1.0\n", 1.0);
  CHECK_THAT(error_of(no_chi), Catch::Contains("cell_chemotaxis.chi"));
  // after the SEM, chemotaxis would read positions the SEM already moved: the schedule refuses the order
  std::string order = base;
  const std::string listed = "[\"chemotaxis\", \"sem\"";
  order.replace(order.find(listed), listed.size(), "[\"sem\", \"chemotaxis\"");
  CHECK_THAT(error_of(order), Catch::Contains("run 'chemotaxis' before 'sem'"));
  // a point source outside the grid
  std::string outside = base;
  outside.replace(outside.find("\"cell_centres\"]"), 15, "\"cell_centres\", \"point_source\"]");
  outside += "[point_source]\nfield = \"c\"\nx = 2.0\ny = 11.0\nz = 0.3\nrate = 1.0\n";
  CHECK_THAT(error_of(outside),
             Catch::Contains("point_source.y: the source's y = 11 is outside the grid of 'c'"));
}
