// Growth and division (Christley et al. 2010, "Cell Growth and Division").
#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <set>
#include <vector>

#include "engine/core/cell_centres.hpp"
#include "modules/gene_network/gene_network_kernels.hpp"
#include "modules/lifecycle/lifecycle.hpp"
#include "modules/sem/sem_layout.hpp"
#include "tests/support.hpp"

#include "tests/tissue_world.hpp"

using namespace tissue;
using tissue::sem::kAdhesiveElement;

TEST_CASE("a cell divides at 40 elements into 20 + 20 with halved species", "[lifecycle]") {
  test::TissueWorld w(Box{10.0f, 10.0f, true, true, true}, grn::kSpeciesCount);
  sem::add_ball_cell(w, 5.0f, 5.0f, 0.6f, 39, 0.6f, 10);
  w.commit();
  for (int k = 0; k < grn::kSpeciesCount; ++k) w.species.host(0, k) = 2.0f * static_cast<float>(k + 1);
  w.species.host(0, grn::kDelta) = 50.0f;  // below the threshold: basal, grows
  const auto mother_id = w.cell_id.host(0);
  lifecycle::LifecycleParams p;
  lifecycle::grow_and_divide(w, p);
  w.commit();
  REQUIRE(w.check_consistency().empty());
  REQUIRE(w.cells.size() == 2);
  CHECK(w.count.host(0) == 20);
  CHECK(w.count.host(1) == 20);
  CHECK(w.cell_id.host(0) == mother_id);
  CHECK(w.cell_id.host(1) != mother_id);
  for (int k = 0; k < grn::kSpeciesCount; ++k) {
    const float expected = k == grn::kDelta ? 25.0f : static_cast<float>(k + 1);
    CHECK(w.species.host(0, k) == expected);
    CHECK(w.species.host(1, k) == expected);
  }
  // the attached daughter keeps all 10 adhesive elements and lies lower; the other has none
  int adhesive[2] = {0, 0};
  double z_mean[2] = {0, 0};
  for (std::size_t e = 0; e < w.elements.size(); ++e) {
    const auto c = static_cast<std::size_t>(w.cell.host(e));
    adhesive[c] += w.type.host(e) == kAdhesiveElement;
    z_mean[c] += w.z.host(e) / 20.0;
  }
  CHECK(adhesive[0] == 10);
  CHECK(adhesive[1] == 0);
  CHECK(z_mean[0] < z_mean[1]);
  // the new element was put at the cell centre: the 40 positions are the 39 old ones plus the centre
  w.download();
  CHECK(w.check_consistency().empty());
}

TEST_CASE("the attached daughter keeps every adhesive element even when others lie lower", "[lifecycle]") {
  test::TissueWorld w(Box{0, 0, false, false, true}, grn::kSpeciesCount);
  const auto c = w.add_cell_host();
  // 10 adhesive elements at the membrane's Morse minimum, 30 others of which 15 are pressed below them
  for (int k = 0; k < 10; ++k)
    w.add_element_host(c, 0.1f * static_cast<float>(k), 0.0f, 0.3f, kAdhesiveElement);
  for (int k = 0; k < 30; ++k)
    w.add_element_host(c, 0.1f * static_cast<float>(k % 10), 0.2f,
                       k < 15 ? 0.1f : 0.5f + 0.01f * static_cast<float>(k), 0);
  w.compact_host();
  const auto d = lifecycle::divide_cell(w, c);
  w.commit();
  REQUIRE(w.check_consistency().empty());
  int adhesive[2] = {0, 0}, below[2] = {0, 0};
  for (std::size_t e = 0; e < w.elements.size(); ++e) {
    const int k = w.cell.host(e) == d ? 1 : 0;
    adhesive[k] += w.type.host(e) == kAdhesiveElement;
    below[k] += w.z.host(e) < 0.2f;
  }
  CHECK(w.count.host(0) == 20);
  CHECK(adhesive[0] == 10);
  CHECK(adhesive[1] == 0);
  CHECK(below[0] == 10);  // the rest of the attached half is the lowest non-adhesive elements
}

TEST_CASE("only cells with Delta below the threshold grow, by one element at their centre", "[lifecycle]") {
  test::TissueWorld w(Box{10.0f, 10.0f, true, true, true}, grn::kSpeciesCount);
  sem::add_ball_cell(w, 2.0f, 2.0f, 0.6f, 20, 0.5f, 10);
  sem::add_ball_cell(w, 9.8f, 5.0f, 2.0f, 20, 0.5f, 0);  // straddles x = 0
  w.commit();
  w.species.host(0, grn::kDelta) = 150.0f;  // suprabasal-like: no growth
  w.species.host(1, grn::kDelta) = 60.0f;   // grows
  const auto centre = test::centre_of(w, 1);
  lifecycle::LifecycleParams params;
  params.delta_species = w.species.component_index(lifecycle::kDeltaSpecies);  // as the module finds it
  REQUIRE(params.delta_species == grn::kDelta);
  lifecycle::grow_and_divide(w, params);
  w.commit();
  REQUIRE(w.check_consistency().empty());
  CHECK(w.count.host(0) == 20);
  CHECK(w.count.host(1) == 21);
  CHECK((w.flags.host(1) & w.flag_bit(lifecycle::kGrowingFlag)) != 0);
  CHECK((w.flags.host(0) & w.flag_bit(lifecycle::kGrowingFlag)) == 0);
  const auto last = static_cast<std::size_t>(w.first.host(1) + 20);
  CHECK(test::min_image(w.x.host(last) - centre[0], 10.0) == Approx(0).margin(1e-5));
  CHECK(w.y.host(last) == Approx(centre[1]).margin(1e-5));
  CHECK(w.z.host(last) == Approx(centre[2]).margin(1e-5));
  CHECK(w.type.host(last) == 0);
}

