#include "engine/io/hdf5_write_driver.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>

namespace tissue::io {

std::string Hdf5WriteStatus::message() const {
  if (!failed()) return {};
  return std::strerror(error);
}

namespace {

/// What H5Pset_driver stores in a file access list: where to record the failure.
struct DriverInfo {
  Hdf5WriteStatus* status;
};

/// One open file. `pub` must come first: HDF5 sees an H5FD_t* and fills its public fields.
struct DriverFile {
  H5FD_t pub;
  int fd = -1;
  haddr_t eoa = 0;  ///< end of the address space HDF5 allocated
  haddr_t eof = 0;  ///< end of what is in the file
  dev_t device = 0;
  ino_t inode = 0;
  Hdf5WriteStatus* status = nullptr;
};

DriverFile* as_file(H5FD_t* f) {
  return reinterpret_cast<DriverFile*>(f);
}
const DriverFile* as_file(const H5FD_t* f) {
  return reinterpret_cast<const DriverFile*>(f);
}

/// Records the first failure; later ones are consequences of it.
void record(DriverFile* f, const char* call) {
  if (f->status != nullptr && !f->status->failed()) {
    f->status->error = errno != 0 ? errno : EIO;
    f->status->call = call;
  }
}

bool discarding(const DriverFile* f) {
  return f->status != nullptr && f->status->failed();
}

void* info_copy(const void* info) {
  auto* copy = static_cast<DriverInfo*>(std::malloc(sizeof(DriverInfo)));
  if (copy != nullptr) std::memcpy(copy, info, sizeof(DriverInfo));
  return copy;
}

herr_t info_free(void* info) {
  std::free(info);
  return 0;
}

H5FD_t* open_file(const char* name, unsigned flags, hid_t fapl, haddr_t maxaddr) {
  const auto* info = static_cast<const DriverInfo*>(H5Pget_driver_info(fapl));
  if (info == nullptr || maxaddr == 0 || maxaddr == HADDR_UNDEF) return nullptr;
  int mode = (flags & H5F_ACC_RDWR) != 0 ? O_RDWR : O_RDONLY;
  if ((flags & H5F_ACC_CREAT) != 0) mode |= O_CREAT;
  if ((flags & H5F_ACC_TRUNC) != 0) mode |= O_TRUNC;
  if ((flags & H5F_ACC_EXCL) != 0) mode |= O_EXCL;
  const int fd = ::open(name, mode | O_CLOEXEC, 0644);
  if (fd < 0) {
    // HDF5 first probes whether the file exists (no CREAT): that failure is expected
    if ((flags & H5F_ACC_CREAT) != 0 && info->status != nullptr && !info->status->failed()) {
      info->status->error = errno;
      info->status->call = "open";
    }
    return nullptr;  // H5Fcreate fails; no identifier exists yet
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return nullptr;
  }
  auto* f = new (std::nothrow) DriverFile();
  if (f == nullptr) {
    ::close(fd);
    return nullptr;
  }
  f->fd = fd;
  f->eof = static_cast<haddr_t>(st.st_size);
  f->device = st.st_dev;
  f->inode = st.st_ino;
  f->status = info->status;
  return &f->pub;
}

herr_t close_file(H5FD_t* file) {
  DriverFile* f = as_file(file);
  if (::close(f->fd) != 0 && !discarding(f)) record(f, "close");  // NFS reports late write errors here
  delete f;
  return 0;
}

int compare(const H5FD_t* a, const H5FD_t* b) {
  const DriverFile* fa = as_file(a);
  const DriverFile* fb = as_file(b);
  if (fa->device != fb->device) return fa->device < fb->device ? -1 : 1;
  if (fa->inode != fb->inode) return fa->inode < fb->inode ? -1 : 1;
  return 0;
}

herr_t query(const H5FD_t*, unsigned long* flags) {
  if (flags != nullptr)  // sec2's features: the same allocation decisions, hence the same bytes
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA | H5FD_FEAT_POSIX_COMPAT_HANDLE | H5FD_FEAT_DEFAULT_VFD_COMPATIBLE;
  return 0;
}

haddr_t get_eoa(const H5FD_t* file, H5FD_mem_t) {
  return as_file(file)->eoa;
}

herr_t set_eoa(H5FD_t* file, H5FD_mem_t, haddr_t addr) {
  as_file(file)->eoa = addr;
  return 0;
}

haddr_t get_eof(const H5FD_t* file, H5FD_mem_t) {
  return as_file(file)->eof;
}

herr_t get_handle(H5FD_t* file, hid_t, void** handle) {
  *handle = &as_file(file)->fd;
  return 0;
}

herr_t read(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t addr, size_t size, void* buffer) {
  DriverFile* f = as_file(file);
  auto* out = static_cast<unsigned char*>(buffer);
  while (size > 0) {
    const ssize_t n = ::pread(f->fd, out, size, static_cast<off_t>(addr));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // past the end (or a failure: the file is being discarded then anyway): zeros
      if (n < 0 && !discarding(f)) record(f, "read");
      std::memset(out, 0, size);
      break;
    }
    out += n;
    addr += static_cast<haddr_t>(n);
    size -= static_cast<size_t>(n);
  }
  return 0;
}

herr_t write(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t addr, size_t size, const void* buffer) {
  DriverFile* f = as_file(file);
  f->eof = std::max(f->eof, addr + size);
  if (discarding(f)) return 0;
  const auto* in = static_cast<const unsigned char*>(buffer);
  while (size > 0) {
    const ssize_t n = ::pwrite(f->fd, in, size, static_cast<off_t>(addr));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;  // a write that makes no progress: the device is full
      record(f, "write");
      return 0;  // HDF5 goes on (and closes cleanly); the caller throws the file away
    }
    in += n;
    addr += static_cast<haddr_t>(n);
    size -= static_cast<size_t>(n);
  }
  return 0;
}

