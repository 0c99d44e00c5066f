#pragma once
/// @file error.hpp
/// Error types of the engine. Every user-facing failure is one of these, caught by the command-line
/// tool and reported as one line with a non-zero exit code.

#include <stdexcept>
#include <string>

namespace tissue {

/// Bad input: scenario files, meshes, command-line values. Message carries file:line:column where known.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A run that went numerically wrong (NaN/Inf, element outside the domain).
class NumericalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Failure of the compute backend (CUDA error, out of device memory).
class BackendError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tissue
