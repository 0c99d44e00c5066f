#pragma once
/// @file typed_network.hpp
/// A gene network per cell type (issue 37): `[cell_types.gene_network]` under a `[[cell_types]]` entry (an
/// SBML/Antimony file with its own `inputs`, or the keys of a network written in the scenario) overrides the
/// tissue-wide `[gene_network]` for the cells of that type. The networks are merged into ONE
/// UserNetworkSpec: the union of their species by name (tissue-wide network first, then the types in
/// declaration order), each species' rate selecting the rate of the cell's type's network by the cell's
/// type (a species the type's network does not have gets rate 0 there and keeps its value). The merged spec
/// is compiled and stepped as any scenario-written network (muParser bytecode on the CPU backend, one NVRTC
/// kernel on the CUDA backend, one thread per cell evaluating only its own type's branch). The cell's type
/// reaches the expressions through the float cell column kNetworkTypeColumn, refreshed from `cell_type`
/// every step by NetworkTypeSystem, so a transition (rules) switches the network from the next step on.
/// Design and errors: docs/sbml.md, "A network per cell type".

#include <memory>
#include <string>
#include <vector>

#include "engine/io/scenario.hpp"
#include "engine/schedule/schedule.hpp"
#include "modules/gene_network/network_expressions.hpp"

namespace tissue::grn {

/// Float cell column holding the cell's type index (a copy of the int32 `cell_type`), read by the merged
/// network's expressions as a field.
inline constexpr const char* kNetworkTypeColumn = "network_type";

/// True when some `[[cell_types]]` entry of `root` has its own `gene_network` table (or `cell_types` is a
/// plain table holding one, which is refused later).
bool has_typed_networks(const io::ScenarioTable& root);

/// The networks of a scenario with per-type networks, merged. `typed` is false when every cell type runs
/// the same network (then `spec` is that network, unchanged, and needs no type column).
struct TypedNetworks {
  UserNetworkSpec spec;
  bool typed = false;
};

/// Reads the tissue-wide network of `gene_network` (if it has one: `species` or `sbml`) and each cell type's
/// `[cell_types.gene_network]`, and merges them (file header). `cell_types` are the declared types in
/// order (the SEM's "cell_types"; null without `[[cell_types]]`). `available_fields` are the sampled fields
/// the expressions may read.
/// @throws InputError (one line, file:line:column) for a per-type network without `[[cell_types]]`, the
///         built-in network's keys beside per-type networks, a species two networks define with different
///         initial values, networks with different `neighbour_distance`, a species or parameter named
///         kNetworkTypeColumn, and every error of the networks' own readers.
TypedNetworks read_typed_networks(const io::ScenarioTable& root, const io::ScenarioTable& gene_network,
                                  const std::string& scenario_path,
                                  const std::vector<std::string>* cell_types,
                                  const std::vector<std::string>& available_fields);

/// `expr` with every name found in `renames` replaced by its new name (numbers and other tokens kept as
/// written). Used to give each merged network's parameters names of their own.
std::string rename_names(const std::string& expr,
                         const std::vector<std::pair<std::string, std::string>>& renames);

/// System "gene_network_types": kNetworkTypeColumn[c] = cell_type[c] for every cell, before the network.
class NetworkTypeSystem final : public System {
 public:
  std::string name() const override { return "gene_network_types"; }
  AccessList access() const override;
  void run(World& world, const StepContext& ctx) override;
  bool replayable() const override { return true; }
};

}  // namespace tissue::grn
