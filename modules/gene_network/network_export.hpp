#pragma once
/// @file network_export.hpp
/// `tissue export-sbml`: the gene network a scenario runs (the built-in epidermis network, one written in
/// the scenario, or one read from SBML) as an SBML document (sbml_network.hpp, write_sbml()).

#include <string>

#include "engine/schedule/schedule.hpp"
#include "modules/gene_network/gene_network.hpp"
#include "modules/gene_network/network_expressions.hpp"

namespace tissue::grn {

/// The built-in network (Christley et al. 2010, README "Equations") written in the expression language
/// with `params`' values: the rates of scenarios/epidermis_user_network.toml, G a parameter or the sampled
/// field params.tgf_beta_field, suprabasal = "ovol1 > ovol2".
UserNetworkSpec builtin_network_spec(const GeneNetworkParams& params);

/// An exported network: the SBML text and the [gene_network.inputs] table that binds its inputs back.
struct SbmlExport {
  std::string sbml;
  std::string inputs;
};

/// The SBML of the "gene_network" system of a composed schedule.
/// @throws InputError when the schedule has no gene network, or write_sbml() refuses an expression.
SbmlExport export_network_sbml(Schedule& schedule, const std::string& model_id);

}  // namespace tissue::grn
