#pragma once
/// @file atomic_file.hpp
/// Files that are never seen half-written: content goes to a temporary file in the same directory,
/// which is flushed to disk and then renamed over the final name.

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace tissue::io {

/// Writes `content` to `path` atomically (temporary name, fsync, rename; an AtomicWriter).
/// @throws std::runtime_error with the path and the system error on failure; the temporary is removed.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// Rewrites the existing file `path` in place with `content`, which must have the file's size: no new disk
/// space is needed, so it works on a full disk (the fallback for run.json's final state). Not atomic: a crash
/// during it can leave old and new bytes mixed. @return false (and changes nothing, or part) if `path` is
/// missing, of another size, or a call fails.
bool overwrite_file_in_place(const std::filesystem::path& path, std::string_view content);

/// The temporary name write_file_atomic() and other atomic writers use for `path` (same directory, so
/// that the final rename stays on one file system): "<path>.tmp-<pid>".
std::filesystem::path temporary_path(const std::filesystem::path& path);

/// Finishes an atomic write that another library made to `tmp` (closed already): flushes `tmp` to disk
/// and renames it over `path`. @throws std::runtime_error with the system error; `tmp` is removed.
void commit_file_atomic(const std::filesystem::path& tmp, const std::filesystem::path& path);

/// A file written in pieces and never seen half-written: the pieces go through a buffer of `buffer_bytes`
/// into the temporary (temporary_path()); commit() flushes it to disk and renames it over `path`. A writer
/// destroyed without commit() removes its temporary. Large outputs (VTK snapshots of millions of points)
/// stream through it instead of being assembled in memory first.
class AtomicWriter {
 public:
  /// Creates the temporary. @throws std::runtime_error with the path and the system error.
  explicit AtomicWriter(std::filesystem::path path, std::size_t buffer_bytes = std::size_t{1} << 20);
  ~AtomicWriter();
  AtomicWriter(const AtomicWriter&) = delete;
  AtomicWriter& operator=(const AtomicWriter&) = delete;

  /// Appends `bytes`. @throws std::runtime_error (the temporary is removed) when the file system refuses
  /// them, e.g. a full disk.
  void write(std::string_view bytes);
  /// Flushes, fsyncs, closes and renames the temporary over the final path.
  /// @throws std::runtime_error with the path and the system error (the temporary is removed).
  void commit();

 private:
  void flush();
  void write_all(std::string_view bytes);
  [[noreturn]] void fail(const char* what);

  std::filesystem::path path_, tmp_;
  std::string buffer_;
  std::size_t capacity_;
  int fd_ = -1;
};

/// Removes the temporaries (names ending in ".tmp-<pid>") that an earlier process left in `dir` when it was
/// killed mid-write: those of a process that no longer runs on this host, and any older than `max_age` (a
/// live writer renames its temporary within seconds). Files of other names are not touched; errors are
/// ignored (a temporary that cannot be removed is harmless). @return how many were removed.
std::size_t remove_stale_temporaries(const std::filesystem::path& dir,
                                     std::chrono::seconds max_age = std::chrono::hours(1));

}  // namespace tissue::io
