#pragma once
/// @file recording.hpp
/// A fixed sequence of launches recorded once and replayed many times: a CUDA graph on the CUDA backend
/// (stream capture of every parallel_for, block_for and device-wide primitive inside record()), the
/// callable itself on the CPU backend. Replaying a graph costs one launch instead of one per kernel,
/// which is what bounds loops of many small kernels (an adaptive integrator on a small grid).
///
/// Inside record() only queue work: no host-device copies, no synchronisation, no allocation (warm the
/// buffers up by running the sequence once before). Spans and parameters are baked into the recording;
/// record again when they change.

#include <functional>

namespace tissue::exec {

class Recording {
 public:
  Recording() = default;
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  /// Records the launches `work` makes (and runs nothing on the CUDA backend until replay()).
  /// @throws BackendError when the capture fails.
  void record(std::function<void()> work);
  /// Queues the recorded sequence once more. @throws std::logic_error before record().
  void replay();
  bool empty() const { return !graph_ && !work_; }

 private:
  void* graph_ = nullptr;       ///< cudaGraphExec_t on the CUDA backend
  std::function<void()> work_;  ///< the CPU backend runs the callable
};

}  // namespace tissue::exec
