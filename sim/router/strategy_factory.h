// Every routing strategy by name: the router's own (routing_strategy.h) and llm-d's endpoint
// picker (epp_scheduler.h). A unit of its own so that the strategies' interface does not include
// the EPP, which implements it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "sim/router/routing_strategy.h"

namespace kvsweep::sim {

// The strategy called `name` for `replicas` replicas, or nullptr if the name is unknown (or is
// "epp" without a config).
// `seed` seeds "random"; `chwbl` configures "prefix-hash".
std::unique_ptr<RoutingStrategy> make_strategy(const std::string& name, int replicas,
                                               std::uint64_t seed, ChwblOptions chwbl = {});
std::unique_ptr<RoutingStrategy> make_strategy(const std::string& name, int replicas,
                                               std::uint64_t seed, const StrategyParams& params);

}  // namespace kvsweep::sim
