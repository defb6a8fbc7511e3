// What `kvsweep serve` is started with: the store, the address, the token and the limits it
// holds clients to. Read by the server (web_server.h) and the state its routes share
// (serve_context.h), which the server includes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "serve/live_monitor.h"

namespace kvsweep::serve {

// What the HTTP server allows a client (docs/serve.md, "Limits"). Requests are read whole by the
// connection gate (connection_gate.h) before a worker sees them; each connection carries one.
struct ServerLimits {
  int threads = 16;              // requests served at once; each open live stream (SSE) holds one
  int max_queued = 64;           // whole requests waiting for a worker; beyond: 503
  double header_timeout_s = 10;  // from accept to the request's last byte; then closed unanswered
  int max_connections = 256;  // open at once; beyond, the longest-waiting unfinished request goes
  double read_timeout_s = 5;  // a body larger than the gate waits for: each read this long at most
  double write_timeout_s = 10;                // a client that reads nothing for this long: closed
  std::size_t payload_max_bytes = 64 * 1024;  // a login form at most; beyond: 413
  int max_streams = 8;             // open live streams in all, below threads; beyond: 503
  int max_streams_per_client = 4;  // open live streams from one client address; beyond: 503
};

struct ServeOptions {
  std::string db_path = "kvsweep.db";
  std::string bind = "127.0.0.1";
  int port = 8765;    // 0: any free port (tests)
  std::string token;  // "" only on a loopback bind (bind_refusal); never printed
  // Host names answered besides the loopback names and `bind` (--allowed-host): a request
  // naming any other host is refused (DNS rebinding).
  std::vector<std::string> allowed_hosts;
  LiveSettings live;
  ServerLimits limits;
};

}  // namespace kvsweep::serve
