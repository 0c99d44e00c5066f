#pragma once
/// @file background_writer.hpp
/// Writes files on a host thread while the simulation steps on: a snapshot's arrays are copied out of the
/// world on the calling thread (fast: a download and a copy), then encoded and written by one worker, in
/// the order submitted. A large tissue's snapshot (gigabytes of base64 in a .vtu) then costs the run its
/// copy, not its write (issue 38: output need not stop the GPU).

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace tissue::io {

class BackgroundWriter {
 public:
  /// @param max_pending  jobs queued or running at most; submit() waits for room beyond (bounds the host
  ///                     memory that copied snapshots hold). At least 1.
  explicit BackgroundWriter(std::size_t max_pending = 2);
  /// Waits for every submitted job; an error of one is dropped here (call wait() to see it).
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  /// Queues `job` to run on the worker after every job submitted before it. Blocks while max_pending jobs
  /// are pending. @throws the error of an earlier job that failed (that job's exception, rethrown once;
  /// `job` is then not queued).
  void submit(std::function<void()> job);
  /// Blocks until every submitted job has run. @throws the first error of a job since the last report.
  void wait();

 private:
  void work();
  void rethrow_failure(std::unique_lock<std::mutex>& lock);

  std::size_t max_pending_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> queue_;
  std::size_t running_ = 0;  ///< 0 or 1: the job the worker has taken off the queue
  std::exception_ptr failure_;
  bool stop_ = false;
  std::thread worker_;  ///< last: started once the members above exist
};

}  // namespace tissue::io
