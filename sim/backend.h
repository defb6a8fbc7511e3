// The seam between the router and whatever serves a routed request.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "sim/faults.h"
#include "sim/http_exchange.h"

namespace kvsweep::sim {

// A replica as the router sees it: a simulated one in process (ReplicaServer) or a real
// OpenAI-compatible server over HTTP (HttpUpstream, for kvsweep proxy).
// Thread contract: called on the io thread; the exchange is answered on it too.
class Backend {
 public:
  virtual ~Backend() = default;
  // Answers the request through the exchange (now or later), as if it had arrived directly.
  virtual void handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) = 0;
  // Forgets cached prefixes not in use; fire and forget.
  virtual void reset_prefix_cache() = 0;
  // A redeploy: drops every request in flight and all cached state. Upstreams that cannot be
  // restarted from here only reset their prefix cache.
  virtual void restart() { reset_prefix_cache(); }
  // false while the backend is known to be down: the router answers 502 instead of routing.
  virtual bool available() const { return true; }
  // A health probe (what GET /health tells): done(ok, why not) once, on the io thread, within
  // `timeout`. In process, a replica is healthy unless it is down.
  virtual void check_health(std::chrono::milliseconds /*timeout*/,
                            std::function<void(bool ok, std::string why)> done) {
    if (available()) return done(true, "");
    done(false, "down");
  }
  // Told whether each connection to a backend over the network succeeded (a refused connect is
  // the first sign of a dead server); backends in process never call it.
  virtual void set_connect_listener(std::function<void(bool ok, const std::string& why)>) {}
  // "http://host:port" for a backend over the network, "" in process: names it in messages.
  virtual std::string address() const { return ""; }
  // vLLM --[no-]enable-prefix-caching at run time (engine.h; a change resets the prefix
  // cache). false (and no change) when the backend cannot be reconfigured from here; then
  // prefix_caching() is nullopt (unknown).
  virtual bool set_prefix_caching(bool) { return false; }
  virtual std::optional<bool> prefix_caching() const { return std::nullopt; }
  // Fault injection; false (and no change) when the backend does not support it.
  virtual bool set_faults(const FaultOptions&) { return false; }
  virtual FaultOptions faults() const { return {}; }
};

}  // namespace kvsweep::sim
