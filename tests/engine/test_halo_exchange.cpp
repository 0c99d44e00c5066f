// The exchanges of a decomposed run on one rank (SerialCommunicator): a periodic axis that is not split sends
// its halo to its own rank, so the 1 x 1 decomposition exercises every direction's message, its shift and the
// ghost layout. The same checks run over 2, 3 and 4 MPI ranks in tests/domain/test_domain_mpi.cpp.
#include <catch2/catch.hpp>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/domain/communicator.hpp"
#include "engine/domain/grid_halo.hpp"
#include "engine/domain/halo_exchange.hpp"
#include "engine/domain/migration.hpp"
#include "engine/domain/table_rows.hpp"
#include "engine/exec/error.hpp"
#include "tests/domain/domain_checks.hpp"

using namespace tissue;
using test::make_box;
using namespace tissue::domain;

namespace {

Span<const std::byte> bytes_of(const Bytes& b) {
  return Span<const std::byte>(b.data(), b.size());
}

}  // namespace

TEST_CASE("the serial communicator delivers messages to itself by tag, in the order sent", "[domain]") {
  SerialCommunicator comm;
  const Bytes a{std::byte{1}}, b{std::byte{2}, std::byte{3}}, c{};
  const std::vector<Bytes> got = comm.exchange(
      {{0, 5, bytes_of(a)}, {0, 7, bytes_of(b)}, {0, 5, bytes_of(c)}}, {{0, 7}, {0, 5}, {0, 5}});
  REQUIRE(got.size() == 3);
  CHECK(got[0] == b);
  CHECK(got[1] == a);
  CHECK(got[2] == c);
  CHECK(comm.all_to_all({b}) == std::vector<Bytes>{b});
  CHECK(comm.sum(std::int64_t{3}) == 3);
  CHECK(comm.max(2.5) == 2.5);
  CHECK(comm.max(std::vector<double>{1.0, -2.0}) == std::vector<double>{1.0, -2.0});

  CHECK_THROWS_AS(comm.exchange({{0, 5, bytes_of(a)}}, {}), std::logic_error);             // never received
  CHECK_THROWS_AS(comm.exchange({}, {{0, 5}}), std::logic_error);                          // never sent
  CHECK_THROWS_AS(comm.exchange({{1, 5, bytes_of(a)}}, {{0, 5}}), std::invalid_argument);  // no rank 1
  CHECK_THROWS_AS(comm.exchange({{0, Communicator::max_tag + 1, bytes_of(a)}}, {}), std::invalid_argument);
  CHECK_THROWS_AS(comm.all_to_all({a, b}), std::invalid_argument);
}

TEST_CASE("packed table rows unpack to the same values, and layouts that differ are refused", "[domain]") {
  Table from("a"), to("b");
  from.add_column<float>("x");
  from.add_column<std::int64_t>("id");
  from.add_column<double>("s", 3);
  to.add_column<float>("x");
  to.add_column<std::int64_t>("id");
  to.add_column<double>("s", 3);
  from.resize(10);
  for (std::size_t r = 0; r < 10; ++r) {
    from.column<float>("x").host(r) = 0.5f * static_cast<float>(r);
    from.column<std::int64_t>("id").host(r) = 1000 + static_cast<std::int64_t>(r);
    for (int c = 0; c < 3; ++c) from.column<double>("s").host(r, c) = 10.0 * static_cast<double>(r) + c;
  }
  const auto columns = all_columns(from);
  CHECK(row_bytes(columns) == 4 + 8 + 24);
  Bytes packed;
  pack_rows(columns, {7, 2, 9}, packed);
  REQUIRE(packed.size() == 3 * 36);
  to.resize(5);
  CHECK(unpack_rows(all_columns(to), 1, 3, packed.data()) == packed.size());
  const std::vector<std::size_t> source{7, 2, 9};
  for (std::size_t k = 0; k < 3; ++k) {
    CHECK(to.column<float>("x").host(1 + k) == from.column<float>("x").host(source[k]));
    CHECK(to.column<std::int64_t>("id").host(1 + k) == from.column<std::int64_t>("id").host(source[k]));
    for (int c = 0; c < 3; ++c)
      CHECK(to.column<double>("s").host(1 + k, c) == from.column<double>("s").host(source[k], c));
  }

  Table other("c");
  other.add_column<float>("x");
  other.add_column<std::int32_t>("id");
  other.add_column<double>("s", 3);
  CHECK_THROWS_WITH(check_same_layout(columns, all_columns(other), "test"),
                    "test: column 'id' (int64 x 1) is received into 'id' (int32 x 1)");
  CHECK_THROWS_WITH(find_columns(other, {"x", "y"}), "table 'c' has no column 'y'");
}

