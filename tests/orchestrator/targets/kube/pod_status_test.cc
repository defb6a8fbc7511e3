// Reading pods from `kubectl get pods -o json`, and the pods gate's decisions on them.
#include "orchestrator/targets/kube/pod_status.h"

#include <stdexcept>

#include "orchestrator/targets/kube/pod_gate.h"
#include "tests/orchestrator/targets/kube/kube_test_env.h"

namespace kvsweep::orchestrator::kube::test {
namespace {

// Shaped like a real PodList from a vLLM deployment in trouble (fields trimmed, not invented).
constexpr const char* kPodList = R"json({
  "apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
  "items": [
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "vllm-0", "namespace": "serving",
                  "uid": "0b1c2d3e-0000-4000-8000-000000000001",
                  "labels": {"app": "vllm", "pod-template-hash": "7c9d8b6f5"}},
     "spec": {"containers": [
       {"name": "vllm", "image": "vllm/vllm-openai:v0.8.5",
        "ports": [{"containerPort": 8000, "name": "http", "protocol": "TCP"}],
        "env": [{"name": "VLLM_SERVER_DEV_MODE", "value": "1"},
                {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "t"}}},
                {"name": "DYN_ROUTER_MODE", "value": "kv"}]},
       {"name": "exporter", "image": "prom/exporter",
        "ports": [{"containerPort": 9090}, {"containerPort": 9091}],
        "env": [{"name": "DYN_ROUTER_MODE", "value": "ignored"},
                {"name": "EXPORTER_ONLY", "value": "yes"}]}]},
     "status": {"phase": "Running", "podIP": "10.244.1.17",
       "conditions": [{"type": "Initialized", "status": "True"},
                      {"type": "Ready", "status": "True"},
                      {"type": "ContainersReady", "status": "True"}],
       "containerStatuses": [
         {"name": "vllm", "ready": true, "restartCount": 0,
          "state": {"running": {"startedAt": "2025-07-01T10:00:00Z"}}},
         {"name": "exporter", "ready": true, "restartCount": 0,
          "state": {"running": {"startedAt": "2025-07-01T10:00:00Z"}}}]}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "vllm-1", "namespace": "serving"},
     "spec": {"containers": [{"name": "vllm", "ports": [{"containerPort": 8000}]}]},
     "status": {"phase": "Running", "podIP": "10.244.2.3",
       "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}],
       "containerStatuses": [
         {"name": "vllm", "ready": false, "restartCount": 7,
          "state": {"waiting": {"reason": "CrashLoopBackOff",
            "message": "back-off 5m0s restarting failed container=vllm pod=vllm-1"}},
          "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "vllm-2", "namespace": "serving"},
     "spec": {"containers": [{"name": "vllm", "ports": [{"containerPort": 8000}]}]},
     "status": {"phase": "Pending", "podIP": "10.244.3.9",
       "conditions": [{"type": "Ready", "status": "False"}],
       "containerStatuses": [
         {"name": "vllm", "ready": false, "restartCount": 0,
          "state": {"waiting": {"reason": "ImagePullBackOff",
            "message": "Back-off pulling image \"vllm/vllm-openai:v9.9\""}}}]}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "vllm-3", "namespace": "serving"},
     "spec": {"containers": [{"name": "vllm"}]},
     "status": {"phase": "Running",
       "conditions": [{"type": "Ready", "status": "False"}],
       "containerStatuses": [
         {"name": "vllm", "ready": false, "restartCount": 1,
          "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "vllm-4", "namespace": "serving",
                  "deletionTimestamp": "2025-07-01T10:05:00Z",
                  "deletionGracePeriodSeconds": 30},
     "spec": {"containers": [{"name": "vllm", "ports": [{"containerPort": 8000}]}]},
     "status": {"phase": "Running", "podIP": "10.244.4.2",
       "conditions": [{"type": "Ready", "status": "True"}]}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "vllm-5", "namespace": "serving"},
     "spec": {"containers": [{"name": "vllm"}]},
     "status": {"phase": "Failed", "reason": "Evicted",
       "message": "The node was low on resource: memory."}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "vllm-6", "namespace": "serving"},
     "spec": {"containers": [{"name": "vllm", "ports": [{"containerPort": 8000}]}]},
     "status": {"phase": "Pending",
       "conditions": [{"type": "PodScheduled", "status": "True"}],
       "containerStatuses": [
         {"name": "vllm", "ready": false, "restartCount": 0,
          "state": {"waiting": {"reason": "ContainerCreating"}}}]}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "vllm-7", "namespace": "serving"},
     "spec": {"initContainers": [{"name": "download"}], "containers": [{"name": "vllm"}]},
     "status": {"phase": "Pending",
       "initContainerStatuses": [
         {"name": "download", "ready": false, "restartCount": 3,
          "state": {"waiting": {"reason": "CrashLoopBackOff", "message": ""}}}],
       "containerStatuses": [
         {"name": "vllm", "ready": false,
          "state": {"waiting": {"reason": "PodInitializing"}}}]}}
  ]})json";

