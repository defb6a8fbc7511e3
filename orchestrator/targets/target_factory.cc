// Builds the target a scenario names, or the embedded fleet standing in for it.
#include "orchestrator/targets/target_factory.h"

#include <algorithm>

#include "orchestrator/targets/kube/kube_targets.h"
#include "orchestrator/targets/replicas_target.h"
#include "orchestrator/targets/sim_target.h"

namespace kvsweep::orchestrator {

std::unique_ptr<Target> make_target(const ScenarioSpec& spec, bool use_sim, Log log) {
  const std::string& kind = spec.target.kind;
  if (use_sim || kind == "sim") return std::make_unique<SimTarget>(spec, std::move(log));
  if (kind == "replicas") return std::make_unique<ReplicasTarget>(spec, std::move(log));
  if (kind == "kubeai") return kube::make_kubeai_target(spec, std::move(log));
  if (kind == "dynamo") return kube::make_dynamo_target(spec, std::move(log));
  if (kind == "kubectl") return kube::make_kubectl_target(spec, std::move(log));
  if (kind == "endpoints") return kube::make_endpoints_target(spec, std::move(log));
  throw TargetError("target.kind: unknown kind \"" + kind + "\"");
}

ScenarioSpec rehearsal_of(ScenarioSpec spec) {
  const SimSpec& sim = spec.target.sim;
  LoadSpec& load = spec.load;
  if (sim.duration_s > 0) {
    load.duration_s = load.duration_s > 0 ? std::min(load.duration_s, sim.duration_s) : sim.duration_s;
  }
  if (sim.num_requests > 0) {
    load.num_requests =
        load.num_requests > 0 ? std::min(load.num_requests, sim.num_requests) : sim.num_requests;
  }
  if (sim.max_tokens > 0) {
    load.max_tokens = std::min(load.max_tokens, sim.max_tokens);
    load.max_tokens_cap = sim.max_tokens;  // turns whose dataset sets their own length too
  }
  return spec;
}

}  // namespace kvsweep::orchestrator