TEST_CASE(
    "one periodic rank receives its own points' images in its ghost band, and forces with them are "
    "the minimum-image forces to the bit",
    "[domain]") {
  SerialCommunicator comm;
  const float cutoff = 0.3f;
  for (const int periodic : {1, 2, 3}) {
    const Box box = make_box(2.0f, 1.5f, (periodic & 1) != 0, (periodic & 2) != 0);
    INFO("periodic " << periodic);
    const Decomposition d(ProcessGrid{1, 1}, box, 1.05 * cutoff);
    const test::GlobalPoints p = test::make_points(900, box, 1, 1, 42u + static_cast<unsigned>(periodic));
    Table owned("elements"), ghosts("ghosts");
    test::add_point_columns(owned);
    test::add_point_columns(ghosts);
    test::fill_owned(p, d, 0, owned);
    REQUIRE(owned.size() == p.x.size());

    HaloExchange halo(d, comm, {"x", "y", "z", "id"});
    halo.build(owned, ghosts);
    const auto want = test::brute_force_ghosts(p, d, 0);
    CHECK(test::received_ghosts(halo, ghosts) == want);
    CHECK(halo.rows_sent() == ghosts.size());
    CHECK(ghosts.size() > 100);
    // one range per direction whose neighbour exists, 8 when both axes are periodic
    CHECK(halo.ranges().size() == (periodic == 3 ? 8u : 2u));
    CHECK(test::check_forces_with_ghosts(p, d, halo, owned, ghosts, cutoff) > 50);

    // distinct: a single rank receives nothing (its points' images are the minimum image's business)
    Table none("ghosts");
    test::add_point_columns(none);
    HaloExchange distinct(d, comm, {"x", "y", "z", "id"}, HaloMode::distinct);
    distinct.build(owned, none);
    CHECK(none.size() == 0);
    CHECK(distinct.ranges().empty());
    test::check_forces_with_ghosts(p, d, distinct, owned, none, cutoff, true);

    // refresh: the same rows with their current values
    for (std::size_t r = 0; r < owned.size(); ++r) owned.column<float>("z").host(r) += 1.0f;
    halo.refresh(owned, ghosts);
    std::size_t stale = 0;
    for (const GhostRange& range : halo.ranges())
      for (std::size_t g = range.first; g < range.first + range.count; ++g) {
        const auto id = static_cast<std::size_t>(ghosts.column<std::int64_t>("id").host(g));
        if (ghosts.column<float>("z").host(g) != p.z[id] + 1.0f) ++stale;
      }
    CHECK(stale == 0);
    owned.resize(owned.size() / 2);
    CHECK_THROWS_AS(halo.refresh(owned, ghosts), std::logic_error);
  }
}

