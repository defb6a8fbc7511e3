// The fake API server's operators, driven by the real kubectl: they act after their lag, roll
// pods one at a time or all at once, and their resources' status follows the pods.
#include "tests/support/fake_operators.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>

#include "orchestrator/targets/child_process.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::testing {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

const PodTiming kTiming{0.2, 0.1, 0.1};

double wall_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Polls `done` every 20 ms for up to 20 s; true once it holds.
bool eventually(const std::function<bool()>& done) {
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

std::vector<std::string> words_of(const std::vector<std::string>& actions) {
  std::vector<std::string> words;
  for (const auto& action : actions) words.push_back(action.substr(0, action.find(' ')));
  return words;
}

class FakeOperatorsTest : public ::testing::Test {
 protected:
  FakeOperatorsTest() { server_.write_kubeconfig(dir_.file("kubeconfig")); }

  orchestrator::ProcessResult kubectl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"kubectl", "--kubeconfig", dir_.file("kubeconfig"),
                                     "--cache-dir", dir_.file("cache")};
    argv.insert(argv.end(), args.begin(), args.end());
    return orchestrator::run_process(argv, 30);
  }

  void put_model() {
    server_.put(
        "models",
        {{"metadata", {{"name", "m1"}}},
         {"spec",
          {{"url", "hf://m"}, {"replicas", 2}, {"loadBalancing", {{"strategy", "LeastLoad"}}}}}});
  }

  std::vector<json> pods() const { return server_.list("pods", "default"); }

  TempDir dir_;
  FakeApiServer server_;
};

TEST_F(FakeOperatorsTest, KubeAISurgeReplacesOnePodAtATimeAfterItsLag) {
  put_model();
  KubeAIOperatorOptions options;
  options.replica_urls = {"http://127.0.0.1:18001", "http://127.0.0.1:18002"};
  options.timing = kTiming;
  options.load_balancing_rolls_pods = true;  // an operator that restarts pods on any change
  KubeAIOperator op(server_, options);
  ASSERT_EQ(pods().size(), 2u);
  EXPECT_EQ((*server_.get("models", "default", "m1"))["status"]["replicas"],
            json({{"all", 2}, {"ready", 2}}));

  const double before_patch = wall_now_s();
  ASSERT_TRUE(kubectl({"patch", "model", "m1", "--type=merge", "-p",
                       R"({"spec":{"loadBalancing":{"strategy":"PrefixHash"}}})"})
                  .ok());
  ASSERT_TRUE(eventually([&] {
    const auto windows = op.rollouts();
    return !windows.empty() && windows.back().end_s != 0;
  }));
  // Not inside the PATCH: the operator acted its lag later.
  EXPECT_GE(op.rollouts().front().start_s - before_patch, kTiming.lag_s);
  // One extra pod, then one old pod goes; twice.
  EXPECT_EQ(words_of(op.actions()),
            (std::vector<std::string>{"create", "delete", "create", "delete"}));
  const auto now = pods();
  ASSERT_EQ(now.size(), 2u);
  EXPECT_EQ(now[0]["metadata"]["labels"]["pod-hash"], now[1]["metadata"]["labels"]["pod-hash"]);
  EXPECT_EQ((*server_.get("models", "default", "m1"))["status"]["replicas"],
            json({{"all", 2}, {"ready", 2}}));
}

TEST_F(FakeOperatorsTest, KubeAIRestartsNothingOnALoadBalancingPatch) {
  put_model();
  KubeAIOperatorOptions options;
  options.replica_urls = {"http://127.0.0.1:18001", "http://127.0.0.1:18002"};
  options.timing = kTiming;
  KubeAIOperator op(server_, options);
  ASSERT_TRUE(kubectl({"patch", "model", "m1", "--type=merge", "-p",
                       R"({"spec":{"loadBalancing":{"strategy":"PrefixHash"}}})"})
                  .ok());
  std::this_thread::sleep_for(std::chrono::duration<double>(kTiming.lag_s * 3));
  EXPECT_TRUE(op.actions().empty());
  EXPECT_TRUE(op.rollouts().empty());
}

