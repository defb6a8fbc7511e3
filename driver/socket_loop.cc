// SocketLoop: libcurl multi driven by socket-action callbacks on one epoll fd, on one thread.
#include "driver/socket_loop.h"

#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kvsweep::driver {
namespace {

// Events taken per epoll_wait; more ready sockets are simply reported by the next call.
constexpr int kMaxEvents = 1024;

void check(CURLMcode code, const char* what) {
  if (code != CURLM_OK) {
    throw std::runtime_error(std::string(what) + ": " + curl_multi_strerror(code));
  }
}

}  // namespace

SocketLoop::SocketLoop() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = curl_timer_.fd();
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, curl_timer_.fd(), &event) != 0) {
    const int saved = errno;
    ::close(epoll_fd_);
    throw std::runtime_error(std::string("epoll_ctl(timer): ") + std::strerror(saved));
  }
  CURLM* multi = multi_.get();
  curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &SocketLoop::on_socket);
  curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &SocketLoop::on_timer);
  curl_multi_setopt(multi, CURLMOPT_TIMERDATA, this);
}

SocketLoop::~SocketLoop() {
  // multi_ is destroyed after this body, and its cleanup still calls on_socket for every open
  // connection: stop the callbacks from touching the epoll fd we are about to close.
  curl_multi_setopt(multi_.get(), CURLMOPT_SOCKETFUNCTION, nullptr);
  curl_multi_setopt(multi_.get(), CURLMOPT_TIMERFUNCTION, nullptr);
  ::close(epoll_fd_);
}

void SocketLoop::set_connection_limits(long max_cached, long max_total) {
  curl_multi_setopt(multi_.get(), CURLMOPT_MAXCONNECTS, max_cached);
  curl_multi_setopt(multi_.get(), CURLMOPT_MAX_TOTAL_CONNECTIONS, max_total);
}

void SocketLoop::add(const CurlEasy& easy) { multi_.add(easy); }

void SocketLoop::remove(const CurlEasy& easy) { multi_.remove(easy); }

void SocketLoop::watch(int fd) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = fd;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
    throw std::runtime_error(std::string("epoll_ctl(watch): ") + std::strerror(errno));
  }
  watched_fd_ = fd;
}

int SocketLoop::on_socket(CURL*, curl_socket_t socket, int what, void* self, void* socket_data) {
  auto* loop = static_cast<SocketLoop*>(self);
  if (what == CURL_POLL_REMOVE) {
    ::epoll_ctl(loop->epoll_fd_, EPOLL_CTL_DEL, socket, nullptr);
    curl_multi_assign(loop->multi_.get(), socket, nullptr);
    return 0;
  }
  epoll_event event{};
  event.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
  event.data.fd = socket;
  // curl hands back the pointer we assigned to a socket: non-null means already registered.
  if (socket_data != nullptr) {
    ::epoll_ctl(loop->epoll_fd_, EPOLL_CTL_MOD, socket, &event);
  } else {
    ::epoll_ctl(loop->epoll_fd_, EPOLL_CTL_ADD, socket, &event);
    curl_multi_assign(loop->multi_.get(), socket, loop);
  }
  return 0;
}

int SocketLoop::on_timer(CURLM*, long timeout_ms, void* self) {
  auto* loop = static_cast<SocketLoop*>(self);
  // Only arm here: calling back into curl from its own callback is not allowed.
  if (timeout_ms < 0) {
    loop->curl_timer_.disarm();
  } else {
    loop->curl_timer_.arm_at(std::chrono::steady_clock::now() +
                             std::chrono::milliseconds(timeout_ms));
  }
  return 0;
}

void SocketLoop::drive(curl_socket_t socket, int flags) {
  int running = 0;
  check(curl_multi_socket_action(multi_.get(), socket, flags, &running),
        "curl_multi_socket_action");
}

bool SocketLoop::wait_and_drive(int max_wait_ms) {
  std::array<epoll_event, kMaxEvents> events;
  const int ready = ::epoll_wait(epoll_fd_, events.data(), kMaxEvents, max_wait_ms);
  if (ready < 0) {
    if (errno == EINTR) return false;  // a signal (Ctrl-C): the caller checks its stop flag
    throw std::runtime_error(std::string("epoll_wait: ") + std::strerror(errno));
  }
  // The watched fd (the pacer) goes first and alone: a send due now must not wait behind a
  // batch of socket work. Every fd is level-triggered, so the skipped events are simply
  // reported again by the next wait, which then returns at once.
  for (int i = 0; i < ready; ++i) {
    if (events[static_cast<std::size_t>(i)].data.fd == watched_fd_) return true;
  }
  for (int i = 0; i < ready; ++i) {
    const int fd = events[static_cast<std::size_t>(i)].data.fd;
    const std::uint32_t what = events[static_cast<std::size_t>(i)].events;
    if (fd == curl_timer_.fd()) {
      curl_timer_.acknowledge();
      drive(CURL_SOCKET_TIMEOUT, 0);
    } else {
      int flags = 0;
      if (what & EPOLLIN) flags |= CURL_CSELECT_IN;
      if (what & EPOLLOUT) flags |= CURL_CSELECT_OUT;
      if (what & (EPOLLERR | EPOLLHUP)) flags |= CURL_CSELECT_ERR;
      drive(fd, flags);
    }
  }
  return false;
}

long raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
    ::getrlimit(RLIMIT_NOFILE, &limit);
  }
  return static_cast<long>(limit.rlim_cur);
}

}  // namespace kvsweep::driver
