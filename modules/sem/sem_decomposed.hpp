#pragma once
/// @file sem_decomposed.hpp
/// The SEM stepped on one rank of a decomposed run (one tissue over several GPUs, docs/multi_gpu.md).
///
/// At a rebuild, the rank
/// 1. migrates the cells whose centres left its subdomain (domain::migrate_to_owners);
/// 2. receives the other ranks' elements within the halo width of its subdomain (domain::HaloExchange,
///    HaloMode::distinct: each once, unshifted) with their cells' ids, their slots in their cells and types;
/// 3. merges them with its own elements in the undecomposed order (cell id, then slot) into a world of its
///    own, the merged world, which it keeps until the next rebuild;
/// 4. sets up the device halo (domain::DeviceHalo): the merged rows each neighbour needs, and the ghost rows
///    each neighbour fills.
///
/// Every step, the rank refreshes the ghosts' positions from their owners on the device (DeviceHalo: pack,
/// transport, unpack), steps the merged world with the SEM's own system (SemSystem::run, whose
/// minimum-image cell list on the whole box's grid visits each element's neighbours in the undecomposed
/// order), and between the two RK2 stages refreshes the ghosts' midpoints the same way and searches as far
/// as anything in the whole tissue moved (MidpointExchange). Its own elements' new positions are then copied
/// into its world on the device.
///
/// Rebuilds happen at the first step, after the world changed (a commit, on any rank), and before some
/// element of the tissue could have moved more than half the margin since the last rebuild, as MD codes
/// rebuild their neighbour lists within half the skin. The margin is the halo width less the intercellular
/// cut-off less the farthest an element lay outside its owner's subdomain at the rebuild (all ranks): the
/// ghosts then hold every element within the cut-off of an owned element for as long as no element has
/// moved more than half the margin along x or y (Decomposition::outside). Each midpoint stage measures, in
/// one reduction over the ranks, how far the elements moved along x and y since the rebuild (at the step's
/// start or at the midpoint, the farther) and how far they moved in the half step; it throws where the bound
/// was broken, and asks for a rebuild before the next step once that distance plus four half steps would
/// break it. A rebuild migrates only where some cell's centre left its owner's subdomain, and otherwise moves
/// only positions and the ghosts through the host: the merged world is laid out cell by cell on the host
/// (cells are merged by id) and filled on the device.
///
/// With lanes = 1 and rebuild_every = 1 on both sides, the positions equal the undecomposed run's to the
/// bit, rebuilds or not (tests/domain/test_domain_mpi.cpp): the merged world's cell list caps its z bins by
/// the whole tissue's element count (SemParams::z_bin_points), so that its bins are the undecomposed list's,
/// and the merged rows keep the undecomposed order between rebuilds. On a split periodic axis the list keeps
/// only the bins of the subdomain widened by 1.5 halo widths and a bin (SemParams::bin_window): every merged
/// element lies there, and the bins are visited in the whole grid's order.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/domain/communicator.hpp"
#include "engine/domain/decomposition.hpp"
#include "engine/domain/device_halo.hpp"
#include "engine/domain/halo_exchange.hpp"
#include "engine/schedule/schedule.hpp"
#include "modules/sem/sem.hpp"

namespace tissue::sem {

/// One rank's SEM in a decomposed run (see the file comment).
class DecomposedSem {
 public:
  /// Where the time of the steps went [s], when timing is on (set_timing): each part is closed by a
  /// device synchronisation.
  struct Timings {
    double rebuild = 0.0;   ///< migrations, host halo builds and merged worlds
    double compute = 0.0;   ///< the SEM's stages and the copy of the new positions (the rest of the step)
    double pack = 0.0;      ///< device halo: gathering the rows sent
    double transfer = 0.0;  ///< device halo: the transport
    double unpack = 0.0;    ///< device halo: scattering the ghost rows
    double check = 0.0;     ///< displacement reductions and the ranks' max of them
    std::size_t steps = 0, rebuilds = 0;
  };

