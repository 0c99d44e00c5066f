#pragma once
/// @file output_piece.hpp
/// Which piece of a decomposed run's output a rank writes (docs/multi_gpu.md).

#include <functional>

namespace tissue::io {

/// Point extent of a piece of VTK image data: points [i0, i1] x [j0, j1] x [k0, k1] (inclusive, as VTK's
/// Extent attribute) of the whole grid's.
struct ImageExtent {
  int i0 = 0, i1 = 0, j0 = 0, j1 = 0, k0 = 0, k1 = 0;
};

/// Which piece of a decomposed run's output this rank writes: with ranks > 1 each rank writes its own cells
/// and elements as <kind>_<step>_<rank>.vtu, and rank 0 also writes <kind>_<step>.pvtu, which names every
/// rank's piece (ParaView opens it as one dataset), and the .pvd series, which names the .pvtu files. Rank 0
/// writes the index after its own piece; the others' pieces are on disk after their wait(). Writers of
/// models that are not decomposed take only the default, one piece. A grid field over the tissue's box is
/// written likewise, each rank its block as <field>_<step>_<rank>.vti and rank 0 the <field>_<step>.pvti.
struct OutputPiece {
  int rank = 0;   ///< this rank
  int ranks = 1;  ///< ranks writing pieces (1: one .vtu per snapshot, no .pvtu)
  /// With ranks > 1: the nodes of a grid over the tissue's box (nx x ny x nz nodes) that `rank` owns and
  /// writes (domain::grid_block), [i0, i1) x [j0, j1) x [0, nz) as an extent of the last nodes included;
  /// its pieces overlap by one node where they meet, so that ParaView draws no gap between them. Empty
  /// with one piece.
  std::function<ImageExtent(int nx, int ny, int nz, double h, int rank)> grid_block;
};

}  // namespace tissue::io
