// eventfd wake-ups between threads: make one, signal it, drain it.
#include "driver/event_fd.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kvsweep::driver {

UniqueFd make_eventfd(const char* what) {
  UniqueFd fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!fd) throw std::runtime_error(std::string(what) + ": eventfd: " + std::strerror(errno));
  return fd;
}

void signal_eventfd(int fd) {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(fd, &one, sizeof one);
}

void drain_eventfd(int fd) {
  std::uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = ::read(fd, &count, sizeof count);
}

}  // namespace kvsweep::driver
