#pragma once
/// @file tissue_output.hpp
/// ParaView output of a cell/element world: per snapshot, elements_<step>.vtu (every element a point
/// with cell_id, element type, cell state, the cell's species and chosen cell columns) and cells_<step>.vtu
/// (cell centres with cell_id, element count, adhesive-element count, state and species), indexed by
/// elements.pvd and cells.pvd.

#include <filesystem>
#include <string>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/io/vtk.hpp"
#include "engine/schedule/simulation.hpp"

namespace tissue::io {

class TissueWriter final : public SnapshotWriter {
 public:
  /// @param dir            output directory (must exist)
  /// @param species_names  one name per species component of the world
  /// @param cell_columns   further float columns of the cells table written with each cell (and element),
  ///                       e.g. sampled fields; a column of 3 components becomes a vector array
  /// @throws std::out_of_range at write() when a named column does not exist or is not float.
  TissueWriter(std::filesystem::path dir, std::vector<std::string> species_names, bool elements = true,
               bool cells = true, std::vector<std::string> cell_columns = {});
  /// Downloads the world and writes one snapshot at world.step/time.
  void write(World& world) override;
  std::vector<PvdSeries*> series() override { return {&element_series_, &cell_series_}; }

 private:
  std::filesystem::path dir_;
  std::vector<std::string> species_names_;
  std::vector<std::string> cell_columns_;
  bool elements_, cells_;
  PvdSeries element_series_, cell_series_;
};

}  // namespace tissue::io
