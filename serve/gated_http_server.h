// cpp-httplib's server behind serve's connection gate: httplib accepts, the gate waits for each
// request whole, and a worker then lets httplib route it and write the answer, one request per
// connection. So no worker ever waits for a client to send (httplib 0.11's read timeout is per
// read: a client trickling a byte a second would otherwise hold a worker for good).
#pragma once

#include <httplib.h>

#include <memory>

#include "serve/connection_gate.h"

namespace kvsweep::serve {

// Thread contract: as httplib::Server; start_gate() before listen_after_bind(), stop_gate()
// after stop() returned from the listening thread.
class GatedHttpServer : public httplib::Server {
 public:
  GatedHttpServer();
  ~GatedHttpServer() override;

  // Workers, deadlines and bounds: the gate's (read and write timeouts: httplib's setters).
  void start_gate(const GateLimits& limits);
  void stop_gate();
  std::size_t open_connections() const;
  // After binding: the kernel's queue of connections not yet accepted, for `backlog`.
  // httplib listens with a backlog of 5; a burst of clients beyond it has its SYNs dropped and
  // retried a second or more later, so a normal request arriving in such a burst would wait.
  void widen_backlog(int backlog);

 private:
  // httplib's accept loop hands every accepted socket here (through an inline task queue):
  // it goes to the gate, never to a worker directly.
  bool process_and_close_socket(int sock) override;
  // On a worker: httplib reads the request from what the gate read, routes it and answers.
  void serve(int fd, std::string already_read);

  std::unique_ptr<ConnectionGate> gate_;
};

}  // namespace kvsweep::serve
