#include "modules/epidermis/epidermis.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "engine/core/cell_centres.hpp"
#include "modules/gene_network/gene_network.hpp"
#include "modules/lifecycle/lifecycle.hpp"
#include "modules/sem/sem.hpp"
#include "modules/sem/sem_layout.hpp"

namespace tissue::epidermis {

std::unique_ptr<Simulation> build(const io::ScenarioTable& root, std::uint64_t seed) {
  const auto initial = sem::read_monolayer_params(root.table("initial"));
  const auto domain = root.table("domain");
  Box box;
  box.periodic_x = box.periodic_y = domain.boolean("periodic", true);
  box.lx = static_cast<float>(initial.cells_x * initial.spacing);
  box.ly = static_cast<float>(initial.cells_y * initial.spacing);
  const auto sem_params = sem::read_sem_params(root.table("sem"));
  const auto grn_params = grn::read_gene_network_params(root.table("gene_network"));
  const auto life = lifecycle::read_lifecycle_params(root.table("lifecycle"));

  const double reach = std::max(sem_params.effective_bin_size(), grn_params.neighbour_distance);
  if (box.periodic_x && (box.lx < 2.0 * reach || box.ly < 2.0 * reach))
    root.table("initial").fail(
        "spacing", "the periodic box (" + std::to_string(box.lx) + " x " + std::to_string(box.ly) +
                       ") must be at least twice the largest interaction distance " + std::to_string(reach));

  auto sim = std::make_unique<Simulation>();
  sim->model = "epidermis";
  sim->world = std::make_unique<World>(box, grn::kSpeciesCount);
  World& w = *sim->world;
  w.seed = seed;
  sem::seed_monolayer(w, initial);
  for (std::size_t c = 0; c < w.cells.size(); ++c)
    for (int s = 0; s < grn::kAdhesion; ++s)
      w.species.host(c, s) = static_cast<float>(grn_params.initial[static_cast<std::size_t>(s)]);
  w.cells.upload();

  sim->schedule.add(std::make_unique<sem::SemSystem>(sem_params));
  sim->schedule.add(std::make_unique<CellCentreSystem>());
  sim->schedule.add(std::make_unique<grn::GeneNetworkSystem>(grn_params));
  sim->schedule.add_hook(
      "lifecycle.grow_and_divide", life.growth_interval,
      [life](World& world, const StepContext&) { lifecycle::grow_and_divide(world, life); });
  update_cell_centres(w);
  sim->species_names.assign(std::begin(grn::kSpeciesNames), std::end(grn::kSpeciesNames));
  sim->summary = [](World& world) { return format(summarize(world)); };
  return sim;
}

Summary summarize(World& w) {
  Summary s;
  s.cells = w.cells.size();
  s.elements = w.elements.size();
  std::vector<double> adherent_heights;
  std::vector<bool> adherent(s.cells, false);
  for (std::size_t e = 0; e < s.elements; ++e) {
    if (w.type.host(e) == kAdhesiveElement) adherent[static_cast<std::size_t>(w.cell.host(e))] = true;
    s.max_height = std::max(s.max_height, static_cast<double>(w.z.host(e)));
  }
  const bool network = w.species_count() > grn::kOvol1;
  for (std::size_t c = 0; c < s.cells; ++c) {
    if (adherent[c]) {
      ++s.adherent;
      adherent_heights.push_back(w.cz.host(c));
    } else {
      ++s.non_adherent;
      if (network && w.species.host(c, grn::kOvol1) > w.species.host(c, grn::kOvol2))
        ++s.suprabasal_high_ovol1;
    }
    if (w.flags.host(c) & cell_flags::suprabasal) ++s.suprabasal;
  }
  if (!adherent_heights.empty()) {
    std::nth_element(adherent_heights.begin(), adherent_heights.begin() + adherent_heights.size() / 2,
                     adherent_heights.end());
    s.layer_thickness = 2.0 * adherent_heights[adherent_heights.size() / 2];
  }
  if (s.layer_thickness > 0.0) {
    for (std::size_t c = 0; c < s.cells; ++c) {
      const auto layer =
          static_cast<std::size_t>(std::max(0.0, std::floor(w.cz.host(c) / s.layer_thickness)));
      if (layer >= s.cells_per_layer.size()) s.cells_per_layer.resize(layer + 1, 0);
      ++s.cells_per_layer[layer];
    }
    for (std::size_t l = 0; l < s.cells_per_layer.size(); ++l) {
      if (static_cast<double>(s.cells_per_layer[l]) < 0.05 * static_cast<double>(s.cells)) break;
      s.layers = static_cast<int>(l) + 1;
    }
  }
  return s;
}

std::string format(const Summary& s) {
  std::ostringstream out;
  out << "cells " << s.cells << " (elements " << s.elements << "), adherent " << s.adherent
      << ", non-adherent " << s.non_adherent << " of which high-Ovol1 " << s.suprabasal_high_ovol1
      << "; suprabasal state " << s.suprabasal << "\n";
  out << "layers " << s.layers << " (thickness " << s.layer_thickness << ", cells per layer from the bottom:";
  for (auto n : s.cells_per_layer) out << " " << n;
  out << "), tissue height " << s.max_height;
  return out.str();
}

}  // namespace tissue::epidermis
