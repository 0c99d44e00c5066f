#pragma once
/// @file run_record.hpp
/// Provenance of a run: `run.json` in its output directory, saying what ran (scenario path and the
/// SHA-256 of its bytes, engine version and revision, command line, model), where (backend, device, host),
/// when (start and end, UTC, ISO 8601) and how it ended (status, exit code, message, steps, wall time).
/// The record is written atomically when the run starts (status "running") and rewritten when it ends
/// ("completed", "failed" or "interrupted"), so a directory whose run.json still says "running" holds a run
/// that was killed.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tissue::io {

/// Lower-case hex SHA-256 of `bytes` (64 characters; OpenSSL). @throws std::runtime_error if OpenSSL fails.
std::string sha256_hex(std::string_view bytes);

/// The current UTC time as "YYYY-MM-DDThh:mm:ssZ".
std::string utc_now_iso8601();

struct RunRecord {
  std::string scenario_path;         ///< absolute path of the scenario file
  std::string scenario_sha256;       ///< sha256_hex of the scenario file's bytes
  std::vector<std::string> command;  ///< argv
  std::string engine_version, engine_revision, engine_backends;
  std::string model, backend, device, host;
  /// Ranks of a decomposed run (mpirun -np N tissue run: one tissue over N ranks, docs/multi_gpu.md) and
  /// their process grid ("2 x 1"); 1 and "" for a run on one rank (no "ranks" key in run.json).
  int ranks = 1;
  std::string process_grid;
  std::string started, ended;      ///< utc_now_iso8601(); `ended` empty while running
  std::string status = "running";  ///< "running", "completed", "failed" or "interrupted" (SIGINT/SIGTERM)
  int exit_code = -1;              ///< the process exit code once ended (README: exit codes)
  std::string message;             ///< the error message of a failed run
  std::int64_t steps_requested = 0, steps_done = 0;  ///< the run's end step, and the step reached
  double wall_seconds = 0.0;
  std::string restarted_from;   ///< checkpoint a restarted run continued from ("" for a fresh run)
  std::int64_t start_step = 0;  ///< the step the run started from (the checkpoint's)
  std::string last_checkpoint;  ///< newest checkpoint this run wrote ("" if none)
  /// Memory [bytes]: the estimate the scenario was admitted with (host, device: Composition::reserve_memory)
  /// and the most the engine's device buffers held during the run (exec::allocation_stats of the backend,
  /// host memory on the CPU backend), so that an estimate can be compared with what happened.
  double memory_estimate_host = 0.0, memory_estimate_device = 0.0;
  std::size_t memory_device_peak = 0;
  /// memory_device_peak over the elements at the end of the run [bytes] (0: a model without elements);
  /// in a growing tissue the end holds the most elements, so this is what a larger tissue needs per element.
  double memory_device_peak_per_element = 0.0;
  /// Where the wall time went [s], in order: "stepping" (the systems on the device, and the rest), "hooks"
  /// (CPU hooks with their download and upload), "output" (snapshots: download and copy; their encoding and
  /// writing overlaps stepping on a host thread, and what is left of it at the end), "checkpoints",
  /// "checks" (numerical checks), "summary". Empty until the run ends.
  std::vector<std::pair<std::string, double>> time_split;
  /// The "hooks" part of time_split by part (Schedule::hook_split: "download", each hook, "commit") [s];
  /// empty (no key) when no hook ran.
  std::vector<std::pair<std::string, double>> hook_split;
  /// The metrics a driver asked for (RunRequest::metrics), measured at the end of the run, in order; NaN
  /// for a value that is not finite (null in run.json). Empty when none were asked for (no "metrics" key).
  std::vector<std::pair<std::string, double>> metrics;

  /// Reads `dir`/run.json back (status, exit code, message, scenario, model, engine, host, steps, times,
  /// checkpoints): std::nullopt when there is none.
  /// @throws InputError when it exists but is not a run record (unreadable, not JSON, a key missing or of
  /// another type).
  static std::optional<RunRecord> read(const std::filesystem::path& dir);
  /// Fills scenario_path (made absolute) and scenario_sha256 from the scenario's path and bytes.
  void set_scenario(const std::filesystem::path& path, std::string_view bytes);
  /// Writes `dir`/run.json atomically (write_file_atomic), padded with spaces to whole 4 KiB blocks with at
  /// least 1 KiB to spare. When that fails (a full disk) and a run.json exists, rewrites that one in place
  /// within its size (the message shortened if it must), which needs no new space.
  /// @throws std::runtime_error on I/O failure when neither works.
  void write(const std::filesystem::path& dir) const;
};

}  // namespace tissue::io