std::vector<PodState> pods() { return parse_pods(json::parse(kPodList)); }

TEST(ParsePodsTest, ReadsAReadyPodWithTwoContainers) {
  const auto all = pods();
  ASSERT_EQ(all.size(), 8u);
  const PodState& pod = all[0];
  EXPECT_EQ(pod.name, "vllm-0");
  EXPECT_EQ(pod.phase, "Running");
  EXPECT_TRUE(pod.ready);
  EXPECT_FALSE(pod.terminating);
  EXPECT_EQ(pod.ip, "10.244.1.17");
  EXPECT_EQ(pod.ports, (std::vector<int>{8000, 9090, 9091}));
  EXPECT_EQ(pod.terminal_problem, "");
  EXPECT_EQ(pod.uid, "0b1c2d3e-0000-4000-8000-000000000001");
  EXPECT_EQ(pod.revision, "7c9d8b6f5");  // the Deployment's pod-template-hash
  EXPECT_EQ(pod.restarts, 0);
  EXPECT_EQ(pod.waiting_reason, "");
  // Plain values only, every container merged, the first container winning a clash.
  EXPECT_EQ(pod.env, (std::map<std::string, std::string>{{"VLLM_SERVER_DEV_MODE", "1"},
                                                         {"DYN_ROUTER_MODE", "kv"},
                                                         {"EXPORTER_ONLY", "yes"}}));
}

// A Job's pod that ended Failed: the phase alone says nothing; its container's end says why.
TEST(ParsePodsTest, AFailedPodNamesHowItsContainersEnded) {
  const json pod = {
      {"metadata", {{"name", "shards-1-abcde"}, {"uid", "u1"}}},
      {"status",
       {{"phase", "Failed"},
        {"containerStatuses",
         {{{"name", "shard"},
           {"ready", false},
           {"restartCount", 0},
           {"state", {{"terminated", {{"reason", "OOMKilled"}, {"exitCode", 137}}}}}}}}}}};
  const auto states = parse_pods(pod);
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states[0].terminal_problem, "phase Failed; container shard: OOMKilled (exit code 137)");
}

TEST(ParsePodsTest, NamesTheProblemsThatNeverClearByThemselves) {
  const auto all = pods();
  EXPECT_EQ(all[1].terminal_problem,
            "container vllm: CrashLoopBackOff: back-off 5m0s restarting failed container=vllm "
            "pod=vllm-1 (last terminated: OOMKilled)");
  EXPECT_FALSE(all[1].ready);
  EXPECT_EQ(all[2].terminal_problem,
            "container vllm: ImagePullBackOff: Back-off pulling image \"vllm/vllm-openai:v9.9\"");
  EXPECT_EQ(all[3].terminal_problem, "container vllm: OOMKilled");
  EXPECT_EQ(all[3].ip, "");
  EXPECT_EQ(all[5].terminal_problem,
            "phase Failed: Evicted: The node was low on resource: memory.");
  EXPECT_EQ(all[7].terminal_problem, "init container download: CrashLoopBackOff");
}

TEST(ParsePodsTest, StartingAndTerminatingPodsHaveNoProblem) {
  const auto all = pods();
  EXPECT_TRUE(all[4].terminating);
  EXPECT_TRUE(all[4].ready);
  EXPECT_EQ(all[4].terminal_problem, "");
  EXPECT_FALSE(all[6].ready);
  EXPECT_EQ(all[6].phase, "Pending");
  EXPECT_EQ(all[6].terminal_problem, "");
  EXPECT_EQ(all[6].waiting_reason, "ContainerCreating");
  EXPECT_TRUE(all[6].env.empty());
  EXPECT_EQ(all[1].restarts, 7);
  EXPECT_EQ(all[7].restarts, 3);  // init containers' restarts count too
}

TEST(ParsePodsTest, ReadsASinglePodAndAnEmptyList) {
  const json list = json::parse(kPodList);
  const auto one = parse_pods(list["items"][2]);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].name, "vllm-2");
  EXPECT_TRUE(parse_pods(json{{"kind", "PodList"}, {"items", json::array()}}).empty());
  EXPECT_TRUE(parse_pods(json{{"kind", "PodList"}, {"items", nullptr}}).empty());
}

TEST(ParsePodsTest, RejectsMalformedLists) {
  EXPECT_THROW(parse_pods(json::array()), std::runtime_error);
  EXPECT_THROW(parse_pods(json{{"items", "x"}}), std::runtime_error);
  EXPECT_THROW(parse_pods(json{{"items", {{{"metadata", json::object()}}}}}), std::runtime_error);
  try {
    parse_pods(json{{"items", {{{"metadata", {{"name", "p"}}}, {"status", {{"phase", 3}}}}}}});
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_CONTAINS(e.what(), "pod p.status.phase is not a string");
  }
}

