#pragma once
// A World as the composed epidermis has it (the SEM's element types, a gene network's species), for tests
// that build worlds by hand instead of from a scenario.

#include <string>
#include <vector>

#include "engine/core/world.hpp"
#include "modules/gene_network/gene_network.hpp"
#include "modules/sem/sem.hpp"

namespace tissue::test {

/// Species names for a world of `count` species rows: the built-in network's when the count matches,
/// else s0, s1, ...
inline std::vector<std::string> species_names(int count) {
  std::vector<std::string> names;
  for (int k = 0; k < count; ++k)
    names.push_back(count == grn::kSpeciesCount ? grn::kSpeciesNames[k] : "s" + std::to_string(k));
  return names;
}

/// A World with the element type column (sem::add_sem_columns) and, when species_count > 0, the species
/// column and suprabasal flag of a gene network (grn::add_species_column).
struct TissueWorld : World {
  TissueWorld(Box domain, int species_count)
      : World(domain),
        type(sem::add_sem_columns(*this)),
        species(species_count > 0 ? grn::add_species_column(*this, species_names(species_count))
                                  : cells.add_column<float>("unused_species")) {}
  using World::add_element_host;
  /// Appends an element of cell `c` of element type `t` (host mirror).
  std::int32_t add_element_host(std::int32_t c, float px, float py, float pz, std::int32_t t) {
    return sem::add_element_host(*this, c, px, py, pz, t);
  }
  /// The suprabasal flag's bit.
  std::uint32_t suprabasal() { return flag_bit(grn::kSuprabasalFlag); }

  Column<std::int32_t>& type;
  Column<float>& species;
};

}  // namespace tissue::test
