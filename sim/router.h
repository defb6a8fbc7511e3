// The fleet's router: picks a replica per request by the current strategy, counts in-flight.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/backend.h"
#include "sim/block_pool.h"
#include "sim/chwbl.h"
#include "sim/collect_response.h"
#include "sim/http_exchange.h"
#include "sim/kv_index.h"
#include "sim/latency_histogram.h"
#include "sim/replica_health.h"
#include "sim/routing_strategy.h"

namespace kvsweep::sim {

struct RouterOptions {
  std::string strategy = "round-robin";         // a name from strategy_names()
  std::uint64_t seed = 1;                       // seeds "random" and kv-aware sampling
  ChwblOptions chwbl;                           // "prefix-hash" parameters
  KvAwareOptions kv_aware;                      // "kv-aware" parameters
  std::string session_header = "x-session-id";  // "session" affinity key (any case)
  int block_size = 16;                          // request block hashes use the replicas' block size
  // true: the KV index is fed by on_kv_event (the sim's replicas). false: no events exist (real
  // upstreams); every routed request's blocks count as cached on its replica for approx_ttl.
  bool kv_events = true;
  std::chrono::seconds approx_ttl{120};  // Dynamo's approximate-mode TTL
  HealthOptions health;                  // taking dead replicas out of routing
  // How long /v1/models and /reset_prefix_cache wait for every backend's answer.
  std::chrono::milliseconds fan_out_timeout{30000};
};

// "unknown strategy "prefix_hash"; did you mean "prefix-hash"?; valid: ..."
std::string unknown_strategy_message(const std::string& name);

// Serves /v1/chat/completions and /v1/completions by handing each request to the chosen backend
// (in process for the sim, over HTTP for the proxy) and naming it on the reply (header
// x-kvsweep-replica: its index in the backend list), plus /health, /metrics and, asked of every
// backend and answered once all have: /v1/models (their lists merged) and /reset_prefix_cache
// (200 only if every backend reset, else 502 naming each and its answer); and the admin
// endpoints:
//   GET|POST /admin/strategy  {"strategy": name, params...}: switch at run time (kubectl patch)
//   POST /admin/restart       every backend drops its requests and caches (a redeploy)
//   GET|POST /admin/faults    {"replica": i, fault fields...}: fault injection (faults.h)
//   GET|POST /admin/engine    {"enable_prefix_caching": bool}: every backend's engine flags
//   GET /admin/health[?since=SEQ]  each replica's health and the events (taken out, put back)
// Health (HealthOptions): a replica is probed every interval and taken out of routing after
// `failure_threshold` consecutive failed probes or refused connects; it is put back when it
// answers again. With every replica out, requests go to all of them as if none were.
// In-flight per replica rises when a request is routed and falls when its response ends,
// however it ends (finished, error, client gone): KubeAI's counters.
// Thread contract: the io thread only (probes start when `io` runs). Backends are not owned and
// must outlive the router; the router must outlive the io_context's run.
class Router {
 public:
  // Throws std::invalid_argument for an unknown strategy or no backends.
  Router(boost::asio::io_context& io, std::vector<Backend*> backends, RouterOptions options);
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  void handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange);

  // false (and no change) for an unknown name. The strategy is rebuilt with the current
  // parameters (its state, e.g. session stickiness, starts empty).
  bool set_strategy(const std::string& name);
  const std::string& strategy() const { return strategy_name_; }
  const std::vector<int>& in_flight() const { return in_flight_; }
  const ReplicaHealth& health() const { return health_; }
  // A KV stored/removed event of replica `replica`'s engine.
  void on_kv_event(int replica, const KvEvent& event) { index_.apply(replica, event); }
  // POST /admin/restart.
  void restart();

 private:
  void route(const HttpRequest& request, std::shared_ptr<Exchange> exchange);
  void admin_strategy(const HttpRequest& request, Exchange& exchange);
  void admin_faults(const HttpRequest& request, Exchange& exchange);
  void admin_engine(const HttpRequest& request, Exchange& exchange);
  void admin_health(const HttpRequest& request, Exchange& exchange);
  std::string strategy_json() const;
  // Sends `request` to every backend and calls `done` with their answers, in backend order.
  void fan_out(const HttpRequest& request,
               std::function<void(std::vector<CollectedResponse>)> done);
  void models(std::shared_ptr<Exchange> exchange);
  void reset_prefix_cache(std::shared_ptr<Exchange> exchange);
  void schedule_probes();
  void probe_all();
  std::string name_of(std::size_t replica) const;  // "upstream 1 (http://...)" or "replica 1"

  boost::asio::io_context& io_;
  std::vector<Backend*> backends_;
  RouterOptions options_;
  std::string strategy_name_;
  std::unique_ptr<RoutingStrategy> strategy_;
  std::vector<int> in_flight_;
  std::vector<std::int64_t> active_blocks_;   // blocks of routed requests not yet ended
  std::vector<std::int64_t> prefill_tokens_;  // routed prompt tokens not yet answered
  KvIndex index_;
  Histogram predicted_overlap_;
  // Host time of each routed request's decision, parse to pick: what routing costs per request
  // on the io thread, which the replicas' streams wait behind (bench/fleet_scale_bench.cc).
  Histogram decision_seconds_;
  std::uint64_t unavailable_total_ = 0;
  std::map<std::string, std::vector<std::uint64_t>> decisions_;  // strategy -> per replica
  ReplicaHealth health_;
  boost::asio::steady_timer probe_timer_;
  std::vector<std::uint8_t> probing_;  // per replica: a probe is out
};

}  // namespace kvsweep::sim
