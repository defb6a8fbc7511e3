// The llm-d target against the fake API server with the real kubectl: an InferencePool whose
// model servers are a simulated fleet's replicas, and its endpoint picker as a Deployment rolled
// by the fake's Deployment controller (with its lag), crash-looping on a configuration its
// release does not know.
#include <algorithm>
#include <cstdio>
#include <set>

#include "orchestrator/cli/console.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/sweep/runner.h"
#include "orchestrator/targets/kube/kube_targets.h"
#include "orchestrator/targets/target_factory.h"
#include "sim/router/epp_config.h"
#include "store/store.h"
#include "tests/orchestrator/targets/kube/kube_test_env.h"
#include "tests/support/fake_operators.h"

namespace kvsweep::orchestrator::kube::test {
namespace {

const json kServerLabels = {{"app", "vllm"}};

constexpr const char* kQueueOnly = R"(apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: queue-scorer
)";

constexpr const char* kLoadAware = R"(apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: load-aware-scorer
)";

// The plugin types of the Inference Extension's own EPP image, without llm-d's: the cluster's
// EPP refuses load-aware-scorer, which kvsweep's model (llm-d's EPP) knows.
const std::set<std::string> kClusterEppTypes = {"prefix-cache-scorer", "queue-scorer",
                                                "kv-cache-utilization-scorer", "max-score-picker",
                                                "single-profile-handler"};

// What the cluster's EPP says of its configuration, "" when it starts: the Extension's loader
// message for the first type it does not know.
std::string epp_refusal(const std::string& config) {
  std::size_t at = 0;
  while ((at = config.find("type: ", at)) != std::string::npos) {
    at += 6;
    const std::string type = config.substr(at, config.find('\n', at) - at);
    if (!kClusterEppTypes.count(type)) {
      return "failed to load the configuration - failed to instantiate plugins - plugin type '" +
             type + "' is not found in registry";
    }
  }
  return "";
}

class LlmdTargetTest : public KubeTargetTest {
 protected:
  LlmdTargetTest() : fleet_(start_fleet(2, "sim-model")) {
    server_.put("inferencepools",
                {{"apiVersion", "inference.networking.k8s.io/v1"},
                 {"kind", "InferencePool"},
                 {"metadata", {{"name", "pool"}, {"namespace", "default"}}},
                 {"spec",
                  {{"selector", {{"matchLabels", kServerLabels}}},
                   {"targetPorts", {{{"number", 8000}}}},
                   {"endpointPickerRef", {{"name", "pool-epp"}, {"port", {{"number", 9002}}}}}}}});
    const auto replicas = fleet_->replica_urls();
    for (std::size_t i = 0; i < replicas.size(); ++i) {
      server_.put("pods", replica_pod("vllm-" + std::to_string(i), kServerLabels, replicas[i]));
    }
    server_.put("configmaps", {{"apiVersion", "v1"},
                               {"kind", "ConfigMap"},
                               {"metadata", {{"name", "pool-epp"}, {"namespace", "default"}}},
                               {"data", {{"default-plugins.yaml", kQueueOnly}}}});
    server_.put("deployments", {{"apiVersion", "apps/v1"},
                                {"kind", "Deployment"},
                                {"metadata", {{"name", "pool-epp"}, {"namespace", "default"}}},
                                {"spec",
                                 {{"replicas", 1},
                                  {"selector", {{"matchLabels", {{"app", "pool-epp"}}}}},
                                  {"template",
                                   {{"metadata", {{"labels", {{"app", "pool-epp"}}}}},
                                    {"spec", {{"containers", {{{"name", "epp"}}}}}}}}}}});
    server_.set_termination_delay("pods", 0.1);
    testing::DeploymentOperatorOptions epp;
    epp.deployment = "pool-epp";
    epp.replica_urls = {fleet_->router_url()};  // its /metrics stands in for the EPP's
    epp.timing = {0.2, 0.1, 0.1};               // the controller acts 0.2 s after a change
    epp.pod_problem = [this] {
      const auto cm = server_.get("configmaps", "default", "pool-epp");
      return epp_refusal((*cm)["data"]["default-plugins.yaml"].get<std::string>()).empty()
                 ? ""
                 : "CrashLoopBackOff";
    };
    operator_ = std::make_unique<testing::DeploymentOperator>(server_, epp);
    // `kubectl logs --previous` of an EPP pod: what the EPP logged before it exited.
    server_.set_pod_runtime(
        {[this](const std::string&, const std::string& pod,
                const std::string&) -> std::optional<std::string> {
           if (pod.rfind("pool-epp", 0) != 0) return std::nullopt;
           const auto cm = server_.get("configmaps", "default", "pool-epp");
           return "Failed to parse plugins configuration\n" +
                  epp_refusal((*cm)["data"]["default-plugins.yaml"].get<std::string>()) + "\n";
         },
         {}});
  }

