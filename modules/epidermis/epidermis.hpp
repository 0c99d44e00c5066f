#pragma once
/// @file epidermis.hpp
/// Stratification statistics of an epidermis (Christley et al. 2010): the module "stratification" (summary
/// lines) and the preset "epidermis" (the default composition: tissue; sem, cell_centres, gene_network,
/// lifecycle, stratification). The model itself is a scenario file (scenarios/epidermis.toml). See
/// modules/epidermis/README.md.

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/spatial/triangle_index.hpp"

namespace tissue::epidermis {

/// Stratification statistics of the current host mirrors.
///
/// Layers by stacking: cell B rests on cell A when their centres are closer than one cell width
/// tangentially (across A's membrane normal; minimum image) and B's centre is more than half a cell
/// height higher above the membrane than A's; a cell's layer is 0 when it rests on no cell, else 1 + the
/// largest layer of the cells it rests on. Heights and normals are z and (0, 0, 1) over the plane z = 0,
/// the signed distance to a membrane mesh and its normal at the closest point otherwise. Cell width and
/// height are the medians over cells of their elements' extents across and along the normal. Cost: cells
/// times the cells in bins along one cell's normal (a 3D cell list), O(cells log cells) for a sheet.
struct Summary {
  std::size_t cells = 0;
  std::size_t elements = 0;
  std::size_t adherent = 0;               ///< cells with at least one adhesive element
  std::size_t suprabasal = 0;             ///< cells in the high-Ovol1 state (flag)
  std::size_t suprabasal_high_ovol1 = 0;  ///< non-adherent cells with O1 > O2
  std::size_t non_adherent = 0;
  double cell_width = 0;                     ///< median horizontal extent of a cell [length]
  double cell_height = 0;                    ///< median vertical extent of a cell [length]
  std::vector<std::size_t> cells_per_layer;  ///< cells in layer 0, 1, ...
  int layers = 0;                            ///< layers from the bottom holding >= 5 % of the cells
  double max_height = 0;                     ///< highest element above the membrane [length]
};
/// @param ovol1, ovol2  species rows of Ovol1 and Ovol2 (the built-in network's by default; -1 when the
///                      network has none: suprabasal_high_ovol1 stays 0)
/// @param membrane      the membrane mesh's index (null: the plane z = 0)
Summary summarize(World& world, int ovol1 = 4, int ovol2 = 3, const TriangleIndex* membrane = nullptr);

/// Where a cell stands: its centre's height above the membrane [length] and the membrane's unit normal.
struct CellFrame {
  float height = 0.0f;
  std::array<float, 3> normal{0.0f, 0.0f, 1.0f};
};

/// Layer of each cell by stacking (see Summary), from centres, frames and cell width/height [length].
/// Exactly the all-pairs definition, pair by pair in the same arithmetic, but only pairs within reach are
/// tested: a 3D cell list of bins at least 2.2 widths wide, searched along each cell's normal line (every
/// pair where a centre is not finite, a normal is far from unit length or the width is infinite).
/// @param cx, cy, cz     cell centres, #cells each [length]
/// @param frames         each cell's height above the membrane and its unit normal, #cells
/// @param width, height  cell width and height [length]; a NaN width: no cell rests on another
/// @param pairs_tested   if not null, receives how many (lower, upper) pairs were tested (for the tests of
///                       the scaling; all pairs would be #cells (#cells - 1) / 2)
/// @return the layer of each cell, #cells
std::vector<int> stacking_layers(const std::vector<float>& cx, const std::vector<float>& cy,
                                 const std::vector<float>& cz, const std::vector<CellFrame>& frames,
                                 const Box& box, double width, double height,
                                 std::size_t* pairs_tested = nullptr);

/// Multi-line text of a Summary.
std::string format(const Summary& s);

}  // namespace tissue::epidermis
