// Every target kind kvsweep runs, with the factors each applies: the one list.
#include "orchestrator/targets/target_kinds.h"

#include <stdexcept>

#include "orchestrator/targets/router_admin_client.h"

namespace kvsweep::orchestrator {
namespace {

// "strategy", then kvsweep's router knobs under KubeAI's and Dynamo's names.
std::vector<std::string> router_factors(std::vector<std::string> first) {
  for (const auto& [factor, param] : router_knobs()) first.push_back(factor);
  return first;
}

TargetKinds make_kinds() {
  // A factor is deploy-time where changing it restarts or recreates servers (Dynamo's router
  // mode, KubeAI's immutable replication, a generic kubectl apply, the embedded fleet's engine
  // setting and replica count, which mimic a redeploy) and run-time where the change is a live
  // patch (KubeAI's strategy and its knobs, kvsweep's router) or only another URL (endpoints).
  TargetKinds kinds;
  kinds.push_back({"sim",
                   router_factors({"strategy", "prefix_caching"}),
                   false,
                   FactorPhase::kRun,
                   {"prefix_caching", "replication"}});
  // The same fleet predicted in virtual time (--target predict): it applies what sim applies.
  kinds.push_back({"predict",
                   router_factors({"strategy", "prefix_caching"}),
                   false,
                   FactorPhase::kRun,
                   {"prefix_caching", "replication"}});
  // kvsweep's router before real servers: it cannot reconfigure the engines (prefix_caching).
  kinds.push_back({"replicas", router_factors({"strategy"}), false, FactorPhase::kRun, {}});
  kinds.push_back({"kubeai",
                   {"strategy", "mean_load_factor", "prefix_char_length", "replication"},
                   false,
                   FactorPhase::kRun,
                   {"replication"}});
  kinds.push_back({"dynamo", {"strategy"}, false, FactorPhase::kDeploy, {}});
  // llm-d: a strategy level names an EPP configuration; applying it rolls the endpoint picker
  // only, never the model servers, so it is run-time (a stand-in must not restart its replicas).
  kinds.push_back({"llmd", {"strategy"}, false, FactorPhase::kRun, {}});
  kinds.push_back({"kubectl", {}, true, FactorPhase::kDeploy, {}});
  kinds.push_back({"endpoints", {}, true, FactorPhase::kRun, {}});
  return kinds;
}

}  // namespace

const TargetKinds& target_kinds() {
  static const TargetKinds kinds = make_kinds();
  return kinds;
}

const TargetKind& target_kind(const std::string& name) {
  for (const auto& kind : target_kinds()) {
    if (kind.name == name) return kind;
  }
  throw std::out_of_range("no target kind \"" + name + "\"");
}

}  // namespace kvsweep::orchestrator
