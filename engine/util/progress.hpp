#pragma once
/// @file progress.hpp
/// Progress of a run: a one-line bar with steps/s and ETA on a terminal, plain log lines otherwise.

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace tissue {

class Progress {
 public:
  /// @param total     steps of the run
  /// @param terminal  draw a bar (true) or print a log line every 10 % and at least every log_interval()
  ///                  (false; so that a run of very many steps still shows it advances)
  /// @param out       stream written to
  Progress(std::int64_t total, bool terminal, std::FILE* out = stderr);
  /// Reports that `done` of `total` steps are finished (cheap; redraws at most 5 times a second).
  void update(std::int64_t done);
  /// Final line with the total wall time.
  void finish(std::int64_t done);
  /// Seconds since construction.
  double elapsed() const;
  /// Longest time between two log lines without a bar (default one minute).
  void set_log_interval(std::chrono::milliseconds interval) { log_interval_ = interval; }
  std::chrono::milliseconds log_interval() const { return log_interval_; }

 private:
  void draw(std::int64_t done, bool final);
  std::int64_t total_;
  bool terminal_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  int last_decile_ = -1;
  std::chrono::milliseconds log_interval_{60000};
};

}  // namespace tissue
