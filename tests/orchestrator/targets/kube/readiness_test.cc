// The gates tied to the change just applied, against operators that act as real ones do: later
// than the PATCH, rolling pods one at a time, status following the pods; and applies tried
// again on a 409, a 5xx or a timeout. The real kubectl against the fake API server throughout.
#include <set>

#include "orchestrator/targets/kube/kube_targets.h"
#include "tests/orchestrator/targets/kube/kube_test_env.h"
#include "tests/support/fake_operators.h"

namespace kvsweep::orchestrator::kube::test {
namespace {

const testing::PodTiming kTiming{0.2, 0.2, 0.2};

double wall_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::set<std::string> uids_of(const std::vector<json>& pods) {
  std::set<std::string> uids;
  for (const auto& pod : pods) uids.insert(pod["metadata"]["uid"].get<std::string>());
  return uids;
}

bool pod_ready(const json& pod) {
  for (const auto& condition : pod["status"]["conditions"]) {
    if (condition["type"] == "Ready") return condition["status"] == "True";
  }
  return false;
}

int count_args(const CommandLogs& logs, const std::string& step, const std::string& word) {
  int n = 0;
  for (const auto& log : logs) {
    if (log.step != step) continue;
    for (const auto& arg : log.argv) n += arg == word;
  }
  return n;
}

class ReadinessTest : public KubeTargetTest {
 protected:
  ReadinessTest() : fleet_(start_fleet(2, "sim-model")) {}

  void put_model() {
    server_.put("models",
                {{"apiVersion", "kubeai.org/v1"},
                 {"kind", "Model"},
                 {"metadata", {{"name", "m1"}, {"namespace", "default"}}},
                 {"spec",
                  {{"url", "hf://Qwen/Qwen2.5-0.5B"},
                   {"replicas", 2},
                   {"loadBalancing",
                    {{"strategy", "LeastLoad"}, {"prefixHash", {{"replication", 256}}}}}}}});
  }

  testing::KubeAIOperatorOptions kubeai_options() const {
    testing::KubeAIOperatorOptions options;
    options.replica_urls = fleet_->replica_urls();
    options.timing = kTiming;
    return options;
  }

  ScenarioSpec kubeai_spec() const {
    ScenarioSpec spec = scenario("kubeai");
    spec.target.resource = "m1";
    spec.target.replicas = 2;
    spec.target.base_url = fleet_->router_url();
    add_factor(spec, "strategy", {"least-load", "prefix-hash"});
    return spec;
  }

