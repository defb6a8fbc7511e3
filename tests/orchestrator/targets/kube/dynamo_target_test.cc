// The Dynamo target against the fake API server, with a simulated fleet as the model server.
#include <atomic>
#include <mutex>

#include "orchestrator/targets/kube/kube_targets.h"
#include "tests/orchestrator/targets/kube/kube_test_env.h"

namespace kvsweep::orchestrator::kube::test {
namespace {

const json kWorkerLabels = {{"nvidia.com/dynamo-graph-deployment-name", "d1"},
                            {"nvidia.com/dynamo-component-type", "worker"}};
const json kFrontendLabels = {{"nvidia.com/dynamo-graph-deployment-name", "d1"},
                              {"nvidia.com/dynamo-component-type", "frontend"}};

json dgd_object(const json& envs) {
  json frontend = {{"componentType", "frontend"}, {"replicas", 1}};
  if (!envs.is_null()) frontend["envs"] = envs;
  return {{"apiVersion", "nvidia.com/v1alpha1"},
          {"kind", "DynamoGraphDeployment"},
          {"metadata", {{"name", "d1"}, {"namespace", "default"}}},
          {"spec",
           {{"services",
             {{"Frontend", frontend},
              {"VllmDecodeWorker", {{"componentType", "worker"}, {"replicas", 2}}}}}}},
          {"status",
           {{"state", "successful"},
            {"observedGeneration", 1},
            {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

json frontend_env(const json& envs) {
  json env = json::object();
  for (const auto& e : envs) env[e["name"].get<std::string>()] = e["value"];
  return env;
}

class DynamoTargetTest : public KubeTargetTest {
 protected:
  DynamoTargetTest() : fleet_(start_fleet(2, "sim-model")) {
    server_.put("dynamographdeployments",
                dgd_object(json::parse(R"([{"name":"DYN_NAMESPACE","value":"dyn"},
                                           {"name":"DYN_ROUTER_MODE","value":"round-robin"},
                                           {"name":"DYN_HTTP_PORT","value":"8000"}])")));
    put_workers();
    put_frontend({{"DYN_ROUTER_MODE", "round-robin"}});
  }

  ScenarioSpec dynamo_spec() const {
    ScenarioSpec spec = scenario("dynamo");
    spec.target.resource = "d1";
    spec.target.replicas = 2;
    spec.target.base_url = fleet_->router_url();
    add_factor(spec, "strategy", {"round-robin", "kv"});
    return spec;
  }

  // Worker pods under fresh names, as a Deployment's replacements get them.
  void put_workers(const std::string& waiting_reason = "") {
    const auto replicas = fleet_->replica_urls();
    for (std::size_t i = 0; i < replicas.size(); ++i) {
      const std::string name = "w-" + std::to_string(generation_) + "-" + std::to_string(i);
      json pod = replica_pod(name, kWorkerLabels, replicas[i]);
      if (!waiting_reason.empty() && i == 1) {
        pod = testing::make_pod(name, "default", kWorkerLabels, false, "127.0.0.1",
                                port_of(replicas[i]), json::object(), waiting_reason,
                                "back-off 40s restarting failed container=server");
      }
      server_.put("pods", pod);
    }
    ++generation_;
  }

  void put_frontend(const json& env) {
    server_.put("pods", replica_pod("f-1", kFrontendLabels, fleet_->router_url(), env));
  }

  // The operator: on a DGD patch, roll the frontend with the new envs (when `roll_frontend`)
  // and report the new generation Ready; on a worker delete, bring up a replacement set.
  void run_operator(bool roll_frontend, bool observe, const std::string& worker_problem = "") {
    server_.set_controller([=, this](testing::FakeApiServer& s, const testing::ApiCall& call) {
      std::lock_guard lock(mu_);
      if (call.resource == "dynamographdeployments" && call.method == "PATCH") {
        auto dgd = *s.get("dynamographdeployments", "default", "d1");
        if (roll_frontend) put_frontend(frontend_env(dgd["spec"]["services"]["Frontend"]["envs"]));
        if (observe) dgd["status"]["observedGeneration"] = dgd["metadata"]["generation"];
        s.put("dynamographdeployments", dgd);
      }
      if (call.resource == "pods" && call.method == "DELETE") {
        bool any_worker = false;
        for (const auto& pod : s.list("pods", "default")) {
          if (pod["metadata"]["labels"] == kWorkerLabels) any_worker = true;
        }
        if (!any_worker) put_workers(worker_problem);  // after the last old one is gone
      }
    });
  }

  std::vector<std::string> worker_names() const {
    std::vector<std::string> names;
    for (const auto& pod : server_.list("pods", "default")) {
      if (pod["metadata"]["labels"] == kWorkerLabels) names.push_back(pod["metadata"]["name"]);
    }
    return names;
  }

  std::unique_ptr<sim::Fleet> fleet_;
  std::mutex mu_;
  int generation_ = 0;
};

TEST_F(DynamoTargetTest, ApplySetsTheRouterModeAndRestartsTheWorkers) {
  run_operator(/*roll_frontend=*/true, /*observe=*/true);
  auto target = make_dynamo_target(dynamo_spec());
  target->start();
  const Treatment t{{{"strategy", "kv-aware"}}};
  const auto planned = target->planned_commands(nullptr, t);
  const CommandLogs logs = target->apply(t);  // the calls it made, returned by the call

  const auto dgd = *server_.get("dynamographdeployments", "default", "d1");
  EXPECT_EQ(dgd["spec"]["services"]["Frontend"]["envs"],
            json::parse(R"([{"name":"DYN_NAMESPACE","value":"dyn"},
                            {"name":"DYN_ROUTER_MODE","value":"kv"},
                            {"name":"DYN_HTTP_PORT","value":"8000"}])"));
  EXPECT_EQ(dgd["spec"]["services"]["VllmDecodeWorker"]["replicas"], 2);  // untouched
  EXPECT_EQ(worker_names(), (std::vector<std::string>{"w-1-0", "w-1-1"}));

  auto ran = argvs_of(logs);
  ASSERT_EQ(ran.size(), 4u);
  ASSERT_EQ(planned.size(), 4u);
  // Every pod of the deployment read first, so the gates can tell the restarted workers.
  EXPECT_EQ(ran[0], planned[0]);
  EXPECT_EQ(std::vector<std::string>(ran[0].end() - 6, ran[0].end()),
            (std::vector<std::string>{"get", "pods", "-l",
                                      "nvidia.com/dynamo-graph-deployment-name=d1", "-o", "json"}));
  ran.erase(ran.begin());
  auto rest = planned;
  rest.erase(rest.begin());
  EXPECT_EQ(ran[0], rest[0]);
  EXPECT_EQ(ran[2], rest[2]);
  EXPECT_EQ(std::vector<std::string>(ran[2].end() - 5, ran[2].end()),
            (std::vector<std::string>{"delete", "pods", "-l",
                                      "nvidia.com/dynamo-graph-deployment-name=d1,"
                                      "nvidia.com/dynamo-component-type=worker",
                                      "--wait=false"}));
  // The patch's env list is read at run time; the plan has a placeholder in its place.
  auto ran_patch = ran[1];
  auto planned_patch = rest[1];
  EXPECT_EQ(planned_patch.back(),
            "{\"spec\":{\"services\":{\"Frontend\":{\"envs\":"
            "\"<envs of dgd/d1 with DYN_ROUTER_MODE=kv>\"}}}}");
  EXPECT_EQ(json::parse(ran_patch.back())["spec"]["services"]["Frontend"]["envs"],
            dgd["spec"]["services"]["Frontend"]["envs"]);
  ran_patch.pop_back();
  planned_patch.pop_back();
  EXPECT_EQ(ran_patch, planned_patch);

  const CommandLogs gate_logs = target->wait_ready();
  std::vector<std::string> metrics;
  for (const auto& url : fleet_->replica_urls()) metrics.push_back(url + "/metrics");
  EXPECT_EQ(target->endpoints().metrics_urls, metrics);
  EXPECT_FALSE(logs_of_step(gate_logs, "gate router-mode").empty());
  EXPECT_EQ(gate_logs.back().step, "discover");
  EXPECT_EQ(target->describe(), "dynamo dgd/d1 in namespace default (2 workers)");
}

TEST_F(DynamoTargetTest, ApplyAddsTheModeWhenTheFrontendHasNoEnvs) {
  server_.put("dynamographdeployments", dgd_object(nullptr));
  ScenarioSpec spec = dynamo_spec();
  spec.target.restart_workers = false;
  auto target = make_dynamo_target(spec);
  const CommandLogs logs = target->apply({{{"strategy", "least-load"}}});
  const auto dgd = *server_.get("dynamographdeployments", "default", "d1");
  EXPECT_EQ(dgd["spec"]["services"]["Frontend"]["envs"],
            json::parse(R"([{"name":"DYN_ROUTER_MODE","value":"least-loaded"}])"));
  EXPECT_EQ(worker_names(), (std::vector<std::string>{"w-0-0", "w-0-1"}));  // not restarted
  EXPECT_EQ(logs.size(), 2u);
}

TEST_F(DynamoTargetTest, AStaleReadyDoesNotOpenTheResourceGate) {
  run_operator(/*roll_frontend=*/true, /*observe=*/false);
  ScenarioSpec spec = dynamo_spec();
  spec.target.readiness.resource_s = 0.5;
  auto target = make_dynamo_target(spec);
  target->apply({{{"strategy", "kv"}}});
  const std::string error = target_error_of([&] { target->wait_ready(); });
  EXPECT_CONTAINS(error, "readiness gate resource: not open after");
  EXPECT_CONTAINS(error, "dgd/d1: status.observedGeneration 1 < metadata.generation 2");
}

TEST_F(DynamoTargetTest, ACrashLoopingWorkerFailsTheFirstGateAtOnce) {
  run_operator(/*roll_frontend=*/true, /*observe=*/true, "CrashLoopBackOff");
  ScenarioSpec spec = dynamo_spec();
  spec.target.readiness.pods_s = 20;
  auto target = make_dynamo_target(spec);
  target->apply({{{"strategy", "kv"}}});
  const auto start = std::chrono::steady_clock::now();
  const std::string error = target_error_of([&] { target->wait_ready(); });
  // Read with the resource's status at its first poll, though the DGD says Ready.
  EXPECT_CONTAINS(error,
                  "readiness gate resource: pod w-1-1: container server: "
                  "CrashLoopBackOff: back-off 40s restarting failed container");
  EXPECT_LT(seconds_since(start), spec.target.readiness.pods_s / 2);
}

TEST_F(DynamoTargetTest, AFrontendWithTheOldModeKeepsTheRouterModeGateClosed) {
  run_operator(/*roll_frontend=*/false, /*observe=*/true);
  ScenarioSpec spec = dynamo_spec();
  spec.target.readiness.pods_s = 1;
  auto target = make_dynamo_target(spec);
  target->apply({{{"strategy", "kv"}}});
  const std::string error = target_error_of([&] { target->wait_ready(); });
  EXPECT_CONTAINS(error, "readiness gate router-mode: not open after");
  EXPECT_CONTAINS(error, "frontend pod f-1 has DYN_ROUTER_MODE=round-robin, want kv");
}

TEST_F(DynamoTargetTest, StartNamesTheServicesWhenTheFrontendIsMisnamed) {
  ScenarioSpec spec = dynamo_spec();
  spec.target.frontend_service = "frontend";
  auto target = make_dynamo_target(spec);
  const std::string error = target_error_of([&] { target->start(); });
  EXPECT_EQ(error,
            "target.frontend_service: dgd/d1 has no spec.services.frontend; its services: "
            "Frontend, VllmDecodeWorker");
}

TEST_F(DynamoTargetTest, TheConstructorRejectsWhatDynamoCannotApply) {
  const auto message_of = [](const ScenarioSpec& spec) {
    return target_error_of([&] { make_dynamo_target(spec); });
  };
  ScenarioSpec spec = dynamo_spec();
  spec.factors.back().levels.push_back("prefix-hash");
  EXPECT_CONTAINS(message_of(spec),
                  "factor strategy: level \"prefix-hash\": Dynamo has no such "
                  "router mode; it accepts kv (kv-aware), round-robin");
  spec = dynamo_spec();
  add_factor(spec, "replication", {"1"});
  EXPECT_EQ(message_of(spec),
            "factor replication: kind dynamo cannot apply it; it applies strategy (the load "
            "driver applies concurrency, request_rate, max_tokens, cache)");
  spec = dynamo_spec();
  spec.target.resource = "";
  EXPECT_CONTAINS(message_of(spec), "target.resource: required for kind dynamo");
  spec = dynamo_spec();
  spec.factors.back().levels = {"power-of-two", "direct"};  // Dynamo's own, passed through
  EXPECT_EQ(message_of(spec), "(no error)");
}

}  // namespace
}  // namespace kvsweep::orchestrator::kube::test
