#pragma once
/// @file tissue_output.hpp
/// ParaView output of a cell/element world: per snapshot, elements_<step>.vtu (every element a point with
/// its cell's arrays and the element arrays) and cells_<step>.vtu (cell centres with the cell arrays and
/// element_count), indexed by elements.pvd and cells.pvd. The arrays are cell_id, then what the modules
/// declared with World::add_output(): per cell the flags, then per-component columns (species), then whole
/// columns (sampled fields), each kind in declaration order; then the element columns (elements file) or
/// element_count and the element counts (cells file). The writer knows no model's columns.

#include <filesystem>
#include <string>
#include <vector>

#include "engine/core/world.hpp"
#include "engine/io/background_writer.hpp"
#include "engine/io/output_piece.hpp"
#include "engine/io/vtk.hpp"
#include "engine/schedule/simulation.hpp"

namespace tissue::io {

class TissueWriter final : public SnapshotWriter {
 public:
  /// @param dir       output directory (created by the caller before the first write)
  /// @param elements  write elements_<step>.vtu
  /// @param cells     write cells_<step>.vtu
  /// @param piece     this rank's piece of a decomposed run's output (OutputPiece)
  /// @throws std::out_of_range at write() when a declared output names a column that does not exist or
  /// has another type.
  TissueWriter(std::filesystem::path dir, bool elements = true, bool cells = true, OutputPiece piece = {});
  /// Downloads the world, copies one snapshot's arrays at world.step/time and queues their writing on a
  /// host thread (the .vtu, then the .pvd index that names it). @throws the error of an earlier write.
  void write(World& world) override;
  void wait() override { background_.wait(); }
  std::vector<PvdSeries*> series() override { return {&element_series_, &cell_series_}; }

 private:
  /// Queues the writing of one snapshot of `kind` ("elements", "cells") with tag `tag`: its .vtu (this rank's
  /// piece), and where this rank writes them the .pvtu and `series`' index as it is now.
  void queue(const std::string& kind, const std::string& tag, std::vector<float> points,
             std::vector<VtkArray> arrays, PvdSeries& series, double time);

  std::filesystem::path dir_;
  bool elements_, cells_;
  OutputPiece piece_;
  PvdSeries element_series_, cell_series_;
  BackgroundWriter background_;  ///< last: waits for the queued writes before the members above go
};

}  // namespace tissue::io
