// The kubectl runner: argv building, logging, and the errors of failing calls.
#include "orchestrator/targets/kube/kubectl.h"

#include <sys/stat.h>

#include <fstream>

#include "tests/orchestrator/targets/kube/kube_test_env.h"

namespace kvsweep::orchestrator::kube::test {
namespace {

[[maybe_unused]] ::testing::Environment* const kCacheEnv =
    ::testing::AddGlobalTestEnvironment(new KubectlCacheEnvironment);

TEST(KubectlArgvTest, AddsConnectionFlagsBeforeTheArguments) {
  KubectlConfig config;
  config.binary = "/usr/local/bin/kubectl";
  config.kubeconfig = "/tmp/kc";
  config.context = "gpu-cluster";
  config.namespace_name = "serving";
  const Kubectl kubectl(config);
  EXPECT_EQ(
      kubectl.argv({"get", "pods"}),
      (std::vector<std::string>{"/usr/local/bin/kubectl", "--kubeconfig", "/tmp/kc", "--context",
                                "gpu-cluster", "--namespace", "serving", "get", "pods"}));
}

TEST(KubectlArgvTest, LeavesOutKubeconfigAndContextWhenUnset) {
  const Kubectl kubectl(KubectlConfig{});
  EXPECT_EQ(kubectl.argv({"get", "model", "m1"}),
            (std::vector<std::string>{"kubectl", "--namespace", "default", "get", "model", "m1"}));
}

class KubectlTest : public KubeTargetTest {
 protected:
  KubectlConfig config() const {
    KubectlConfig c;
    c.kubeconfig = dir_.file("kubeconfig");
    c.timeout_s = 20;
    return c;
  }
};

TEST_F(KubectlTest, GetJsonParsesTheObjectAndLogsTheCall) {
  server_.put("models", {{"metadata", {{"name", "m1"}}}, {"spec", {{"replicas", 2}}}});
  Kubectl kubectl(config());
  const json model = kubectl.get_json("start", {"get", "model", "m1"}, "reading the model");
  EXPECT_EQ(model["spec"]["replicas"], 2);

  const auto logs = kubectl.take_logs();
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].step, "start");
  EXPECT_EQ(logs[0].argv, kubectl.argv({"get", "model", "m1", "-o", "json"}));
  EXPECT_EQ(logs[0].exit_code, 0);
  EXPECT_GT(logs[0].seconds, 0);
  EXPECT_CONTAINS(logs[0].out, "\"m1\"");
  EXPECT_TRUE(kubectl.take_logs().empty());
}

TEST_F(KubectlTest, AFailingCallThrowsWithTheCommandAndStderr) {
  Kubectl kubectl(config());
  const std::string error = target_error_of([&] {
    kubectl.run_ok("apply", {"get", "model", "missing"}, "reading model/missing");
  });
  EXPECT_CONTAINS(error, "reading model/missing: `kubectl --kubeconfig " + dir_.file("kubeconfig") +
                             " --namespace default get model missing` exited with code 1");
  EXPECT_CONTAINS(error, "NotFound");
  EXPECT_CONTAINS(error, "missing");
  const auto logs = kubectl.take_logs();
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].exit_code, 1);
  EXPECT_CONTAINS(logs[0].err, "NotFound");
}

TEST_F(KubectlTest, ATimeoutSaysHowLongItWaited) {
  // A stand-in binary that hangs, as kubectl does against an unreachable API server.
  const std::string script = dir_.file("hang.sh");
  std::ofstream(script) << "#!/bin/sh\nexec sleep 30\n";
  ::chmod(script.c_str(), 0755);
  KubectlConfig c = config();
  c.binary = script;
  c.timeout_s = 0.3;
  Kubectl kubectl(c);
  const auto start = std::chrono::steady_clock::now();
  const std::string error = target_error_of([&] {
    kubectl.run_ok("gate pods", {"get", "pods"}, "listing pods");
  });
  EXPECT_CONTAINS(error, "listing pods: `" + script);
  EXPECT_CONTAINS(error, "get pods` timed out after 300 ms");
  EXPECT_LT(seconds_since(start), 5);
  const auto logs = kubectl.take_logs();
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].exit_code, -1);
}

TEST_F(KubectlTest, AMissingBinaryCannotStart) {
  KubectlConfig c = config();
  c.binary = dir_.file("no-such-kubectl");
  Kubectl kubectl(c);
  EXPECT_THROW(
      {
        try {
          kubectl.run_ok("start", {"version"}, "checking kubectl");
        } catch (const TargetError& e) {
          EXPECT_CONTAINS(std::string(e.what()), "could not be started");
          throw;
        }
      },
      TargetError);
}

TEST_F(KubectlTest, OutputThatIsNotJsonIsATargetError) {
  server_.put("models", {{"metadata", {{"name", "m1"}}}});
  KubectlConfig c = config();
  Kubectl kubectl(c);
  // `-o json` is appended after `-o name`; kubectl takes the last, so the output is JSON.
  EXPECT_NO_THROW(kubectl.get_json("x", {"get", "model", "m1", "-o", "name"}, "reading"));
  const std::string script = dir_.file("not-json.sh");
  std::ofstream(script) << "#!/bin/sh\necho 'model.kubeai.org/m1'\n";
  ::chmod(script.c_str(), 0755);
  c.binary = script;
  Kubectl fake(c);
  const std::string error = target_error_of([&] {
    fake.get_json("x", {"get", "model", "m1"}, "reading model/m1");
  });
  EXPECT_CONTAINS(error, "reading model/m1: `");
  EXPECT_CONTAINS(error, "did not print JSON");
}

}  // namespace
}  // namespace kvsweep::orchestrator::kube::test