  std::unique_ptr<sim::Fleet> fleet_;
};

// Item 1: a Model created anew (the replication factor) at first counts the old Model's pods
// as its own, Ready; the gates must wait for the pods made after the change.
TEST_F(ReadinessTest, AModelCreatedAnewWaitsForItsOwnPodsNotTheOldOnes) {
  put_model();
  testing::KubeAIOperator kubeai(server_, kubeai_options());
  const std::set<std::string> old_pods = uids_of(server_.list("pods", "default"));
  ScenarioSpec spec = kubeai_spec();
  add_factor(spec, "replication", {"256", "32"});
  spec.target.readiness.settle_s = 0.3;
  auto target = make_kubeai_target(spec);
  target->apply({{{"strategy", "prefix-hash"}, {"replication", "32"}}});
  target->wait_ready();

  const auto pods = server_.list("pods", "default");
  ASSERT_EQ(pods.size(), 2u);
  for (const auto& pod : pods) {
    SCOPED_TRACE(pod["metadata"]["name"].get<std::string>());
    EXPECT_EQ(old_pods.count(pod["metadata"]["uid"]), 0u) << "a pod of the old Model";
    EXPECT_FALSE(pod["metadata"].contains("deletionTimestamp"));
    EXPECT_TRUE(pod_ready(pod));
  }
  EXPECT_EQ(target->endpoints().metrics_urls.size(), 2u);
}

// Item 1: a Deployment whose controller acts 0.3 s after the patch and then rolls its pods one
// at a time: the pods gate must see that rollout through to its end, then hold still.
TEST_F(ReadinessTest, ARolloutThatStartsAfterTheGateFirstLooksIsWaitedFor) {
  server_.put("deployments", {{"metadata", {{"name", "vllm"}}},
                              {"spec",
                               {{"replicas", 2},
                                {"selector", {{"matchLabels", {{"app", "vllm"}}}}},
                                {"template", {{"metadata", {{"labels", {{"app", "vllm"}}}}}}}}}});
  testing::DeploymentOperatorOptions options;
  options.replica_urls = fleet_->replica_urls();
  options.timing = {0.3, 0.2, 0.2};
  testing::DeploymentOperator deployment(server_, options);
  const std::string old_revision =
      server_.list("pods", "default")[0]["metadata"]["labels"]["pod-template-hash"];

  ScenarioSpec spec = scenario("kubectl");
  spec.target.base_url = fleet_->router_url();
  spec.target.pod_selector = "app=vllm";
  spec.target.replicas = 2;
  spec.target.readiness.settle_s = 0.6;  // longer than the operator's lag
  add_factor(spec, "mode", {"a"});
  LevelAction a;
  a.apply = {{"patch", "deployment", "vllm", "--type=merge", "-p",
              R"({"spec":{"template":{"metadata":{"annotations":{"mode":"a"}}}}})"}};
  spec.target.levels["mode"]["a"] = a;
  auto target = make_kubectl_target(spec);
  target->apply({{{"mode", "a"}}});
  target->wait_ready();
  const double ready_at = wall_now_s();

  const auto rollouts = deployment.rollouts();
  ASSERT_EQ(rollouts.size(), 1u);
  EXPECT_NE(rollouts[0].end_s, 0) << "the gates opened during the rollout";
  EXPECT_LE(rollouts[0].end_s, ready_at);
  const auto pods = server_.list("pods", "default");
  ASSERT_EQ(pods.size(), 2u);
  for (const auto& pod : pods) {
    EXPECT_NE(pod["metadata"]["labels"]["pod-template-hash"], old_revision);
    EXPECT_TRUE(pod_ready(pod));
  }
}

// A loadBalancing patch restarts no pod in KubeAI: the gates open at their first look, once the
// Model shows the new spec, and no settle period is waited out.
TEST_F(ReadinessTest, ALoadBalancingPatchOpensAtTheFirstLook) {
  put_model();
  testing::KubeAIOperator kubeai(server_, kubeai_options());
  ScenarioSpec spec = kubeai_spec();
  spec.target.readiness.settle_s = 30;  // would fail the test if it were waited for
  spec.target.readiness.pods_s = 10;
  auto target = make_kubeai_target(spec);
  target->apply({{{"strategy", "prefix-hash"}}});
  const CommandLogs logs = target->wait_ready();
  EXPECT_EQ(logs_of_step(logs, "gate pods").size(), 1u);
  EXPECT_TRUE(kubeai.actions().empty());
}

// Item 1: something else puts the old strategy back (a GitOps controller): the Model no longer
// shows what was applied, and no cell may measure it as the new strategy.
TEST_F(ReadinessTest, AChangeUndoneBehindItsBackKeepsTheResourceGateClosed) {
  put_model();
  testing::KubeAIOperator kubeai(server_, kubeai_options());
  server_.set_controller([](testing::FakeApiServer& s, const testing::ApiCall& call) {
    if (call.method != "PATCH" || call.resource != "models") return;
    s.after(0.05, [&s] {
      s.modify("models", "default", "m1",
               [](json& m) { m["spec"]["loadBalancing"]["strategy"] = "LeastLoad"; });
    });
  });
  ScenarioSpec spec = kubeai_spec();
  spec.target.readiness.resource_s = 1;
  auto target = make_kubeai_target(spec);
  target->apply({{{"strategy", "prefix-hash"}}});
  const std::string error = target_error_of([&] { target->wait_ready(); });
  EXPECT_CONTAINS(error, "readiness gate resource: not open after");
  EXPECT_CONTAINS(error, "model/m1: spec.loadBalancing is ");
  EXPECT_CONTAINS(error, R"(not what was applied ({"strategy":"PrefixHash"}))");
}

// Item 2: KubeAI's status only counts (ready 1 of 2); the pod read in the same poll says why,
// and the gate fails at its first poll instead of waiting out its limit.
TEST_F(ReadinessTest, AStuckKubeAIPodFailsTheResourceGateAtItsFirstPoll) {
  put_model();
  testing::KubeAIOperatorOptions options = kubeai_options();
  options.initial_problem = "CrashLoopBackOff";
  testing::KubeAIOperator kubeai(server_, options);
  ScenarioSpec spec = kubeai_spec();
  spec.target.readiness.resource_s = 3;
  auto target = make_kubeai_target(spec);
  target->apply({{{"strategy", "prefix-hash"}}});
  const CommandLogs polls = commands_of_failure([&] { target->wait_ready(); });
  const std::string error = target_error_of([&] { target->wait_ready(); });
  EXPECT_EQ(error.rfind("readiness gate resource: pod m1-", 0), 0u) << error;
  EXPECT_CONTAINS(error,
                  ": container server: CrashLoopBackOff: back-off 10s restarting failed "
                  "container=server");
  // One poll: the pods, read first, were the answer.
  ASSERT_EQ(polls.size(), 1u);
  EXPECT_EQ(polls[0].step, "gate resource");
}

// Item 2: the DGD follows its pods (Ready False, ComponentsNotReady, 1/2 ready) while a
// restarted worker crash-loops; the pod, its container and the reason fail the gate at once.
TEST_F(ReadinessTest, AStuckDynamoWorkerFailsAtOnceThoughTheDgdOnlySaysNotReady) {
  server_.put("dynamographdeployments",
              {{"apiVersion", "nvidia.com/v1alpha1"},
               {"kind", "DynamoGraphDeployment"},
               {"metadata", {{"name", "d1"}, {"namespace", "default"}}},
               {"spec",
                {{"services",
                  {{"Frontend",
                    {{"componentType", "frontend"},
                     {"envs", {{{"name", "DYN_ROUTER_MODE"}, {"value", "round-robin"}}}}}},
                   {"VllmWorker", {{"componentType", "worker"}, {"replicas", 2}}}}}}}});
  testing::DynamoOperatorOptions options;
  options.worker_urls = fleet_->replica_urls();
  options.frontend_url = fleet_->router_url();
  options.timing = kTiming;
  options.worker_problem = "CrashLoopBackOff";
  testing::DynamoOperator dynamo(server_, options);
  ScenarioSpec spec = scenario("dynamo");
  spec.target.resource = "d1";
  spec.target.replicas = 2;
  spec.target.base_url = fleet_->router_url();
  spec.target.readiness.resource_s = 3;
  add_factor(spec, "strategy", {"round-robin", "kv"});
  auto target = make_dynamo_target(spec);
  target->apply({{{"strategy", "kv"}}});
  const std::string error = target_error_of([&] { target->wait_ready(); });
  EXPECT_CONTAINS(error,
                  "readiness gate resource: pod worker-1-1: container server: CrashLoopBackOff: "
                  "back-off 10s restarting failed container=server");
}

// Item 4: two 500s on the patch, then it lands; every attempt is kept with what kubectl said.
TEST_F(ReadinessTest, AServerErrorOnThePatchIsTriedAgainAndEveryAttemptKept) {
  put_model();
  server_.inject_fault({"PATCH", "models", "m1", 500, 2});
  auto target = make_kubeai_target(kubeai_spec());
  const CommandLogs logs = target->apply({{{"strategy", "prefix-hash"}}});
  ASSERT_EQ(logs.size(), 3u);
  EXPECT_EQ(logs[0].exit_code, 1);
  EXPECT_CONTAINS(logs[0].err, "Error from server (InternalError)");
  EXPECT_EQ(logs[1].exit_code, 1);
  EXPECT_EQ(logs[2].exit_code, 0);
  EXPECT_EQ((*server_.get("models", "default", "m1"))["spec"]["loadBalancing"]["strategy"],
            "PrefixHash");
}

// Item 4: a 409 on the DGD patch (someone changed it since it was read): read it again, build
// the env list again from what is there now, patch again.
TEST_F(ReadinessTest, AConflictOnTheDgdPatchReadsItAgainAndPatchesAgain) {
  server_.put("dynamographdeployments",
              {{"metadata", {{"name", "d1"}}},
               {"spec",
                {{"services",
                  {{"Frontend", {{"envs", {{{"name", "DYN_NAMESPACE"}, {"value", "a"}}}}}}}}}}});
  // The conflict: another writer added an env between our read and our patch.
  testing::FakeApiServer::Fault conflict("PATCH", "dynamographdeployments", "d1", 409);
  conflict.meanwhile = [](testing::FakeApiServer& s) {
    s.modify("dynamographdeployments", "default", "d1", [](json& d) {
      d["spec"]["services"]["Frontend"]["envs"].push_back({{"name", "EXTRA"}, {"value", "b"}});
    });
  };
  server_.inject_fault(conflict);
  ScenarioSpec spec = scenario("dynamo");
  spec.target.resource = "d1";
  spec.target.replicas = 2;
  spec.target.base_url = fleet_->router_url();
  spec.target.restart_workers = false;
  add_factor(spec, "strategy", {"kv"});
  auto target = make_dynamo_target(spec);
  const CommandLogs logs = target->apply({{{"strategy", "kv"}}});
  EXPECT_EQ(count_args(logs, "apply", "get"), 2);
  EXPECT_EQ(count_args(logs, "apply", "patch"), 2);
  EXPECT_EQ(logs[1].exit_code, 1);
  EXPECT_CONTAINS(logs[1].err, "Error from server (Conflict)");
  // The second patch carried the env the other writer added.
  EXPECT_EQ((*server_.get("dynamographdeployments", "default",
                          "d1"))["spec"]["services"]["Frontend"]["envs"],
            json::parse(R"([{"name":"DYN_NAMESPACE","value":"a"},{"name":"EXTRA","value":"b"},
                            {"name":"DYN_ROUTER_MODE","value":"kv"}])"));
}

// Item 4: a patch whose answer outlasts kubectl's time limit is tried again.
TEST_F(ReadinessTest, APatchThatTimesOutIsTriedAgain) {
  put_model();
  server_.inject_fault({"PATCH", "models", "m1", 0, 1, 4});
  ScenarioSpec spec = kubeai_spec();
  spec.target.command_timeout_s = 2;
  auto target = make_kubeai_target(spec);
  const CommandLogs logs = target->apply({{{"strategy", "prefix-hash"}}});
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(logs[0].exit_code, -1);  // killed at its time limit
  EXPECT_EQ(logs[1].exit_code, 0);
}

// Item 4: what would fail again is not tried again; what keeps failing is given up within the
// resource gate's limit, saying how often it was tried.
TEST_F(ReadinessTest, RetriesStopAtAnAnswerThatWillNotChangeAndAtTheLimit) {
  put_model();
  server_.inject_fault({"PATCH", "models", "m1", 422, 1});
  auto target = make_kubeai_target(kubeai_spec());
  const CommandLogs once = commands_of_failure([&] {
    target->apply({{{"strategy", "least-load"}}});
  });
  ASSERT_EQ(once.size(), 1u);
  EXPECT_CONTAINS(once[0].err, "The request is invalid");

  server_.inject_fault({"PATCH", "models", "m1", 503, 1000});
  ScenarioSpec spec = kubeai_spec();
  spec.target.readiness.resource_s = 1;
  target = make_kubeai_target(spec);
  const std::string error = target_error_of([&] {
    target->apply({{{"strategy", "prefix-hash"}}});
  });
  EXPECT_CONTAINS(error, "Error from server (ServiceUnavailable)");
  EXPECT_CONTAINS(error, " times in ");
}

// After a cell the target looks at the pods again: one replaced meanwhile changed what the
// cell measured, and it says a rollout is in progress and what the pods are doing.
TEST_F(ReadinessTest, PodsThatMovedDuringTheCellAreReported) {
  put_model();
  // The victim must still be Terminating when the check reads the pods: with the usual 0.2 s
  // grace a loaded machine's kubectl call can take longer, and the pod is then gone instead.
  testing::KubeAIOperatorOptions options = kubeai_options();
  options.timing.termination_s = 60;
  testing::KubeAIOperator kubeai(server_, options);
  auto target = make_kubeai_target(kubeai_spec());
  target->apply({{{"strategy", "prefix-hash"}}});
  target->wait_ready();
  EXPECT_TRUE(logs_of_step(target->cell_finished(), "health").empty());

  const std::string victim = server_.list("pods", "default")[0]["metadata"]["name"];
  server_.terminate("pods", "default", victim);
  const CommandLogs seen = target->cell_finished();
  const auto health = logs_of_step(seen, "health");
  ASSERT_EQ(health.size(), 1u);
  EXPECT_CONTAINS(health[0].out, "pods changed during the cell: a rollout is in progress: " +
                                     victim + ": Terminating");
  EXPECT_EQ(logs_of_step(seen, "after cell").size(), 1u);
}

}  // namespace
}  // namespace kvsweep::orchestrator::kube::test
