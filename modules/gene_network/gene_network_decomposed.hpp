#pragma once
/// @file gene_network_decomposed.hpp
/// The built-in gene network stepped on one rank of a decomposed run (one tissue over several GPUs,
/// docs/multi_gpu.md). Each step, the rank computes the adhesion input and the noise of the cells it owns
/// (GeneNetworkSystem::prepare_inputs), then steps a merged world of its cells and the other ranks' cells
/// near its faces (its ghosts) in the undecomposed order (by id) with the network's own stages
/// (GeneNetworkSystem::stages), whose neighbour search on the whole box's grid then visits each cell's
/// neighbours in the undecomposed order, and takes its own cells' new species and suprabasal flags back.
///
/// The merged world is kept on the device from one rebuild to the next, as the SEM's (sem_decomposed.hpp):
/// - At a rebuild (the first step, after any rank's cells changed: a migration, a division, a death; or
///   when the centres have moved too far) the rank receives the other ranks' cells whose centres lie within
///   the halo width of its subdomain (domain::HaloExchange, HaloMode::distinct), merges them with its own by
///   id on the host, and sets up a device halo (domain::DeviceHalo) between the merged rows.
/// - Every step, the owned cells' centres, species (with this step's input) and suprabasal bits go into
///   their merged rows on the device, and the ghosts' come from their owners through the device halo; between
///   the stages the ghosts' midpoint species come the same way.
/// - The ghosts chosen at a rebuild hold every cell within the neighbour distance of an owned cell while no
///   centre has moved more than half the margin: the halo width less the neighbour distance less the farthest
///   a centre lay outside its subdomain at the rebuild. Each step takes one max-reduction of how far the
///   owned centres moved since the rebuild.
/// With the whole tissue's z-bin cap (set here) and one lane per cell on both sides, the species equal the
/// undecomposed run's to the bit, rebuild or not (tests/domain/test_domain_mpi.cpp). With more lanes the
/// candidates are split among the lanes by their place in the sorted list, which differs between a rank's
/// merged cells and the whole tissue, and the sums agree to float rounding.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/domain/centre_moves.hpp"
#include "engine/domain/communicator.hpp"
#include "engine/domain/decomposition.hpp"
#include "engine/domain/device_halo.hpp"
#include "engine/domain/halo_exchange.hpp"
#include "engine/exec/device_buffer.hpp"
#include "modules/gene_network/gene_network.hpp"

namespace tissue::grn {

/// One rank's gene network in a decomposed run (see the file comment).
class DecomposedGeneNetwork {
 public:
  /// @param params         the network's parameters (z_bin_points is set here from the tissue, and lanes 0
  ///                       resolves by the tissue's cell count)
  /// @param decomposition  the box's decomposition (kept by reference); its halo width must cover the
  ///                       neighbour distance plus the farthest a cell's centre lies outside its owner's
  ///                       subdomain (0 right after a migration)
  /// @param comm           one rank per subdomain (kept by reference)
  /// @param transport      the device transport of the halo refreshes (kept by pointer); null: staged
  ///                       through the host with `comm`
  /// @throws std::invalid_argument if comm.size() differs from decomposition.ranks() or the halo width is
  ///         below the neighbour distance
  DecomposedGeneNetwork(const GeneNetworkParams& params, const domain::Decomposition& decomposition,
                        domain::Communicator& comm, domain::DeviceTransport* transport = nullptr);
  ~DecomposedGeneNetwork();
  DecomposedGeneNetwork(const DecomposedGeneNetwork&) = delete;
  DecomposedGeneNetwork& operator=(const DecomposedGeneNetwork&) = delete;

  /// One step of the network of the cells this rank owns (ctx.dt, ctx.step). `world` holds this rank's
  /// cells with their elements and the species column (grn::add_species_column), in ascending id order,
  /// device current; afterwards the species and the suprabasal flags are current on the device (download()
  /// for the host mirrors). Collective.
  /// @throws std::invalid_argument at a rebuild if a centre lies farther outside the subdomain than the halo
  ///         width less the neighbour distance allows, or the cells are not in id order.
  void step(World& world, const StepContext& ctx);

  /// Ghost cells received at the last rebuild.
  std::size_t ghosts() const { return ghosts_.size(); }
  /// Rebuilds so far (file comment).
  std::size_t rebuilds() const { return rebuilds_; }

 private:
  class Midpoints;
  /// Receives the ghosts, merges them with the owned cells and sets up the device halo (file comment).
  void rebuild(World& world);
  /// Exchanges the merged world's `columns` over the device halo, kMaxColumns at a time.
  void exchange(const std::vector<Span<float>>& columns);

  GeneNetworkParams params_;
  const domain::Decomposition& decomposition_;
  domain::Communicator& comm_;
  std::unique_ptr<domain::HaloExchange> halo_;
  std::unique_ptr<domain::DeviceTransport> staged_;  ///< the transport when none was given
  domain::DeviceHalo device_halo_;
  Table ghosts_{"ghost_cells"};
  std::unique_ptr<GeneNetworkSystem> owned_system_, merged_system_;
  std::unique_ptr<World> merged_;          ///< owned and ghost cells by id, kept between rebuilds
  DeviceBuffer<std::int32_t> owned_rows_;  ///< the merged row of each owned cell (world row order)
  domain::CentreMoves moves_;              ///< the owned centres' moves since the rebuild
  double margin_ = 0.0;                    ///< [length] (file comment)
  std::uint64_t revision_ = 0;             ///< the world's revision at the last rebuild
  std::size_t rows_ = 0;                   ///< the world's cells at the last rebuild
  std::size_t rebuilds_ = 0;
};

}  // namespace tissue::grn
