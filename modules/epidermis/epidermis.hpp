#pragma once
/// @file epidermis.hpp
/// The 3D epidermis model of Christley et al. (2010), assembled from the sem, gene_network and
/// lifecycle modules: a periodic monolayer of basal cells on the basement membrane that grows,
/// divides and stratifies. See modules/epidermis/README.md.

#include <memory>
#include <string>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/io/scenario.hpp"
#include "engine/schedule/simulation.hpp"

namespace tissue::epidermis {

/// Builds the model from a scenario's tables ([domain], [initial], [sem], [gene_network], [lifecycle]).
/// dt/steps/output are set by the caller. @throws InputError on invalid values.
std::unique_ptr<Simulation> build(const io::ScenarioTable& root, std::uint64_t seed);

/// Stratification statistics of the current host mirrors.
struct Summary {
  std::size_t cells = 0;
  std::size_t elements = 0;
  std::size_t adherent = 0;               ///< cells with at least one adhesive element
  std::size_t suprabasal = 0;             ///< cells in the high-Ovol1 state
  std::size_t suprabasal_high_ovol1 = 0;  ///< non-adherent cells with O1 > O2
  std::size_t non_adherent = 0;
  double layer_thickness = 0;  ///< 2 x median centre height of adherent cells [length]
  int layers = 0;              ///< layers from the bottom holding >= 5 % of the cells
  std::vector<std::size_t> cells_per_layer;
  double max_height = 0;  ///< highest element [length]
};
Summary summarize(World& world);
std::string format(const Summary& s);

}  // namespace tissue::epidermis
