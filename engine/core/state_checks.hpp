#pragma once
/// @file state_checks.hpp
/// Numerical checks of the World's state that know no module: every floating-point column of the cells and
/// elements tables (a gene network's species, sampled fields, whatever modules added) must be finite.

#include "engine/core/world.hpp"

namespace tissue {

/// Throws NumericalError when a float or double column of the cells or elements table holds a NaN or an
/// infinity in its rows [0, size): the step, the column, how many, and the first (row's cell id, component
/// name). Device-side reductions, one per column component; nothing is downloaded unless something is wrong.
void check_table_values(World& world);

}  // namespace tissue