  /// @param params         the SEM's parameters; rebuild_every is taken as 1 (the cell list of the merged
  ///                       world is built every step)
  /// @param decomposition  the box's decomposition (kept by reference); its halo width must exceed the
  ///                       intercellular cut-off plus the farthest an element lies outside its owner's
  ///                       subdomain (a cell's radius or so), the rest being the margin the elements may move
  ///                       between rebuilds
  /// @param comm           one rank per subdomain (kept by reference)
  /// @param transport      the device transport of the halo refreshes (kept by pointer); null: staged
  ///                       through the host with `comm` (StagedTransport)
  /// @throws std::invalid_argument if the halo width is not above the intercellular cut-off or comm.size()
  ///         differs from decomposition.ranks()
  DecomposedSem(const SemParams& params, const domain::Decomposition& decomposition,
                domain::Communicator& comm, domain::DeviceTransport* transport = nullptr);
  ~DecomposedSem();
  DecomposedSem(const DecomposedSem&) = delete;
  DecomposedSem& operator=(const DecomposedSem&) = delete;

  /// Adds what the exchange needs to a world with the SEM's columns: the elements' "cell_id" (int64) and
  /// "slot" (int32) columns, filled at rebuilds and transient (not in checkpoints). Call once, before the
  /// world is stepped.
  static void add_columns(World& world);

  /// One RK2 step of the elements of the cells this rank owns (ctx.dt, ctx.step), after a rebuild where one
  /// is due (file comment). `world` holds this rank's cells (compact, host mirrors and device in sync at the
  /// first step and after any change made between steps, which must be committed). Afterwards the world's
  /// device positions and cell centres are current (download() for the host mirrors); at a rebuild its
  /// cells may have changed (a migration, committed). Collective over all ranks.
  /// @throws std::invalid_argument if the halo width leaves no margin beyond the cut-off and the elements
  ///         outside their subdomains, or as HaloExchange::build (an element farther outside the subdomain
  ///         than the slack) and migrate_to_owners; NumericalError when one step moves an element farther
  ///         than the margin allows.
  void step(World& world, const StepContext& ctx);

  /// Ghost elements of the current merged world.
  std::size_t ghosts() const { return ghost_count_; }
  /// Rebuilds so far.
  std::size_t rebuilds() const { return timings_.rebuilds; }
  /// The margin of the last rebuild [length] (file comment).
  double margin() const { return margin_; }
  /// The device transport's name ("staged", "nccl").
  const char* transport() const { return transport_->name(); }
  /// Switches the timing of the steps' parts on (synchronising the device between them) or off.
  void set_timing(bool on);
  const Timings& timings() const { return timings_; }
  void reset_timings();

 private:
  class Midpoints;
  /// Migration, host halo and merged world (file comment).
  void rebuild(World& world);

  SemParams params_;
  const domain::Decomposition& decomposition_;
  domain::Communicator& comm_;
  domain::HaloExchange halo_;
  std::unique_ptr<domain::StagedTransport> staged_;
  domain::DeviceTransport* transport_;
  domain::DeviceHalo device_halo_;
  Table ghost_elements_{"ghost_elements"};
  std::unique_ptr<World> merged_;
  std::unique_ptr<SemSystem> system_;
  std::unique_ptr<Midpoints> midpoints_;
  std::size_t ghost_count_ = 0;
  std::uint64_t revision_ = 0;  ///< the world's revision after the last rebuild
  std::size_t rows_ = 0;        ///< its element count then
  double margin_ = 0.0;
  bool rebuild_next_ = true;  ///< the last midpoint stage asked for a rebuild before the next step
  bool ids_current_ = false;  ///< the world's cell_id and slot host columns hold its rows' (set at rebuilds)
  DeviceBuffer<std::int32_t> owned_rows_;   ///< merged row of each owned element (world row order)
  DeviceBuffer<std::int32_t> merged_cell_;  ///< merged cell of each owned cell (world cell order)
  DeviceBuffer<std::uint8_t> owned_mask_;   ///< per merged row: 1 when owned
  DeviceBuffer<float> x0_, y0_;             ///< merged positions at the rebuild [length]
  DeviceBuffer<float> ghost_x_, ghost_y_, ghost_z_;
  DeviceBuffer<std::int32_t> ghost_type_, ghost_cell_, ghost_row_;  ///< a rebuild's ghosts, to be scattered
  DeviceBuffer<float> scratch_, scratch_max_;
  DeviceBuffer<unsigned char> reduce_temp_;
  bool timing_ = false;
  Timings timings_;
};

}  // namespace tissue::sem
