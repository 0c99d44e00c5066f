// The scenario's gene network as SBML (tissue export-sbml).

#include "modules/gene_network/network_export.hpp"

#include <algorithm>
#include <cstdio>

#include "engine/exec/error.hpp"
#include "modules/gene_network/sbml_network.hpp"
#include "modules/gene_network/typed_network.hpp"
#include "modules/gene_network/user_network.hpp"

namespace tissue::grn {

namespace {

std::string hill(const char* x, const char* tag) {
  const std::string t = tag;
  return std::string("hill(") + x + ", a_" + t + ", b_" + t + ", c_" + t + ", h_" + t + ")";
}

}  // namespace

UserNetworkSpec builtin_network_spec(const GeneNetworkParams& params) {
  UserNetworkSpec spec;
  const auto& r = params.rates;
  spec.parameters = {{"k_a", r.k_a}, {"k_d", r.k_d}, {"d_b", r.d_b}, {"d_n", r.d_n},
                     {"d_d", r.d_d}, {"d_o", r.d_o}, {"d_v", r.d_v}, {"d_m", r.d_m}};
  const std::pair<const char*, const Hill<double>*> hills[] = {{"bn", &r.bn}, {"on", &r.on}, {"nd", &r.nd},
                                                               {"vo", &r.vo}, {"go", &r.go}, {"ov", &r.ov},
                                                               {"av", &r.av}, {"om", &r.om}};
  for (const auto& [tag, h] : hills) {
    const std::string t = tag;
    spec.parameters.emplace_back("a_" + t, h->a);
    spec.parameters.emplace_back("b_" + t, h->b);
    spec.parameters.emplace_back("c_" + t, h->c);
    spec.parameters.emplace_back("h_" + t, h->h);
  }
  std::string g = "G";
  if (params.tgf_beta_field.empty()) {
    spec.parameters.emplace_back("G", r.tgf_beta);
  } else {
    g = params.tgf_beta_field;
    spec.fields.push_back(g);
  }
  const char* names[] = {"notch", "delta", "bound", "ovol2", "ovol1", "cmyc"};
  const std::string rates[] = {
      "-k_a * notch * mean_delta + k_d * bound - d_n * notch + " + hill("bound", "bn") + " * " +
          hill("ovol2", "on"),
      "-k_a * delta * mean_notch + k_d * mean_bound - d_d * delta + " + hill("notch", "nd"),
      "k_a * notch * mean_delta - k_d * bound - d_b * bound",
      "-d_o * ovol2 + " + hill("ovol1", "vo") + " * " + hill(g.c_str(), "go"),
      "-d_v * ovol1 + " + hill("ovol2", "ov") + " * " + hill("adhesion", "av"),
      "-d_m * cmyc + " + hill("ovol2", "om")};
  for (int s = 0; s < 6; ++s) {
    UserSpecies u;
    u.name = names[s];
    u.initial = params.initial[static_cast<std::size_t>(s)];
    u.rate = rates[s];
    u.where = std::string("the built-in network: rate of ") + names[s];
    spec.species.push_back(u);
  }
  spec.suprabasal = "ovol1 > ovol2";
  spec.neighbour_distance = params.neighbour_distance;
  spec.mean_species = {0, 1, 2};  // notch, delta, bound
  spec.reads_adhesion = true;
  return spec;
}

SbmlExport export_network_sbml(Schedule& schedule, const std::string& model_id) {
  for (std::size_t i = 0; i < schedule.system_count(); ++i) {
    System& s = schedule.system(i);
    UserNetworkSpec spec;
    if (const auto* user = dynamic_cast<const UserNetworkSystem*>(&s)) {
      spec = user->spec();
      if (std::find(spec.fields.begin(), spec.fields.end(), kNetworkTypeColumn) != spec.fields.end())
        throw InputError(
            "export-sbml: the scenario runs a network per cell type ([cell_types.gene_network]); "
            "one SBML model holds one network: export each from a scenario that runs it alone");
    } else if (const auto* builtin = dynamic_cast<const GeneNetworkSystem*>(&s)) {
      spec = builtin_network_spec(builtin->params());
    } else {
      continue;
    }
    SbmlExport out;
    out.sbml = write_sbml(spec, model_id);
    out.inputs = sbml_inputs_table(spec);
    if (!spec.suprabasal.empty()) out.inputs = "suprabasal = \"" + spec.suprabasal + "\"\n" + out.inputs;
    char buf[64];
    std::snprintf(buf, sizeof buf, "neighbour_distance = %.15g\n", spec.neighbour_distance);
    out.inputs = buf + out.inputs;
    return out;
  }
  throw InputError(
      "export-sbml: the scenario has no gene network (add \"gene_network\" to simulation.modules)");
}

}  // namespace tissue::grn
