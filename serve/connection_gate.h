// The guard in front of serve's workers: accepted connections wait here, on one thread and no
// worker, until their whole request (header, and a body up to the payload limit) has arrived
// within a deadline; only then does a worker take the connection. Slow and silent clients are
// closed at the deadline having held a descriptor only.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/unique_fd.h"

namespace kvsweep::serve {

struct GateLimits {
  double request_deadline_s = 10;          // from accept to the request's last byte
  std::size_t max_connections = 256;       // waiting here, queued and being served, in all
  std::size_t threads = 16;                // workers serving complete requests
  std::size_t max_queued = 64;             // complete requests waiting for a worker; beyond: 503
  std::size_t max_request_line = 8192;     // beyond: 414
  std::size_t max_header_bytes = 16384;    // request line and headers; beyond: 431
  std::size_t max_body_bytes = 64 * 1024;  // a declared Content-Length beyond: 413
};

// What a complete request hands a worker: the socket (the worker closes it) and the bytes the
// gate already read from it (the whole request, and anything the client sent after it).
using ServeConnection = std::function<void(int fd, std::string already_read)>;

// Thread contract: admit() from any thread (the accept loop); stop() from the owner. Requests
// are served on the gate's own workers.
class ConnectionGate {
 public:
  ConnectionGate(GateLimits limits, ServeConnection serve);
  ~ConnectionGate();
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  // Takes ownership of an accepted socket. At max_connections the connection that has waited
  // longest for its request is closed to make room; when none is waiting (every connection is
  // a request being served), the new one is answered 503 and closed.
  void admit(int fd);
  // Closes every waiting connection, lets the workers finish, joins the threads; idempotent.
  void stop();

  std::size_t open_connections() const;

 private:
  struct Waiting {
    std::string bytes;
    double deadline = 0;     // steady seconds
    bool draining = false;   // refused with an answer: read and dropped until EOF or deadline
    std::uint64_t turn = 0;  // admission order: the accept loop's, which descriptors are not
  };
  void run();
  void take_arrivals(double now);
  void on_readable(int fd, Waiting& waiting, double now);
  // true when the request in `bytes` is whole; may refuse it (answer + drain) instead.
  bool complete(int fd, Waiting& waiting);
  void refuse(int fd, Waiting& waiting, int status, const char* reason);
  void dispatch(int fd, std::string bytes);
  void close_waiting(int fd);
  void work();

  const GateLimits limits_;
  const ServeConnection serve_;
  UniqueFd wake_fd_;          // eventfd: arrivals and stop
  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable job_ready_;
  std::vector<int> arrivals_;
  std::map<int, Waiting> waiting_;  // gate thread only, but counted under the mutex
  std::deque<std::pair<int, std::string>> jobs_;
  std::size_t serving_ = 0;      // jobs taken by a worker and not yet done
  std::uint64_t next_turn_ = 0;  // gate thread only
  bool stopping_ = false;
  std::thread gate_thread_;
  std::vector<std::thread> workers_;
};

}  // namespace kvsweep::serve
