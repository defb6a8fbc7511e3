// The fleet's router: picks a replica per request by the current strategy, counts in-flight.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/backend.h"
#include "sim/chwbl.h"
#include "sim/http_exchange.h"
#include "sim/routing_strategy.h"

namespace kvsweep::sim {

struct RouterOptions {
  std::string model = "sim-model";       // answered on /v1/models
  std::string strategy = "round-robin";  // a name from strategy_names()
  std::uint64_t seed = 1;                // seeds "random"
  ChwblOptions chwbl;                    // "prefix-hash" parameters
};

// Serves /v1/chat/completions by handing each request to the chosen backend in process (no
// second HTTP hop), plus /v1/models, /health, /metrics, /reset_prefix_cache and
// GET|POST /admin/strategy (the run-time switch the runner uses as it would `kubectl patch`).
// In-flight per replica rises when a request is routed and falls when its response ends,
// however it ends (finished, error, client gone): KubeAI's counters.
// Thread contract: the io thread only. Backends are not owned and must outlive the router.
class Router {
 public:
  // Throws std::invalid_argument for an unknown strategy or no backends.
  Router(std::vector<Backend*> backends, RouterOptions options);

  void handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange);

  // false (and no change) for an unknown name.
  bool set_strategy(const std::string& name);
  const std::string& strategy() const { return strategy_name_; }
  const std::vector<int>& in_flight() const { return in_flight_; }

 private:
  void route(const HttpRequest& request, std::shared_ptr<Exchange> exchange);
  void admin_strategy(const HttpRequest& request, Exchange& exchange);

  std::vector<Backend*> backends_;
  RouterOptions options_;
  std::string strategy_name_;
  std::unique_ptr<RoutingStrategy> strategy_;
  std::vector<int> in_flight_;
  std::map<std::string, std::vector<std::uint64_t>> decisions_;  // strategy -> per replica
  std::int64_t started_unix_s_ = 0;
};

}  // namespace kvsweep::sim
