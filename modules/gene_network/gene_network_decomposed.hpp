#pragma once
/// @file gene_network_decomposed.hpp
/// The built-in gene network stepped on one rank of a decomposed run (one tissue over several GPUs,
/// docs/multi_gpu.md). Each step, the rank
/// 1. computes the adhesion input and the noise of the cells it owns (GeneNetworkSystem::prepare_inputs);
/// 2. receives the other ranks' cells whose centres lie within the halo width of its subdomain
///    (domain::HaloExchange, HaloMode::distinct), with their centres, species and ids;
/// 3. merges them with its own cells in the undecomposed order (by id) into a world of cells;
/// 4. steps that with the network's own stages (GeneNetworkSystem::stages), whose neighbour search on the
///    whole box's grid then visits each cell's neighbours in the undecomposed order; between the stages the
///    ghosts' midpoint species come from their owners (SpeciesMidpointExchange);
/// 5. takes its own cells' new species and suprabasal flags back.
/// With the whole tissue's z-bin cap (set here) and one lane per cell on both sides, the species equal the
/// undecomposed run's to the bit (tests/domain/test_domain_mpi.cpp). With more lanes the candidates are split
/// among the lanes by their place in the sorted list, which differs between a rank's merged cells and the
/// whole tissue, and the sums agree to float rounding.
///
/// Host-staged: the merged world is built on the host every step (the cells are a twentieth of the
/// elements); the device path of the SEM's (sem_decomposed.hpp) is the model for a faster one.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/domain/communicator.hpp"
#include "engine/domain/decomposition.hpp"
#include "engine/domain/halo_exchange.hpp"
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
  /// @throws std::invalid_argument if comm.size() differs from decomposition.ranks() or the halo width is
  ///         below the neighbour distance
  DecomposedGeneNetwork(const GeneNetworkParams& params, const domain::Decomposition& decomposition,
                        domain::Communicator& comm);
  ~DecomposedGeneNetwork();
  DecomposedGeneNetwork(const DecomposedGeneNetwork&) = delete;
  DecomposedGeneNetwork& operator=(const DecomposedGeneNetwork&) = delete;

  /// One step of the network of the cells this rank owns (ctx.dt, ctx.step). `world` holds this rank's
  /// cells with their elements and the species column (grn::add_species_column), in ascending id order,
  /// device current; afterwards the species and the suprabasal flags are current on both sides. Collective.
  /// @throws std::invalid_argument if a centre lies farther outside the subdomain than the halo width less
  ///         the neighbour distance allows, or the cells are not in id order.
  void step(World& world, const StepContext& ctx);

  /// Ghost cells received at the last step.
  std::size_t ghosts() const { return ghosts_.size(); }

 private:
  class Midpoints;

  GeneNetworkParams params_;
  const domain::Decomposition& decomposition_;
  domain::Communicator& comm_;
  std::unique_ptr<domain::HaloExchange> halo_;
  Table ghosts_{"ghost_cells"};
  std::unique_ptr<GeneNetworkSystem> owned_system_, merged_system_;
};

}  // namespace tissue::grn
