// The decisions of the pods gate and of replica discovery, on parsed pods (no kubectl here).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/targets/kube/pod_status.h"

namespace kvsweep::orchestrator::kube {

// parse_pods, with a malformed list reported as TargetError "<what>: malformed pod list: ...".
std::vector<PodState> parse_pods_or_fail(const nlohmann::json& list, const std::string& what);

// Throws TargetError "pod NAME: PROBLEM" for the first pod, not being deleted, that will not
// become Ready by itself (CrashLoopBackOff, ImagePullBackOff, ...): a gate fails at once.
void fail_on_stuck_pod(const std::vector<PodState>& pods);

// The pods that serve: Ready and not being deleted, sorted by name.
std::vector<PodState> serving_pods(const std::vector<PodState>& pods);

// Why the pods gate is still closed: "2 of 4 pods Ready (vllm-2: Pending, vllm-3: Running, not
// Ready)"; nullopt when exactly `expected` pods serve (at least one when `expected` is 0).
// Throws TargetError "pod NAME: PROBLEM" for a pod that will not become Ready by itself.
std::optional<std::string> pods_gate_reason(const std::vector<PodState>& pods, int expected);

// "http://IP:PORT" for every serving pod, in name order. PORT is `port`, or the pod's first
// containerPort when `port` is 0; a pod with neither throws TargetError naming it.
std::vector<std::string> replica_base_urls(const std::vector<PodState>& pods, int port);

}  // namespace kvsweep::orchestrator::kube
