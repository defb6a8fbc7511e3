// The fleet's router: picks a replica per request by the current strategy, counts in-flight.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sim/engine/block_pool.h"
#include "sim/http/backend.h"
#include "sim/http/collect_response.h"
#include "sim/http/http_exchange.h"
#include "sim/http/http_server_stats.h"
#include "sim/http/latency_histogram.h"
#include "sim/http/server_routes.h"
#include "sim/router/chwbl.h"
#include "sim/router/epp_metrics.h"
#include "sim/router/replica_health.h"
#include "sim/router/route_decider.h"
#include "sim/router/routing_strategy.h"

namespace kvsweep::sim {

struct RouterOptions {
  std::string strategy = "round-robin";  // a name from strategy_names()
  std::uint64_t seed = 1;                // seeds "random" and kv-aware sampling
  ChwblOptions chwbl;                    // "prefix-hash" parameters
  KvAwareOptions kv_aware;               // "kv-aware" parameters
  std::shared_ptr<const EppConfig> epp;  // "epp": the EndpointPickerConfig it runs
  // How often, while the strategy reads them, each replica's waiting queue and KV cache usage
  // are read (from a real server: its /metrics), as the EPP's --refresh-metrics-interval
  // (50 ms in the pinned release); the strategy sees figures up to this old.
  std::chrono::milliseconds load_refresh{50};
  std::string session_header = "x-session-id";  // "session" affinity key (any case)
  int block_size = 16;                          // request block hashes use the replicas' block size
  // true: the KV index is fed by on_kv_event (the sim's replicas). false: no events exist (real
  // upstreams); every routed request's blocks count as cached on its replica for approx_ttl.
  bool kv_events = true;
  std::chrono::seconds approx_ttl{120};  // Dynamo's approximate-mode TTL
  HealthOptions health;                  // taking dead replicas out of routing
  // How long /v1/models, /reset_prefix_cache and the proxy's /admin/restart wait for every
  // backend's answer.
  std::chrono::milliseconds fan_out_timeout{30000};
  // A routed request not ended this long after it arrived is answered 504 (nothing of its
  // answer sent yet) or cut (a stream under way), and the router stops counting it: an upstream
  // that hangs does not hold a client, or the replica's load, forever. Longer than the clients'
  // own timeouts (kvsweep's 300 s) so that theirs fire first. 0: none.
  std::chrono::milliseconds request_timeout{600000};
  // Non-empty: /admin/* answers 401 unless the request carries "Authorization: Bearer <token>"
  // (admin_auth.h). The fleet and the proxy require one when they listen beyond loopback.
  std::string admin_token;
};

// One replica as the router knows it. Neither seam is owned; both must outlive the router.
struct RoutedReplica {
  ServingBackend* serving = nullptr;
  ReplicaControl* control = nullptr;
  // "http://host:port" for a server over the network, "" in process: names it in messages.
  std::string address;
};

// Serves /v1/chat/completions and /v1/completions by handing each request to the chosen replica
// (in process for the sim, over HTTP for the proxy) and naming it on the reply (header
// x-kvsweep-replica: its index in the replica list), plus /health, /metrics and, asked of every
// replica and answered once all have: /v1/models (their lists merged) and /reset_prefix_cache
// (200 only if every replica reset, else 502 naming each and its answer), through the route
// table a replica uses too (server_routes.h); and the admin endpoints:
//   GET|POST /admin/strategy  {"strategy": name, params...}: switch at run time (kubectl patch)
//   POST /admin/restart       every replica drops its requests and caches (a redeploy); behind
//                             the proxy, every upstream resets its prefix cache, answered once
//                             all have (as /reset_prefix_cache)
//   GET|POST /admin/faults    {"replica": i, fault fields...}: fault injection (faults.h)
//   GET|POST /admin/engine    {"enable_prefix_caching": bool}: every replica's engine flags
//   GET /admin/health[?since=SEQ]  each replica's health and the events (taken out, put back)
// An admin body over 1 MiB is refused (413) before any handler reads it; /admin/strategy reads
// an epp_config before it takes the router's lock, so a slow one never holds up routing.
// Health (HealthOptions): a replica is probed every interval and taken out of routing after
// `failure_threshold` consecutive failed probes or refused connects; it is put back when it
// answers again. With every replica out, requests go to all of them as if none were. A request
// whose connect is refused (nothing of it was sent) is routed once more, to another replica.
// A routed request has a timeout of its own (RouterOptions::request_timeout).
// The decision itself, and the loads it reads, are the RouteDecider's (route_decider.h): a
// request is tokenized and hashed only when the decider asks for its tokens (needs_tokens()).
// In-flight per replica rises when a request is routed and falls when its response ends, however it
// ends (finished, error, client gone): KubeAI's counters.
// Thread contract: handle(), on_kv_event() and on_connect() may be called on any io thread (the
// fleet's and the proxy's connections run on several); the decision and everything it reads
// (loads, KV index, health, strategy parameters) are guarded by one mutex, held for a pick and
// its bookkeeping, never while a replica is called. Admin requests, probes and fan-outs run on
// `io`, the router's home (restart() too: call it there), and answer each client on its
// exchange's thread. A backend's handle() is called on the exchange's thread (a backend on
// another thread hands the exchange over, Exchange::move_to). The replicas' seams must outlive
// the router; the router must outlive the io threads' run.
class Router {
 public:
  // Throws std::invalid_argument for an unknown strategy or no replicas.
  Router(boost::asio::io_context& io, std::vector<RoutedReplica> replicas, RouterOptions options);
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  void handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange);

