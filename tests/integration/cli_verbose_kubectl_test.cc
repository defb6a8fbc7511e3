// `kvsweep --verbose run` on a kubectl target, the real binary and the real kubectl against the
// fake API server: every kubectl argv and every readiness poll is logged at debug level on
// stderr; without --verbose none is.
#include <fstream>

#include "orchestrator/targets/child_process.h"
#include "tests/orchestrator/targets/kube/kube_test_env.h"

namespace kvsweep::orchestrator::kube::test {
namespace {

[[maybe_unused]] ::testing::Environment* const kCacheEnv =
    ::testing::AddGlobalTestEnvironment(new KubectlCacheEnvironment);

class CliVerboseKubectlTest : public KubeTargetTest {
 protected:
  CliVerboseKubectlTest() : fleet_(start_fleet(1, "sim-model")) {
    server_.put("deployments", {{"metadata", {{"name", "vllm"}, {"labels", {{"app", "vllm"}}}}},
                                {"spec", {{"replicas", 1}}}});
    server_.put("pods", replica_pod("vllm-0", {{"app", "vllm"}}, fleet_->replica_urls()[0]));
    std::ofstream(dir_.file("scenario.yaml")) << R"(name: verbose-kubectl
target:
  kind: kubectl
  kubeconfig: )" << dir_.file("kubeconfig") << R"(
  namespace: default
  base_url: )" << fleet_->router_url() << R"(
  pod_selector: app=vllm
  replicas: 1
  readiness: {poll: 0.05s}
  levels:
    mode:
      a:
        apply: [[annotate, deployment, vllm, kvsweep/mode=a, --overwrite]]
model: sim-model
factors:
  mode: [a]
  concurrency: [1]
load:
  dataset: {conversations: 2, turns: 1, system_prompt_words: 10, user_words: 5, assistant_words: 5}
  max_tokens: 2
  num_requests: 2
  cache: as-is
)";
  }

  ProcessResult run(bool verbose) {
    std::vector<std::string> argv{KVSWEEP_BINARY, "--db", dir_.file("kvsweep.db")};
    if (verbose) argv.push_back("--verbose");
    argv.insert(argv.end(), {"run", dir_.file("scenario.yaml"), "--no-print", "--output",
                             dir_.file("reports")});
    return run_process(argv, 60, {{"KUBECACHEDIR", dir_.file("kube-cache")}});
  }

  std::unique_ptr<sim::Fleet> fleet_;
};

TEST_F(CliVerboseKubectlTest, VerboseLogsEveryKubectlArgvAndGatePoll) {
  const ProcessResult r = run(/*verbose=*/true);
  ASSERT_TRUE(r.ok()) << r.err;
  const std::string connection =
      "kubectl --kubeconfig " + dir_.file("kubeconfig") + " --namespace default ";
  EXPECT_CONTAINS(
      r.err, "[debug] $ " + connection + "annotate deployment vllm kvsweep/mode=a --overwrite\n");
  EXPECT_CONTAINS(r.err, "[debug] $ " + connection + "get pods -l app=vllm -o json\n");
  EXPECT_CONTAINS(r.err, "[debug] kubectl exited with code 0 in ");
  EXPECT_CONTAINS(r.err, "[debug] readiness gate pods: open after ");
  EXPECT_CONTAINS(r.err, "[debug] readiness gate models: open after ");
  EXPECT_CONTAINS(r.err, "[debug] scrape before http://127.0.0.1:");
}

TEST_F(CliVerboseKubectlTest, WithoutVerboseNothingIsLoggedAtDebug) {
  const ProcessResult r = run(/*verbose=*/false);
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(r.err.find("[debug]"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("kubectl --kubeconfig"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kvsweep::orchestrator::kube::test
