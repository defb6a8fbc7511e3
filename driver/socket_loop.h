// SocketLoop: libcurl multi driven by socket-action callbacks on one epoll fd, on one thread.
#pragma once

#include <cstddef>
#include <optional>

#include "driver/curl_handles.h"
#include "driver/pacer.h"

namespace kvsweep::driver {

// curl tells us which sockets to watch (CURLMOPT_SOCKETFUNCTION) and when to call it back
// (CURLMOPT_TIMERFUNCTION); epoll reports only the sockets that are ready, so one wake-up costs
// O(ready), not O(open) as curl_multi_poll does: that is what lets one thread hold 10,000
// streams. curl's timer is a timerfd in the same epoll set. Not thread-safe: one run thread.
// Invariant: the epoll set holds exactly the sockets curl asked for, plus the timer and the
// one fd given to watch().
class SocketLoop {
 public:
  SocketLoop();  // throws std::runtime_error when epoll or timerfd cannot be created
  ~SocketLoop();
  SocketLoop(const SocketLoop&) = delete;
  SocketLoop& operator=(const SocketLoop&) = delete;

  // Connection limits: cache of idle keep-alive connections, and total open (0 = unlimited).
  void set_connection_limits(long max_cached, long max_total);

  void add(const CurlEasy& easy);     // starts the transfer
  void remove(const CurlEasy& easy);  // stops it (a no-op when not added)
  std::size_t size() const { return multi_.size(); }

  // Adds `fd` (level-triggered, readable) to the wait set, e.g. the pacer's timerfd.
  void watch(int fd);

  // Waits up to max_wait_ms for a ready socket, curl's timer or the watched fd, and lets curl
  // handle what is ready. Returns true, having driven nothing, when the watched fd is readable.
  bool wait_and_drive(int max_wait_ms);

  // The next transfer that finished, if any. The handle stays added until remove().
  std::optional<CurlDone> next_done() { return multi_.next_done(); }

 private:
  static int on_socket(CURL* easy, curl_socket_t socket, int what, void* self, void* socket_data);
  static int on_timer(CURLM* multi, long timeout_ms, void* self);
  void drive(curl_socket_t socket, int flags);

  int epoll_fd_ = -1;
  int watched_fd_ = -1;
  Pacer curl_timer_;
  // Destroyed first: removing handles and closing connections calls on_socket, which needs the
  // epoll fd and timer above still open.
  CurlMulti multi_;
};

// Raises the soft RLIMIT_NOFILE to the hard limit (every stream holds a socket) and returns
// the new soft limit.
long raise_open_file_limit();

}  // namespace kvsweep::driver
