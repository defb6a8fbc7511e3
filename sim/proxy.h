// kvsweep proxy: the fleet's router in front of real OpenAI-compatible servers.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/http/http_server.h"
#include "sim/router/replica_health.h"
#include "sim/router/routing_strategy.h"

namespace kvsweep::sim {

struct ProxyOptions {
  // "http://host:port" each, in replica order: replica i (header x-kvsweep-replica: i, label
  // replica="i" in /metrics) is upstreams[i].
  std::vector<std::string> upstreams;
  std::string strategy = "least-load";  // a name from strategy_names()
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: an ephemeral port
  std::uint64_t seed = 1;
  StrategyParams strategy_params;
  std::string session_header = "x-session-id";
  // No KV events come from real servers: kv-aware uses the router's own routing history,
  // each routed request's blocks counted as cached on its upstream for this long (Dynamo's
  // approximate mode). Blocks are cut with the sim's tokenizer: an approximation of the real
  // server's tokens that only has to be consistent with itself.
  std::chrono::seconds approx_ttl{120};
  int block_size = 16;
  HealthOptions health;  // probes of each upstream's /health; a dead one is taken out
  // A routed request not ended by then is answered 504 or cut (RouterOptions::request_timeout).
  std::chrono::milliseconds request_timeout{600000};
  // Event-loop threads: client connections take turns over them, and each relays its upstream
  // request on its own thread; the routing decision is shared behind one lock.
  int io_threads = 1;
  // Timeouts, the connection cap and the per-stream send queue (a client that does not read
  // stops the relay from its upstream, then times out); connection_contexts is the proxy's.
  HttpServerOptions server;
  // /admin/* needs "Authorization: Bearer <token>" when set; required when host is not a
  // loopback address (admin_auth.h).
  std::string admin_token;
};

// Owns the event-loop threads, the upstream backends, the router and its listener.
class Proxy {
 public:
  // Throws std::invalid_argument naming the bad field (an upstream URL, the strategy,
  // io_threads < 1, a host beyond loopback without admin_token).
  explicit Proxy(ProxyOptions options);
  ~Proxy();
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  void start();
  void stop();  // idempotent
  std::string url() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvsweep::sim
