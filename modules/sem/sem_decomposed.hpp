#pragma once
/// @file sem_decomposed.hpp
/// The SEM stepped on one rank of a decomposed run (one tissue over several GPUs, docs/multi_gpu.md). Each
/// step, the rank
/// 1. receives the other ranks' elements within the halo width of its subdomain (domain::HaloExchange,
///    HaloMode::distinct: each once, unshifted) with their cells' ids, their slots in their cells and types;
/// 2. merges them with its own elements in the undecomposed order (cell id, then slot) into a world of its
/// own,
///    and steps that with the SEM's own system (SemSystem::run), whose minimum-image cell list on the whole
///    box's grid then visits each element's neighbours in the undecomposed order;
/// 3. between the two RK2 stages, replaces the ghosts' midpoints by their owners' (HaloExchange::refresh) and
///    searches as far as anything in the whole tissue moved (MidpointExchange);
/// 4. takes its own elements' new positions back, recomputes the cell centres, and migrates the cells whose
///    centres left its subdomain (domain::migrate_to_owners).
/// With lanes = 1 and rebuild_every = 1 on both sides, the positions then equal the undecomposed run's to the
/// bit (tests/domain/test_domain_mpi.cpp): the merged world's cell list caps its z bins by the whole tissue's
/// element count (SemParams::z_bin_points), so that its bins are the undecomposed list's.
///
/// Host-staged: the exchanges go through the host mirrors (the device transport comes later).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/domain/communicator.hpp"
#include "engine/domain/decomposition.hpp"
#include "engine/domain/halo_exchange.hpp"
#include "engine/schedule/schedule.hpp"
#include "modules/sem/sem.hpp"

namespace tissue::sem {

/// One rank's SEM in a decomposed run (see the file comment).
class DecomposedSem {
 public:
  /// @param params         the SEM's parameters; rebuild_every is taken as 1 (the merged world is new every
  ///                       step, so its cell list is always built)
  /// @param decomposition  the box's decomposition; its halo width must cover the largest intercellular
  ///                       cut-off plus the farthest an element lies outside its owner's subdomain (kept by
  ///                       reference)
  /// @param comm           one rank per subdomain (kept by reference)
  /// @throws std::invalid_argument if the halo width is below the intercellular cut-off or comm.size()
  ///         differs from decomposition.ranks()
  DecomposedSem(const SemParams& params, const domain::Decomposition& decomposition,
                domain::Communicator& comm);
  ~DecomposedSem();
  DecomposedSem(const DecomposedSem&) = delete;
  DecomposedSem& operator=(const DecomposedSem&) = delete;

  /// Adds what the exchange needs to a world with the SEM's columns: the elements' "cell_id" (int64) and
  /// "slot" (int32) columns, filled by step(). Call once, before the world is stepped.
  static void add_columns(World& world);

  /// One RK2 step of the elements of the cells this rank owns (ctx.dt, ctx.step), then the migration of
  /// the cells whose centres left the subdomain. `world` holds this rank's cells (compact, host mirrors and
  /// device in sync); afterwards both tables are committed. Collective over all ranks.
  /// @throws as HaloExchange::build (an element farther outside the subdomain than the slack) and
  ///         migrate_to_owners.
  void step(World& world, const StepContext& ctx);

  /// Ghost elements received at the last step.
  std::size_t ghosts() const { return ghost_count_; }

 private:
  class Midpoints;

  SemParams params_;
  const domain::Decomposition& decomposition_;
  domain::Communicator& comm_;
  domain::HaloExchange halo_;
  Table ghost_elements_{"ghost_elements"};
  std::unique_ptr<SemSystem> system_;
  std::unique_ptr<Midpoints> midpoints_;
  std::size_t ghost_count_ = 0;
};

}  // namespace tissue::sem
