#include <cuda_runtime.h>

#include <atomic>
#include <string>

#include "cuda/runtime.hpp"
#include "engine/exec/error.hpp"

namespace tissue::cuda {

namespace {
void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw BackendError(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(err));
}
}  // namespace

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

void initialize() {
  if (device_count() == 0) throw BackendError("no CUDA device is available");
  check(cudaSetDevice(0), "cudaSetDevice");
  check(cudaFree(nullptr), "context creation");
  grid_barrier_word();  // allocated here, before any graph capture could need them
  grid_signal_words(0);
}

unsigned* grid_barrier_word() {
  // freed with the process: its owner outlives every launch
  struct Word {
    unsigned* ptr = nullptr;
    Word() {
      ptr = static_cast<unsigned*>(device_allocate(sizeof(unsigned)));
      zero(ptr, sizeof(unsigned));
    }
    ~Word() { device_free(ptr); }
  };
  static const Word word;
  return word.ptr;
}

namespace {
/// Words per block of exec::Grid::kSignalStride's size at most, for every resident block of the device.
constexpr std::size_t kMaxSignalStride = 8;
}  // namespace

unsigned* grid_signal_words(std::size_t words) {
  struct Words {
    unsigned* ptr = nullptr;
    std::size_t count = 0;
    Words() {
      int dev = 0, sms = 0, per_sm = 0;
      check(cudaGetDevice(&dev), "cudaGetDevice");
      check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "multiprocessor count");
      check(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxBlocksPerMultiprocessor, dev), "blocks per SM");
      count = static_cast<std::size_t>(sms) * static_cast<std::size_t>(per_sm) * kMaxSignalStride;
      ptr = static_cast<unsigned*>(device_allocate(count * sizeof(unsigned)));
      zero(ptr, count * sizeof(unsigned));
    }
    ~Words() { device_free(ptr); }
  };
  static const Words signals;
  if (words > signals.count)
    throw BackendError("grid signal words: " + std::to_string(words) + " asked for, " +
                       std::to_string(signals.count) + " allocated");
  note_enqueue();
  check(
      cudaMemsetAsync(signals.ptr, 0, words * sizeof(unsigned), static_cast<cudaStream_t>(current_stream())),
      "cudaMemsetAsync of the grid signal words");
  return signals.ptr;
}

std::string device_name() {
  int dev = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties");
  return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
         std::to_string(p.multiProcessorCount) + " SMs, " +
         std::to_string(p.totalGlobalMem / (1024ull * 1024ull * 1024ull)) + " GiB)";
}

double peak_bandwidth_gbs() {
  int dev = 0, clock_khz = 0, bus_bits = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, dev), "memory clock");
  check(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev), "memory bus width");
  return 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
}

std::size_t free_memory_bytes() {
  std::size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return free;
}

void synchronize() {
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

void* device_allocate(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw BackendError("cudaMalloc of " + std::to_string(bytes) +
                       " bytes failed: " + cudaGetErrorString(err));
  }
  return p;
}

void device_free(void* ptr) noexcept {
  cudaFree(ptr);
}

void copy(void* dst, bool dst_device, const void* src, bool src_device, std::size_t bytes) {
  cudaMemcpyKind kind = cudaMemcpyDefault;
  if (dst_device && src_device)
    kind = cudaMemcpyDeviceToDevice;
  else if (dst_device)
    kind = cudaMemcpyHostToDevice;
  else if (src_device)
    kind = cudaMemcpyDeviceToHost;
  else
    kind = cudaMemcpyHostToHost;
  note_enqueue();
  check(cudaMemcpy(dst, src, bytes, kind), "cudaMemcpy");
}

void zero(void* ptr, std::size_t bytes) {
  note_enqueue();
  check(cudaMemset(ptr, 0, bytes), "cudaMemset");
}

void check_last_launch(const char* what) {
  check(cudaGetLastError(), what);
}

namespace {
cudaStream_t g_capture_stream = nullptr;  // the stream being captured, or nullptr
bool g_capturing = false;
std::atomic<std::uint64_t> g_enqueue_serial{0};
}  // namespace

std::uint64_t enqueue_serial() noexcept {
  return g_enqueue_serial.load(std::memory_order_relaxed);
}

void note_enqueue() noexcept {
  g_enqueue_serial.fetch_add(1, std::memory_order_relaxed);
}

bool capturing() noexcept {
  return g_capturing;
}

void* current_stream() noexcept {
  return g_capturing ? g_capture_stream : nullptr;
}

void begin_capture() {
  if (g_capturing) throw BackendError("CUDA graph capture: a capture is already running");
  if (!g_capture_stream) check(cudaStreamCreate(&g_capture_stream), "cudaStreamCreate");
  // the capture stream starts after everything queued on the default stream so far
  check(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
  note_enqueue();
  check(cudaStreamBeginCapture(g_capture_stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  g_capturing = true;
}

void* end_capture() {
  note_enqueue();
  g_capturing = false;
  cudaGraph_t graph = nullptr;
  check(cudaStreamEndCapture(g_capture_stream, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  const cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  check(err, "cudaGraphInstantiate");
  return exec;
}

void launch_graph(void* graph) {
  note_enqueue();
  check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph), nullptr), "cudaGraphLaunch");
}

void destroy_graph(void* graph) noexcept {
  if (graph) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph));
}

}  // namespace tissue::cuda
