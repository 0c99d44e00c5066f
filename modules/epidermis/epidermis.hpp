#pragma once
/// @file epidermis.hpp
/// The 3D epidermis model of Christley et al. (2010), assembled from the sem, gene_network and
/// lifecycle modules: a periodic monolayer of basal cells on the basement membrane that grows,
/// divides and stratifies. See modules/epidermis/README.md.

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/grid/grid.hpp"
#include "engine/io/scenario.hpp"
#include "engine/mesh/surface_field.hpp"
#include "engine/schedule/simulation.hpp"
#include "engine/spatial/triangle_index.hpp"

namespace tissue::epidermis {

/// Builds the model from a scenario's tables ([domain], [initial], [sem], [gene_network], [lifecycle],
/// optional [signal.<name>] diffusible fields (modules/coupling), an optional [membrane] mesh (a curved
/// basement membrane, cells seeded on it with [initial] layout = "membrane", and a reaction-diffusion field
/// on it in [membrane.rd] that cells sample), and [output] elements/cells/signal_grids/membrane).
/// [gene_network] is the built-in network of the seed, or a scenario-defined one when it lists
/// [[gene_network.species]] (network_expressions.hpp); such a network needs a species named `delta` (the
/// lifecycle's growth gate).
/// dt/steps/cadence are set by the caller. @throws InputError on invalid values (precision other than float,
/// among them).
std::unique_ptr<Simulation> build(const io::ScenarioTable& root, const ModelSettings& settings);

/// Stratification statistics of the current host mirrors.
///
/// Layers by stacking: cell B rests on cell A when their centres are closer than one cell width
/// tangentially (across A's membrane normal; minimum image) and B's centre is more than half a cell
/// height higher above the membrane than A's; a cell's layer is 0 when it rests on no cell, else 1 + the
/// largest layer of the cells it rests on. Heights and normals are z and (0, 0, 1) over the plane z = 0,
/// the signed distance to a membrane mesh and its normal at the closest point otherwise. Cell width and
/// height are the medians over cells of their elements' extents across and along the normal. O(cells^2).
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
std::vector<int> stacking_layers(const std::vector<float>& cx, const std::vector<float>& cy,
                                 const std::vector<float>& cz, const std::vector<CellFrame>& frames,
                                 const Box& box, double width, double height);

/// One line about a signal field: total amount, grid range, and the mean sampled value over cells in the
/// basal and in the suprabasal state (host mirrors of the cells must be current).
std::string summarize_signal(World& world, GridField<float>& field);

/// The name of the surface field on the membrane ([membrane.rd]); cells sample its species into the
/// columns "membrane_<species>" (coupling::surface_sample_column).
inline constexpr const char* kMembraneField = "membrane";

/// One line about the membrane field: range of each species, and the cells whose gate column exceeds the
/// threshold when `gate` is not empty (host mirrors of the cells must be current).
std::string summarize_membrane(World& world, SurfaceField<float>& field, const std::string& gate,
                               double threshold);

/// Multi-line text of a Summary.
std::string format(const Summary& s);

}  // namespace tissue::epidermis