herr_t truncate(H5FD_t* file, hid_t, hbool_t) {
  DriverFile* f = as_file(file);
  if (f->eoa == f->eof) return 0;
  if (!discarding(f) && ::ftruncate(f->fd, static_cast<off_t>(f->eoa)) != 0) record(f, "truncate");
  f->eof = f->eoa;
  return 0;
}

hid_t driver_id() {
  static const hid_t id = [] {
    static H5FD_class_t cls;  // zero-initialized: the optional callbacks stay null
#ifdef H5FD_CLASS_VERSION     // HDF5 1.14's class layout
    cls.version = H5FD_CLASS_VERSION;
    cls.value = static_cast<H5FD_class_value_t>(511);  // 256-511: left to applications by HDF5
#endif
    cls.name = "tissue_write";
    cls.maxaddr = static_cast<haddr_t>(std::numeric_limits<off_t>::max());
    cls.fc_degree = H5F_CLOSE_WEAK;
    cls.fapl_size = sizeof(DriverInfo);
    cls.fapl_copy = info_copy;
    cls.fapl_free = info_free;
    cls.open = open_file;
    cls.close = close_file;
    cls.cmp = compare;
    cls.query = query;
    cls.get_eoa = get_eoa;
    cls.set_eoa = set_eoa;
    cls.get_eof = get_eof;
    cls.get_handle = get_handle;
    cls.read = read;
    cls.write = write;
    cls.truncate = truncate;
    const H5FD_mem_t map[] = H5FD_FLMAP_DICHOTOMY;
    std::copy(std::begin(map), std::end(map), std::begin(cls.fl_map));
    return H5FDregister(&cls);
  }();
  return id;
}

}  // namespace

void set_hdf5_write_driver(hid_t fapl, Hdf5WriteStatus* status) {
  const hid_t id = driver_id();
  const DriverInfo info{status};
  if (id < 0 || H5Pset_driver(fapl, id, &info) < 0)
    throw std::runtime_error("cannot set up the HDF5 file driver for writing checkpoints");
}

}  // namespace tissue::io
