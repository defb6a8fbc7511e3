// The generic kubectl target: each level's apply and wait argv lists, run by the real kubectl.
#include "orchestrator/targets/kube/kube_targets.h"
#include "tests/orchestrator/targets/kube/kube_test_env.h"

namespace kvsweep::orchestrator::kube::test {
namespace {

using Argv = std::vector<std::string>;

LevelAction action(std::vector<Argv> apply, std::vector<Argv> wait) {
  LevelAction a;
  a.apply = std::move(apply);
  a.wait = std::move(wait);
  return a;
}

LevelAction caching(const std::string& mode) {
  return action({{"label", "deployment", "vllm", "mode=" + mode, "--overwrite"},
                 {"annotate", "deployment", "vllm", "kvsweep/arm=" + mode, "--overwrite"}},
                {{"wait", "--for=jsonpath={.metadata.labels.mode}=" + mode, "deployment/vllm",
                  "--timeout=5s"}});
}

class KubectlTargetTest : public KubeTargetTest {
 protected:
  KubectlTargetTest() : fleet_(start_fleet(2, "sim-model")) {
    server_.put("deployments", {{"metadata", {{"name", "vllm"}, {"labels", {{"app", "vllm"}}}}},
                                {"spec", {{"replicas", 2}}}});
    const auto replicas = fleet_->replica_urls();
    for (std::size_t i = 0; i < replicas.size(); ++i) {
      server_.put("pods", replica_pod("vllm-" + std::to_string(i), {{"app", "vllm"}}, replicas[i]));
    }
  }

  ScenarioSpec kubectl_spec() const {
    ScenarioSpec spec = scenario("kubectl");
    spec.target.base_url = fleet_->router_url();
    spec.target.pod_selector = "app=vllm";
    spec.target.replicas = 2;
    add_factor(spec, "prefix_caching", {"off", "on"});
    add_factor(spec, "block_size", {"16"});
    spec.target.levels["prefix_caching"]["off"] = caching("off");
    spec.target.levels["prefix_caching"]["on"] = caching("on");
    spec.target.levels["block_size"]["16"] =
        action({{"annotate", "deployment", "vllm", "kvsweep/block-size=16", "--overwrite"}}, {});
    return spec;
  }

