#pragma once
/// @file output_piece.hpp
/// Which piece of a decomposed run's output a rank writes (docs/multi_gpu.md).

namespace tissue::io {

/// Which piece of a decomposed run's output this rank writes: with ranks > 1 each rank writes its own cells
/// and elements as <kind>_<step>_<rank>.vtu, and rank 0 also writes <kind>_<step>.pvtu, which names every
/// rank's piece (ParaView opens it as one dataset), and the .pvd series, which names the .pvtu files. Rank 0
/// writes the index after its own piece; the others' pieces are on disk after their wait(). Writers of
/// models that are not decomposed take only the default, one piece.
struct OutputPiece {
  int rank = 0;   ///< this rank
  int ranks = 1;  ///< ranks writing pieces (1: one .vtu per snapshot, no .pvtu)
};

}  // namespace tissue::io
