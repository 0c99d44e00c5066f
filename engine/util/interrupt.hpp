#pragma once
/// @file interrupt.hpp
/// Graceful stop on SIGINT / SIGTERM / SIGHUP: while an InterruptGuard lives, the signals only set a flag;
/// the time loop polls it between steps, finishes the step, writes its state and exits with 128 + the signal
/// number (the shell convention). A later signal falls back to the default action, so a user can still kill
/// a run that does not stop, except a repeat of the first signal within kRepeatWindowSeconds: `timeout`
/// and job schedulers signal the process and then its process group, which delivers the same signal twice
/// at once, and that is one request to stop, not two. SIGHUP (a closed terminal or ssh session) is treated
/// like SIGTERM.

#include <csignal>

namespace tissue {

class InterruptGuard {
 public:
  /// A repeat of the first signal sooner than this after it is ignored [s].
  static constexpr double kRepeatWindowSeconds = 1.0;

  /// Installs the handlers. Only one guard may live at a time. @throws std::logic_error otherwise.
  InterruptGuard();
  /// Restores the handlers that were installed before.
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  /// The signal received since the guard was installed (SIGINT, SIGTERM or SIGHUP), 0 if none.
  static int signal_received();
  /// "SIGINT", "SIGTERM", "SIGHUP", or "a signal" for any other number.
  static const char* signal_name(int signo);

 private:
  using Handler = void (*)(int);
  Handler previous_int_, previous_term_, previous_hup_;
};

}  // namespace tissue
