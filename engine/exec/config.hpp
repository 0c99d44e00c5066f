#pragma once
/// @file config.hpp
/// Compile-time configuration shared by every translation unit of the engine.
///
/// TISSUE_HD marks a function callable from host and device code. Kernels are functors whose
/// operator() is TISSUE_HD; they run unchanged as an OpenMP loop on the CPU backend and as a
/// CUDA kernel on the CUDA backend (see parallel_for.hpp).
///
/// TISSUE_BACKEND_CUDA is defined by CMake for builds with the CUDA backend compiled in
/// (-DTISSUE_BACKEND=cuda). Such builds can still run on the CPU backend at run time.

#if defined(__CUDACC__)
#define TISSUE_HD __host__ __device__
#define TISSUE_DEVICE_COMPILER 1
#else
#define TISSUE_HD
#define TISSUE_DEVICE_COMPILER 0
#endif

#if defined(__CUDA_ARCH__)
#define TISSUE_ON_DEVICE 1
#else
#define TISSUE_ON_DEVICE 0
#endif
