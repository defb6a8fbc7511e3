// The embedded simulated fleet: N vLLM-like replicas behind a router, served over loopback HTTP.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/http/faults.h"
#include "sim/http/http_server.h"
#include "sim/router/replica_health.h"
#include "sim/router/routing_strategy.h"

namespace kvsweep::sim {

// The most replicas one fleet runs: all of them share this process's one event-loop thread and
// take two descriptors each; 256 is far past any fleet kvsweep rehearses (the seeds use 2 to 8).
inline constexpr int kMaxReplicas = 256;

struct FleetOptions {
  int replicas = 4;
  std::string profile = "demo";          // a name from profile_names()
  std::string model = "sim-model";       // served model id (/v1/models)
  std::string strategy = "round-robin";  // a name from strategy_names()
  std::uint64_t seed = 1;                // replica i is seeded with seed + i
  std::string host = "127.0.0.1";        // loopback unless told otherwise
  // Event-loop threads for the whole fleet: replica i lives on thread i % io_threads (its
  // engine and its own port), the router's connections are spread over all of them, and the
  // router's decision is shared behind one lock (docs/sim.md, Threads).
  int io_threads = 1;
  // Searched for `profile` before KVSWEEP_PROFILE_PATH and the profiles built into the binary.
  std::vector<std::string> profile_dirs;
  StrategyParams strategy_params;               // prefix-hash (KubeAI) and kv-aware (Dynamo) knobs
  std::string session_header = "x-session-id";  // the "session" strategy's affinity key
  std::vector<FaultOptions> faults;             // faults[i] for replica i; absent: healthy
  HealthOptions health;                         // the router's probes; a dead replica is taken out
  // vLLM --[no-]enable-prefix-caching on every replica; unset: the profile's setting. Also
  // switchable at run time: POST /admin/engine on the router.
  std::optional<bool> enable_prefix_caching;
  int router_port = 0;        // 0: an ephemeral port
  int replica_base_port = 0;  // 0: ephemeral; otherwise replica i on base + i
  // Timeouts, the connection cap and the per-stream send queue of every listener (router and
  // replicas); connection_contexts is the fleet's to set.
  HttpServerOptions server;
  // /admin/* on the router needs "Authorization: Bearer <token>" when set; required when host
  // is not a loopback address (admin_auth.h).
  std::string admin_token;
};

// Owns the replicas, the router and the event-loop threads. Not copyable.
// Thread contract: start()/stop()/urls are called from one controlling thread; everything
// else happens on the fleet's own io threads.
class Fleet {
 public:
  // Throws std::invalid_argument naming the bad field (unknown profile or strategy,
  // replicas outside 1 to kMaxReplicas, io_threads < 1, ports past 65535, a host beyond
  // loopback without admin_token) before anything is bound.
  explicit Fleet(FleetOptions options);
  ~Fleet();  // stop()s if running
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  // Binds the router and every replica on ephemeral ports of options.host and starts serving.
  void start();
  // Closes listeners, ends open streams, joins threads. Idempotent.
  void stop();

  std::string router_url() const;                 // "http://127.0.0.1:PORT"
  std::vector<std::string> replica_urls() const;  // one per replica, same form

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::vector<std::string> strategy_names();  // "random", "round-robin", "least-load", "prefix-hash"
std::vector<std::string> profile_names();   // "demo", "h100-llama3.1-8b", ...

}  // namespace kvsweep::sim
