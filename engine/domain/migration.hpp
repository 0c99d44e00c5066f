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
/// spread it with migrate_to_owners(). Rank 0 needs the whole tissue's host memory.
/// @throws as migrate_cells().
MigrationCounts gather_to_root(Communicator& comm, World& world);

}  // namespace tissue::domain
