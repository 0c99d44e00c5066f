// SBML support in a build without libSBML (TISSUE_WITH_SBML=OFF or libsbml5-dev missing): every entry point
// refuses with one line that says how to get it.

#include "engine/exec/error.hpp"
#include "modules/gene_network/sbml_network.hpp"

namespace tissue::grn {

bool has_sbml_network(const io::ScenarioTable& gene_network) {
  return gene_network.has("sbml");
}

bool sbml_available() {
  return false;
}

UserNetworkSpec read_sbml_network(const io::ScenarioTable& t, const std::string&,
                                  const std::vector<std::string>&) {
  t.fail("sbml", "this build has no SBML support (install libsbml5-dev and configure with TISSUE_WITH_SBML)");
}

std::string write_sbml(const UserNetworkSpec&, const std::string&) {
  throw InputError(
      "export-sbml: this build has no SBML support (install libsbml5-dev and configure with "
      "TISSUE_WITH_SBML)");
}

std::string sbml_inputs_table(const UserNetworkSpec&) {
  return "";
}

}  // namespace tissue::grn