  ScenarioSpec llmd_spec() const {
    ScenarioSpec spec = scenario("llmd");
    spec.target.pool = "pool";
    spec.target.replicas = 2;
    spec.target.base_url = fleet_->router_url();
    spec.target.epp_metrics_port = port_of(fleet_->router_url());
    for (const auto& [name, text] :
         {std::pair{"queue-only", kQueueOnly}, std::pair{"load-aware", kLoadAware}}) {
      std::string error;
      spec.epp_configs[name] = {name, "", sim::parse_epp_config(name, text, &error), {}};
    }
    add_factor(spec, "strategy", {"queue-only", "load-aware"});
    return spec;
  }

  std::vector<std::string> pod_uids(const json& labels) const {
    std::vector<std::string> uids;
    for (const auto& pod : server_.list("pods", "default")) {
      if (pod["metadata"]["labels"].value("app", "") == labels.value("app", "")) {
        uids.push_back(pod["metadata"]["uid"]);
      }
    }
    return uids;
  }

  std::unique_ptr<sim::Fleet> fleet_;
  std::unique_ptr<testing::DeploymentOperator> operator_;
};

TEST_F(LlmdTargetTest, ApplyWritesTheConfigMapThenRollsTheEppAloneAndWaitsForItsNewPods) {
  const ScenarioSpec spec = llmd_spec();
  auto target = make_llmd_target(spec);
  target->start();
  const auto servers_before = pod_uids(kServerLabels);
  const auto epp_before = pod_uids({{"app", "pool-epp"}});
  const Treatment t{{{"strategy", "queue-only"}}};
  const auto planned = target->planned_commands(nullptr, t);
  const CommandLogs applied = target->apply(t);
  EXPECT_EQ(argvs_of(applied), planned);  // plan shows exactly what runs
  ASSERT_EQ(planned.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(planned[1].end() - 6, planned[1].end() - 1),
            (std::vector<std::string>{"patch", "configmap", "pool-epp", "--type=merge", "-p"}));
  EXPECT_EQ(json::parse(planned[1].back())["data"]["default-plugins.yaml"], kQueueOnly);
  const auto annotation = json::parse(
      planned[2].back())["spec"]["template"]["metadata"]["annotations"]["kvsweep.io/epp-config"];
  EXPECT_EQ(annotation.get<std::string>().rfind("queue-only-", 0), 0u) << annotation;

  const CommandLogs gates = target->wait_ready();
  EXPECT_FALSE(logs_of_step(gates, "gate epp-rollout").empty());
  // The EPP's pods are all new, the model servers' the same pods.
  const auto epp_after = pod_uids({{"app", "pool-epp"}});
  ASSERT_EQ(epp_after.size(), 1u);
  EXPECT_NE(epp_after, epp_before);
  EXPECT_EQ(pod_uids(kServerLabels), servers_before);
  EXPECT_EQ(object_calls(server_.calls(), "pods").size(), 0u);  // no pod deleted or patched
  // The model servers' /metrics, then the EPP's own.
  std::vector<std::string> metrics;
  for (const auto& url : fleet_->replica_urls()) metrics.push_back(url + "/metrics");
  metrics.push_back(fleet_->router_url() + "/metrics");
  EXPECT_EQ(target->endpoints().metrics_urls, metrics);
  EXPECT_EQ(target->describe(),
            "llmd inferencepool/pool (endpoint picker deployment/pool-epp, 2 model servers) in "
            "namespace default");
}

