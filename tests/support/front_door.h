// The fake API server's public port: a small acceptor on 127.0.0.1 that reads each
// connection's request head and either hands the connection to a taker (the WebSocket of
// `kubectl exec`, which cpp-httplib cannot serve: it never gives up a socket after an Upgrade)
// or relays its bytes both ways to the HTTP server on an internal port. One thread per
// connection; everything stops and is joined in the destructor.
#pragma once

#include <atomic>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace kvsweep::testing {

// A request's first line and headers, as read off the connection.
struct RequestHead {
  std::string method;
  std::string target;  // "/api/v1/namespaces/default/pods/p/exec?command=ls&stdout=true"
  std::string path;    // the target without its query
  std::string query;   // "" when none
  std::map<std::string, std::string> headers;  // names lowercased
  std::string header(const std::string& lowercase_name) const;
};

class FrontDoor {
 public:
  // Called on the connection's thread with the head read. Returns false to have the
  // connection relayed to the backend; true when it took the connection, which it serves
  // (reading `rest`, the bytes already read past the head, first) until done; the front door
  // closes `fd` after. A taker should return soon once `stopping` is set.
  using Taker = std::function<bool(const RequestHead& head, int fd, std::string rest,
                                   const std::atomic<bool>& stopping)>;

  // Binds 127.0.0.1 on an ephemeral port; throws std::runtime_error when it cannot.
  FrontDoor(int backend_port, Taker taker);
  ~FrontDoor();  // closes every connection and joins every thread
  FrontDoor(const FrontDoor&) = delete;
  FrontDoor& operator=(const FrontDoor&) = delete;

  int port() const { return port_; }

 private:
  void accept_loop();
  void serve(int fd);
  void relay(int client, const std::string& head_bytes);

  struct Connection {
    std::thread thread;
    std::atomic<bool> done{false};
  };

  int backend_port_;
  Taker taker_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::list<Connection> connections_;
  std::thread acceptor_;
};

// Writes all of `data` to a socket (MSG_NOSIGNAL). False when the peer is gone.
bool send_all(int fd, const char* data, size_t size);

}  // namespace kvsweep::testing
