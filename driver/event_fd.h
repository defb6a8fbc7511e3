// eventfd wake-ups between threads: make one, signal it, drain it.
#pragma once

#include "common/unique_fd.h"

namespace kvsweep::driver {

// A non-blocking, close-on-exec eventfd. Throws std::runtime_error naming `what` on failure.
UniqueFd make_eventfd(const char* what);
// Makes `fd` readable (adds one to its counter); never blocks.
void signal_eventfd(int fd);
// Resets `fd`'s counter, so it is readable again only after the next signal.
void drain_eventfd(int fd);

}  // namespace kvsweep::driver
