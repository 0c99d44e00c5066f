#pragma once
/// @file signal_field_decomposed.hpp
/// A signal field (signal_field.hpp) stepped on one rank of a decomposed run (one tissue over several GPUs,
/// docs/multi_gpu.md): the rank advances the nodes of the grid its subdomain owns (domain::grid_block), with
/// the sources of the cells near them, and keeps a ghost frame of nodes around its block current for its
/// own cells' samples and for the stencil.
///
/// Each step:
/// 1. The rank's cells and the other ranks' cells whose centres lie within the halo width of its subdomain
///    (its ghosts) release into the field (secretion less uptake at their centres, read in the block and its
///    frame), and every node of the block gathers their deposits (DepositGather). Both cell sets are merged
///    by id and binned on the whole box's grid with the whole tissue's z-bin cap, so that every node gathers
///    the cells within a grid spacing of it in the undecomposed order.
/// 2. The explicit step (SignalEuler) of the block's nodes, which reads the frame's first layer.
/// 3. The frame is refilled from the neighbouring blocks on the device: domain::GridHalo's two phases (x,
///    then y with the corners) as two domain::DeviceHalo plans between nodes of the field's array, along the
///    split axes only.
/// The merged cells are kept on the device from one rebuild to the next, as grn::DecomposedGeneNetwork's: at
/// a rebuild (the first step, after any rank's cells changed, or once a cell could have moved a halo width
/// less a grid spacing since) the ghosts come over domain::HaloExchange (HaloMode::distinct) and are merged
/// on the host; every step the owned centres and states go into their merged rows on the device, and the
/// ghosts' come from their owners over a domain::DeviceHalo. A ghost's release is computed here, from the
/// field at its centre: where it deposits into the block, those nodes lie in the frame.
/// On the CPU backend the field then equals the undecomposed run's to the bit (tests/domain).
///
/// The rank holds on the device only its block and the frame along the split axes (a GridWindow): the
/// world's GridField hands its device state over (GridField::hold_elsewhere()) and keeps a host mirror at
/// the whole shape, into which GridField::download() writes the window. Kernels address the window with the
/// whole grid's node indices and resolve a node by the whole grid's boundary rules before they look it up:
/// along an axis that is not split the block spans the grid, and no frame is needed. The samples of the cells
/// (sample(), the system `sample.<name>` of a decomposed run) read the window too.
/// domain::gather_grid_fields_to_root() assembles the whole field in rank 0's host mirror for a checkpoint or
/// a summary; a restart hands every rank the whole field (it reads the checkpoint), of which the constructor
/// keeps the window.

/// Fields that exclude the cells' volume (exclude_cells) are not decomposed: their occupancy gathers the
/// other ranks' elements.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "engine/core/table.hpp"
#include "engine/core/world.hpp"
#include "engine/domain/centre_moves.hpp"
#include "engine/domain/communicator.hpp"
#include "engine/domain/decomposition.hpp"
#include "engine/domain/device_halo.hpp"
#include "engine/domain/grid_halo.hpp"
#include "engine/domain/halo_exchange.hpp"
#include "engine/exec/device_buffer.hpp"
#include "engine/grid/grid.hpp"
#include "engine/grid/grid_window.hpp"
#include "engine/schedule/schedule.hpp"
#include "engine/spatial/cell_list.hpp"
#include "modules/coupling/signal_field.hpp"

namespace tissue::coupling {

/// One rank's signal field in a decomposed run (see the file comment). Real = float: the device halos move
/// float values (the coupling's signal fields are float).
template <class Real>
class DecomposedSignalField {
  static_assert(std::is_same_v<Real, float>, "DecomposedSignalField: the device halos move float fields");

 public:
  /// @param params         the field's parameters
  /// @param field          the field, one species, at its whole shape and current on the device (every rank
  ///                       composed it alike, or read it from a checkpoint); it hands its device state over
  ///                       to this object (kept by reference)
  /// @param decomposition  the box's decomposition (kept by reference); its halo width must reach a grid
  ///                       spacing, and its blocks hold at least 2 nodes along x and y
  /// @param comm           one rank per subdomain (kept by reference)
  /// @throws InputError for exclude_cells, or a block narrower than the frame (domain::GridHalo);
  ///         std::invalid_argument if the halo width is below the grid spacing or the field has more than
  ///         one species.
  /// @param transport      the device transport of the ghosts' refreshes (kept by pointer); null: staged
  ///                       through the host with `comm`
  DecomposedSignalField(const SignalFieldParams& params, GridField<Real>& field,
                        const domain::Decomposition& decomposition, domain::Communicator& comm,
                        domain::DeviceTransport* transport = nullptr);
  ~DecomposedSignalField();
  DecomposedSignalField(const DecomposedSignalField&) = delete;
  DecomposedSignalField& operator=(const DecomposedSignalField&) = delete;

