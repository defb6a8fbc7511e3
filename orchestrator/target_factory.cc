// Builds the target a scenario names, or the embedded fleet standing in for it.
#include "orchestrator/target_factory.h"

#include "orchestrator/kube/kube_targets.h"
#include "orchestrator/sim_target.h"

namespace kvsweep::orchestrator {

std::unique_ptr<Target> make_target(const ScenarioSpec& spec, bool use_sim) {
  const std::string& kind = spec.target.kind;
  if (use_sim || kind == "sim") return std::make_unique<SimTarget>(spec);
  if (kind == "kubeai") return kube::make_kubeai_target(spec);
  if (kind == "dynamo") return kube::make_dynamo_target(spec);
  if (kind == "kubectl") return kube::make_kubectl_target(spec);
  if (kind == "endpoints") return kube::make_endpoints_target(spec);
  throw TargetError("target.kind: unknown kind \"" + kind + "\"");
}

}  // namespace kvsweep::orchestrator
