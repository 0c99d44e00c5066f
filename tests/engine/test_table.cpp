// SoA tables: capacity growth, host/device sync, compaction after hooks.
#include <catch2/catch.hpp>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/exec/backend.hpp"
#include "engine/exec/memory.hpp"
#include "tests/support.hpp"

using namespace tissue;

TEST_CASE("capacity growth keeps every row of every column intact on host and device", "[table]") {
  Table t("cells");
  auto& id = t.add_column<std::int64_t>("id");
  auto& species = t.add_column<float>("species", 3);
  std::size_t rows = 0;
  // grow in several rounds past the initial capacity; upload each round, then verify from the device
  for (int round = 0; round < 5; ++round) {
    const std::size_t first = t.append_host(37 + 50 * static_cast<std::size_t>(round));
    for (std::size_t r = first; r < t.size(); ++r) {
      id.host(r) = static_cast<std::int64_t>(1000 + r);
      for (int c = 0; c < 3; ++c) species.host(r, c) = static_cast<float>(r) + 0.25f * static_cast<float>(c);
    }
    t.upload();
    rows = t.size();
    t.reserve(t.capacity() + 17);  // an explicit reallocation as well
    // wipe the host mirror; the truth must come back from the device
    std::fill(id.host_data().begin(), id.host_data().end(), -1);
    std::fill(species.host_data().begin(), species.host_data().end(), -1.0f);
    t.download();
    for (std::size_t r = 0; r < rows; ++r) {
      REQUIRE(id.host(r) == static_cast<std::int64_t>(1000 + r));
      for (int c = 0; c < 3; ++c)
        REQUIRE(species.host(r, c) == static_cast<float>(r) + 0.25f * static_cast<float>(c));
    }
  }
  CHECK(t.capacity() >= rows);
  CHECK(species.span().size() == 3 * t.capacity());
}

TEST_CASE("shrink_to_fit frees the capacity beyond the rows and keeps them on host and device", "[table]") {
  Table t("cells");
  auto& id = t.add_column<std::int64_t>("id");
  auto& species = t.add_column<float>("species", 2);
  t.resize(1000);  // a whole tissue composed on every rank
  for (std::size_t r = 0; r < t.size(); ++r) {
    id.host(r) = static_cast<std::int64_t>(r);
    for (int c = 0; c < 2; ++c) species.host(r, c) = static_cast<float>(r) + 0.5f * static_cast<float>(c);
  }
  t.upload();
  const std::size_t held = exec::allocation_stats(exec::backend()).current;
  t.resize(150);  // its share
  t.shrink_to_fit();
  CHECK(t.capacity() == 150);
  CHECK(species.span().size() == 2 * 150);
  CHECK(exec::allocation_stats(exec::backend()).current < held);
  std::fill(id.host_data().begin(), id.host_data().end(), -1);
  t.download();
  std::size_t wrong = 0;
  for (std::size_t r = 0; r < t.size(); ++r) {
    wrong += id.host(r) != static_cast<std::int64_t>(r);
    for (int c = 0; c < 2; ++c)
      wrong += species.host(r, c) != static_cast<float>(r) + 0.5f * static_cast<float>(c);
  }
  CHECK(wrong == 0);
  t.resize(10);
  t.shrink_to_fit();
  CHECK(t.capacity() == 64);  // the floor of the growth
  t.resize(0);
  t.shrink_to_fit();
  CHECK(t.capacity() == 64);
}

TEST_CASE("World::commit sorts elements by cell, drops dead cells, and keeps stable ids", "[table]") {
  World w(Box{});
  auto& species = w.cells.add_column<float>("species", 2);  // a module's column, carried along
  auto& type = w.elements.add_column<std::int32_t>("type");
  const auto a = w.add_cell_host();
  const auto b = w.add_cell_host();
  const auto c = w.add_cell_host();
  // interleaved elements, as a hook appending to several cells leaves them
  type.host(static_cast<std::size_t>(w.add_element_host(b, 0.1f, 0.1f, 0.5f))) = 0;
  type.host(static_cast<std::size_t>(w.add_element_host(a, 0.2f, 0.2f, 0.5f))) = 1;
  type.host(static_cast<std::size_t>(w.add_element_host(c, 0.3f, 0.3f, 0.5f))) = 0;
  type.host(static_cast<std::size_t>(w.add_element_host(b, 0.4f, 0.4f, 0.5f))) = 1;
  type.host(static_cast<std::size_t>(w.add_element_host(a, 0.5f, 0.5f, 0.5f))) = 0;
  species.host(static_cast<std::size_t>(c), 1) = 7.0f;
  w.commit();
  REQUIRE(w.check_consistency().empty());
  CHECK(w.count.host(0) == 2);
  CHECK(w.x.host(0) == 0.2f);  // a's elements first, in their original order
  CHECK(w.x.host(1) == 0.5f);
  CHECK(w.x.host(2) == 0.1f);
  CHECK(type.host(0) == 1);  // module columns move with their rows
  CHECK(type.host(3) == 1);

  w.flags.host(static_cast<std::size_t>(b)) |= cell_flags::dead;
  w.commit();
  REQUIRE(w.check_consistency().empty());
  REQUIRE(w.cells.size() == 2);
  CHECK(w.elements.size() == 3);
  CHECK(w.cell_id.host(0) == 0);
  CHECK(w.cell_id.host(1) == 2);  // c keeps its stable id after b's removal
  CHECK(species.host(1, 1) == 7.0f);
  CHECK(w.x.host(2) == 0.3f);
  CHECK(w.cell.host(2) == 1);
  // the device holds the same as the host
  w.download();
  CHECK(w.check_consistency().empty());
  CHECK(w.next_cell_id == 3);
}