TEST(TerminalWaitingReasonTest, KnowsWhichReasonsNeverClear) {
  for (const char* reason : {"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull",
                             "CreateContainerConfigError", "InvalidImageName"}) {
    EXPECT_TRUE(is_terminal_waiting_reason(reason)) << reason;
  }
  for (const char* reason : {"ContainerCreating", "PodInitializing", ""}) {
    EXPECT_FALSE(is_terminal_waiting_reason(reason)) << reason;
  }
}

PodState pod(const std::string& name, bool ready, const std::string& phase = "Running") {
  PodState p;
  p.name = name;
  p.ready = ready;
  p.phase = phase;
  p.ip = "10.0.0." + name.substr(name.size() - 1);
  p.ports = {8000};
  return p;
}

PodState pod_of(const std::string& name, const std::string& uid, const std::string& revision,
                bool ready = true) {
  PodState p = pod(name, ready);
  p.uid = uid;
  p.revision = revision;
  return p;
}

TEST(PodsGateTest, OpensAtExactlyTheExpectedReadyCount) {
  std::vector<PodState> all = {pod("w-0", true), pod("w-1", false), pod("w-2", false, "Pending")};
  all[2].waiting_reason = "ContainerCreating";
  PodsGate gate(2, PodChange::kNone, {}, 10);
  EXPECT_EQ(gate.check(all, 0),
            "1 of 2 pods Ready (w-1: Running, not Ready, w-2: Pending (ContainerCreating))");
  all[1].ready = true;
  all[2].ready = true;  // one more than expected: the arms must run on equal counts
  EXPECT_EQ(gate.check(all, 1), "3 pods Ready, want 2");
  all[2].terminating = true;  // on its way out, and not gone yet
  EXPECT_EQ(gate.check(all, 2), "2 of 2 pods Ready (w-2: Terminating)");
  all.pop_back();
  // Settled now, but it moved since the change: the state must hold for the settle period.
  EXPECT_EQ(gate.check(all, 3),
            "settling: 2 pods Ready and unchanged for 0 s of 10 s (target.readiness.settle; "
            "an operator may act late)");
  EXPECT_NE(gate.check(all, 12.9), std::nullopt);
  EXPECT_EQ(gate.check(all, 13), std::nullopt);
}

TEST(PodsGateTest, NothingToRestartOpensAtTheFirstSettledLook) {
  PodsGate gate(2, PodChange::kNone, {}, 10);
  EXPECT_EQ(gate.check({pod_of("w-0", "a", "r1"), pod_of("w-1", "b", "r1")}, 0), std::nullopt);
}

TEST(PodsGateTest, WithNoExpectedCountWantsAtLeastOne) {
  EXPECT_EQ(PodsGate(0, PodChange::kNone, {}, 0).check({}, 0),
            "no pod Ready (want at least 1) (no pod matches the selector)");
  EXPECT_EQ(PodsGate(0, PodChange::kNone, {}, 0).check({pod("w-0", false)}, 0),
            "no pod Ready (want at least 1) (w-0: Running, not Ready)");
  EXPECT_EQ(PodsGate(0, PodChange::kNone, {}, 0).check({pod("w-0", true), pod("w-1", true)}, 0),
            std::nullopt);
}

TEST(PodsGateTest, AfterAReplacingChangeOnlyNewPodsCountUntilTheyHoldStill) {
  PodsGate gate(2, PodChange::kReplaces, {"a", "b"}, 1);
  // The operator has not acted yet: the old pods are all there, Ready.
  EXPECT_EQ(gate.check({pod_of("w-0", "a", "r1"), pod_of("w-1", "b", "r1")}, 0),
            "0 of 2 pods Ready (w-0: Ready, from before the change, w-1: Ready, from before the "
            "change)");
  // A surge: one new pod starting beside them, then Ready, with two revisions up.
  EXPECT_EQ(gate.check({pod_of("w-0", "a", "r1"), pod_of("w-1", "b", "r1"),
                        pod_of("w-2", "c", "r2", false)},
                       0.2),
            "0 of 2 pods Ready (w-0: Ready, from before the change, w-1: Ready, from before the "
            "change, w-2: Running, not Ready); pods of 2 revisions: r1 (2 pods), r2 (1 pod)");
  const std::vector<PodState> replaced = {pod_of("w-2", "c", "r2"), pod_of("w-3", "d", "r2")};
  EXPECT_EQ(gate.check(replaced, 0.4),
            "settling: 2 pods Ready and unchanged for 0 s of 1 s (target.readiness.settle; "
            "an operator may act late)");
  // A pod replaced between two looks starts the count again.
  const std::vector<PodState> again = {pod_of("w-2", "c", "r2"), pod_of("w-4", "e", "r2")};
  EXPECT_NE(gate.check(again, 1.0), std::nullopt);
  EXPECT_NE(gate.check(again, 1.9), std::nullopt);
  EXPECT_EQ(gate.check(again, 2.0), std::nullopt);
}

