// The basement membrane as a mesh in the epidermis: cells seeded on it, the adhesion input measured from
// it, cells sampling a surface field on it, division along its normal, the proliferation gate, layers
// counted along its normal, and the epidermis scenarios that use it.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <vector>

#include "engine/core/cell_centres.hpp"
#include "engine/io/scenario.hpp"
#include "engine/mesh/mesh_operators.hpp"
#include "engine/mesh/surface_field.hpp"
#include "engine/mesh/vec3.hpp"
#include "engine/spatial/triangle_index.hpp"
#include "modules/builtin_modules.hpp"
#include "modules/coupling/surface_sampling.hpp"
#include "modules/epidermis/epidermis.hpp"
#include "modules/gene_network/gene_network.hpp"
#include "modules/lifecycle/lifecycle.hpp"
#include "modules/sem/sem_layout.hpp"

#include "tests/tissue_world.hpp"

using namespace tissue;
using tissue::sem::kAdhesiveElement;

namespace {

/// Unit normal and centroid of face f.
std::pair<mesh::Vec3, mesh::Vec3> face_frame(const mesh::TriangleMesh& m, std::size_t f) {
  const auto a = mesh::position(m, m.corner(f, 0)), b = mesh::position(m, m.corner(f, 1)),
             c = mesh::position(m, m.corner(f, 2));
  auto n = mesh::cross(mesh::sub(b, a), mesh::sub(c, a));
  const double len = mesh::norm(n);
  for (auto& v : n) v /= len;
  return {n, {(a[0] + b[0] + c[0]) / 3, (a[1] + b[1] + c[1]) / 3, (a[2] + b[2] + c[2]) / 3}};
}

std::shared_ptr<TriangleIndex> index_of(const mesh::TriangleMesh& m, float reach) {
  auto index = std::make_shared<TriangleIndex>();
  index->build(m, reach);
  return index;
}

}  // namespace

namespace {
/// The [simulation] composition of an epidermis scenario with the tables in `text`: the membrane entity set
/// when it has [membrane], its field and the cells' sampling of it when it has [membrane.rd].
std::string composition(const std::string& text) {
  if (text.find("[membrane.rd]") != std::string::npos)
    return "entities = [\"membrane\", \"tissue\"]\nmodules = [\"sem\", \"cell_centres\", \"membrane_rd\", "
           "\"membrane_sampling\", \"gene_network\", \"lifecycle\"]\n";
  if (text.find("[membrane]") != std::string::npos)
    return "entities = [\"membrane\", \"tissue\"]\nmodules = [\"sem\", \"cell_centres\", \"gene_network\", "
           "\"lifecycle\"]\n";
  return "model = \"epidermis\"\n";
}
}  // namespace

TEST_CASE("vertex normals of a sphere point radially", "[membrane]") {
  const auto m = mesh::icosphere(3, 2.0);
  const auto n = mesh::vertex_normals(m);
  for (std::size_t v = 0; v < m.vertex_count(); ++v) {
    const double r = std::sqrt(m.x[v] * m.x[v] + m.y[v] * m.y[v] + m.z[v] * m.z[v]);
    CHECK(n[v][0] * m.x[v] / r + n[v][1] * m.y[v] / r + n[v][2] * m.z[v] / r == Approx(1.0).margin(2e-3));
  }
}

