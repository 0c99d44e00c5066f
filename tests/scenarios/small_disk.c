/* small_disk.c: an LD_PRELOAD shim that makes one directory behave like a small, full-able disk, so that
 * the full-disk tests run without root (no tmpfs to mount).
 *
 *   TISSUE_SMALL_DISK_DIR    absolute, canonical path of the directory (the "disk"; its own files only)
 *   TISSUE_SMALL_DISK_BYTES  its capacity [bytes]: the sum of the sizes of its regular files may not exceed it
 *   TISSUE_SMALL_DISK_TRACE  optional file (outside the disk): one line per write into the disk,
 *                            "<usage before> <growth> <path>", to choose capacities that fail a given write
 *
 * Every write(), pwrite(), pwrite64(), writev() and fallocate() of a file in the directory is checked
 * against the space left (the blocks allocated to the directory's files, measured at each call, so deleting
 * or renaming a file frees its space as on a real disk): a write that does not fit writes what fits and
 * returns the short count, the next one fails with ENOSPC, as a full file system does. Overwriting bytes a
 * file already holds costs nothing; filling a hole does. Writes elsewhere (stdout, pipes, other directories) pass unchanged. These
 * are the calls the engine's atomic writer and HDF5's sec2 driver (pwrite) make.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static const char* disk_dir(void) {
  const char* d = getenv("TISSUE_SMALL_DISK_DIR");
  return d != NULL && d[0] == '/' ? d : NULL;
}

/* The bytes allocated to the regular files of the disk directory (a sparse file's holes cost nothing). */
static long long disk_usage(const char* dir) {
  long long used = 0;
  DIR* d = opendir(dir);
  if (d == NULL) return 0;
  for (struct dirent* e; (e = readdir(d)) != NULL;) {
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
      used += (long long)st.st_blocks * 512;
  }
  closedir(d);
  return used;
}

/* The bytes of [offset, offset + len) of `fd` that hold no data yet (beyond the end, or in a hole: HDF5
 * extends its files with ftruncate and fills them later), found with SEEK_DATA/SEEK_HOLE. Leaves the file
 * offset as it was. */
static long long unallocated_bytes(int fd, long long offset, long long len) {
  const off_t saved = lseek(fd, 0, SEEK_CUR);
  const long long end = offset + len;
  long long pos = offset, holes = 0;
  while (pos < end) {
    const off_t data = lseek(fd, pos, SEEK_DATA);
    if (data < 0) { /* ENXIO: no data at or after pos */
      holes += end - pos;
      break;
    }
    if (data > pos) {
      holes += (data < end ? data : end) - pos;
      pos = data;
      if (pos >= end) break;
    }
    const off_t hole = lseek(fd, pos, SEEK_HOLE);
    if (hole <= pos) break;
    pos = hole;
  }
  if (saved >= 0) lseek(fd, saved, SEEK_SET);
  return holes;
}

static ssize_t (*real_write_fn)(int, const void*, size_t);

static void trace(long long usage, long long growth, const char* path) {
  const char* file = getenv("TISSUE_SMALL_DISK_TRACE");
  if (file == NULL) return;
  if (real_write_fn == NULL) real_write_fn = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  char line[PATH_MAX + 64];
  const int n = snprintf(line, sizeof line, "%lld %lld %s\n", usage, growth, path);
  const int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (n > 0) real_write_fn(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
  close(fd);
}

/* How many of `len` bytes at `offset` (-1: the current offset) of `fd` fit on the disk: `len` for a file
 * outside the disk directory. */
static size_t allowance(int fd, long long offset, size_t len) {
  const char* dir = disk_dir();
  const char* capacity_text = getenv("TISSUE_SMALL_DISK_BYTES");
  if (dir == NULL || len == 0) return len;
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return len;
  path[n] = '\0';
  const size_t dl = strlen(dir);
  if (strncmp(path, dir, dl) != 0 || path[dl] != '/' || strchr(path + dl + 1, '/') != NULL) return len;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return len;
  if (offset < 0) offset = lseek(fd, 0, SEEK_CUR);
  if (offset < 0) return len;
  const long long growth = unallocated_bytes(fd, offset, (long long)len);
  const long long usage = disk_usage(dir);
  trace(usage, growth, path);
  if (capacity_text == NULL) return len;
  const long long free_bytes = atoll(capacity_text) - usage;
  if (growth <= free_bytes) return len;
  /* overwriting allocated bytes is free; of the rest only what is left (approximately: the allocated bytes
   * are taken to come first) */
  const long long fits = (long long)len - growth + (free_bytes > 0 ? free_bytes : 0);
  return fits > 0 ? (size_t)fits : 0;
}

typedef ssize_t (*write_fn)(int, const void*, size_t);
typedef ssize_t (*pwrite_fn)(int, const void*, size_t, off_t);
typedef ssize_t (*pwrite64_fn)(int, const void*, size_t, off64_t);
typedef ssize_t (*writev_fn)(int, const struct iovec*, int);
typedef int (*fallocate_fn)(int, int, off_t, off_t);
typedef int (*posix_fallocate_fn)(int, off_t, off_t);

/* the next definition of `name` (libc's), looked up once */
#define REAL(name)              \
  static name##_fn real_##name; \
  if (real_##name == NULL) real_##name = (name##_fn)dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void* buf, size_t len) {
  REAL(write);
  const size_t ok = allowance(fd, -1, len);
  if (ok == 0 && len > 0) {
    errno = ENOSPC;
    return -1;
  }
  return real_write(fd, buf, ok);
}

ssize_t pwrite(int fd, const void* buf, size_t len, off_t offset) {
  REAL(pwrite);
  const size_t ok = allowance(fd, offset, len);
  if (ok == 0 && len > 0) {
    errno = ENOSPC;
    return -1;
  }
  return real_pwrite(fd, buf, ok, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t len, off64_t offset) {
  REAL(pwrite64);
  const size_t ok = allowance(fd, offset, len);
  if (ok == 0 && len > 0) {
    errno = ENOSPC;
    return -1;
  }
  return real_pwrite64(fd, buf, ok, offset);
}

ssize_t writev(int fd, const struct iovec* iov, int count) {
  REAL(writev);
  size_t len = 0;
  for (int i = 0; i < count; ++i) len += iov[i].iov_len;
  const size_t ok = allowance(fd, -1, len);
  if (ok == len) return real_writev(fd, iov, count);
  if (ok == 0) {
    errno = ENOSPC;
    return -1;
  }
  /* a short write: the leading buffers that fit */
  struct iovec part[IOV_MAX];
  int k = 0;
  size_t left = ok;
  for (int i = 0; i < count && left > 0 && k < IOV_MAX; ++i, ++k) {
    part[k] = iov[i];
    if (part[k].iov_len > left) part[k].iov_len = left;
    left -= part[k].iov_len;
  }
  return real_writev(fd, part, k);
}

int fallocate(int fd, int mode, off_t offset, off_t len) {
  REAL(fallocate);
  if (len > 0 && allowance(fd, offset, (size_t)len) < (size_t)len) {
    errno = ENOSPC;
    return -1;
  }
  return real_fallocate(fd, mode, offset, len);
}

int posix_fallocate(int fd, off_t offset, off_t len) {
  REAL(posix_fallocate);
  if (len > 0 && allowance(fd, offset, (size_t)len) < (size_t)len) return ENOSPC;
  return real_posix_fallocate(fd, offset, len);
}
