#pragma once
/// @file sorting_index.hpp
/// The sorting index of a tissue of typed cells: how far cells of equal type have gathered (Steinberg's
/// differential adhesion; Graner & Glazier, Phys. Rev. Lett. 69:2013 (1992), measure the same thing as
/// the fraction of like neighbours).

#include <vector>

#include "engine/core/world.hpp"

namespace tissue::sem {

/// Default contact distance [length]: elements of touching cells sit about the intercellular potential's
/// minimum (0.157 for Table 1's V_inter) apart; 0.25 counts them and no cell one element layer away.
inline constexpr double kContactDistance = 0.25;

/// Contacts between cells: cells a != b are neighbours when an element of a and an element of b are closer
/// than `contact` [length] (minimum image in the periodic directions of the box).
/// @param x, y, z  element positions, #elements; @param cell  owning cell of each element (< n_cells)
/// @return for each cell, its neighbours in ascending order
std::vector<std::vector<int>> cell_contacts(const std::vector<float>& x, const std::vector<float>& y,
                                            const std::vector<float>& z, const std::vector<int>& cell,
                                            int n_cells, const Box& box, double contact);

/// Sorting index: the fraction of same-type cells among each cell's contacts (cell_contacts), averaged over
/// the cells that have a contact; NaN when none has. A random mixture of two types in fractions f and 1 - f
/// gives about f^2 + (1 - f)^2 (1/2 for equal fractions); complete sorting approaches 1 (only the cells on
/// the interface have unlike neighbours).
/// @param type  cell type of each cell, #cells
double sorting_index(const std::vector<std::vector<int>>& contacts, const std::vector<int>& type);

/// sorting_index of the World's host mirrors (positions, owners and the cells' kCellTypeColumn).
double sorting_index(World& world, double contact = kContactDistance);

}  // namespace tissue::sem