TEST_CASE("cells seeded on a membrane mesh: a Poisson-disk subset of its vertices, adhesive side down",
          "[membrane]") {
  const auto m = mesh::icosphere(3, 1.5);  // mean edge ~0.2
  sem::MembraneLayoutParams p;
  p.spacing = 0.6;
  p.cell_radius = 0.3;
  test::TissueWorld w(Box{10.0f, 10.0f, false, false, false}, 0);
  const std::size_t cells = sem::seed_on_membrane(w, m, p);
  // the same greedy selection, brute force
  std::vector<std::size_t> kept;
  for (std::size_t v = 0; v < m.vertex_count(); ++v) {
    bool free = true;
    for (std::size_t u : kept) {
      const double d2 = (m.x[u] - m.x[v]) * (m.x[u] - m.x[v]) + (m.y[u] - m.y[v]) * (m.y[u] - m.y[v]) +
                        (m.z[u] - m.z[v]) * (m.z[u] - m.z[v]);
      free = free && d2 >= 0.36;
    }
    if (free) kept.push_back(v);
  }
  REQUIRE(cells == kept.size());
  REQUIRE(w.cells.size() == kept.size());
  REQUIRE(cells > 40);  // the sphere's area 28 is about covered
  const auto normals = mesh::vertex_normals(m);
  w.download();
  for (std::size_t c = 0; c < cells; ++c) {
    const std::size_t v = kept[c];
    const double centre[3] = {m.x[v] + 0.3 * normals[v][0], m.y[v] + 0.3 * normals[v][1],
                              m.z[v] + 0.3 * normals[v][2]};
    double highest_adhesive = -1e9, lowest_other = 1e9;
    const auto first = static_cast<std::size_t>(w.first.host(c));
    REQUIRE(w.count.host(c) == 20);
    for (std::size_t e = first; e < first + 20; ++e) {
      const double d[3] = {w.x.host(e) - centre[0], w.y.host(e) - centre[1], w.z.host(e) - centre[2]};
      REQUIRE(std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) <= 0.3 + 1e-5);  // in the cell's ball
      const double h = d[0] * normals[v][0] + d[1] * normals[v][1] + d[2] * normals[v][2];
      if (w.type.host(e) == kAdhesiveElement)
        highest_adhesive = std::max(highest_adhesive, h);
      else
        lowest_other = std::min(lowest_other, h);
    }
    CHECK(highest_adhesive <= lowest_other + 1e-5);  // the 10 adhesive elements are the lowest
  }
}

TEST_CASE("the adhesion input sums the adhesive elements' heights above a membrane mesh", "[membrane]") {
  // sphere: elements on normals through face centres at known signed heights (inside too)
  const auto sphere = mesh::icosphere(3, 2.0);
  const auto index = index_of(sphere, 2.0f);
  test::TissueWorld w(Box{20.0f, 20.0f, false, false, false}, 2);
  const std::vector<std::size_t> faces{3, 150, 420, 777, 1100};
  const std::vector<double> heights{0.1, 0.35, -0.05, 0.6, 0.2};
  const std::int32_t c = w.add_cell_host();
  double expected = 0.0;
  for (std::size_t k = 0; k < faces.size(); ++k) {
    const auto [n, centroid] = face_frame(sphere, faces[k]);
    const double h = heights[k];
    w.add_element_host(c, static_cast<float>(centroid[0] + h * n[0]),
                       static_cast<float>(centroid[1] + h * n[1]), static_cast<float>(centroid[2] + h * n[2]),
                       k == 4 ? 0 : kAdhesiveElement);
    if (k != 4) expected += h;  // the last element is not adhesive
  }
  w.commit();
  DeviceBuffer<float> scratch;
  grn::compute_adhesion_input(w, 1, index.get(), scratch);
  w.download();
  CHECK(w.cells.column<float>("species").host(0, 1) == Approx(expected).margin(1e-5));

  // a plane mesh at z = 0 gives the seed's A = sum of z exactly where the closest points are inside faces
  const auto plane = mesh::rectangle_mesh(13, 13, 12.0, 12.0);
  test::TissueWorld v(Box{12.0f, 12.0f, true, true, true}, 2);
  const std::int32_t d = v.add_cell_host();
  const float zs[4] = {0.05f, 0.3f, 0.11f, 0.72f};
  for (int k = 0; k < 4; ++k)
    v.add_element_host(d, 2.3f + 0.4f * static_cast<float>(k), 5.1f, zs[k], kAdhesiveElement);
  v.commit();
  grn::compute_adhesion_input(v, 0, nullptr, scratch);
  grn::compute_adhesion_input(v, 1, index_of(plane, 2.0f).get(), scratch);
  v.download();
  CHECK(v.species.host(0, 0) == Approx(0.05 + 0.3 + 0.11 + 0.72).margin(1e-6));
  CHECK(v.species.host(0, 1) == Approx(v.species.host(0, 0)).margin(1e-6));
}

