// The targets driven through the real kubectl binary, and the plain-endpoints target.
//
// Each constructor reads the parts of the scenario it needs and throws TargetError when a
// factor it must apply has a level it cannot apply ("factor strategy: KubeAI has no
// round-robin strategy; it has LeastLoad and PrefixHash"), so a bad scenario fails before
// anything is touched. None of them runs a command before start(). Each logs its kubectl argv,
// HTTP calls and gate polls at debug level on `log`.
#pragma once

#include <memory>

#include "common/log.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/targets/planned_target.h"

namespace kvsweep::orchestrator::kube {

// KubeAI Model `target.resource`. Factors: strategy (LeastLoad | PrefixHash), mean_load_factor,
// prefix_char_length (merge-patched into spec.loadBalancing), replication (immutable: a change
// deletes and recreates the Model from its current object). Ready: .status.replicas.ready =
// target.replicas; pods: default selector "model=<resource>".
std::unique_ptr<PlannedTarget> make_kubeai_target(const ScenarioSpec& spec, Log log = silent_log());

// Dynamo DynamoGraphDeployment `target.resource`. Factor strategy sets DYN_ROUTER_MODE on
// spec.services.<frontend_service>.envs (a redeploy), optionally restarting worker pods. Ready:
// DGD condition Ready=True, Ready worker pods = target.replicas, and every frontend pod carries
// the new DYN_ROUTER_MODE.
std::unique_ptr<PlannedTarget> make_dynamo_target(const ScenarioSpec& spec, Log log = silent_log());

// llm-d: InferencePool `target.pool` and its endpoint picker. Factor strategy names an EPP
// configuration (the scenario's `epp:`): it is written into the ConfigMap the EPP reads, then
// the EPP Deployment is rolled (it reads its config at start) and waited for: observedGeneration,
// every Ready EPP pod of the new template, the old ones gone, settled. The model servers (the
// pool's selector) are untouched; a cold cell resets their caches and rolls the EPP again.
std::unique_ptr<PlannedTarget> make_llmd_target(const ScenarioSpec& spec, Log log = silent_log());

// Generic: every factor level in target.levels gives kubectl argv lists to apply and to wait.
std::unique_ptr<PlannedTarget> make_kubectl_target(const ScenarioSpec& spec,
                                                   Log log = silent_log());

// No apply: each level of one factor gives a base URL (a raw Service vs the gateway).
std::unique_ptr<PlannedTarget> make_endpoints_target(const ScenarioSpec& spec,
                                                     Log log = silent_log());

}  // namespace kvsweep::orchestrator::kube
