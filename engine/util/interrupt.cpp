#include "engine/util/interrupt.hpp"

#include <time.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>

namespace tissue {

namespace {
volatile std::sig_atomic_t g_signal = 0;
std::atomic<std::int64_t> g_first_ns{0};  // when the first signal came (CLOCK_MONOTONIC) [ns]
bool g_installed = false;
static_assert(std::atomic<std::int64_t>::is_always_lock_free, "the signal handler needs a lock-free clock");

std::int64_t monotonic_ns() {  // clock_gettime is async-signal-safe
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

extern "C" void on_signal(int signo) {
  const std::int64_t now = monotonic_ns();
  if (g_signal == 0) {  // the first: a request to stop after this step
    g_first_ns.store(now);
    g_signal = signo;
    return;
  }
  const auto window = static_cast<std::int64_t>(InterruptGuard::kRepeatWindowSeconds * 1e9);
  if (signo == g_signal && now - g_first_ns.load() < window) return;  // the same request, delivered twice
  std::signal(signo, SIG_DFL);  // a later or different signal acts at once
  std::raise(signo);
}
}  // namespace

InterruptGuard::InterruptGuard() {
  if (g_installed) throw std::logic_error("InterruptGuard: only one may be installed at a time");
  g_installed = true;
  g_signal = 0;
  previous_int_ = std::signal(SIGINT, on_signal);
  previous_term_ = std::signal(SIGTERM, on_signal);
  previous_hup_ = std::signal(SIGHUP, on_signal);
}

InterruptGuard::~InterruptGuard() {
  std::signal(SIGINT, previous_int_ == SIG_ERR ? SIG_DFL : previous_int_);
  std::signal(SIGTERM, previous_term_ == SIG_ERR ? SIG_DFL : previous_term_);
  std::signal(SIGHUP, previous_hup_ == SIG_ERR ? SIG_DFL : previous_hup_);
  g_installed = false;
}

int InterruptGuard::signal_received() {
  return g_signal;
}

const char* InterruptGuard::signal_name(int signo) {
  if (signo == SIGINT) return "SIGINT";
  if (signo == SIGTERM) return "SIGTERM";
  if (signo == SIGHUP) return "SIGHUP";
  return "a signal";
}

}  // namespace tissue
