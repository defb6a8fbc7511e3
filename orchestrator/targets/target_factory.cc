// Builds the target a scenario names, or the embedded fleet standing in for it.
#include "orchestrator/targets/target_factory.h"

#include "orchestrator/targets/kube/kube_targets.h"
#include "orchestrator/targets/replicas_target.h"
#include "orchestrator/targets/sim_target.h"

namespace kvsweep::orchestrator {
namespace {

// Every kind's class implements both seams: one constructor validates for `run` and `plan`.
std::unique_ptr<PlannedTarget> make(const ScenarioSpec& spec, bool use_sim, Log log) {
  const std::string& kind = spec.target.kind;
  if (use_sim || kind == "sim") return std::make_unique<SimTarget>(spec, std::move(log));
  if (kind == "replicas") return std::make_unique<ReplicasTarget>(spec, std::move(log));
  if (kind == "kubeai") return kube::make_kubeai_target(spec, std::move(log));
  if (kind == "dynamo") return kube::make_dynamo_target(spec, std::move(log));
  if (kind == "kubectl") return kube::make_kubectl_target(spec, std::move(log));
  if (kind == "endpoints") return kube::make_endpoints_target(spec, std::move(log));
  throw TargetError("target.kind: unknown kind \"" + kind + "\"");
}

}  // namespace

std::unique_ptr<Target> make_target(const ScenarioSpec& spec, bool use_sim, Log log) {
  return make(spec, use_sim, std::move(log));
}

std::unique_ptr<TreatmentPlanner> make_planner(const ScenarioSpec& spec, bool use_sim) {
  return make(spec, use_sim, silent_log());
}

}  // namespace kvsweep::orchestrator
