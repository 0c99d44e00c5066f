#pragma once
/// @file migration.hpp
/// Migration of cells between the ranks of a decomposed run: a cell lives on the rank that owns its centre,
/// with all its elements (decomposition.hpp); when its centre leaves the subdomain it moves, with every
/// column of both tables (the modules' columns included: types, species, clocks), to the new owner. The
/// same call spreads a world that was read or built whole over the ranks, and redistributes a checkpoint
/// written by N ranks over M.
///
/// After a migration each rank's cells are in ascending order of their stable ids, the order a single-rank
/// world keeps (ids are handed out in increasing order and new cells are appended), so that a rank's rows
/// are the single-rank rows it owns, in the same order.

#include <cstddef>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/domain/communicator.hpp"
#include "engine/domain/decomposition.hpp"

namespace tissue::domain {

/// What one migration moved, on this rank.
struct MigrationCounts {
  std::size_t cells_sent = 0;
  std::size_t cells_received = 0;
  std::size_t elements_sent = 0;
  std::size_t elements_received = 0;
};

/// Sends cell c of `world`, with its elements and every column of both tables, to rank destination[c]
/// (cells destined to this rank stay), and receives the cells the other ranks send here. Afterwards the
/// cells are in ascending id order (file comment), the elements in cell order with first, count and the
/// elements' cell recomputed, world.next_cell_id is the largest over the ranks, and both tables are
/// committed (World::commit(): uploaded, revision bumped). Fields are not touched.
/// Preconditions: host mirrors current (World::download()) and the world compact (World::compact_host()).
/// Collective over all ranks (with an all-to-all).
/// @param destination  one rank per cell, each in [0, comm.size())
/// @throws std::invalid_argument if destination has not one entry per cell or names a rank outside
///         [0, comm.size()); std::logic_error if the world is not compact (World::check_consistency()).
MigrationCounts migrate_cells(Communicator& comm, World& world, const std::vector<int>& destination);

/// migrate_cells() to the owners of the cells' centres (cx, cy: current on the host mirror), so that
/// every cell ends on the rank whose subdomain holds its centre.
/// @throws as migrate_cells(); std::invalid_argument if comm.size() differs from decomposition.ranks();
///         NumericalError if a centre is not finite.
MigrationCounts migrate_to_owners(const Decomposition& decomposition, Communicator& comm, World& world);

/// migrate_cells() of every cell to rank 0: the whole tissue on rank 0 in ascending id order, the rows a
/// one-rank run holds, and none on the other ranks. For writing a checkpoint of a decomposed run with the
/// one-rank writer (io::write_checkpoint), which then restarts on any rank count: read it on rank 0 and
/// spread it with migrate_to_owners(). Rank 0 needs the whole tissue's host memory, and its device memory
/// (the tables' device columns grow with the rows: Table::shrink_to_fit() after the spread frees them).
/// @throws as migrate_cells().
MigrationCounts gather_to_root(Communicator& comm, World& world);

/// Makes `world` number the daughters of divisions as a one-rank run numbers them (World::daughter_ids):
/// in a division round the mothers of all ranks are put in ascending id order, and the k-th one's daughter
/// gets next_cell_id + k; every rank's next_cell_id then advances by the round's daughters. A one-rank world
/// keeps its cells in ascending id order, and its hooks (lifecycle::grow_and_divide) append the daughters in
/// their mothers' row order, which is this order: the ids, and the random draws keyed by them (a daughter's
/// cell-cycle clock), do not depend on the rank count. First sets next_cell_id to the largest over the ranks
/// of next_cell_id and of the cells' ids + 1 (host mirror).
/// Collective now and at every division round (World::add_daughters_host, with one all-to-all). `comm` is
/// kept by reference: the world must not use its daughter_ids after comm is gone.
/// @throws std::invalid_argument (from a round) if a mother has two daughters in one round.
void number_daughters_globally(Communicator& comm, World& world);

}  // namespace tissue::domain