  std::unique_ptr<sim::Fleet> fleet_;
};

// The argv without the binary and connection flags.
Argv tail(const Argv& argv, std::size_t words) {
  return Argv(argv.end() - static_cast<std::ptrdiff_t>(words), argv.end());
}

TEST_F(KubectlTargetTest, RunsTheLevelsCommandsInScenarioOrderThenTheGates) {
  auto target = make_kubectl_target(kubectl_spec());
  target->start();
  // The treatment lists the factors in another order; the scenario's order is what counts.
  const Treatment t{{{"block_size", "16"}, {"concurrency", "1"}, {"prefix_caching", "on"}}};
  const auto planned = target->planned_commands(nullptr, t);
  CommandLogs logs = target->apply(t);
  EXPECT_EQ(argvs_of(logs), planned);
  ASSERT_EQ(logs.size(), 4u);
  // The pods first: whatever the commands do, the gates then tell the pods made after them.
  EXPECT_EQ(tail(logs[0].argv, 6), (Argv{"get", "pods", "-l", "app=vllm", "-o", "json"}));
  EXPECT_EQ(tail(logs[1].argv, 5), (Argv{"label", "deployment", "vllm", "mode=on", "--overwrite"}));
  EXPECT_EQ(logs[2].argv[5], "annotate");
  EXPECT_EQ(logs[3].argv.back(), "--overwrite");
  EXPECT_EQ(logs[3].argv[logs[3].argv.size() - 2], "kvsweep/block-size=16");
  const auto deployment = *server_.get("deployments", "default", "vllm");
  EXPECT_EQ(deployment["metadata"]["labels"]["mode"], "on");
  EXPECT_EQ(deployment["metadata"]["annotations"]["kvsweep/block-size"], "16");

  logs = target->wait_ready();
  ASSERT_GE(logs.size(), 3u);
  EXPECT_EQ(logs[0].step, "gate wait");
  EXPECT_EQ(logs[0].exit_code, 0);
  EXPECT_EQ(tail(logs[0].argv, 4), (Argv{"wait", "--for=jsonpath={.metadata.labels.mode}=on",
                                         "deployment/vllm", "--timeout=5s"}));
  EXPECT_EQ(logs[1].step, "gate pods");
  EXPECT_EQ(logs.back().step, "discover");

  // Metrics discovery from the pods: podIP 127.0.0.1 and each replica's port.
  expect_metrics_of_every_replica(*target, *fleet_);
  EXPECT_NO_THROW(target->make_cold());
  EXPECT_EQ(target->describe(),
            "kubectl target in namespace default (pods -l app=vllm, 2 "
            "replicas)");
}

TEST_F(KubectlTargetTest, AFailingWaitFailsTheWaitGate) {
  ScenarioSpec spec = kubectl_spec();
  spec.target.levels["prefix_caching"]["off"].wait = {
      {"wait", "--for=jsonpath={.metadata.labels.mode}=never", "deployment/vllm",
       "--timeout=0.3s"}};
  auto target = make_kubectl_target(spec);
  const CommandLogs applied = target->apply({{{"prefix_caching", "off"}, {"block_size", "16"}}});
  ASSERT_FALSE(applied.empty());
  EXPECT_EQ(applied.front().step, "apply");
  const std::string error = target_error_of([&] { target->wait_ready(); });
  EXPECT_CONTAINS(error, "readiness gate wait: waiting for prefix_caching=off: `kubectl");
  EXPECT_CONTAINS(error, "exited with code 1");
  // The failed wait leaves with its error, though run by another kubectl runner.
  const CommandLogs waited = commands_of_failure([&] { target->wait_ready(); });
  ASSERT_EQ(waited.size(), 1u);
  EXPECT_EQ(waited.back().step, "gate wait");
  EXPECT_EQ(waited.back().exit_code, 1);
}

TEST_F(KubectlTargetTest, WithoutPodsTheReplicasComeFromTheMetricsUrls) {
  ScenarioSpec spec = kubectl_spec();
  spec.target.pod_selector = "";
  for (const auto& url : fleet_->replica_urls()) {
    spec.target.metrics.urls.push_back(url + "/metrics");
  }
  auto target = make_kubectl_target(spec);
  target->apply({{{"prefix_caching", "off"}, {"block_size", "16"}}});
  EXPECT_TRUE(logs_of_step(target->wait_ready(), "discover").empty());
  EXPECT_EQ(target->endpoints().metrics_urls, spec.target.metrics.urls);
  EXPECT_NO_THROW(target->make_cold());

  spec.target.cold_method = "restart";
  auto restarting = make_kubectl_target(spec);
  const std::string error = target_error_of([&] { restarting->make_cold(); });
  EXPECT_CONTAINS(error, "cold: cold_method restart needs target.pod_selector");
}

TEST_F(KubectlTargetTest, TheConstructorWantsEveryLevelInTargetLevels) {
  const auto message_of = [](const ScenarioSpec& spec) {
    return target_error_of([&] { make_kubectl_target(spec); });
  };
  ScenarioSpec spec = kubectl_spec();
  spec.target.levels["prefix_caching"].erase("on");
  EXPECT_EQ(message_of(spec),
            "factor prefix_caching: level \"on\" has no entry in "
            "target.levels.prefix_caching (it has: off)");
  spec = kubectl_spec();
  spec.target.levels.erase("block_size");
  EXPECT_EQ(message_of(spec),
            "factor block_size: level \"16\" has no entry in "
            "target.levels.block_size (it has: none)");
  spec = kubectl_spec();
  spec.target.levels["block_size"]["16"].apply = {{"kubectl", "annotate", "deployment", "vllm"}};
  EXPECT_CONTAINS(message_of(spec),
                  "target.levels.block_size.16.apply[0]: write the arguments "
                  "without \"kubectl\"");
  spec = kubectl_spec();
  spec.target.levels["block_size"]["16"].wait = {{}};
  EXPECT_EQ(message_of(spec), "target.levels.block_size.16.wait[0]: an empty command");
  spec = kubectl_spec();
  spec.target.base_url = "";
  EXPECT_CONTAINS(message_of(spec), "target.base_url: required for kind kubectl");
  EXPECT_EQ(server_.calls().size(), 0u);
}

}  // namespace
}  // namespace kvsweep::orchestrator::kube::test
