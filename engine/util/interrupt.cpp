#include "engine/util/interrupt.hpp"

#include <stdexcept>

namespace tissue {

namespace {
volatile std::sig_atomic_t g_signal = 0;
bool g_installed = false;

extern "C" void on_signal(int signo) {
  g_signal = signo;
  std::signal(signo, SIG_DFL);  // a second signal acts at once
}
}  // namespace

InterruptGuard::InterruptGuard() {
  if (g_installed) throw std::logic_error("InterruptGuard: only one may be installed at a time");
  g_installed = true;
  g_signal = 0;
  previous_int_ = std::signal(SIGINT, on_signal);
  previous_term_ = std::signal(SIGTERM, on_signal);
}

InterruptGuard::~InterruptGuard() {
  std::signal(SIGINT, previous_int_ == SIG_ERR ? SIG_DFL : previous_int_);
  std::signal(SIGTERM, previous_term_ == SIG_ERR ? SIG_DFL : previous_term_);
  g_installed = false;
}

int InterruptGuard::signal_received() {
  return g_signal;
}

const char* InterruptGuard::signal_name(int signo) {
  if (signo == SIGINT) return "SIGINT";
  if (signo == SIGTERM) return "SIGTERM";
  return "a signal";
}

}  // namespace tissue
