// Builds the target a scenario names, or the embedded fleet standing in for it.
#include "orchestrator/targets/target_factory.h"

#include <stdexcept>

#include "common/error_kinds.h"
#include "orchestrator/targets/kube/kube_targets.h"
#include "orchestrator/targets/replicas_target.h"
#include "orchestrator/targets/sim_target.h"

namespace kvsweep::orchestrator {
namespace {

// Every kind's class implements both seams: one constructor validates for `run` and `plan`.
std::unique_ptr<PlannedTarget> make(const ScenarioSpec& spec, const std::vector<CellPlan>& plan,
                                    bool use_sim, Log log) {
  const std::string& kind = spec.target.kind;
  if (use_sim || kind == "sim") return std::make_unique<SimTarget>(spec, plan, std::move(log));
  if (kind == "replicas") return std::make_unique<ReplicasTarget>(spec, std::move(log));
  if (kind == "kubeai") return kube::make_kubeai_target(spec, std::move(log));
  if (kind == "dynamo") return kube::make_dynamo_target(spec, std::move(log));
  if (kind == "llmd") return kube::make_llmd_target(spec, std::move(log));
  if (kind == "kubectl") return kube::make_kubectl_target(spec, std::move(log));
  if (kind == "endpoints") return kube::make_endpoints_target(spec, std::move(log));
  throw TargetError("target.kind: unknown kind \"" + kind + "\"");
}

}  // namespace

std::unique_ptr<Target> make_target(const ScenarioSpec& spec, const std::vector<CellPlan>& plan,
                                    bool use_sim, Log log) {
  return make(spec, plan, use_sim, std::move(log));
}

std::unique_ptr<TreatmentPlanner> make_planner(const ScenarioSpec& spec,
                                               const std::vector<CellPlan>& plan, bool use_sim) {
  return make(spec, plan, use_sim, silent_log());
}

std::unique_ptr<Target> build_target(const ScenarioSpec& spec, const std::vector<CellPlan>& plan,
                                     const std::string& override_kind, const Log& log) {
  if (override_kind == "predict") return build_predict_target(spec, plan, 0, log);
  try {
    return make_target(spec, plan, override_kind == "sim", log);
  } catch (const TargetError& e) {
    throw UsageError(spec.path + ": " + e.what());
  }
}

std::unique_ptr<TreatmentPlanner> build_planner(const ScenarioSpec& spec,
                                                const std::vector<CellPlan>& plan,
                                                const std::string& override_kind) {
  if (override_kind == "predict") return build_predict_target(spec, plan, 0, silent_log());
  try {
    return make_planner(spec, plan, override_kind == "sim");
  } catch (const TargetError& e) {
    throw UsageError(spec.path + ": " + e.what());
  }
}

std::unique_ptr<PredictTarget> build_predict_target(const ScenarioSpec& spec,
                                                    const std::vector<CellPlan>& plan,
                                                    double network_latency_s, const Log& log) {
  try {
    return std::make_unique<PredictTarget>(spec, plan, network_latency_s, log);
  } catch (const TargetError& e) {
    throw UsageError(spec.path + ": " + e.what());
  }
}

}  // namespace kvsweep::orchestrator