TEST_CASE(
    "a halo exchange refuses ghost tables of another layout, refresh before build, and a rank count "
    "that differs",
    "[domain]") {
  SerialCommunicator comm;
  const Box box = make_box(2.0f, 2.0f, true, true);
  const Decomposition d(ProcessGrid{1, 1}, box, 0.3);
  Table owned("elements"), ghosts("ghosts");
  test::add_point_columns(owned);
  ghosts.add_column<float>("x");
  ghosts.add_column<float>("y");
  ghosts.add_column<float>("z");
  ghosts.add_column<std::int32_t>("id");
  HaloExchange halo(d, comm, {"x", "y", "z", "id"});
  CHECK_THROWS_AS(halo.refresh(owned, ghosts), std::logic_error);
  CHECK_THROWS_WITH(halo.build(owned, ghosts),
                    "halo exchange of 'elements': column 'id' (int64 x 1) is received into 'id' (int32 x 1)");
  CHECK_THROWS_AS(HaloExchange(d, comm, {"x"}), std::invalid_argument);
  const Decomposition two(ProcessGrid{2, 1}, box, 0.3);
  CHECK_THROWS_AS(HaloExchange(two, comm, {"x", "y"}), std::invalid_argument);
  // a point outside the rank's subdomain (here: outside the periodic box) is refused by halo_sends
  owned.resize(1);
  owned.column<float>("x").host(0) = 2.5f;
  Table good("ghosts");
  test::add_point_columns(good);
  CHECK_THROWS_AS(halo.build(owned, good), std::invalid_argument);
}

TEST_CASE("migration on one rank keeps every cell, its elements and module columns, in id order",
          "[domain]") {
  SerialCommunicator comm;
  World w(make_box(4.0f, 3.0f, true, true));
  test::add_migration_columns(w);
  test::add_cells(w, 50, 0);
  const Decomposition d(ProcessGrid{1, 1}, w.box, 0.5);
  const MigrationCounts counts = migrate_to_owners(d, comm, w);
  CHECK(counts.cells_sent == 0);
  CHECK(counts.cells_received == 0);
  const auto ids = test::check_cells(w, 0, &d, 0);
  CHECK(ids.size() == 50);

  // reversed rows come back in id order
  std::vector<std::int32_t> reversed;
  for (std::size_t c = w.cells.size(); c-- > 0;) reversed.push_back(static_cast<std::int32_t>(c));
  std::vector<std::int32_t> element_order;
  for (std::int32_t c : reversed)
    for (std::int32_t e = 0; e < w.count.host(static_cast<std::size_t>(c)); ++e)
      element_order.push_back(w.first.host(static_cast<std::size_t>(c)) + e);
  w.cells.gather_host(reversed);
  w.elements.gather_host(element_order);
  for (std::size_t c = 0, at = 0; c < w.cells.size(); ++c) {
    w.first.host(c) = static_cast<std::int32_t>(at);
    for (std::int32_t e = 0; e < w.count.host(c); ++e) w.cell.host(at++) = static_cast<std::int32_t>(c);
  }
  REQUIRE(w.check_consistency().empty());
  REQUIRE(w.cell_id.host(0) == 49);
  migrate_cells(comm, w, std::vector<int>(w.cells.size(), 0));
  CHECK(test::check_cells(w, 0, nullptr, 0) == ids);

  CHECK_THROWS_AS(migrate_cells(comm, w, std::vector<int>(3, 0)), std::invalid_argument);
  CHECK_THROWS_AS(migrate_cells(comm, w, std::vector<int>(w.cells.size(), 1)), std::invalid_argument);
  w.first.host(1) += 1;
  CHECK_THROWS_WITH(migrate_cells(comm, w, std::vector<int>(w.cells.size(), 0)),
                    Catch::Matchers::StartsWith("migrate_cells: the world is not compact: cell 1 starts at"));
}

TEST_CASE("a grid field with its ghost frame filled on one rank steps to the bit as the whole grid does",
          "[domain]") {
  SerialCommunicator comm;
  CHECK(test::check_grid_cases(comm, 12) > 1000);
}

