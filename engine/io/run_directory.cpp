#include "engine/io/run_directory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <regex>
#include <stdexcept>
#include <vector>

#include "engine/exec/error.hpp"
#include "engine/io/run_record.hpp"

namespace fs = std::filesystem;

namespace tissue::io {

namespace {

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string("unknown");
}

/// The lock file's content (its first line), or a stand-in. A holder writes it just after taking the lock:
/// an empty file is given a moment.
std::string read_owner(int fd) {
  std::string owner;
  for (int attempt = 0; attempt < 20 && owner.empty(); ++attempt) {
    if (attempt > 0) ::usleep(10000);
    char text[512] = {};
    const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
    owner.assign(text, n > 0 ? static_cast<std::size_t>(n) : 0);
    owner = owner.substr(0, owner.find('\n'));
  }
  return owner.empty() ? std::string("a process that has not written its pid yet") : owner;
}

[[noreturn]] void refuse_locked(const fs::path& dir, const std::string& owner) {
  throw InputError(dir.string() + ": another tissue run is writing into this directory (" + owner + ", " +
                   (dir / kLockFileName).string() + "); wait for it to end or choose another --out");
}

}  // namespace

bool is_run_output(const std::string& name) {
  static const std::regex output(
      R"((run\.json|view\.pvsm|checkpoint_[0-9]+(_failed)?\.(h5|xdmf)|[A-Za-z0-9_-]+\.pvd|)"
      R"([A-Za-z0-9_-]+_[0-9]{9,}\.(vtu|vti|vts|png)|[A-Za-z0-9_-]+_final\.obj)(\.tmp-[0-9]+)?)");
  return std::regex_match(name, output);
}

void check_output_directory(const fs::path& dir, bool overwrite) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  if (!fs::is_directory(dir, ec))
    throw InputError("--out " + dir.string() + ": exists and is not a directory");
  bool empty = true;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() != kLockFileName) empty = false;
  if (ec) throw InputError("--out " + dir.string() + ": cannot list the directory: " + ec.message());
  if (empty) return;
  if (!overwrite)
    throw InputError("--out " + dir.string() + ": directory exists and is not empty (use --overwrite)");
  std::optional<RunRecord> previous;
  try {
    previous = RunRecord::read(dir);
  } catch (const InputError& e) {
    throw InputError("--out " + dir.string() + ": " + e.what() +
                     "; --overwrite clears only a previous run's files: choose an empty or new directory");
  }
  if (!previous)
    throw InputError(
        "--out " + dir.string() +
        ": not empty and holds no run.json, so tissue did not create it; --overwrite clears only "
        "a previous run's files: choose an empty or new directory");
}

std::size_t clear_run_outputs(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name != "run.json" && is_run_output(name) && it->is_regular_file(ec)) files.push_back(it->path());
  }
  if (ec) throw std::runtime_error("cannot list " + dir.string() + ": " + ec.message());
  if (fs::is_regular_file(dir / "run.json", ec)) files.push_back(dir / "run.json");  // last
  for (const auto& f : files) {
    fs::remove(f, ec);
    if (ec) throw std::runtime_error("--overwrite: cannot remove " + f.string() + ": " + ec.message());
  }
  return files.size();
}

std::string lock_owner(const fs::path& dir) {
  const int fd = ::open((dir / kLockFileName).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string owner;
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0)
    ::flock(fd, LOCK_UN);
  else if (errno == EWOULDBLOCK)
    owner = read_owner(fd);
  ::close(fd);
  return owner;
}

void check_not_locked(const fs::path& dir) {
  if (const std::string owner = lock_owner(dir); !owner.empty()) refuse_locked(dir, owner);
}

DirectoryLock::DirectoryLock(const fs::path& dir) {
  const fs::path file = dir / kLockFileName;
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw std::runtime_error("cannot open the lock file " + file.string() + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string owner = read_owner(fd);
    ::close(fd);
    if (error == EWOULDBLOCK) refuse_locked(dir, owner);
    throw std::runtime_error("cannot lock " + file.string() + ": " + std::strerror(error));
  }
  fd_ = fd;
  // informational (a full disk must not stop the run here: the lock is the kernel's, not the text)
  const std::string owner = "pid " + std::to_string(::getpid()) + " on host " + host_name() + "\n";
  if (::ftruncate(fd, 0) == 0) {
    const ssize_t written = ::pwrite(fd, owner.data(), owner.size(), 0);
    (void)written;
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock; the file stays (see kLockFileName)
}

DirectoryLock::DirectoryLock(DirectoryLock&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& other) noexcept {
  std::swap(fd_, other.fd_);
  return *this;
}

}  // namespace tissue::io