TEST_CASE("a cell without adhesive elements divides across its longest axis", "[lifecycle]") {
  test::TissueWorld w(Box{0, 0, false, false, true}, grn::kSpeciesCount);
  const auto c = w.add_cell_host();
  for (int k = 0; k < 40; ++k)  // a rod along y
    w.add_element_host(c, 0.05f * static_cast<float>(k % 3), 0.15f * static_cast<float>(k),
                       2.0f + 0.05f * static_cast<float>(k % 2), 0);
  w.compact_host();
  const auto d = lifecycle::divide_cell(w, c);
  w.commit();
  REQUIRE(w.check_consistency().empty());
  double lo[2] = {1e9, 1e9}, hi[2] = {-1e9, -1e9};
  for (std::size_t e = 0; e < w.elements.size(); ++e) {
    const int k = w.cell.host(e) == c ? 0 : 1;
    lo[k] = std::min(lo[k], static_cast<double>(w.y.host(e)));
    hi[k] = std::max(hi[k], static_cast<double>(w.y.host(e)));
  }
  CHECK(d == 1);
  CHECK(w.count.host(0) == 20);
  CHECK(w.count.host(1) == 20);
  const bool split_in_y = hi[0] < lo[1] || hi[1] < lo[0];  // the halves do not overlap along y
  CHECK(split_in_y);
}

namespace {
/// 3000 cells of 38 or 39 elements on a periodic sheet, every third one above the Delta threshold (no
/// growth), adhesive or not: one growth event makes about half of them divide.
std::unique_ptr<test::TissueWorld> crowd() {
  auto w = std::make_unique<test::TissueWorld>(Box{60.0f, 60.0f, true, true, true}, grn::kSpeciesCount);
  for (int k = 0; k < 3000; ++k) {
    const float x = 0.6f + 1.1f * static_cast<float>(k % 50), y = 0.6f + 1.1f * static_cast<float>(k / 50);
    sem::add_ball_cell(*w, x, y, 0.6f, 38 + k % 2, 0.5f, k % 4 == 0 ? 0 : 10);
  }
  w->commit();
  for (std::size_t c = 0; c < w->cells.size(); ++c) {
    for (int s = 0; s < grn::kSpeciesCount; ++s) w->species.host(c, s) = static_cast<float>(c % 17 + s);
    w->species.host(c, grn::kDelta) = c % 3 == 0 ? 150.0f : 60.0f;
  }
  return w;
}

/// Every host column of both tables, as bytes.
std::vector<std::vector<unsigned char>> tables_of(World& w) {
  std::vector<std::vector<unsigned char>> out;
  for (Table* t : {&w.cells, &w.elements})
    for (const auto& column : t->columns()) {
      const std::size_t per = size_of(column->scalar_type());
      const auto* p = static_cast<const unsigned char*>(column->host_bytes());
      for (int k = 0; k < column->components(); ++k) {
        const std::size_t offset = static_cast<std::size_t>(k) * column->capacity() * per;
        out.emplace_back(p + offset, p + offset + t->size() * per);
      }
    }
  return out;
}
}  // namespace

TEST_CASE("growth and division on many threads equal the cell-by-cell definition, whatever the thread count",
          "[lifecycle]") {
  lifecycle::LifecycleParams params;
  params.delta_species = grn::kDelta;
  // the definition: each growing cell in turn gains an element at its centre; then, on contiguous ranges,
  // each cell that reached division_elements divides in turn (a daughter appended per division)
  auto ref = crowd();
  const std::size_t n = ref->cells.size();
  const std::uint32_t growing = ref->flag_bit(lifecycle::kGrowingFlag);
  for (std::size_t c = 0; c < n; ++c) {
    ref->flags.host(c) &= ~growing;
    if (!(ref->species.host(c, grn::kDelta) < 140.0f)) continue;
    const auto centre =
        cell_centre(ref->x.host_data().data(), ref->y.host_data().data(), ref->z.host_data().data(),
                    ref->first.host(c), ref->count.host(c), ref->box);
    ref->add_element_host(static_cast<std::int32_t>(c), centre.x, centre.y, centre.z, 0);
    ref->flags.host(c) |= growing;
  }
  ref->compact_host();
  std::size_t divisions = 0;
  for (std::size_t c = 0; c < n; ++c)
    if (ref->count.host(c) >= params.division_elements) {
      lifecycle::divide_cell(*ref, static_cast<std::int32_t>(c));
      ++divisions;
    }
  ref->commit();
  REQUIRE(divisions > 900);
  const auto expected = tables_of(*ref);
  for (const int threads : {1, 4}) {
    test::ThreadCount guard(threads);
    auto w = crowd();
    lifecycle::grow_and_divide(*w, params);
    w->commit();
    REQUIRE(w->check_consistency().empty());
    REQUIRE(w->cells.size() == n + divisions);
    CHECK(w->next_cell_id == ref->next_cell_id);
    CHECK(tables_of(*w) == expected);
  }
}