TEST_CASE(
    "a decomposed grid refuses a grid that does not span its periodic box, blocks narrower than the "
    "ghost frame and periodicity that differs from the box's",
    "[domain]") {
  SerialCommunicator comm;
  const Box box = make_box(12.0f, 10.0f, true, true);
  const GridShape shape{24, 20, 1, 0.5};
  const std::array<GridBoundary, 6> periodic = {GridBoundary::periodic, GridBoundary::periodic,
                                                GridBoundary::periodic, GridBoundary::periodic,
                                                GridBoundary::neumann,  GridBoundary::neumann};
  const auto geometry = make_grid_geometry<double>(shape, periodic, 1, [](int, int) { return 0.0; });
  const Decomposition one(ProcessGrid{1, 1}, box, 1.0);
  CHECK(grid_block(one, shape, 0).nx() == 24);
  CHECK_THROWS_WITH(
      grid_block(one, GridShape{25, 20, 1, 0.5}, 0),
      Catch::Matchers::StartsWith("a grid decomposed with the tissue must span its periodic box: x"));
  // 12 columns of width 1 over 24 nodes of 0.5: 2 nodes each
  const Decomposition twelve(ProcessGrid{12, 1}, box, 1.0);
  CHECK(grid_block(twelve, shape, 5).i0 == 10);
  CHECK(grid_block(twelve, shape, 5).i1 == 12);
  auto open_x = periodic;
  open_x[0] = open_x[1] = GridBoundary::neumann;
  CHECK_THROWS_AS(
      GridHalo<double>(one, comm, shape,
                       make_grid_geometry<double>(shape, open_x, 1, [](int, int) { return 0.0; }), 1, 1),
      InputError);
  CHECK_THROWS_AS(GridHalo<double>(one, comm, shape, geometry, 0, 1), std::invalid_argument);
  CHECK_THROWS_AS(GridHalo<double>(one, comm, shape, geometry, 1, 0), std::invalid_argument);
  // a single rank with a 25-node-wide ghost frame on a 24-node grid
  CHECK_THROWS_WITH(GridHalo<double>(one, comm, shape, geometry, 1, 25),
                    "rank 0 owns 24 x 20 nodes of the grid, fewer than its 25 ghost layers: use fewer ranks "
                    "or a finer grid");
  // 48 columns of width 0.25: the nodes' centres 0.25 + 0.5 i fall in the odd columns only
  const Decomposition many(ProcessGrid{48, 1}, make_box(12.0f, 10.0f, true, true), 0.25);
  CHECK(grid_block(many, shape, 1).nx() == 1);
  CHECK_THROWS_WITH(grid_block(many, shape, 0),
                    Catch::Matchers::Contains("would own no column of the grid's 24 nodes"));
}

TEST_CASE("the SEM's forces on one rank's merged world are the whole tissue's", "[domain]") {
  SerialCommunicator comm;
  CHECK(test::check_sem_forces(comm, ProcessGrid{1, 1}, true) == 0);
}

TEST_CASE("a decomposed SEM run on one rank equals the SEM's own run to the bit", "[domain]") {
  SerialCommunicator comm;
  CHECK(test::check_decomposed_sem_run(comm, ProcessGrid{1, 1}, true, 20) == 0);
}

TEST_CASE("daughters numbered over the ranks get, on one rank, the ids the default numbering gives",
          "[domain]") {
  SerialCommunicator comm;
  World plain(make_box(4.0f, 4.0f)), numbered(make_box(4.0f, 4.0f));
  for (World* w : {&plain, &numbered}) w->add_cells_host(6);
  numbered.next_cell_id = 3;  // stale, below the cells' ids: raised past them
  plain.next_cell_id = 6;
  domain::number_daughters_globally(comm, numbered);
  CHECK(numbered.next_cell_id == 6);
  const std::vector<std::int32_t> mothers{1, 4, 5};
  const std::size_t a = plain.add_daughters_host(mothers), b = numbered.add_daughters_host(mothers);
  REQUIRE(a == b);
  for (std::size_t k = 0; k < mothers.size(); ++k)
    CHECK(numbered.cell_id.host(b + k) == plain.cell_id.host(a + k));
  CHECK(numbered.next_cell_id == 9);
  CHECK(numbered.add_daughters_host({}) == 9);  // a round without divisions hands out nothing
  CHECK(numbered.next_cell_id == 9);
  // a mother twice in one round has no one-rank order
  CHECK_THROWS_AS(numbered.add_daughters_host({2, 2}), std::invalid_argument);
}
