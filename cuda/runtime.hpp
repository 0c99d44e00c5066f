#pragma once
/// @file runtime.hpp
/// Plain C++ interface to the CUDA runtime, for engine code compiled by the host compiler.
/// Implemented in runtime.cu; only built with -DTISSUE_BACKEND=cuda. Every function throws
/// tissue::BackendError with the CUDA error string on failure.

#include <cstddef>
#include <cstdint>
#include <string>

namespace tissue::cuda {

/// Number of CUDA devices (0 when none or when the driver is missing; never throws).
int device_count() noexcept;
/// Selects device 0 and creates its context. @throws BackendError if no device is usable.
void initialize();
/// "NAME (sm_XY, N SMs, M GiB)" of the current device.
std::string device_name();
/// Theoretical DRAM bandwidth of the current device [GB/s]: 2 x memory clock x bus width.
double peak_bandwidth_gbs();
/// Free memory of the current device [bytes] (cudaMemGetInfo).
std::size_t free_memory_bytes();
/// cudaDeviceSynchronize, with error check.
void synchronize();

void* device_allocate(std::size_t bytes);
void device_free(void* ptr) noexcept;
/// Synchronous copy between host and device memory (either side may be the device).
void copy(void* dst, bool dst_device, const void* src, bool src_device, std::size_t bytes);
void zero(void* ptr, std::size_t bytes);

/// Stream the engine's launches and CUB calls go to: the legacy default stream (nullptr) except while a
/// graph is being captured. A cudaStream_t, as void* for host-compiled code.
void* current_stream() noexcept;

/// Serial number of the last operation this layer enqueued on the engine's stream (a kernel launch, copy,
/// memset, library call or graph launch): every function here that enqueues work calls note_enqueue(),
/// which increments it. A caller that records the value right after its own launch knows, while it is
/// unchanged, that nothing else has been enqueued since (chains of one-step launches that overlap, such as
/// the grid reaction-diffusion module's tuned kernels, rely on it to skip the grid-wide wait).
std::uint64_t enqueue_serial() noexcept;
/// Increments enqueue_serial(): called by every function of this layer that enqueues work, and by
/// whoever enqueues work on the engine's stream directly.
void note_enqueue() noexcept;
/// Whether a graph capture is running (begin_capture .. end_capture).
bool capturing() noexcept;

/// Starts capturing the engine's launches into a CUDA graph (stream capture on a blocking stream, so
/// that the captured work stays ordered with the default stream when replayed).
/// @throws BackendError on failure or when a capture is already running.
void begin_capture();
/// Ends the capture and returns the instantiated graph (a cudaGraphExec_t). @throws BackendError.
void* end_capture();
/// Launches an instantiated graph on the default stream (asynchronous). @throws BackendError.
void launch_graph(void* graph);
/// Destroys an instantiated graph (no-op for nullptr).
void destroy_graph(void* graph) noexcept;

/// The device word of the grid barrier of cooperative launches (exec::Grid::sync): allocated and zeroed
/// on first use, kept for the process. Every completed barrier returns its low 31 bits to 0, so launches
/// share it as long as they run one after another (the engine's launches all go to one stream).
unsigned* grid_barrier_word();
/// The signal words of cooperative launches (exec::Grid::signal): `words` words, zeroed by a memset on
/// the current stream (so in order with the launches around it); allocated on first use for as many
/// blocks as the device keeps resident at most, kept for the process.
/// @throws BackendError if more words are asked for than that, or if the memset fails.
unsigned* grid_signal_words(std::size_t words);
/// Throws BackendError if the last kernel launch failed (cudaGetLastError); `what` names the launch.
void check_last_launch(const char* what);

}  // namespace tissue::cuda