TEST_CASE("cells sample a surface field at their closest membrane point", "[membrane]") {
  // a linear field on a plane mesh is interpolated exactly by the barycentric weights
  auto plane = std::make_shared<mesh::TriangleMesh>(mesh::rectangle_mesh(25, 25, 6.0, 6.0));
  test::TissueWorld w(Box{6.0f, 6.0f, false, false, true}, 0);
  auto& field = w.add_field(
      std::make_unique<SurfaceField<float>>("membrane", plane, std::vector<std::string>{"a", "b"}));
  for (std::size_t i = 0; i < plane->vertex_count(); ++i) {
    field.host_at(0, i) = static_cast<float>(1.0 + 2.0 * plane->x[i] + 3.0 * plane->y[i]);
    field.host_at(1, i) = 5.0f;
  }
  field.upload();
  const std::vector<std::array<float, 3>> centres{{0.37f, 1.91f, 0.3f},
                                                  {5.5f, 0.2f, 0.8f},
                                                  {3.01f, 3.33f, 0.05f},
                                                  {2.0f, 2.0f, 3.5f}};  // the last one beyond the reach
  for (const auto& p : centres) {
    const std::int32_t c = w.add_cell_host();
    w.add_element_host(c, p[0], p[1], p[2], 0);
  }
  w.commit();
  const auto columns = coupling::add_surface_sample_columns(w, field);
  REQUIRE(columns == std::vector<std::string>{"membrane_a", "membrane_b"});
  update_cell_centres(w);
  coupling::SurfaceSamplingSystem<float> sampling(field, index_of(*plane, 2.0f));
  sampling.run(w, StepContext{0, 0.0, 0.01});
  w.download();
  const auto& a = w.cells.column<float>("membrane_a");
  const auto& b = w.cells.column<float>("membrane_b");
  for (std::size_t c = 0; c < 3; ++c) {
    INFO("cell " << c);
    CHECK(a.host(c) == Approx(1.0 + 2.0 * centres[c][0] + 3.0 * centres[c][1]).epsilon(1e-5));
    CHECK(b.host(c) == Approx(5.0).epsilon(1e-6));
  }
  CHECK(a.host(3) == 0.0f);
  CHECK(b.host(3) == 0.0f);
}