TEST(PodsGateTest, FailsAtOnceOnATerminalProblemButNotOnATerminatingPod) {
  auto crashed = pod_of("w-1", "b", "");
  crashed.ready = false;
  crashed.terminal_problem = "container vllm: CrashLoopBackOff";
  const std::string error = target_error_of([&] {
    PodsGate(2, PodChange::kNone, {}, 0).check({pod("w-0", true), crashed}, 0);
  });
  EXPECT_EQ(error, "pod w-1: container vllm: CrashLoopBackOff");
  // A crashed pod from before a change that replaces it is the change's to fix: it waits.
  EXPECT_EQ(PodsGate(2, PodChange::kReplaces, {"b"}, 0).check({pod("w-0", true), crashed}, 0),
            "1 of 2 pods Ready (w-1: container vllm: CrashLoopBackOff, from before the change)");
  crashed.terminating = true;
  EXPECT_EQ(PodsGate(2, PodChange::kNone, {}, 0).check({pod("w-0", true), crashed}, 0),
            "1 of 2 pods Ready (w-1: Terminating)");
}

TEST(PodsGateTest, ListsAtMostFiveWaitingPods) {
  std::vector<PodState> all;
  for (int i = 0; i < 8; ++i) all.push_back(pod("w-" + std::to_string(i), false, "Pending"));
  EXPECT_EQ(PodsGate(8, PodChange::kNone, {}, 0).check(all, 0),
            "0 of 8 pods Ready (w-0: Pending, w-1: Pending, w-2: Pending, w-3: Pending, "
            "w-4: Pending, ...)");
}

TEST(PodsChangedTest, SaysWhatMovedDuringTheCell) {
  const std::vector<PodState> discovered = {pod_of("w-0", "a", "r1"), pod_of("w-1", "b", "r1")};
  EXPECT_EQ(pods_changed(discovered, discovered), "");
  auto restarted = discovered;
  restarted[1].restarts = 1;
  EXPECT_EQ(pods_changed(discovered, restarted),
            "pods changed during the cell: w-1: restarted (restarts 0 -> 1)");
  auto rolling = discovered;
  rolling[0].terminating = true;
  rolling.push_back(pod_of("w-2", "c", "r2", false));
  rolling.back().phase = "Pending";
  rolling.back().waiting_reason = "ContainerCreating";
  EXPECT_EQ(pods_changed(discovered, rolling),
            "pods changed during the cell: a rollout is in progress: w-0: Terminating, w-2: new, "
            "Pending (ContainerCreating)");
  EXPECT_EQ(pods_changed(discovered, {discovered[1]}), "pods changed during the cell: w-0: gone");
  EXPECT_TRUE(rollout_under_way(rolling));
  EXPECT_FALSE(rollout_under_way(discovered));
  EXPECT_EQ(describe_pods(rolling),
            "w-0: Terminating, w-1: Ready, w-2: Pending (ContainerCreating)");
  // What discovery adds when it finds no Ready pod: the rollout, not just the count.
  EXPECT_EQ(what_pods_do(rolling),
            "a rollout is in progress: w-0: Terminating, w-1: Ready, w-2: Pending "
            "(ContainerCreating)");
  EXPECT_EQ(what_pods_do(discovered), "pods: w-0: Ready, w-1: Ready");
  EXPECT_EQ(what_pods_do({}), "pods: no pod");
}

TEST(ReplicaUrlsTest, UsesTheGivenPortOrTheFirstContainerPort) {
  auto b = pod("w-2", true);
  b.ports = {8080, 9090};
  auto v6 = pod("w-3", true);
  v6.ip = "fd00::7";
  const std::vector<PodState> all = {b, pod("w-1", true), pod("w-0", false), v6};
  EXPECT_EQ(replica_base_urls(all, 0),
            (std::vector<std::string>{"http://10.0.0.1:8000", "http://10.0.0.2:8080",
                                      "http://[fd00::7]:8000"}));
  EXPECT_EQ(replica_base_urls(all, 9400),
            (std::vector<std::string>{"http://10.0.0.1:9400", "http://10.0.0.2:9400",
                                      "http://[fd00::7]:9400"}));
  auto no_port = pod("w-9", true);
  no_port.ports.clear();
  const std::string error = target_error_of([&] { replica_base_urls({no_port}, 0); });
  EXPECT_CONTAINS(error, "pod w-9 declares no containerPort; set target.metrics.port");
}

}  // namespace
}  // namespace kvsweep::orchestrator::kube::test
