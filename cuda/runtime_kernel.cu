#include <cuda_runtime.h>
#include <nvrtc.h>

#include <string>
#include <vector>

#include "cuda/runtime.hpp"
#include "cuda/runtime_kernel.hpp"
#include "engine/exec/error.hpp"

namespace tissue::cuda {

namespace {
void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw BackendError(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(err));
  }
}
void check(nvrtcResult err, const char* what) {
  if (err != NVRTC_SUCCESS)
    throw BackendError(std::string("NVRTC error in ") + what + ": " + nvrtcGetErrorString(err));
}

/// Owns an nvrtcProgram.
struct Program {
  nvrtcProgram handle = nullptr;
  ~Program() {
    if (handle) nvrtcDestroyProgram(&handle);
  }
};
}  // namespace

RuntimeKernel::RuntimeKernel(const std::string& source, const std::string& kernel_name,
                             const std::string& program_name) {
  int dev = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp props{};
  check(cudaGetDeviceProperties(&props, dev), "cudaGetDeviceProperties");
  const std::string arch =
      "--gpu-architecture=sm_" + std::to_string(props.major) + std::to_string(props.minor);
  const char* options[] = {arch.c_str(), "-std=c++17", "--fmad=false"};

  Program program;
  check(nvrtcCreateProgram(&program.handle, source.c_str(), program_name.c_str(), 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  const nvrtcResult compiled = nvrtcCompileProgram(program.handle, 3, options);
  if (compiled != NVRTC_SUCCESS) {
    std::size_t size = 0;
    nvrtcGetProgramLogSize(program.handle, &size);
    std::string log(size, '\0');
    if (size > 0) nvrtcGetProgramLog(program.handle, log.data());
    throw BackendError("NVRTC could not compile the generated " + program_name + " (" +
                       nvrtcGetErrorString(compiled) + "):\n" + log + "\n--- source ---\n" + source);
  }
  std::size_t size = 0;
  check(nvrtcGetCUBINSize(program.handle, &size), "nvrtcGetCUBINSize");
  std::vector<char> cubin(size);
  check(nvrtcGetCUBIN(program.handle, cubin.data()), "nvrtcGetCUBIN");

  cudaLibrary_t library = nullptr;
  check(cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
        "cudaLibraryLoadData");
  library_ = library;
  cudaKernel_t kernel = nullptr;
  const cudaError_t found = cudaLibraryGetKernel(&kernel, library, kernel_name.c_str());
  if (found != cudaSuccess) {
    cudaLibraryUnload(library);
    library_ = nullptr;
    check(found, ("cudaLibraryGetKernel(" + kernel_name + ")").c_str());
  }
  kernel_ = kernel;
}

RuntimeKernel::~RuntimeKernel() {
  if (library_) cudaLibraryUnload(static_cast<cudaLibrary_t>(library_));
}

void RuntimeKernel::launch(std::size_t n, void** args) const {
  if (n == 0) return;
  constexpr unsigned block = 256;
  const auto blocks = static_cast<unsigned>((n + block - 1) / block);
  note_enqueue();
  check(cudaLaunchKernel(kernel_, dim3(blocks), dim3(block), args, 0,
                         static_cast<cudaStream_t>(current_stream())),
        "cudaLaunchKernel (run-time compiled kernel)");
}

}  // namespace tissue::cuda
