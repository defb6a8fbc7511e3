// Turns SIGINT/SIGTERM into a stop flag for as long as it lives, then restores the old handlers.
#include "orchestrator/cli/signal_guard.h"

namespace kvsweep::orchestrator {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free, "the stop flag must be signal-safe");

void on_signal(int signal_number) {
  g_signal.store(signal_number);
  g_stop.store(true);
  std::signal(signal_number, SIG_DFL);  // a second signal terminates at once
}

}  // namespace

SignalGuard::SignalGuard() {
  g_stop.store(false);
  g_signal.store(0);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &old_int_);
  sigaction(SIGTERM, &action, &old_term_);
}

SignalGuard::~SignalGuard() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

const std::atomic<bool>& SignalGuard::stop_flag() const { return g_stop; }

int SignalGuard::signal_number() const { return g_signal.load(); }

}  // namespace kvsweep::orchestrator
