#include "engine/domain/migration.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>

#include "engine/domain/table_rows.hpp"

namespace tissue::domain {
namespace {

/// A migration message's header: its cell and element counts.
struct Header {
  std::uint64_t cells, elements;
};

/// first[c] as the running sum of the counts, and every element's cell, for tables whose element rows are
/// already in cell order.
void renumber(World& world) {
  std::size_t at = 0;
  for (std::size_t c = 0; c < world.cells.size(); ++c) {
    world.first.host(c) = static_cast<std::int32_t>(at);
    const auto n = static_cast<std::size_t>(world.count.host(c));
    for (std::size_t e = at; e < at + n; ++e) world.cell.host(e) = static_cast<std::int32_t>(c);
    at += n;
  }
}

}  // namespace

MigrationCounts migrate_cells(Communicator& comm, World& world, const std::vector<int>& destination) {
  const std::size_t n_cells = world.cells.size();
  const int me = comm.rank(), ranks = comm.size();
  if (destination.size() != n_cells)
    throw std::invalid_argument("migrate_cells: " + std::to_string(destination.size()) +
                                " destinations for " + std::to_string(n_cells) + " cells");
  for (int d : destination)
    if (d < 0 || d >= ranks)
      throw std::invalid_argument("migrate_cells: destination rank " + std::to_string(d) + " of " +
                                  std::to_string(ranks));
  if (const std::string problem = world.check_consistency(); !problem.empty())
    throw std::logic_error("migrate_cells: the world is not compact: " + problem);

  const std::vector<ColumnBase*> cell_columns = all_columns(world.cells);
  const std::vector<ColumnBase*> element_columns = all_columns(world.elements);
  std::vector<std::vector<std::int32_t>> cells_to(static_cast<std::size_t>(ranks));
  std::vector<std::vector<std::int32_t>> elements_to(static_cast<std::size_t>(ranks));
  for (std::size_t c = 0; c < n_cells; ++c) {
    const auto d = static_cast<std::size_t>(destination[c]);
    cells_to[d].push_back(static_cast<std::int32_t>(c));
    const std::int32_t f = world.first.host(c), n = world.count.host(c);
    for (std::int32_t e = f; e < f + n; ++e) elements_to[d].push_back(e);
  }

  MigrationCounts counts;
  std::vector<Bytes> send(static_cast<std::size_t>(ranks));
  for (std::size_t d = 0; d < send.size(); ++d) {
    if (static_cast<int>(d) == me || cells_to[d].empty()) continue;
    const Header header{cells_to[d].size(), elements_to[d].size()};
    send[d].resize(sizeof(Header));
    std::memcpy(send[d].data(), &header, sizeof(Header));
    pack_rows(cell_columns, cells_to[d], send[d]);
    pack_rows(element_columns, elements_to[d], send[d]);
    counts.cells_sent += header.cells;
    counts.elements_sent += header.elements;
  }
  const std::vector<Bytes> received = comm.all_to_all(send);

  // the cells that stay, then the cells received, by source rank: elements are in cell order throughout
  const auto mine = static_cast<std::size_t>(me);
  world.cells.gather_host(cells_to[mine]);
  world.elements.gather_host(elements_to[mine]);
  for (const Bytes& message : received) {
    if (message.empty()) continue;
    Header header{};
    if (message.size() < sizeof(Header))
      throw std::logic_error("migrate_cells: a message without its header");
    std::memcpy(&header, message.data(), sizeof(Header));
    if (message.size() != sizeof(Header) + header.cells * row_bytes(cell_columns) +
                              header.elements * row_bytes(element_columns))
      throw std::logic_error("migrate_cells: a message of " + std::to_string(message.size()) + " bytes for " +
                             std::to_string(header.cells) + " cells and " + std::to_string(header.elements) +
                             " elements");
    const std::size_t cell_base = world.cells.size(), element_base = world.elements.size();
    world.cells.resize(cell_base + header.cells);
    world.elements.resize(element_base + header.elements);
    const std::byte* at = message.data() + sizeof(Header);
    at += unpack_rows(cell_columns, cell_base, header.cells, at);
    unpack_rows(element_columns, element_base, header.elements, at);
    counts.cells_received += header.cells;
    counts.elements_received += header.elements;
  }
  renumber(world);

  // ascending ids, the elements following their cells
  const std::size_t n = world.cells.size();
  std::vector<std::int32_t> cell_order(n);
  std::iota(cell_order.begin(), cell_order.end(), 0);
  std::stable_sort(cell_order.begin(), cell_order.end(), [&](std::int32_t a, std::int32_t b) {
    return world.cell_id.host(static_cast<std::size_t>(a)) < world.cell_id.host(static_cast<std::size_t>(b));
  });
  std::vector<std::int32_t> element_order;
  element_order.reserve(world.elements.size());
  for (std::int32_t c : cell_order) {
    const std::int32_t f = world.first.host(static_cast<std::size_t>(c));
    for (std::int32_t e = f; e < f + world.count.host(static_cast<std::size_t>(c)); ++e)
      element_order.push_back(e);
  }
  world.cells.gather_host(cell_order);
  world.elements.gather_host(element_order);
  renumber(world);

  world.next_cell_id = comm.max(static_cast<std::int64_t>(world.next_cell_id));
  world.commit();
  return counts;
}

MigrationCounts migrate_to_owners(const Decomposition& decomposition, Communicator& comm, World& world) {
  if (comm.size() != decomposition.ranks())
    throw std::invalid_argument("migrate_to_owners: " + std::to_string(comm.size()) +
                                " ranks for a decomposition of " + std::to_string(decomposition.ranks()));
  std::vector<int> destination(world.cells.size());
  for (std::size_t c = 0; c < destination.size(); ++c)
    destination[c] = decomposition.owner(world.cx.host(c), world.cy.host(c));
  return migrate_cells(comm, world, destination);
}

MigrationCounts gather_to_root(Communicator& comm, World& world) {
  return migrate_cells(comm, world, std::vector<int>(world.cells.size(), 0));
}

void number_daughters_globally(Communicator& comm, World& world) {
  std::int64_t next = world.next_cell_id;
  for (std::size_t c = 0; c < world.cells.size(); ++c) next = std::max(next, world.cell_id.host(c) + 1);
  world.next_cell_id = comm.max(next);
  world.daughter_ids = [&comm](World& w, const std::vector<std::int64_t>& mothers,
                               std::vector<std::int64_t>& ids) {
    Bytes mine(mothers.size() * sizeof(std::int64_t));
    if (!mothers.empty()) std::memcpy(mine.data(), mothers.data(), mine.size());
    const std::vector<Bytes> received =
        comm.all_to_all(std::vector<Bytes>(static_cast<std::size_t>(comm.size()), mine));
    std::vector<std::int64_t> all;
    for (const Bytes& b : received) {
      const std::size_t n = b.size() / sizeof(std::int64_t);
      const std::size_t at = all.size();
      all.resize(at + n);
      if (n > 0) std::memcpy(all.data() + at, b.data(), n * sizeof(std::int64_t));
    }
    std::sort(all.begin(), all.end());
    if (std::adjacent_find(all.begin(), all.end()) != all.end())
      throw std::invalid_argument(
          "number_daughters_globally: a mother has two daughters in one division round");
    ids.resize(mothers.size());
    for (std::size_t k = 0; k < mothers.size(); ++k)
      ids[k] = w.next_cell_id + (std::lower_bound(all.begin(), all.end(), mothers[k]) - all.begin());
    w.next_cell_id += static_cast<std::int64_t>(all.size());
  };
}

}  // namespace tissue::domain
