// Every routing strategy by name.
#include "sim/router/strategy_factory.h"

#include "sim/router/epp_scheduler.h"

namespace kvsweep::sim {

std::unique_ptr<RoutingStrategy> make_strategy(const std::string& name, int replicas,
                                               std::uint64_t seed, ChwblOptions chwbl) {
  StrategyParams params;
  params.chwbl = chwbl;
  return make_strategy(name, replicas, seed, params);
}

std::unique_ptr<RoutingStrategy> make_strategy(const std::string& name, int replicas,
                                               std::uint64_t seed, const StrategyParams& params) {
  // A configuration with parts the router does not model is the real EPP's only.
  if (name == "epp") {
    if (!params.epp || !params.epp->unmodelled.empty()) return nullptr;
    return std::make_unique<EppStrategy>(params.epp, replicas, seed);
  }
  return make_builtin_strategy(name, replicas, seed, params);
}

}  // namespace kvsweep::sim
