#pragma once
/// @file run_directory.hpp
/// The output directory of a run (docs/runs.md, "The output directory"): which files a run writes there,
/// clearing those of a previous run for `--overwrite`, and the advisory lock that keeps a second run out
/// while one writes into it.

#include <cstddef>
#include <filesystem>
#include <string>

namespace tissue::io {

/// The lock file of an output directory. Never removed: removing it would let a run that opened the old
/// file and one that creates a new one both hold "the" lock.
inline constexpr const char* kLockFileName = ".tissue.lock";

/// True for the names of the files a run writes: run.json; view.pvsm; checkpoint_<step>.h5,
/// checkpoint_<step>_failed.h5 and their .xdmf; <name>.pvd; snapshots <name>_<step>.vtu/.vti/.vts/.png (a
/// step of 9 or more digits); <name>_final.obj; and the temporaries of any of these ("<file>.tmp-<pid>").
/// <name> is letters, digits, '_' and '-'. Not the lock file.
bool is_run_output(const std::string& file_name);

/// Checks that `dir` can take a new run's output: it does not exist, or is empty (its lock file aside), or
/// `overwrite` is set and it holds a previous run (a run.json that tissue wrote: RunRecord::read()).
/// @throws InputError naming the directory and the reason: not a directory; not empty without
/// `overwrite`; not empty and no run.json (not a directory tissue created: --overwrite does not clear it);
/// a run.json that is not a run record.
void check_output_directory(const std::filesystem::path& dir, bool overwrite);

/// Removes the files of a previous run (is_run_output()) from `dir`, run.json last (a directory cleared
/// halfway still says whose it is); other files and subdirectories stay. @return how many were removed.
/// @throws std::runtime_error naming the file that cannot be removed.
std::size_t clear_run_outputs(const std::filesystem::path& dir);

/// The process holding the lock of `dir` as its lock file describes it ("pid 123 on host node7"), or ""
/// when no process holds it (no lock file, or a stale one of a process that ended).
std::string lock_owner(const std::filesystem::path& dir);

/// Refuses `dir` while another process holds its lock: a look that creates nothing, for checking input
/// before anything is written (DirectoryLock is the authority). @throws InputError naming the owner.
void check_not_locked(const std::filesystem::path& dir);

/// An exclusive advisory lock (flock) on `dir`/.tissue.lock, held while the object lives. The file holds the
/// owner's pid and host, for messages only: the kernel releases the lock when the process ends, however it
/// ends, so a stale file of a dead process blocks nothing. (flock works across hosts on NFS since Linux
/// 2.6.12, where it is emulated with byte-range locks.)
class DirectoryLock {
 public:
  DirectoryLock() = default;
  /// Takes the lock on `dir` (which must exist) and writes the owner into the lock file.
  /// @throws InputError naming the owner (pid, host) when another process holds it, std::runtime_error
  /// when the lock file cannot be opened or locked.
  explicit DirectoryLock(const std::filesystem::path& dir);
  ~DirectoryLock();
  DirectoryLock(DirectoryLock&& other) noexcept;
  DirectoryLock& operator=(DirectoryLock&& other) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace tissue::io
