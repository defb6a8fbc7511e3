// Operators for the fake API server that act as real controllers do: later than the change
// (on the server's timer thread, never inside the PATCH), replacing pods one at a time (a
// surge: one extra pod, then an old one goes) or all at once (recreate), pods Pending before
// they are Ready and Terminating before they are gone, and the resource's status following its
// pods. KubeAI's Model controller, a Deployment's, and Dynamo's DynamoGraphDeployment's. Each
// replaces the server's controller while it lives and must not outlive the server.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/fake_apiserver.h"

namespace kvsweep::testing {

enum class Rollout {
  kSurge,     // one extra pod of the new revision; once Ready, one old pod goes; and again
  kRecreate,  // every old pod goes at once and the new ones are created
};

// Every delay in seconds; tests keep them to tenths.
struct PodTiming {
  double lag_s = 0.2;          // from a change of the resource to the operator acting on it
  double start_s = 0.2;        // a new pod is Pending this long, then Running and Ready
  double termination_s = 0.2;  // a deleted pod is Terminating this long (the server's grace)
};

// A stretch of wall-clock time (unix seconds) during which a rollout was under way: from the
// operator's first pod change to the last old pod gone. end_s is 0 while it is under way.
struct RolloutWindow {
  double start_s = 0;
  double end_s = 0;
};

// What each pod the operators create looks like: pod i of a set is in "slot" i, serves on
// 127.0.0.1 at the port of replica_urls[i] (a simulated fleet's replica), and carries the
// revision label of its controller. A pod in `problem_slot` of a revision with a problem
// waits with that reason (CrashLoopBackOff, ...) instead of becoming Ready.
struct KubeAIOperatorOptions {
  std::string model = "m1";
  std::string namespace_name = "default";
  int replicas = 2;
  std::vector<std::string> replica_urls;
  PodTiming timing;
  Rollout rollout = Rollout::kSurge;
  // Real KubeAI hashes the pod spec without spec.loadBalancing, so a strategy patch restarts
  // nothing; true rolls the pods on every spec change (an operator that does).
  bool load_balancing_rolls_pods = false;
  // The garbage collector deletes the pods of a deleted Model this long after the delete;
  // meanwhile a Model created anew under the name counts them as its own, as KubeAI does.
  double gc_s = 0.6;
  std::string initial_problem;  // the pods there at construction
  std::string rollout_problem;  // every pod created later
  int problem_slot = 1;
};

// KubeAI's Model controller for one Model, which must exist when it is constructed: it puts
// `replicas` Ready pods (labels model=<name>, pod-hash=<revision>, an ownerReference to the
// Model) and keeps .status.replicas {all, ready} equal to what the pods show. After a Model
// PATCH, create or delete, or a pod deleted, it acts once `lag_s` has passed: a new pod spec
// rolls the pods (`rollout`), missing pods are created. A deleted Model's pods are deleted by
// the garbage collector `gc_s` later, and then replaced for a Model created anew.
class KubeAIOperator {
 public:
  KubeAIOperator(FakeApiServer& server, KubeAIOperatorOptions options);
  ~KubeAIOperator();  // the server's controller is cleared; pending actions do nothing
  KubeAIOperator(const KubeAIOperator&) = delete;
  KubeAIOperator& operator=(const KubeAIOperator&) = delete;

  std::vector<RolloutWindow> rollouts() const;
  // What it did to pods since construction, in order: "create m1-1a2b3-2", "delete m1-...".
  std::vector<std::string> actions() const;

  struct Core;

 private:
  std::shared_ptr<Core> core_;
};

// An apps/v1 Deployment's controller (its ReplicaSets folded in) for one Deployment with
// spec.replicas and spec.selector.matchLabels, which must exist when it is constructed: pods
// labeled with the selector's labels and pod-template-hash=<hash of spec.template>. A change of
// spec.template rolls them (`rollout`) once `lag_s` has passed.
struct DeploymentOperatorOptions {
  std::string deployment = "vllm";
  std::string namespace_name = "default";
  std::vector<std::string> replica_urls;
  PodTiming timing;
  Rollout rollout = Rollout::kSurge;
  // Asked, on the timer thread, as each pod is created: non-empty, the pod waits with that
  // reason (CrashLoopBackOff) instead of becoming Ready. llm-d's EPP reads its configuration at
  // start, so its pods fail or not by what its ConfigMap holds then.
  std::function<std::string()> pod_problem;
};

class DeploymentOperator {
 public:
  DeploymentOperator(FakeApiServer& server, DeploymentOperatorOptions options);
  ~DeploymentOperator();
  DeploymentOperator(const DeploymentOperator&) = delete;
  DeploymentOperator& operator=(const DeploymentOperator&) = delete;

  std::vector<RolloutWindow> rollouts() const;
  std::vector<std::string> actions() const;  // as KubeAIOperator::actions

 private:
  std::shared_ptr<KubeAIOperator::Core> core_;
};

// Dynamo's operator for one DynamoGraphDeployment, which must exist when it is constructed,
// with spec.services.<frontend_service>.envs: one frontend pod carrying those envs and
// `replicas` worker pods (the usual nvidia.com/dynamo-* labels). After a DGD PATCH, once
// `lag_s` has passed, it sets status.observedGeneration and, when the frontend's envs changed,
// rolls the frontend (a surge). A worker pod deleted (kvsweep's restart) is replaced. Its
// status follows the pods: condition Ready is True only while the frontend and every worker
// are Ready, else False, reason ComponentsNotReady, message "<worker_service>: 3/4 ready".
struct DynamoOperatorOptions {
  std::string dgd = "d1";
  std::string namespace_name = "default";
  std::string frontend_service = "Frontend";
  std::string worker_service = "VllmWorker";
  int replicas = 2;
  std::vector<std::string> worker_urls;
  std::string frontend_url;
  PodTiming timing;
  std::string worker_problem;  // the replacement in problem_slot waits with this reason ...
  int problem_restart = 1;     // ... when it is that slot's Nth replacement (1 = the first;
                               // 0 = the worker there at construction)
  int problem_slot = 1;
};

class DynamoOperator {
 public:
  DynamoOperator(FakeApiServer& server, DynamoOperatorOptions options);
  ~DynamoOperator();
  DynamoOperator(const DynamoOperator&) = delete;
  DynamoOperator& operator=(const DynamoOperator&) = delete;

  std::vector<RolloutWindow> rollouts() const;  // the workers' restarts and frontend rolls

  struct Core;

 private:
  std::shared_ptr<Core> core_;
};

}  // namespace kvsweep::testing
