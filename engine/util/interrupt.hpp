#pragma once
/// @file interrupt.hpp
/// Graceful stop on SIGINT / SIGTERM: while an InterruptGuard lives, the signals only set a flag; the time
/// loop polls it between steps, finishes the step, writes its state and exits with 128 + the signal
/// number (the shell convention). A second signal of the same kind falls back to the default action, so
/// a user can still kill a run that does not stop.

#include <csignal>

namespace tissue {

class InterruptGuard {
 public:
  /// Installs the handlers. Only one guard may live at a time. @throws std::logic_error otherwise.
  InterruptGuard();
  /// Restores the handlers that were installed before.
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  /// The signal received since the guard was installed (SIGINT or SIGTERM), 0 if none.
  static int signal_received();
  /// "SIGINT", "SIGTERM", or "a signal" for any other number.
  static const char* signal_name(int signo);

 private:
  using Handler = void (*)(int);
  Handler previous_int_, previous_term_;
};

}  // namespace tissue
