#pragma once
/// @file checkpoint.hpp
/// HDF5 checkpoints: the whole state of a run, from which `tissue run --restart` continues with results
/// identical to an uninterrupted run (same backend, same bytes).
///
/// A checkpoint holds every table (all columns, rows [0, size), and the capacity), every field's host
/// arrays, the clock (step, time, time step), the stable-id counter and the random seed (random numbers are
/// a function of seed, step, entity id and stream, so these are the generators' whole state), the scenario
/// text with its SHA-256, the engine version, and the .pvd series written so far. Layout (h5dump shows it):
///
///     /                 attributes: format = "tissue checkpoint", format_version, engine_version,
///                       engine_revision, model, scenario_path, scenario_sha256, backend, status,
///                       message, step, time, dt, steps_requested, next_cell_id, seed
///     /scenario         the scenario text (string)
///     /tables/<table>   attributes size, capacity; a dataset per column: (size) or (components, size)
///     /fields/<field>   attribute grid_spacing; a dataset per host array (e.g. (nz, ny, nx) per species);
///                       surface fields also mesh/points (n, 3) and mesh/triangles (faces, 3), for viewers
///     /output/<x.pvd>   dataset times, attribute files (newline-separated): the series to continue
///     /systems/<name>   only for systems that keep state between steps (engine/core/system_state.hpp):
///                       integers/<key> (1) int64 and arrays/<key> (n) float32, e.g. /systems/sem with the
///                       positions its reused cell list was built on
///     /view/<table>     for viewers only, never read back: points (size, 3) of a table with coordinates, and
///                       <column>/<component> (size) per component of a multi-component column, named after
///                       it (a species) or <column>_<k>: the shapes ParaView's XDMF 3 reader takes
///
/// Datasets are chunked with HDF5's Fletcher-32 checksum filter and the file uses the HDF5 1.10 format,
/// whose metadata and chunk indices carry checksums too (the 1.8 format's chunk B-trees do not: a flipped
/// byte there read as zeros in our tests), so a corrupted or truncated file fails to read instead of loading
/// wrong numbers. Objects carry no time stamps (run.json records when the run ran), so identical states give
/// identical files: checkpoints compare with cmp. Files are written under a temporary name, flushed to disk
/// and renamed; an `.xdmf` file beside each checkpoint lets ParaView open the elements, cells, grids and
/// surfaces it holds with its default reader for the file (Xdmf3ReaderS), species under their names.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/core/system_state.hpp"
#include "engine/core/world.hpp"

namespace tissue::io {

class PvdSeries;

/// Version of the layout above; a reader refuses any other.
inline constexpr int kCheckpointFormatVersion = 1;

/// A checkpoint's root attributes and scenario: what it is, readable without loading the state.
struct CheckpointHeader {
  int format_version = kCheckpointFormatVersion;
  std::string engine_version, engine_revision;
  std::string model;            ///< Simulation::model (the preset, or the modules joined by "+")
  std::string scenario_path;    ///< the scenario file the run started from (for messages)
  std::string scenario_sha256;  ///< sha256_hex(scenario_text)
  std::string scenario_text;    ///< the scenario file's bytes; a restart builds the model from them
  std::string backend;          ///< backend that wrote it: "cpu" or "cuda"
  std::string status = "ok";    ///< "ok", or "failed": the last state of a run stopped by a numerical failure
  std::string message;          ///< the failure, when status is "failed"
  std::int64_t step = 0;        ///< completed steps (World::step)
  double time = 0.0;            ///< simulated time (World::time) [time units]
  double dt = 0.0;              ///< the time step the run was using [time units]
  std::int64_t steps_requested = 0;  ///< the step the run was to end at
  /// The files the scenario's modules read, with their SHA-256 (io::Scenario::input_files()); "" in
  /// checkpoints written before it was recorded.
  std::string input_files;
};

/// Writes `world` (downloaded first) with `header`, the output `series` and the systems' states (the
/// schedule's Schedule::save_states(world)) to `path` atomically, and `path` with extension .xdmf beside
/// it. The header's step and time are taken from the world.
/// @throws std::runtime_error on any HDF5 or file-system failure; no partial file is left.
void write_checkpoint(const std::filesystem::path& path, World& world, const CheckpointHeader& header,
                      const std::vector<PvdSeries*>& series, const SystemStates& systems = {});

/// Opens `path` and reads its header.
/// @throws InputError naming the file and the reason: missing, not HDF5, truncated, not a tissue
/// checkpoint, another format version, a missing or mistyped attribute.
CheckpointHeader read_checkpoint_header(const std::filesystem::path& path);

/// Loads the state in `path` into `world`, which must have been built from the checkpoint's scenario
/// (same tables, columns and fields), and uploads it. Series in `series` whose .pvd file name the
/// checkpoint recorded get its entries (pass none when the output goes to another directory).
/// @return the systems' states it holds, for Schedule::restore_states() (empty when none kept any).
/// @throws InputError if a table, column or field is missing, of another type or shape, a checksum fails,
/// the sizes are inconsistent, or the tables violate World::check_consistency().
SystemStates read_checkpoint_state(const std::filesystem::path& path, World& world,
                           const std::vector<PvdSeries*>& series);

/// The checkpoints of one output directory: checkpoint_<step>.h5 with its .xdmf, the newest `keep` kept
/// (older ones are deleted only after a newer one is complete); failed ones are named
/// checkpoint_<step>_failed.h5 and never deleted.
class CheckpointSeries {
 public:
  /// @param keep  checkpoints to keep (>= 1)
  CheckpointSeries(std::filesystem::path dir, int keep);
  /// Writes the world's checkpoint for its current step (write_checkpoint()); returns its path.
  std::filesystem::path write(World& world, const CheckpointHeader& header,
                              const std::vector<PvdSeries*>& series, const SystemStates& systems = {});
  /// File name of the checkpoint of `step`.
  static std::string file_name(std::int64_t step, bool failed);
  /// The newest complete, not failed checkpoint in `dir`. @throws InputError when there is none.
  static std::filesystem::path latest(const std::filesystem::path& dir);

 private:
  std::filesystem::path dir_;
  int keep_;
};

}  // namespace tissue::io
