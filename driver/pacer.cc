// Pacer: a timerfd armed at absolute CLOCK_MONOTONIC deadlines, so sends wake on time in epoll.
#include "driver/pacer.h"

#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kvsweep::driver {

Pacer::Pacer() {
  static_assert(std::chrono::steady_clock::is_steady);
  fd_.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  if (!fd_) throw std::runtime_error(std::string("timerfd_create: ") + std::strerror(errno));
}

Pacer::~Pacer() = default;

void Pacer::arm_at(std::chrono::steady_clock::time_point deadline) {
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
  itimerspec spec{};
  // An all-zero it_value would disarm the timer; a deadline at the clock's origin is long past.
  spec.it_value.tv_sec = static_cast<time_t>(ns / 1000000000);
  spec.it_value.tv_nsec = static_cast<long>(ns % 1000000000);
  if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) spec.it_value.tv_nsec = 1;
  ::timerfd_settime(fd_.get(), TFD_TIMER_ABSTIME, &spec, nullptr);
}

void Pacer::disarm() {
  itimerspec spec{};
  ::timerfd_settime(fd_.get(), 0, &spec, nullptr);
}

void Pacer::acknowledge() {
  std::uint64_t expirations = 0;
  // Nonblocking: EAGAIN when it has not fired, which is fine.
  [[maybe_unused]] const ssize_t n = ::read(fd_.get(), &expirations, sizeof(expirations));
}

}  // namespace kvsweep::driver
