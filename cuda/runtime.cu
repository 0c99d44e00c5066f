#include <cuda_runtime.h>

#include <cstdlib>
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

namespace {
int g_device = 0;  // the device initialize() selected; threads with a stream of their own select it too

// The calling thread's engine stream (nullptr: the legacy default stream) and its graph capture.
thread_local cudaStream_t t_stream = nullptr;
thread_local cudaStream_t t_capture_stream = nullptr;  // created on the thread's first capture
thread_local bool t_capturing = false;
thread_local std::uint64_t t_enqueue_serial = 0;
}  // namespace

void initialize(int device) {
  const int count = device_count();
  if (count == 0) throw BackendError("no CUDA device is available");
  if (device < 0 || device >= count)
    throw BackendError("CUDA device " + std::to_string(device) + " asked for, " + std::to_string(count) +
                       " present (ordinals 0 to " + std::to_string(count - 1) + ")");
  g_device = device;
  check(cudaSetDevice(device), "cudaSetDevice");
  // how a host thread waits for the device (before the context exists): TISSUE_CUDA_SCHEDULE = spin, yield,
  // blocking or auto (CUDA's default); `tissue sweep` sets yield when unset, for its many threads
  if (const char* mode = std::getenv("TISSUE_CUDA_SCHEDULE")) {
    const std::string m = mode;
    const unsigned flags = m == "spin"       ? cudaDeviceScheduleSpin
                           : m == "yield"    ? cudaDeviceScheduleYield
                           : m == "blocking" ? cudaDeviceScheduleBlockingSync
                           : m == "auto"     ? cudaDeviceScheduleAuto
                                             : ~0u;
    if (flags == ~0u)
      throw BackendError("TISSUE_CUDA_SCHEDULE=" + m + ": expected spin, yield, blocking or auto");
    check(cudaSetDeviceFlags(flags), "cudaSetDeviceFlags");
  }
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
  thread_local const Word word;  // one per thread: concurrent streams must not share a barrier
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
  thread_local const Words signals;  // one set per thread, as the barrier word
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
  if (t_stream) {
    check(cudaStreamSynchronize(t_stream), "cudaStreamSynchronize");
    return;
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

void* device_allocate(std::size_t bytes) {
  void* p = nullptr;
  // a thread with a stream of its own allocates in stream order: cudaMalloc and cudaFree may wait for the
  // whole device, which would serialise the threads' streams
  const cudaError_t err = t_stream ? cudaMallocAsync(&p, bytes, t_stream) : cudaMalloc(&p, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw BackendError("cudaMalloc of " + std::to_string(bytes) +
                       " bytes failed: " + cudaGetErrorString(err));
  }
  return p;
}

void device_free(void* ptr) noexcept {
  if (t_stream && ptr) {
    cudaFreeAsync(ptr, t_stream);
    return;
  }
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
  if (t_stream) {  // synchronous for the calling thread only
    check(cudaMemcpyAsync(dst, src, bytes, kind, t_stream), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(t_stream), "cudaStreamSynchronize after cudaMemcpyAsync");
    return;
  }
  check(cudaMemcpy(dst, src, bytes, kind), "cudaMemcpy");
}

void zero(void* ptr, std::size_t bytes) {
  note_enqueue();
  if (t_stream || t_capturing) {  // in stream order (part of a graph being captured)
    check(cudaMemsetAsync(ptr, 0, bytes, static_cast<cudaStream_t>(current_stream())), "cudaMemsetAsync");
    return;
  }
  check(cudaMemset(ptr, 0, bytes), "cudaMemset");
}

void check_last_launch(const char* what) {
  check(cudaGetLastError(), what);
}

std::uint64_t enqueue_serial() noexcept {
  return t_enqueue_serial;
}

void note_enqueue() noexcept {
  ++t_enqueue_serial;
}

bool capturing() noexcept {
  return t_capturing;
}

void* current_stream() noexcept {
  return t_capturing ? t_capture_stream : t_stream;
}

void* create_thread_stream() {
  if (t_stream) throw BackendError("this thread has a stream of its own already");
  check(cudaSetDevice(g_device), "cudaSetDevice");  // a new thread starts on device 0
  static const bool pool_kept = [] {
    // keep freed stream-ordered memory in the pool: returning it to the system at every synchronisation
    // costs time, and members allocate and free the same sizes over and over
    cudaMemPool_t pool = nullptr;
    check(cudaDeviceGetDefaultMemPool(&pool, g_device), "cudaDeviceGetDefaultMemPool");
    std::uint64_t keep = ~std::uint64_t{0};
    check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute");
    return true;
  }();
  (void)pool_kept;
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  t_stream = stream;
  grid_barrier_word();  // this thread's words, allocated now: never inside a capture
  grid_signal_words(0);
  return stream;
}

void destroy_thread_stream() noexcept {
  if (!t_stream) return;
  cudaStreamSynchronize(t_stream);
  cudaStreamDestroy(t_stream);
  t_stream = nullptr;
  if (t_capture_stream) {
    cudaStreamDestroy(t_capture_stream);
    t_capture_stream = nullptr;
  }
}

void begin_capture() {
  if (t_capturing) throw BackendError("CUDA graph capture: a capture is already running");
  // a blocking stream on the legacy default stream (ordered with it when replayed); a non-blocking one
  // for a thread with a stream of its own, so that no other thread's legacy-stream work joins the capture
  if (!t_capture_stream)
    check(t_stream ? cudaStreamCreateWithFlags(&t_capture_stream, cudaStreamNonBlocking)
                   : cudaStreamCreate(&t_capture_stream),
          "cudaStreamCreate");
  // the capture stream starts after everything queued on the engine's stream so far
  check(cudaStreamSynchronize(t_stream), "cudaStreamSynchronize");
  note_enqueue();
  check(cudaStreamBeginCapture(t_capture_stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  t_capturing = true;
}

void* end_capture() {
  note_enqueue();
  t_capturing = false;
  cudaGraph_t graph = nullptr;
  check(cudaStreamEndCapture(t_capture_stream, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  const cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  check(err, "cudaGraphInstantiate");
  return exec;
}

void launch_graph(void* graph) {
  note_enqueue();
  check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph), t_stream), "cudaGraphLaunch");
}

void destroy_graph(void* graph) noexcept {
  if (graph) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph));
}

}  // namespace tissue::cuda