// A cell's epp.<config>.<plugin>.<key> levels are written into the configuration it applies:
// another text in the ConfigMap, another annotation, so each level rolls the EPP.
TEST_F(LlmdTargetTest, ACellsEppSettingsAreInTheConfigMapItWrites) {
  const ScenarioSpec spec = llmd_spec();
  auto target = make_llmd_target(spec);
  const auto written = [&](const Treatment& t) {
    const auto planned = target->planned_commands(nullptr, t);
    EXPECT_EQ(planned.size(), 3u);
    const std::string text = json::parse(planned.at(1).back())["data"]["default-plugins.yaml"];
    const std::string annotation =
        json::parse(planned.at(2).back())["spec"]["template"]["metadata"]["annotations"]
                                         ["kvsweep.io/epp-config"];
    return std::pair{text, annotation};
  };
  Treatment weighted{{{"strategy", "queue-only"}}};
  weighted.epp_settings = {{"epp.queue-only.queue-scorer.weight", "5"}};
  const auto [plain_text, plain_annotation] = written({{{"strategy", "queue-only"}}});
  const auto [text, annotation] = written(weighted);
  EXPECT_EQ(plain_text, kQueueOnly);
  std::string error;
  const auto config = sim::parse_epp_config("written", text, &error);
  ASSERT_NE(config, nullptr) << error;
  EXPECT_EQ(config->scorers.at(0).weight, 5);
  EXPECT_NE(annotation, plain_annotation);
  EXPECT_EQ(annotation.rfind("queue-only-", 0), 0u) << annotation;
}

TEST_F(LlmdTargetTest, AConfigurationTheClustersEppRefusesFailsWithTheEppsOwnMessage) {
  const ScenarioSpec spec = llmd_spec();
  auto target = make_llmd_target(spec);
  target->start();
  target->apply({{{"strategy", "load-aware"}}});
  const std::string error = target_error_of([&] { target->wait_ready(); });
  EXPECT_CONTAINS(error, "the endpoint picker did not start with the configuration: pod pool-epp-");
  EXPECT_CONTAINS(error, "CrashLoopBackOff");
  EXPECT_CONTAINS(error,
                  "its log: Failed to parse plugins configuration\nfailed to load the "
                  "configuration - failed to instantiate plugins - plugin type "
                  "'load-aware-scorer' is not found in registry");
}

TEST_F(LlmdTargetTest, AColdCellResetsTheModelServersAndRestartsTheEpp) {
  ScenarioSpec spec = llmd_spec();
  auto target = make_llmd_target(spec);
  target->start();
  target->apply({{{"strategy", "queue-only"}}});
  target->wait_ready();
  const auto epp_before = pod_uids({{"app", "pool-epp"}});
  const CommandLogs cold = target->make_cold();
  const auto epp_after = pod_uids({{"app", "pool-epp"}});
  ASSERT_EQ(epp_after.size(), 1u);
  EXPECT_NE(epp_after, epp_before);
  const auto deployment = *server_.get("deployments", "default", "pool-epp");
  EXPECT_EQ(deployment["spec"]["template"]["metadata"]["annotations"]["kvsweep.io/epp-restart"],
            "1");
  EXPECT_FALSE(logs_of_step(cold, "cold").empty());
}

TEST_F(LlmdTargetTest, AStrategyLevelThatNamesNoConfigurationIsRefusedBeforeAnything) {
  ScenarioSpec spec = llmd_spec();
  spec.factors.back() = value_factor("strategy", "target.strategy", {"least-load"});
  EXPECT_EQ(target_error_of([&] { make_llmd_target(spec); }),
            "factor strategy: level \"least-load\" is no EPP configuration of this scenario; "
            "kind llmd applies the configurations named under epp: (load-aware, queue-only are)");
  EXPECT_TRUE(server_.calls().empty());
}