TEST_CASE("an attached cell divides along the membrane normal, the gate limits growth",
          "[membrane][lifecycle]") {
  // a 40-element cell above a tilted face of a sphere: the mother keeps its 10 adhesive elements and the
  // 10 other elements nearest to the membrane along that face's normal
  const auto sphere = mesh::icosphere(2, 3.0);
  const auto index = index_of(sphere, 2.0f);
  const std::size_t face = 77;
  const auto [n, centroid] = face_frame(sphere, face);
  test::TissueWorld w(Box{20.0f, 20.0f, false, false, false}, 1);
  const std::array<float, 3> up{static_cast<float>(n[0]), static_cast<float>(n[1]), static_cast<float>(n[2])};
  w.seed = 5;
  sem::add_ball_cell(w, static_cast<float>(centroid[0] + 0.35 * n[0]),
                     static_cast<float>(centroid[1] + 0.35 * n[1]),
                     static_cast<float>(centroid[2] + 0.35 * n[2]), 40, 0.35f, 10, up);
  w.commit();
  w.download();
  w.compact_host();
  const TriangleIndex::View view = index->host_view();
  const std::int32_t daughter = lifecycle::divide_cell(w, 0, &view);
  const auto height = [&](std::size_t e) {
    return (w.x.host(e) - centroid[0]) * n[0] + (w.y.host(e) - centroid[1]) * n[1] +
           (w.z.host(e) - centroid[2]) * n[2];
  };
  double mother_top = -1e9, daughter_bottom = 1e9;
  int mother = 0, adhesive = 0;
  for (std::size_t e = 0; e < 40; ++e) {
    if (w.cell.host(e) == 0) {
      ++mother;
      if (w.type.host(e) == kAdhesiveElement)
        ++adhesive;
      else
        mother_top = std::max(mother_top, height(e));
    } else {
      REQUIRE(w.cell.host(e) == daughter);
      REQUIRE(w.type.host(e) == 0);
      daughter_bottom = std::min(daughter_bottom, height(e));
    }
  }
  CHECK(mother == 20);
  CHECK(adhesive == 10);
  CHECK(mother_top <= daughter_bottom);

  // the gate: only cells whose gate column exceeds the threshold gain an element
  test::TissueWorld g(Box{10.0f, 10.0f, false, false, true}, 0);
  for (int c = 0; c < 4; ++c) sem::add_ball_cell(g, 1.0f + static_cast<float>(c), 1.0f, 0.3f, 5, 0.3f, 2);
  g.commit();
  g.cells.add_column<float>("membrane_a");
  g.download();
  const float values[4] = {0.2f, 1.6f, 1.5f, 3.0f};
  for (std::size_t c = 0; c < 4; ++c) g.cells.column<float>("membrane_a").host(c) = values[c];
  lifecycle::LifecycleParams life;
  life.gate = "membrane_a";
  life.gate_threshold = 1.5;
  lifecycle::grow_and_divide(g, life);
  g.commit();  // as the schedule does after hooks
  g.download();
  const std::vector<int> grown{5, 6, 5, 6};
  for (std::size_t c = 0; c < 4; ++c) CHECK(g.count.host(c) == grown[c]);
}

TEST_CASE("layers are counted along the membrane normal", "[membrane][epidermis]") {
  // three cells on a sphere of radius 3: two side by side on the surface, one on top of the first
  Box box{20.0f, 20.0f, false, false, false};
  const std::vector<float> cx{0.0f, 0.45f, 0.0f}, cy{0.0f, 0.0f, 0.0f}, cz{3.3f, 3.27f, 3.8f};
  std::vector<epidermis::CellFrame> frames(3);
  for (std::size_t c = 0; c < 3; ++c) {
    const float r = std::sqrt(cx[c] * cx[c] + cz[c] * cz[c]);
    frames[c].height = r - 3.0f;
    frames[c].normal = {cx[c] / r, 0.0f, cz[c] / r};
  }
  CHECK(epidermis::stacking_layers(cx, cy, cz, frames, box, 0.5, 0.4) == std::vector<int>{0, 0, 1});
}

TEST_CASE("an epidermis seeded on a sphere membrane: adherent monolayer that stays on it",
          "[membrane][epidermis]") {
  const auto scenario = io::Scenario::from_string(R"toml(
[simulation]
entities = ["membrane", "tissue"]
modules = ["sem", "cell_centres", "gene_network", "lifecycle"]
steps = 200
[domain]
periodic = false
[membrane]
generate = "icosphere"
subdivisions = 3
radius = 1.5
[initial]
layout = "membrane"
spacing = 0.6
)toml",
                                                  "sphere.toml");
  auto sim = build_simulation(scenario);
  World& w = *sim->world;
  const std::size_t cells = w.cells.size();
  REQUIRE(cells > 40);
  for (int s = 0; s < 200; ++s) sim->schedule.step(w, 0.01);
  w.download();
  update_cell_centres(w);
  w.download();
  auto index = std::make_shared<TriangleIndex>();
  index->build(mesh::icosphere(3, 1.5), 2.0f);
  const auto summary = epidermis::summarize(w, 4, 3, index.get());
  CHECK(summary.cells == cells);
  CHECK(summary.adherent == cells);
  CHECK(summary.layers == 1);
  for (std::size_t e = 0; e < w.elements.size(); ++e) {
    const double r =
        std::sqrt(w.x.host(e) * w.x.host(e) + w.y.host(e) * w.y.host(e) + w.z.host(e) * w.z.host(e));
    REQUIRE(r > 1.45);  // held above the membrane (the icosphere's faces lie within 1.5 - 0.02 of the centre)
    REQUIRE(r < 2.5);
  }
  // the adhesion input is the sum of heights above the mesh: 10 adhesive elements within ~0.4 of it
  for (std::size_t c = 0; c < cells; ++c) {
    CHECK(w.cells.column<float>("species").host(c, 6) > 0.0f);
    CHECK(w.cells.column<float>("species").host(c, 6) < 10 * 0.5f);
  }
}

