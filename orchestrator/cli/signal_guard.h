// Turns SIGINT/SIGTERM into a stop flag for as long as it lives, then restores the old handlers.
#pragma once

#include <atomic>
#include <csignal>

namespace kvsweep::orchestrator {

// The first signal raises the flag so the sweep ends cleanly and keeps what finished; the
// handler then steps aside, so a second Ctrl-C ends the process at once. One guard at a time
// (signal dispositions are process-wide; the flag is the one global kvsweep allows).
class SignalGuard {
 public:
  SignalGuard();
  ~SignalGuard();
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  const std::atomic<bool>& stop_flag() const;
  int signal_number() const;  // the signal that raised the flag, 0 if none

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace kvsweep::orchestrator