TEST_CASE("the element check names the first element outside the domain or not finite", "[table]") {
  Box box;
  box.lx = 4.0f;
  box.ly = 3.0f;
  World w(box);
  for (int c = 0; c < 3; ++c) {
    const std::int32_t cell = w.add_cell_host();
    for (int e = 0; e < 4; ++e)
      w.add_element_host(cell, 0.5f + static_cast<float>(c), 1.0f, 0.25f * static_cast<float>(e));
  }
  w.commit();
  CHECK_NOTHROW(check_element_positions(w));
  const auto expect_failure = [&](std::size_t element, int axis, float value, const std::string& what) {
    w.download();
    const float old = axis == 0 ? w.x.host(element) : axis == 1 ? w.y.host(element) : w.z.host(element);
    (axis == 0 ? w.x : axis == 1 ? w.y : w.z).host(element) = value;
    w.elements.upload();
    w.step = 42;
    const std::string id = std::to_string(w.cell_id.host(static_cast<std::size_t>(w.cell.host(element))));
    CHECK_THROWS_WITH(check_element_positions(w),
                      Catch::StartsWith("step 42: 1 element coordinate(s) invalid; the first: element " +
                                        std::to_string(element) + " of cell id " + id + ", ") &&
                          Catch::Contains(what));
    (axis == 0 ? w.x : axis == 1 ? w.y : w.z).host(element) = old;
    w.elements.upload();
  };
  expect_failure(5, 0, std::numeric_limits<float>::quiet_NaN(), "x = nan (not finite)");
  expect_failure(9, 1, 3.5f, "y = 3.5 (outside the periodic box [0, ly))");
  expect_failure(2, 2, -0.1f, "z = -0.1 (below the floor z = 0)");
  expect_failure(11, 0, -1.0f, "x = -1 (outside the periodic box [0, lx))");
  CHECK_NOTHROW(check_element_positions(w));
}

TEST_CASE("flag bits are taken by name, in order, after the engine's dead bit", "[table]") {
  World w;
  const std::uint32_t a = w.flag_bit("suprabasal");
  const std::uint32_t b = w.flag_bit("growing");
  CHECK(a == (1u << 1));
  CHECK(b == (1u << 2));
  CHECK(w.flag_bit("suprabasal") == a);  // a second request returns the same bit
  CHECK(w.flag_names() == std::vector<std::string>{"suprabasal", "growing"});
  for (int k = 2; k < 31; ++k) w.flag_bit("f" + std::to_string(k));
  CHECK_THROWS_AS(w.flag_bit("one too many"), std::length_error);
}

TEST_CASE("a column's components can be named and looked up", "[table]") {
  World w;
  auto& s = w.cells.add_column<float>("species", 3);
  CHECK(s.component_names().empty());
  CHECK(s.component_index("delta") == -1);
  s.set_component_names({"notch", "delta", "bound"});
  CHECK(s.component_index("delta") == 1);
  CHECK_THROWS_AS(s.set_component_names({"only one"}), std::invalid_argument);
}

TEST_CASE("compaction on many threads equals a serial stable counting sort, whatever the thread count",
          "[table]") {
  // 3000 cells, 60 000 elements appended in a shuffled order, some cells dead and some elements removed (-1):
  // large enough that every parallel loop of compact_host() runs on several threads
  const auto make = [] {
    auto w = std::make_unique<World>(Box{});
    auto& tag = w->elements.add_column<std::int32_t>("tag");
    const std::size_t cells = 3000, elements = 60000;
    for (std::size_t c = 0; c < cells; ++c) w->add_cell_host();
    std::uint64_t state = 12345;
    const auto next = [&state] {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<std::size_t>(state >> 33);
    };
    for (std::size_t e = 0; e < elements; ++e) {
      const auto c = static_cast<std::int32_t>(next() % cells);
      const auto row = static_cast<std::size_t>(w->add_element_host(c, 0.5f, 0.5f, 0.5f));
      tag.host(row) = static_cast<std::int32_t>(e);
      if (next() % 50 == 0) w->cell.host(row) = -1;  // removed by a hook
    }
    for (std::size_t c = 0; c < cells; c += 7) w->flags.host(c) |= cell_flags::dead;
    return w;
  };
  // the reference: living cells in order; their elements in order of appearance
  auto ref = make();
  std::vector<std::int32_t> new_index(ref->cells.size(), -1);
  std::int32_t alive = 0;
  for (std::size_t c = 0; c < ref->cells.size(); ++c)
    if (!(ref->flags.host(c) & cell_flags::dead)) new_index[c] = alive++;
  std::vector<std::vector<std::int32_t>> expected(static_cast<std::size_t>(alive));
  for (std::size_t e = 0; e < ref->elements.size(); ++e) {
    const std::int32_t c = ref->cell.host(e);
    if (c >= 0 && new_index[static_cast<std::size_t>(c)] >= 0)
      expected[static_cast<std::size_t>(new_index[static_cast<std::size_t>(c)])].push_back(
          ref->elements.column<std::int32_t>("tag").host(e));
  }
  for (const int threads : {1, 4}) {
    test::ThreadCount guard(threads);
    auto w = make();
    w->compact_host();
    REQUIRE(w->check_consistency().empty());
    REQUIRE(w->cells.size() == static_cast<std::size_t>(alive));
    const auto& tag = w->elements.column<std::int32_t>("tag");
    for (std::size_t c = 0; c < expected.size(); ++c) {
      const auto first = static_cast<std::size_t>(w->first.host(c));
      std::vector<std::int32_t> got;
      for (std::size_t k = 0; k < static_cast<std::size_t>(w->count.host(c)); ++k)
        got.push_back(tag.host(first + k));
      REQUIRE(got == expected[c]);
    }
  }
}
