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
/// Selects device `device` (an ordinal, 0 to device_count() - 1) and creates its context.
/// @throws BackendError if no device is usable or the ordinal is out of range.
void initialize(int device = 0);
/// "NAME (sm_XY, N SMs, M GiB)" of the current device.
std::string device_name();
/// Theoretical DRAM bandwidth of the current device [GB/s]: 2 x memory clock x bus width.
double peak_bandwidth_gbs();
/// Free memory of the current device [bytes] (cudaMemGetInfo).
std::size_t free_memory_bytes();
/// Waits for the calling thread's engine stream (a stream of its own: cudaStreamSynchronize), or for the
/// whole device (cudaDeviceSynchronize) on a thread without one.
void synchronize();

/// cudaMalloc, or cudaMallocAsync on the thread's stream when it has one of its own (create_thread_stream).
void* device_allocate(std::size_t bytes);
/// cudaFree, or cudaFreeAsync on the thread's own stream.
void device_free(void* ptr) noexcept;
/// Copy between host and device memory (either side may be the device), synchronous for the calling thread.
void copy(void* dst, bool dst_device, const void* src, bool src_device, std::size_t bytes);
/// Zeroes `bytes` bytes of device memory: in order on the engine's stream (cudaMemsetAsync; captured into
/// the graph while the thread captures one), or with cudaMemset on a thread without a stream of its own.
void zero(void* ptr, std::size_t bytes);

/// Stream the engine's launches and CUB calls go to: the calling thread's own stream (create_thread_stream)
/// or the legacy default stream (nullptr), except while the thread captures a graph. A cudaStream_t, as
/// void* for host-compiled code.
void* current_stream() noexcept;

/// Gives the calling thread a CUDA stream of its own (non-blocking, on the device initialize() chose):
/// from now on every launch, copy, memset, allocation, graph and synchronisation of the engine on this
/// thread goes to it, so that several threads, each running a simulation, share the device without
/// waiting for each other (ensembles, engine/run/ensemble.hpp). Allocations become stream-ordered
/// (cudaMallocAsync); the device's default memory pool keeps freed memory.
/// @return the stream (a cudaStream_t). @throws BackendError on failure or when the thread has one already.
void* create_thread_stream();
/// Waits for the thread's stream and destroys it (and its capture stream); the thread goes back to the
/// legacy default stream. Memory the thread allocated must have been freed before. No-op without one.
void destroy_thread_stream() noexcept;

/// Serial number (per thread) of the last operation this layer enqueued on the engine's stream (a kernel
/// launch, copy, memset, library call or graph launch): every function here that enqueues work calls
/// note_enqueue(), which increments it. A caller that records the value right after its own launch knows,
/// while it is unchanged, that nothing else has been enqueued since (chains of one-step launches that
/// overlap, such as the grid reaction-diffusion module's tuned kernels, rely on it to skip the grid-wide
/// wait).
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
/// share it as long as they run one after another (the engine's launches of one thread all go to one
/// stream; each thread has a word of its own).
unsigned* grid_barrier_word();
/// The signal words of cooperative launches (exec::Grid::signal): `words` words, zeroed by a memset on
/// the current stream (so in order with the launches around it); allocated on first use for as many
/// blocks as the device keeps resident at most, kept for the process.
/// @throws BackendError if more words are asked for than that, or if the memset fails.
unsigned* grid_signal_words(std::size_t words);
/// Throws BackendError if the last kernel launch failed (cudaGetLastError); `what` names the launch.
void check_last_launch(const char* what);

}  // namespace tissue::cuda
