#include "engine/io/background_writer.hpp"

#include <algorithm>
#include <utility>

namespace tissue::io {

BackgroundWriter::BackgroundWriter(std::size_t max_pending)
    : max_pending_(std::max<std::size_t>(max_pending, 1)), worker_([this] { work(); }) {}

BackgroundWriter::~BackgroundWriter() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return queue_.empty() && running_ == 0; });
    stop_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void BackgroundWriter::rethrow_failure(std::unique_lock<std::mutex>& lock) {
  if (!failure_) return;
  std::exception_ptr e = std::exchange(failure_, nullptr);
  lock.unlock();
  std::rethrow_exception(e);
}

void BackgroundWriter::submit(std::function<void()> job) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return queue_.size() + running_ < max_pending_ || failure_; });
  rethrow_failure(lock);
  queue_.push_back(std::move(job));
  lock.unlock();
  changed_.notify_all();
}

void BackgroundWriter::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return queue_.empty() && running_ == 0; });
  rethrow_failure(lock);
}

void BackgroundWriter::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ with nothing left
    std::function<void()> job = std::move(queue_.front());
    queue_.pop_front();
    running_ = 1;
    lock.unlock();
    std::exception_ptr error;
    try {
      job();
    } catch (...) {
      error = std::current_exception();
    }
    job = nullptr;  // the snapshot's copies go before the next waits
    lock.lock();
    running_ = 0;
    // after a failure the jobs behind it are dropped: a series would otherwise name a file that is missing
    if (error) {
      if (!failure_) failure_ = error;
      queue_.clear();
    }
    changed_.notify_all();
  }
}

}  // namespace tissue::io
