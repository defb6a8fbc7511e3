// The seams between the router and a replica: serving requests, and controlling the replica.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "sim/http/faults.h"
#include "sim/http/http_exchange.h"

namespace kvsweep::sim {

// A model server's load as its /metrics shows it: vllm:num_requests_waiting and the KV cache
// usage gauge (vllm:kv_cache_usage_perc, 0..1).
struct BackendLoad {
  int waiting = 0;
  double kv_usage = 0;
};

// A replica as the router sends it requests: a simulated one in process (ReplicaServer) or a
// real OpenAI-compatible server over HTTP (HttpUpstream, for kvsweep proxy).
// Thread contract: handle() is called on the exchange's thread (its home, Exchange::home()) and
// check_health() on the router's; each answers there, now or later. A backend living on another
// io thread hands the exchange over (Exchange::move_to) and posts its answers back
// (sim/pinned_replica.h). The backend must outlive every request it was handed.
class ServingBackend {
 public:
  virtual ~ServingBackend() = default;
  // Answers the request through the exchange (now or later), as if it had arrived directly.
  virtual void handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) = 0;
  // The router's way in: as handle(), except that when the replica cannot even be connected to
  // (nothing of the request was sent), `refused` gets the exchange back untouched, with why,
  // instead of a 502, so that the router can send it elsewhere. A replica in process is never
  // refused a connect: the default is handle().
  using Refused = std::function<void(std::shared_ptr<Exchange> exchange, std::string why)>;
  virtual void handle_routed(const HttpRequest& request, std::shared_ptr<Exchange> exchange,
                             Refused /*refused*/) {
    handle(request, std::move(exchange));
  }
  // A health probe (what GET /health tells): done(ok, why not) exactly once, within `timeout`.
  virtual void check_health(std::chrono::milliseconds timeout,
                            std::function<void(bool ok, std::string why)> done) = 0;
  // What llm-d's endpoint picker scrapes from a model server: requests waiting and the KV cache
  // in use (0..1). done(...) exactly once, on the router's thread as check_health; nullopt
  // when this backend cannot tell (the default).
  virtual void read_load(std::chrono::milliseconds /*timeout*/,
                         std::function<void(std::optional<BackendLoad>)> done) {
    done(std::nullopt);
  }
};

// What can be switched on a replica at run time. nullopt: this replica cannot be switched
// from here (a real server is configured by its own command line).
struct ReplicaSettings {
  // vLLM --[no-]enable-prefix-caching (engine.h; a change resets the prefix cache).
  std::optional<bool> prefix_caching;
  std::optional<FaultOptions> faults;  // fault injection (faults.h)
};

// A replica as the router's admin and its routing act on it.
// Thread contract: the router's io thread (available() from any of the fleet's); each call takes
// effect before it returns.
class ReplicaControl {
 public:
  virtual ~ReplicaControl() = default;
  // false while the replica is known to be down: the router answers 502 instead of routing.
  virtual bool available() const = 0;
  // A redeploy: drops every request in flight and all cached state. A real server, which
  // cannot be restarted from here, only resets its prefix cache.
  virtual void restart() = 0;
  virtual ReplicaSettings settings() const = 0;
  // Applies the fields of `next` that are set. false, and no change at all, when one of them
  // cannot be switched on this replica (settings() has it nullopt).
  virtual bool apply(const ReplicaSettings& next) = 0;
};

}  // namespace kvsweep::sim
