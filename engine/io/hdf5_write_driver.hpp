#pragma once
/// @file hdf5_write_driver.hpp
/// An HDF5 virtual file driver for files that are written once and thrown away on any I/O error (the
/// checkpoints' temporaries). HDF5 handles a failed write badly: a failed H5Dclose or H5Fclose (the flush of
/// a full disk) leaves its identifier half-destroyed, and HDF5's exit handler then crashes on it (SIGSEGV);
/// its own driver's messages span two lines. This driver writes with pwrite() like HDF5's sec2 driver (same
/// feature flags, hence the same file bytes) but never reports a failed write to HDF5: it records the first
/// error (errno and the call), drops every later write, and answers success, so that every close completes
/// and no identifier is left behind. The caller checks Hdf5WriteStatus after H5Fclose and discards the file.
///
/// Internal to engine/io (includes hdf5.h).

#include <hdf5.h>

#include <string>

namespace tissue::io {

/// The first I/O error of a file written through the driver.
struct Hdf5WriteStatus {
  int error = 0;     ///< errno of the first failed call; 0 while none failed
  std::string call;  ///< the call that failed: "open", "write", "truncate", "close"

  bool failed() const { return error != 0; }
  /// strerror(error), or "" when nothing failed.
  std::string message() const;
};

/// Sets the file access property list `fapl` to use the driver; writes to a file created with it record
/// their first failure in `*status`, which must outlive the file.
/// @throws std::runtime_error if HDF5 refuses the driver.
void set_hdf5_write_driver(hid_t fapl, Hdf5WriteStatus* status);

}  // namespace tissue::io