TEST_CASE("a gene network written in the scenario reads the membrane field sampled by its cell",
          "[membrane]") {
  // a constant membrane field a = 2 (no reaction, no diffusion) and dx/dt = membrane_a: x = 2 t exactly
  // under the network's midpoint steps
  const auto scenario = io::Scenario::from_string(R"toml(
[simulation]
entities = ["membrane", "tissue"]
modules = ["sem", "cell_centres", "membrane_rd", "membrane_sampling", "gene_network", "lifecycle"]
steps = 50
[initial]
cells_x = 4
cells_y = 4
[membrane]
generate = "rectangle"
nx = 13
ny = 13
lx = 2.4
ly = 2.4
adhesion = "plane"
[membrane.rd]
model = "reaction"
[membrane.rd.reaction]
model = "polynomial"
diffusion = { a = 0.0, b = 0.0 }
f = [ { c = 0.0 } ]
[membrane.rd.initial]
a = 2.0
b = 0.5
[[gene_network.species]]
name = "delta"
rate = "0"
[[gene_network.species]]
name = "x"
rate = "membrane_a + 0 * membrane_b"
)toml",
                                                  "membrane_network.toml");
  auto sim = build_simulation(scenario);
  World& w = *sim->world;
  for (int s = 0; s < 50; ++s) sim->schedule.step(w, 0.01);
  w.download();
  REQUIRE(w.cells.size() == 16);
  for (std::size_t c = 0; c < 16; ++c) {
    CHECK(w.cells.column<float>("membrane_a").host(c) == Approx(2.0).epsilon(1e-6));
    CHECK(w.cells.column<float>("membrane_b").host(c) == Approx(0.5).epsilon(1e-6));
    CHECK(w.cells.column<float>("species").host(c, 1) == Approx(50 * 0.01 * 2.0).epsilon(1e-5));
  }
}

TEST_CASE("bad membrane input is refused before the first step", "[membrane][epidermis]") {
  const auto fails = [](const std::string& text, const std::string& what) {
    const auto scenario =
        io::Scenario::from_string("[simulation]\n" + composition(text) + "steps = 10\n" + text, "bad.toml");
    REQUIRE_THROWS_WITH(build_simulation(scenario), Catch::Contains(what));
  };
  fails("[initial]\nlayout = \"membrane\"\n", "cells on the membrane need a [membrane] mesh");
  fails(
      "[domain]\nperiodic = true\n[membrane]\ngenerate = \"icosphere\"\nsubdivisions = 2\n[initial]\nlayout "
      "= \"membrane\"\n",
      "open domain");
  fails("[membrane]\ngenerate = \"icosphere\"\nsubdivisions = 2\nadhesion = \"plane\"\n",
        "needs a membrane mesh in the plane z = 0");
  fails("[lifecycle]\ngate = \"membrane_a\"\n", "no sampled field named 'membrane_a' (sampled fields: none");
  fails(
      "[initial]\ncells_x = 4\ncells_y = 4\n[membrane]\ngenerate = \"rectangle\"\nnx = 13\nny = 13\nlx = "
      "2.4\nly = 2.4\n"
      "[membrane.rd]\nmodel = \"reaction\"\n[membrane.rd.reaction]\nmodel = \"polynomial\"\n"
      "diffusion = { a = 1.0, b = 40.0 }\nf = [ { c = 0.1 } ]\ng = [ { c = 0.9 } ]\n[lifecycle]\ngate = "
      "\"membrane_c\"\n",
      "(sampled fields: membrane_a, membrane_b)");
}