  /// One explicit step of the field's block (ctx.dt). `world` holds this rank's cells in ascending id order,
  /// their centres and flags current on the device, each centre outside the subdomain by at most the halo
  /// frame() less 2 spacings (0 right after a migration). Collective.
  /// @throws std::invalid_argument (on every rank alike) if a centre lies farther outside its subdomain.
  void step(World& world, const StepContext& ctx);

  /// Ghost layers around the block [nodes]: 2 + ceil(halo width / h), enough for the stencil and for the
  /// samples of a cell up to the halo width outside the subdomain, or, where some rank's block along a split
  /// axis is narrower, that block's width (and at least 2): then each step checks that the centres lie close
  /// enough to their subdomains for it.
  int frame() const { return halo_.width(); }
  /// The window the rank holds on the device: block and frame.
  const GridWindow<Real>& window() const { return window_; }
  /// Nodes this rank holds on the device, per buffer (two buffers): the window's.
  std::size_t device_nodes() const { return window_.cells(); }

  /// Each of the rank's cells' value and gradient of the field at its centre into its `<name>` and
  /// `<name>_gradient` columns, as FieldSamplingSystem (the system `sample.<name>` of a decomposed run).
  /// The centres must lie within what frame() reaches (step() checks it; a cell the window cannot sample
  /// would read 0).
  void sample(World& world);
  const domain::GridBlock& block() const { return halo_.block(); }
  /// Ghost cells received at the last rebuild.
  std::size_t ghosts() const { return ghosts_.size(); }
  /// Rebuilds so far (file comment).
  std::size_t rebuilds() const { return rebuilds_; }

 private:
  /// The nodes of the window that lie in the grid (the block, and its frame within the grid), as local and
  /// whole-grid indices.
  void set_held_nodes();
  /// Refills the frame of the current buffer from the neighbouring blocks.
  void refresh_frame();
  /// The device halos of the frame's two phases (constructor).
  void set_frame_plans();
  /// Receives the ghosts, merges them with the owned cells by id and sets up the device halo.
  void rebuild(World& world);

  struct Storage;  ///< the window's device buffers, the field's GridStorage

  SignalFieldParams params_;
  GridField<Real>& field_;
  const domain::Decomposition& decomposition_;
  domain::Communicator& comm_;
  domain::GridHalo<Real> halo_;
  GridWindow<Real> window_;
  std::shared_ptr<Storage> storage_;  ///< shared with field_
  domain::HaloExchange cell_halo_;
  std::unique_ptr<domain::DeviceTransport> staged_;  ///< the transport when none was given
  domain::DeviceHalo device_halo_;                   ///< the ghost cells' refreshes
  domain::DeviceHalo frame_x_, frame_y_;  ///< the frame's phases, along x then y (set_frame_plans())
  bool exchange_x_ = false, exchange_y_ = false;
  Table own_{"signal_cells"}, ghosts_{"signal_ghosts"};
  // the merged cells (owned and ghosts, by id), kept between rebuilds: centres, states (0 or 1), releases
  // and clamped positions; the owned cells' merged rows; the owned centres at the rebuild and moves since
  std::size_t merged_ = 0;
  DeviceBuffer<float> mx_, my_, mz_, state_;
  DeviceBuffer<std::int32_t> owned_rows_;
  domain::CentreMoves moves_;     ///< the owned centres' moves since the rebuild
  double outside_ = 0.0;          ///< how far the centres lay outside their subdomains at the rebuild
  std::size_t tissue_cells_ = 0;  ///< all ranks' cells at the rebuild
  std::uint64_t revision_ = 0;    ///< the world's revision at the rebuild
  std::size_t rows_ = 0;          ///< the world's cells at the rebuild
  bool built_ = false;
  std::size_t rebuilds_ = 0;
  // the merged cells' releases and clamped positions, their bins, and the block's sources (block order)
  DeviceBuffer<double> rate_;
  DeviceBuffer<float> px_, py_, pz_;
  DeviceBuffer<Real> source_;
  CellList bins_;
};

extern template class DecomposedSignalField<float>;

}  // namespace tissue::coupling
