// Pacer: a timerfd armed at absolute CLOCK_MONOTONIC deadlines, so sends wake on time in epoll.
#pragma once

#include <chrono>

#include "common/unique_fd.h"

namespace kvsweep::driver {

// Owns one timerfd (RAII). steady_clock is CLOCK_MONOTONIC on Linux, so its time points are
// valid absolute deadlines; the kernel wakes within tens of microseconds, where epoll_wait's
// millisecond timeout would quantize every send (AIPerf's finding, load-drivers.md 3.3).
// Not thread-safe; used by the run thread only.
class Pacer {
 public:
  Pacer();  // throws std::runtime_error when the kernel refuses a timerfd
  ~Pacer();
  Pacer(const Pacer&) = delete;
  Pacer& operator=(const Pacer&) = delete;

  int fd() const { return fd_.get(); }  // readable once the deadline passed; add it to epoll
  void arm_at(std::chrono::steady_clock::time_point deadline);  // replaces any earlier deadline
  void disarm();
  void acknowledge();  // reads the expiry count so the fd stops being readable

 private:
  UniqueFd fd_;
};

}  // namespace kvsweep::driver
