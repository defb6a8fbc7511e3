// Router strategies behind one interface: pick a replica from a request's key and the loads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/chwbl.h"

namespace kvsweep::sim {

// What a strategy may see of a request: no HTTP, only what KubeAI's balancer sees.
struct RouteQuery {
  // Text of the first message with role "user" (system prompt ignored), text parts
  // concatenated; empty when there is none. Prefix strategies cut their own key from it.
  std::string_view first_user_message;
  std::span<const int> in_flight;  // per replica, counted by the router; size = replicas
};

// Called on the router's io thread only; a strategy may keep state (round-robin cursor, RNG).
class RoutingStrategy {
 public:
  virtual ~RoutingStrategy() = default;
  virtual int pick(const RouteQuery& query) = 0;  // index into query.in_flight
};

// "random" (what a Kubernetes Service does), "round-robin", "least-load", "prefix-hash".
std::vector<std::string> strategy_names();

// The strategy called `name` for `replicas` replicas, or nullptr if the name is unknown.
// `seed` seeds "random"; `chwbl` configures "prefix-hash".
std::unique_ptr<RoutingStrategy> make_strategy(const std::string& name, int replicas,
                                               std::uint64_t seed, ChwblOptions chwbl = {});

// Names the ring hashes, as KubeAI hashes pod names: "replica-0", "replica-1", ...
std::string replica_name(int index);

}  // namespace kvsweep::sim