TEST_F(FakeOperatorsTest, ADeploymentRecreateTakesEveryOldPodFirst) {
  server_.put("deployments", {{"metadata", {{"name", "vllm"}}},
                              {"spec",
                               {{"replicas", 2},
                                {"selector", {{"matchLabels", {{"app", "vllm"}}}}},
                                {"template", {{"metadata", {{"labels", {{"app", "vllm"}}}}}}}}}});
  DeploymentOperatorOptions options;
  options.replica_urls = {"http://127.0.0.1:18001"};
  options.timing = kTiming;
  options.rollout = Rollout::kRecreate;
  DeploymentOperator op(server_, options);
  ASSERT_TRUE(kubectl({"annotate", "deployment", "vllm", "x=1"}).ok());  // no template change
  ASSERT_TRUE(kubectl({"patch", "deployment", "vllm", "--type=merge", "-p",
                       R"({"spec":{"template":{"metadata":{"annotations":{"v":"2"}}}}})"})
                  .ok());
  ASSERT_TRUE(eventually([&] {
    const auto windows = op.rollouts();
    return !windows.empty() && windows.back().end_s != 0;
  }));
  EXPECT_EQ(op.rollouts().size(), 1u);
  EXPECT_EQ(words_of(op.actions()),
            (std::vector<std::string>{"delete", "delete", "create", "create"}));
  // The operator closes the window as it sees the pods settled and writes the status after,
  // in the same tick: a busy machine can run the check between the two.
  EXPECT_TRUE(eventually([&] {
    const auto d = *server_.get("deployments", "default", "vllm");
    return d["status"]["readyReplicas"] == 2;
  })) << server_.get("deployments", "default", "vllm")->dump();
  const auto d = *server_.get("deployments", "default", "vllm");
  EXPECT_EQ(d["status"]["observedGeneration"], d["metadata"]["generation"]);
}

TEST_F(FakeOperatorsTest, DynamoStatusFollowsItsWorkers) {
  server_.put("dynamographdeployments",
              {{"metadata", {{"name", "d1"}}},
               {"spec",
                {{"services",
                  {{"Frontend", {{"envs", {{{"name", "DYN_ROUTER_MODE"}, {"value", "kv"}}}}}}}}}}});
  DynamoOperatorOptions options;
  options.worker_urls = {"http://127.0.0.1:18001", "http://127.0.0.1:18002"};
  options.frontend_url = "http://127.0.0.1:18000";
  options.timing = kTiming;
  options.worker_problem = "CrashLoopBackOff";
  DynamoOperator op(server_, options);
  const auto ready = [&] {
    return (*server_.get("dynamographdeployments", "default", "d1"))["status"]["conditions"][0];
  };
  EXPECT_EQ(ready()["status"], "True");

  ASSERT_TRUE(
      kubectl({"delete", "pods", "-l", "nvidia.com/dynamo-component-type=worker", "--wait=false"})
          .ok());
  // The replacements start; the one in slot 1 crash-loops, and the DGD says so.
  ASSERT_TRUE(eventually([&] {
    const auto pod = server_.get("pods", "default", "worker-1-1");
    return pod && (*pod)["status"]["containerStatuses"][0]["state"].contains("waiting") &&
           (*pod)["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] ==
               "CrashLoopBackOff" &&
           !server_.get("pods", "default", "worker-0-0");
  }));
  ASSERT_TRUE(eventually([&] { return ready()["message"] == "VllmWorker: 1/2 ready"; }));
  EXPECT_EQ(ready()["status"], "False");
  EXPECT_EQ(ready()["reason"], "ComponentsNotReady");
}

// kubectl deletes a label's pods one call at a time; on a busy machine the second call can come
// after the operator has already replaced the first pod. The replacement in the problem slot is
// still that slot's first, and still crash-loops.
TEST_F(FakeOperatorsTest, DynamoWorkersDeletedApartStillRestartTheProblemSlotOnce) {
  server_.put("dynamographdeployments",
              {{"metadata", {{"name", "d1"}}},
               {"spec",
                {{"services",
                  {{"Frontend", {{"envs", {{{"name", "DYN_ROUTER_MODE"}, {"value", "kv"}}}}}}}}}}});
  DynamoOperatorOptions options;
  options.worker_urls = {"http://127.0.0.1:18001", "http://127.0.0.1:18002"};
  options.frontend_url = "http://127.0.0.1:18000";
  options.timing = kTiming;
  options.worker_problem = "CrashLoopBackOff";
  DynamoOperator op(server_, options);

  ASSERT_TRUE(kubectl({"delete", "pod", "worker-0-0", "--wait=false"}).ok());
  ASSERT_TRUE(eventually([&] { return server_.get("pods", "default", "worker-1-0").has_value(); }));
  ASSERT_TRUE(kubectl({"delete", "pod", "worker-0-1", "--wait=false"}).ok());
  ASSERT_TRUE(eventually([&] {
    const auto pod = server_.get("pods", "default", "worker-1-1");
    return pod && (*pod)["status"]["containerStatuses"][0]["state"].contains("waiting") &&
           (*pod)["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] ==
               "CrashLoopBackOff";
  }));
}

}  // namespace
}  // namespace kvsweep::testing
