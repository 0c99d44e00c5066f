#include "engine/io/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace tissue::io {

void write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  AtomicWriter out(path, 1);  // no buffer: the content goes to the file in one piece
  out.write(content);
  out.commit();
}

bool overwrite_file_in_place(const std::filesystem::path& path, std::string_view content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool ok =
      ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) == content.size();
  std::size_t done = 0;
  while (ok && done < content.size()) {
    const ssize_t n = ::pwrite(fd, content.data() + done, content.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  return ::close(fd) == 0 && ok;
}

std::filesystem::path temporary_path(const std::filesystem::path& path) {
  return path.string() + ".tmp-" + std::to_string(::getpid());
}

void commit_file_atomic(const std::filesystem::path& tmp, const std::filesystem::path& path) {
  const auto fail = [&](const char* what) {
    const std::string reason = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + path.string() + " (" + what + "): " + reason);
  };
  const int fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("open");
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("fsync");
  }
  if (::close(fd) != 0) fail("close");
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename");
}

AtomicWriter::AtomicWriter(std::filesystem::path path, std::size_t buffer_bytes)
    : path_(std::move(path)), tmp_(temporary_path(path_)), capacity_(buffer_bytes > 0 ? buffer_bytes : 1) {
  buffer_.reserve(capacity_);
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("open");
}

AtomicWriter::~AtomicWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

void AtomicWriter::write(std::string_view bytes) {
  if (buffer_.size() + bytes.size() > capacity_) flush();
  if (bytes.size() >= capacity_)
    write_all(bytes);  // a large piece goes straight to the file, not through the buffer
  else
    buffer_.append(bytes.data(), bytes.size());
}

void AtomicWriter::flush() {
  write_all(buffer_);
  buffer_.clear();
}

void AtomicWriter::write_all(std::string_view bytes) {
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void AtomicWriter::commit() {
  flush();
  if (::fsync(fd_) != 0) fail("fsync");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(tmp_.c_str());
    throw std::runtime_error("cannot write " + path_.string() + " (close): " + reason);
  }
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(tmp_.c_str());
    throw std::runtime_error("cannot write " + path_.string() + " (rename): " + reason);
  }
}

void AtomicWriter::fail(const char* what) {
  const std::string reason = std::strerror(errno);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
  throw std::runtime_error("cannot write " + path_.string() + " (" + what + "): " + reason);
}

std::size_t remove_stale_temporaries(const std::filesystem::path& dir, std::chrono::seconds max_age) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::size_t removed = 0;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string name = it->path().filename().string();
    const auto at = name.rfind(".tmp-");
    if (at == std::string::npos || at + 5 >= name.size()) continue;
    const std::string digits = name.substr(at + 5);
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
    const auto pid = static_cast<pid_t>(std::stol(digits));
    const bool writer_gone = pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH;
    std::error_code time_ec;
    const auto written = fs::last_write_time(it->path(), time_ec);
    const bool old = !time_ec && now - written > max_age;
    if (!writer_gone && !old) continue;
    std::error_code remove_ec;
    if (fs::remove(it->path(), remove_ec)) ++removed;
  }
  return removed;
}

}  // namespace tissue::io
