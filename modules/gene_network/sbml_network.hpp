#pragma once
/// @file sbml_network.hpp
/// Gene networks read from SBML files (libSBML, Debian's libsbml5-dev) and written back as SBML. An SBML
/// model is translated into the same UserNetworkSpec as a network written in the scenario (species, named
/// parameters, one rate expression per species), so it is compiled and stepped by the same code (muParser
/// bytecode on the CPU backend, NVRTC on the CUDA backend) at the same speed. Reading, units and what is
/// refused: docs/sbml.md.

#include <string>
#include <vector>

#include "engine/io/scenario.hpp"
#include "modules/gene_network/network_expressions.hpp"

namespace tissue::grn {

/// True when [gene_network] takes its network from an SBML file (`sbml = "path"`).
bool has_sbml_network(const io::ScenarioTable& gene_network);

/// True when this build can read and write SBML (it was built with libSBML).
bool sbml_available();

/// Reads the network of the SBML file named by `gene_network.sbml` (relative to the scenario file; a .ant or
/// .antimony file is first converted from the Antimony subset of docs/sbml.md to SBML Level 3) and
/// binds the SBML symbols listed in [gene_network.inputs] (SBML id = engine quantity: "adhesion",
/// "mean_<species id>" or a cell input of `available_fields`: a sampled field, "volume") to the engine's
/// per-cell quantities. Events become UserNetworkSpec::events (network_events.hpp).
/// Species are concentrations (amounts for hasOnlySubstanceUnits species); a reaction's rate enters the
/// rate of a concentration species divided by the size of the species' compartment. One SBML time unit is
/// one time unit of the scenario. Optional keys as for a scenario network: `neighbour_distance`,
/// `suprabasal` (an expression of the SBML ids).
/// @throws InputError (one line: the scenario key, then "<file>: <element> '<id>': <what>") for a missing
///         or malformed file, SBML errors, unsupported constructs (algebraic rules, delays, events with
///         delays or priorities or assigning what the network does not own,
///         non-constant compartments, fast reactions, csymbol time, conversion factors, functions outside
///         the expression language), an input naming an unknown SBML id or engine quantity, and every
///         error check_user_network() finds.
UserNetworkSpec read_sbml_network(const io::ScenarioTable& gene_network, const std::string& scenario_path,
                                  const std::vector<std::string>& available_fields);

/// The network as an SBML Level 3 Version 2 document: one compartment `cell` of size 1, the species with
/// their initial concentrations, one rate rule per species (its rate expression), the parameters as
/// constant parameters, the engine inputs the rates read (adhesion, mean_<species>, fields) as
/// non-constant parameters of value 0 to bind in [gene_network.inputs], and hill, hill_act and hill_rep as
/// function definitions.
/// @throws InputError for an expression SBML cannot hold here (the ?: operator), and for a network with
///         events (not exported yet).
std::string write_sbml(const UserNetworkSpec& spec, const std::string& model_id);

/// The [gene_network.inputs] table that binds write_sbml()'s input parameters back to the engine's
/// quantities, as TOML lines.
std::string sbml_inputs_table(const UserNetworkSpec& spec);

}  // namespace tissue::grn