// llm-d's precise prefix scorer (fed by vLLM's KV events) is a plugin kvsweep's router does not
// model: kind llmd writes the configuration into the ConfigMap as any other, and plans it;
// a rehearsal (--target sim) or a prediction refuses it before anything runs, saying why.
TEST_F(LlmdTargetTest, APluginOnlyTheRealEppRunsIsAppliedAndARehearsalRefusesIt) {
  constexpr const char* kPrecise = R"(apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: precise-prefix-cache-scorer
- type: queue-scorer
)";
  ScenarioSpec spec = llmd_spec();
  std::string error;
  spec.epp_configs["precise"] = {
      "precise", "", sim::parse_epp_config("precise", kPrecise, &error), {}};
  ASSERT_NE(spec.epp_configs["precise"].config, nullptr) << error;
  spec.factors.back() = value_factor("strategy", "target.strategy", {"queue-only", "precise"});
  auto target = make_llmd_target(spec);
  target->start();
  const Treatment t{{{"strategy", "precise"}}};
  const auto planned = target->planned_commands(nullptr, t);
  EXPECT_EQ(argvs_of(target->apply(t)), planned);
  const auto cm = *server_.get("configmaps", "default", "pool-epp");
  EXPECT_EQ(cm["data"]["default-plugins.yaml"], kPrecise);

  const auto plan = expand_plan(spec);
  for (const std::string kind : {"sim", "predict"}) {
    std::string refused;
    try {
      build_planner(spec, plan, kind);
    } catch (const std::invalid_argument& e) {
      refused = e.what();
    }
    EXPECT_CONTAINS(refused, "factor strategy: level \"precise\": the ");
    EXPECT_CONTAINS(refused,
                    " fleet cannot run this EPP configuration: not modelled by kvsweep's router: "
                    "precise:4:9: plugins[0].type: plugin type 'precise-prefix-cache-scorer'");
  }
}

// A whole sweep, two configurations x two concurrency levels, stored in a real SQLite file: the
// configuration the cluster's EPP refuses fails its arm once, with the EPP's own message, and
// is never written to the ConfigMap again; the other arm's cells run, before and after it.
TEST_F(LlmdTargetTest, AConfigurationTheEppRefusesFailsItsArmOnceAndTheSweepGoesOn) {
  ScenarioSpec spec = llmd_spec();
  spec.load.num_requests = 6;
  spec.load.max_tokens = 4;
  spec.load.warmup_requests = 0;
  spec.target.metrics.interval_s = 0.2;
  const auto plan = expand_plan(spec);
  ASSERT_EQ(plan.size(), 4u);
  auto target = make_llmd_target(spec);
  store::Store store = store::Store::open(dir_.file("kvsweep.db"));
  std::FILE* log = std::tmpfile();
  Console console(log);
  const SweepOutcome outcome = run_sweep(spec, plan, *target, store, console, RunnerOptions{});
  std::fclose(log);
  EXPECT_EQ(outcome.status, "failed");
  EXPECT_EQ(outcome.cells_done, 2);
  EXPECT_EQ(outcome.cells_failed, 2);

  const std::string refusal = "plugin type 'load-aware-scorer' is not found in registry";
  int gate_failures = 0;
  int not_run = 0;
  for (const auto& cell : store.cells(outcome.experiment_id)) {
    SCOPED_TRACE(cell.arm + "@" + std::to_string(cell.concurrency));
    if (cell.arm == "queue-only") {
      EXPECT_EQ(cell.status, "done") << cell.error;
      continue;
    }
    EXPECT_EQ(cell.status, "failed");
    EXPECT_CONTAINS(cell.error, refusal);
    if (cell.error.rfind("not run: its deployment failed: ", 0) == 0) {
      ++not_run;
    } else {
      ++gate_failures;
      EXPECT_CONTAINS(cell.error, "CrashLoopBackOff");
    }
  }
  EXPECT_EQ(gate_failures, 1);
  EXPECT_EQ(not_run, 1);

  // The refused configuration reached the ConfigMap once; queue-only was applied again after it.
  std::vector<std::string> written;
  for (const auto& call : server_.calls()) {
    if (call.resource != "configmaps" || call.method != "PATCH") continue;
    const std::string text = json::parse(call.body)["data"]["default-plugins.yaml"];
    written.push_back(text == kQueueOnly ? "queue-only" : text == kLoadAware ? "load-aware" : "?");
  }
  EXPECT_EQ(std::count(written.begin(), written.end(), "load-aware"), 1) << written.size();
  EXPECT_EQ(std::count(written.begin(), written.end(), "?"), 0);
  EXPECT_GE(std::count(written.begin(), written.end(), "queue-only"), 1);
}

}  // namespace
}  // namespace kvsweep::orchestrator::kube::test