  // false (and no change) for an unknown name. The strategy is rebuilt with the current
  // parameters (its state, e.g. session stickiness, starts empty).
  bool set_strategy(const std::string& name);
  std::string strategy() const;
  std::vector<int> in_flight() const;
  // A KV stored/removed event of replica `replica`'s engine.
  void on_kv_event(int replica, const KvEvent& event);
  // Whether a connection to replica `replica` succeeded (HttpUpstream's connect listener): a
  // refused connect counts as a failure towards taking it out.
  void on_connect(int replica, bool ok, const std::string& why);
  // POST /admin/restart.
  void restart();
  // The counters of the server in front of this router, added to its /metrics. Set before the
  // io threads run.
  void set_http_stats(std::shared_ptr<const HttpServerStats> stats) {
    http_stats_ = std::move(stats);
  }

 private:
  struct Routing;
  struct Held;
  RouteTable make_routes();
  void route(ApiKind kind, const HttpRequest& request, std::shared_ptr<Exchange> exchange);
  // Picks a replica for `routing` and hands the request to it; a refused connect comes back
  // here once, with that replica left out.
  void send(std::shared_ptr<Routing> routing, std::shared_ptr<Exchange> exchange);
  void finish(Held& held);  // the request left its replica: its loads fall, once
  // Answers 504 (or cuts the stream) when the exchange has not ended `timeout` from now.
  void start_timeout(const std::shared_ptr<Exchange>& exchange, std::chrono::milliseconds timeout);
  std::string metrics_text() const;
  void admin_strategy(const HttpRequest& request, Exchange& exchange);
  void admin_faults(const HttpRequest& request, Exchange& exchange);
  void admin_engine(const HttpRequest& request, Exchange& exchange);
  void admin_health(const HttpRequest& request, Exchange& exchange);
  void admin_restart(const HttpRequest& request, Exchange& exchange);
  std::string strategy_json() const;
  // Sends `request` to every replica and calls `done` with their answers, in replica order.
  void fan_out(const HttpRequest& request,
               std::function<void(std::vector<CollectedResponse>)> done);
  void models(std::shared_ptr<Exchange> exchange);
  void reset_prefix_cache(std::shared_ptr<Exchange> exchange);
  // The proxy's /admin/restart: every upstream's prefix cache reset, answered once all have.
  void restart_upstreams(std::shared_ptr<Exchange> exchange);
  // "" when every answer is a 2xx, else "N of M upstreams failed: each one's answer".
  std::string fan_out_failures(const std::vector<CollectedResponse>& answers) const;
  void schedule_probes();
  void probe_all();
  // While the strategy reads the replicas' loads: every load_refresh, each replica's read.
  void schedule_load_reads();
  void read_loads();
  std::string name_of(std::size_t replica) const;  // "upstream 1 (http://...)" or "replica 1"
  StrategyParams params() const {
    return StrategyParams{options_.chwbl, options_.kv_aware, options_.epp};
  }

  boost::asio::io_context& io_;
  std::vector<RoutedReplica> replicas_;
  const std::string admin_token_;  // options_.admin_token, read without the lock
  mutable std::mutex mutex_;  // guards what follows (but routes_, which is fixed after building)
  RouterOptions options_;
  RouteDecider decider_;
  RouteTable routes_;
  Histogram predicted_overlap_;
  // Host time of each routed request's decision, parse to pick: what routing costs per request
  // on the io thread, which the replicas' streams wait behind (bench/fleet_scale_bench.cc).
  Histogram decision_seconds_;
  // llm-d's EPP's own series while the strategy is epp (epp_metrics.h), from the picker's own
  // prefix indexes.
  EppMetrics epp_metrics_;
  std::uint64_t unavailable_total_ = 0;
  ReplicaHealth health_;
  boost::asio::steady_timer probe_timer_;
  std::vector<std::uint8_t> probing_;  // per replica: a probe is out
  boost::asio::steady_timer load_timer_;
  bool load_timer_running_ = false;         // on io_ only
  std::vector<std::uint8_t> reading_load_;  // per replica: a load read is out
  std::shared_ptr<const HttpServerStats> http_stats_;
};

}  // namespace kvsweep::sim
