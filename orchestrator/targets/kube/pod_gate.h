// The decisions of the pods gate and of replica discovery, on parsed pods (no kubectl here).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/targets/kube/pod_status.h"

namespace kvsweep::orchestrator::kube {

// What an apply is expected to do to the pods the gates count, known before it runs.
enum class PodChange {
  // Nothing restarts (a KubeAI loadBalancing patch, nothing to apply): the pods gate opens at
  // the first look that finds the pods settled.
  kNone,
  // Every pod is replaced (Dynamo's worker restart, a KubeAI Model recreated, a cold restart):
  // only pods created after the apply count, and they must stay settled for the settle period.
  kReplaces,
  // Pods may roll (a generic kubectl apply): they must stay settled for the settle period,
  // long enough for an operator that acts late to be seen acting.
  kUnknown,
};

// The uids of the pods there before an apply: a pod not among them was created after it.
using PodUids = std::set<std::string>;

// parse_pods, with a malformed list reported as TargetError "<what>: malformed pod list: ...".
std::vector<PodState> parse_pods_or_fail(const nlohmann::json& list, const std::string& what);

// Throws TargetError "pod NAME: PROBLEM" for the first pod, not being deleted and not in
// `exempt` (pods from before a change that replaces them), that will not become Ready by
// itself (CrashLoopBackOff, ImagePullBackOff, ...): a gate fails at once.
void fail_on_stuck_pod(const std::vector<PodState>& pods, const PodUids& exempt = {});

// The pods that serve: Ready and not being deleted, sorted by name.
std::vector<PodState> serving_pods(const std::vector<PodState>& pods);

// What the pods are doing, at most five of them, by name: "w-0: Ready, w-1: Pending
// (ContainerCreating), w-2: Terminating, w-3: container vllm: CrashLoopBackOff", or "no pod".
std::string describe_pods(const std::vector<PodState>& pods);

// Whether the pods show a rollout under way: a pod Pending, starting or Terminating, or pods
// of two revisions.
bool rollout_under_way(const std::vector<PodState>& pods);

// What the pods are doing, for a failure that a rollout may explain (discovery finding no
// Ready pod): "a rollout is in progress: w-0: Terminating, w-1: Pending (ContainerCreating)"
// when they show one, else "pods: w-0: Ready".
std::string what_pods_do(const std::vector<PodState>& pods);

// How the pods changed since `before` (the serving pods discovery found): "pods changed during
// the cell: a rollout is in progress: w-0: Terminating, w-5: new, Pending (ContainerCreating)",
// "pods changed during the cell: w-1: restarted (restarts 0 -> 1)"; "" when they did not.
std::string pods_changed(const std::vector<PodState>& before, const std::vector<PodState>& now);

// The pods gate, poll by poll. Settled means: exactly `expected` pods (at least one when
// `expected` is 0), every one Ready and of one revision, none Pending or Terminating, and,
// after a change that replaces them, none from before it. Thread contract: one thread.
class PodsGate {
 public:
  PodsGate(int expected, PodChange change, PodUids before, double settle_s);

  // nullopt once open: at the first settled look after a kNone change that has seen nothing
  // move, else once the pods have stayed settled (the same pods) for settle_s. Otherwise why
  // it is closed: "1 of 2 pods Ready (w-1: Running, not Ready, w-2: Pending)", "settling: 2
  // pods Ready and unchanged for 1.0 s of 10 s". Throws TargetError "pod NAME: PROBLEM" for
  // a pod that will not become Ready by itself (pods from before the change are exempt unless
  // nothing was to restart them). `now_s` is a steady clock in seconds.
  std::optional<std::string> check(const std::vector<PodState>& pods, double now_s);

 private:
  std::optional<std::string> unsettled_reason(const std::vector<PodState>& pods) const;

  int expected_;
  PodChange change_;
  PodUids before_;
  double settle_s_;
  bool seen_moving_ = false;
  std::optional<double> settled_since_s_;
  PodUids settled_uids_;
};

// "http://IP:PORT" for every serving pod, in name order. PORT is `port`, or the pod's first
// containerPort when `port` is 0; a pod with neither throws TargetError naming it.
std::vector<std::string> replica_base_urls(const std::vector<PodState>& pods, int port);

}  // namespace kvsweep::orchestrator::kube
