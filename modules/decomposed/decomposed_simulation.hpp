#pragma once
/// @file decomposed_simulation.hpp
/// A simulation composed from a scenario, made one rank's part of a decomposed run (one tissue over several
/// GPUs or processes, docs/multi_gpu.md): its cells spread over the ranks' subdomains, its SEM and gene
/// network systems replaced by their decomposed forms, the daughters of its divisions numbered as one rank
/// numbers them. The schedule then steps it as it steps any simulation, hooks included: Schedule::step on
/// every rank, collectively.
///
/// What is decomposed: the systems "sem" (sem::DecomposedSem), "gene_network" (the built-in network,
/// grn::DecomposedGeneNetwork), the signal fields' "<name>" (coupling::DecomposedSignalField: each rank steps
/// its block of the grid) and their "sample.<name>", "cell_centres" (each rank's own cells), and the
/// lifecycle's and the rules' divisions (domain::number_daughters_globally). A scenario with any other system
/// or field (grid reaction-diffusion, meshes), or a signal field that excludes the cells' volume, is refused:
/// their decomposed forms are not built yet. Outputs and checkpoints are the caller's (io::OutputPiece,
/// domain::gather_to_root, domain::gather_grid_fields_to_root).

#include <memory>

#include "engine/domain/communicator.hpp"
#include "engine/domain/decomposition.hpp"
#include "engine/domain/device_halo.hpp"
#include "engine/schedule/simulation.hpp"

namespace tissue {

/// Makes `sim` one rank's part of a decomposed run (file comment). Every rank passes the simulation the same
/// scenario composed (the whole tissue, seeded the same way on each); afterwards each rank holds the cells
/// whose centres its subdomain owns. The halo width is the SEM's intercellular cut-off plus twice the largest
/// x-y distance of an element from its cell's centre (cells grow), and at least the gene network's neighbour
/// distance and each signal field's grid spacing, plus `skin` [length]. Its systems run with one lane and the
/// SEM builds its cell list every step, the setting in which a decomposed run equals the one-rank run of the
/// same setting to the bit. The simulation's summary gains a line with the halo rebuilds of the decomposed
/// systems. Collective.
/// @param transport  the device transport of the halo refreshes (the SEM's, the gene network's, the signal
///                   fields'; kept by pointer; null: staged through the host)
/// @returns the decomposition (also held by the replaced systems)
/// @throws InputError for a system or field that does not run decomposed, a rank count the box cannot be
///         split into (domain::choose_process_grid), or a signal field's grid whose blocks would be too
///         narrow (domain::GridHalo)
std::shared_ptr<const domain::Decomposition> decompose_simulation(
    Simulation& sim, domain::Communicator& comm, double skin = 0.2,
    domain::DeviceTransport* transport = nullptr);

}  // namespace tissue
