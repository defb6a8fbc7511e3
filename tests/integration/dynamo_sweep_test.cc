// The seed-003 scenario file, as shipped, swept end to end on a stand-in Dynamo cluster: the
// real kubectl against the fake API server (an operator played by the test), a simulated fleet
// on loopback as the model servers, a real SQLite store. What the seed asked for: 5 levels x 2
// router modes in 2 deployments, not 10.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>

#include "figures/cell_metrics.h"
#include "orchestrator/cli/console.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/sweep/runner.h"
#include "orchestrator/targets/child_process.h"
#include "orchestrator/targets/target_factory.h"
#include "orchestrator/targets/target_kinds.h"
#include "store/store.h"
#include "tests/orchestrator/targets/kube/kube_test_env.h"

namespace kvsweep::orchestrator::kube::test {
namespace {

[[maybe_unused]] ::testing::Environment* const kCacheEnv =
    ::testing::AddGlobalTestEnvironment(new KubectlCacheEnvironment);

constexpr const char* kNamespace = "dynamo";

class DynamoSweepTest : public ::testing::Test {
 protected:
  DynamoSweepTest() {
    server_.write_kubeconfig(dir_.file("kubeconfig"));
    std::vector<ScenarioError> errors;
    auto spec = load_scenario_file(KVSWEEP_SOURCE_DIR "/scenarios/dynamo-70b-kv-routing.yaml",
                                   &errors, target_kinds());
    if (!spec) throw std::runtime_error(errors.at(0).text);
    spec_ = *spec;
    fleet_ = start_fleet(spec_.target.replicas, spec_.model);

    // Where the cluster is and how long it may take; factors, model and dataset as shipped.
    TargetSpec& t = spec_.target;
    t.kubeconfig = dir_.file("kubeconfig");
    t.command_timeout_s = 20;
    t.base_url = fleet_->router_url();
    t.readiness = ReadinessSpec{20, 20, 10, 10, 0.05};
    t.readiness.settle_s = 0.2;
    t.metrics.port = 0;  // the pods' containerPort is the replica's loopback port
    t.metrics.interval_s = 0.2;
    // Cells short enough for a test: the flow is under test here, not the figures.
    spec_.load.duration_s = 0.3;
    spec_.load.num_requests = 12;
    spec_.load.warmup_requests = 2;
    spec_.load.max_tokens = 4;

    labels_ = {{"nvidia.com/dynamo-graph-deployment-name", t.resource},
               {"nvidia.com/dynamo-component-type", "worker"}};
    frontend_labels_ = {{"nvidia.com/dynamo-graph-deployment-name", t.resource},
                        {"nvidia.com/dynamo-component-type", "frontend"}};
    server_.put("dynamographdeployments", dgd());
    put_workers("");
    put_frontend(json::object());
  }

  json dgd() const {
    return {{"apiVersion", "nvidia.com/v1alpha1"},
            {"kind", "DynamoGraphDeployment"},
            {"metadata", {{"name", spec_.target.resource}, {"namespace", kNamespace}}},
            {"spec",
             {{"services",
               {{"Frontend",
                 {{"componentType", "frontend"},
                  {"replicas", 1},
                  {"envs", json::array({{{"name", "DYN_NAMESPACE"}, {"value", "llama"}}})}}},
                {"TRTLLMWorker", {{"componentType", "worker"}, {"replicas", 4}}}}}}},
            {"status",
             {{"state", "successful"},
              {"observedGeneration", 1},
              {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
  }

  // A fresh set of worker pods, one per fleet replica; with `problem`, the second never
  // starts (its container waits with that reason).
  void put_workers(const std::string& problem) {
    const auto replicas = fleet_->replica_urls();
    for (std::size_t i = 0; i < replicas.size(); ++i) {
      const std::string name = "worker-" + std::to_string(rollouts_) + "-" + std::to_string(i);
      if (!problem.empty() && i == 1) {
        server_.put("pods", testing::make_pod(name, kNamespace, labels_, false, "127.0.0.1",
                                              port_of(replicas[i]), json::object(), problem,
                                              "back-off 5m0s restarting failed container"));
      } else {
        server_.put("pods", testing::make_pod(name, kNamespace, labels_, true, "127.0.0.1",
                                              port_of(replicas[i])));
      }
    }
    ++rollouts_;
  }

  void put_frontend(const json& env) {
    server_.put("pods", testing::make_pod("frontend-0", kNamespace, frontend_labels_, true,
                                          "127.0.0.1", port_of(fleet_->router_url()), env));
  }

  // The Dynamo operator: a DGD patch rolls the frontend with the new envs and reports the new
  // generation Ready; once every worker is deleted, a new set comes up (the second rollout's
  // with `second_rollout_problem`).
  void run_operator(const std::string& second_rollout_problem = "") {
    server_.set_controller([=, this](testing::FakeApiServer& s, const testing::ApiCall& call) {
      std::lock_guard lock(mu_);
      if (call.resource == "dynamographdeployments" && call.method == "PATCH") {
        auto object = *s.get("dynamographdeployments", kNamespace, spec_.target.resource);
        json env = json::object();
        for (const auto& e : object["spec"]["services"]["Frontend"]["envs"]) {
          env[e["name"].get<std::string>()] = e["value"];
        }
        put_frontend(env);
        object["status"]["observedGeneration"] = object["metadata"]["generation"];
        s.put("dynamographdeployments", object);
      }
      if (call.resource == "pods" && call.method == "DELETE") {
        const auto pods = s.list("pods", kNamespace);
        const bool any_worker = std::any_of(pods.begin(), pods.end(), [&](const json& pod) {
          return pod["metadata"]["labels"] == labels_;
        });
        if (!any_worker) put_workers(rollouts_ == 1 ? "" : second_rollout_problem);
      }
    });
  }

  SweepOutcome sweep() {
    auto target = make_target(spec_, expand_plan(spec_), /*use_sim=*/false, silent_log());
    std::FILE* log = std::tmpfile();
    Console console(log);
    const SweepOutcome outcome =
        run_sweep(spec_, expand_plan(spec_), *target, store_, console, RunnerOptions{});
    std::fclose(log);
    return outcome;
  }

  // The router mode each DGD patch set, in order.
  std::vector<std::string> patched_modes() const {
    std::vector<std::string> modes;
    for (const auto& call : server_.calls()) {
      if (call.resource != "dynamographdeployments" || call.method != "PATCH") continue;
      std::string mode = "<none>";
      const json patch = json::parse(call.body);
      for (const auto& e : patch["spec"]["services"]["Frontend"]["envs"]) {
        if (e["name"] == "DYN_ROUTER_MODE") mode = e["value"];
      }
      modes.push_back(mode);
    }
    return modes;
  }

  int deleted_pods() const {
    const auto calls = server_.calls();
    return static_cast<int>(std::count_if(calls.begin(), calls.end(), [](const auto& call) {
      return call.resource == "pods" && call.method == "DELETE";
    }));
  }

  testing::TempDir dir_;
  testing::FakeApiServer server_;
  std::unique_ptr<sim::Fleet> fleet_;
  ScenarioSpec spec_;
  store::Store store_ = store::Store::open(dir_.file("kvsweep.db"));
  json labels_;
  json frontend_labels_;
  std::mutex mu_;
  int rollouts_ = 0;
};

TEST_F(DynamoSweepTest, TenCellsTwoFrontendChangesEachFollowedByOneWorkerRollout) {
  run_operator();
  const SweepOutcome outcome = sweep();
  EXPECT_EQ(outcome.status, "done");
  EXPECT_EQ(outcome.cells_done, 10);

  // Exactly two changes of the Frontend, round-robin first, each restarting the 4 workers.
  EXPECT_EQ(patched_modes(), (std::vector<std::string>{"round-robin", "kv"}));
  EXPECT_EQ(deleted_pods(), 8);
  const auto object = *server_.get("dynamographdeployments", kNamespace, spec_.target.resource);
  EXPECT_EQ(object["spec"]["services"]["Frontend"]["envs"],
            json::parse(R"([{"name":"DYN_NAMESPACE","value":"llama"},
                            {"name":"DYN_ROUTER_MODE","value":"kv"}])"));
  EXPECT_EQ(object["spec"]["services"]["TRTLLMWorker"]["replicas"], 4);

  // The applies are stored with the first cell of each deployment and nowhere else; every
  // cell has its requests and the replicas' metrics, found from the worker pods.
  const auto cells = store_.cells(outcome.experiment_id);
  ASSERT_EQ(cells.size(), 10u);
  for (const auto& cell : cells) {
    SCOPED_TRACE("cell " + std::to_string(cell.ordinal + 1));
    EXPECT_EQ(cell.status, "done") << cell.error;
    EXPECT_EQ(cell.arm, cell.ordinal < 5 ? "round-robin" : "kv");
    const bool first_of_group = cell.ordinal == 0 || cell.ordinal == 5;
    const auto commands = store_.commands(cell.id);
    const bool patched = std::any_of(commands.begin(), commands.end(), [](const auto& c) {
      return std::find(c.argv.begin(), c.argv.end(), "patch") != c.argv.end();
    });
    EXPECT_EQ(patched, first_of_group);
    const auto requests = store_.requests(cell.id);
    EXPECT_GE(requests.size(), 12u);
    const auto metrics = figures::compute_cell_metrics(requests, store_.metric_samples(cell.id));
    EXPECT_GT(metrics.ok, 0);
    EXPECT_TRUE(metrics.kv_hit_rate_server.has_value());
  }
}

TEST_F(DynamoSweepTest, ACrashLoopingWorkerFailsItsDeploymentWithThePodsReason) {
  run_operator("CrashLoopBackOff");
  spec_.target.readiness.resource_s = 300;  // failing fast must not wait these out
  spec_.target.readiness.pods_s = 300;
  const SweepOutcome outcome = sweep();
  EXPECT_EQ(outcome.status, "failed");
  EXPECT_EQ(outcome.cells_done, 5);
  EXPECT_EQ(outcome.cells_failed, 5);
  EXPECT_EQ(patched_modes(), (std::vector<std::string>{"round-robin", "kv"}));

  const auto cells = store_.cells(outcome.experiment_id);
  ASSERT_EQ(cells.size(), 10u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(cells[i].status, "done") << cells[i].error;
  const auto& first_kv = cells[5];
  EXPECT_EQ(first_kv.status, "failed");
  // The pods are read with the DGD's status from the first poll: the resource gate names it.
  EXPECT_CONTAINS(first_kv.error, "readiness gate resource: pod worker-2-1");
  EXPECT_CONTAINS(first_kv.error, "worker-2-1");  // the second rollout's
  EXPECT_CONTAINS(first_kv.error, "CrashLoopBackOff");
  EXPECT_CONTAINS(first_kv.error, "back-off 5m0s restarting failed container");
  EXPECT_TRUE(store_.requests(first_kv.id).empty());
  for (int i = 6; i < 10; ++i) {
    EXPECT_EQ(cells[i].status, "failed");
    EXPECT_EQ(cells[i].error.rfind("not run: its deployment failed: readiness gate resource", 0),
              0u)
        << cells[i].error;
  }
  // The failing gate's kubectl calls are kept with the cell, for the post-mortem.
  const auto commands = store_.commands(first_kv.id);
  EXPECT_TRUE(std::any_of(commands.begin(), commands.end(),
                          [](const auto& c) { return c.step == "gate resource"; }));

  // ... and `kvsweep runs EXP --commands --cell 6` shows them, with kubectl's output.
  const std::string id = std::to_string(outcome.experiment_id);
  const auto shown = run_process(
      {KVSWEEP_BINARY, "--db", dir_.file("kvsweep.db"), "runs", id, "--commands", "--cell", "6"},
      30);
  ASSERT_TRUE(shown.ok()) << shown.err;
  EXPECT_CONTAINS(shown.out, "cell 6 (kv, concurrency 40, repeat 1): ");
  EXPECT_CONTAINS(shown.out, "] $ kubectl --kubeconfig ");
  EXPECT_CONTAINS(shown.out, "patch dynamographdeployment llama-70b-disagg --type=merge");
  EXPECT_CONTAINS(shown.out, "[gate resource] $ kubectl");
  EXPECT_CONTAINS(shown.out, "exit 0, ");
  EXPECT_CONTAINS(shown.out, "\"reason\": \"CrashLoopBackOff\"");  // the pod list, as printed
  EXPECT_EQ(shown.out.find("cell 5 ("), std::string::npos);        // only the cell asked for
  const auto beyond = run_process(
      {KVSWEEP_BINARY, "--db", dir_.file("kvsweep.db"), "runs", id, "--commands", "--cell", "11"},
      30);
  EXPECT_EQ(beyond.exit_code, 2);  // bad input
  EXPECT_CONTAINS(beyond.err, "--cell 11: experiment " + id + " has 10 cells");
}

// Item 4 of issue 17: one 409 Conflict on the DGD patch (another writer changed it since it
// was read) once lost the whole deployment group. Now the apply reads it again and patches
// again, and every attempt is kept with the cell's commands.
TEST_F(DynamoSweepTest, AConflictOnThePatchIsTriedAgainAndNoCellIsLost) {
  run_operator();
  server_.inject_fault({"PATCH", "dynamographdeployments", spec_.target.resource, 409, 1});
  const SweepOutcome outcome = sweep();
  EXPECT_EQ(outcome.status, "done");
  EXPECT_EQ(outcome.cells_done, 10);
  EXPECT_EQ(patched_modes(), (std::vector<std::string>{"round-robin", "round-robin", "kv"}));
  const auto cells = store_.cells(outcome.experiment_id);
  ASSERT_EQ(cells.size(), 10u);
  const auto commands = store_.commands(cells[0].id);
  std::vector<int> patch_exits;
  for (const auto& c : commands) {
    if (std::find(c.argv.begin(), c.argv.end(), "patch") == c.argv.end()) continue;
    patch_exits.push_back(c.exit_code);
    if (c.exit_code != 0) {
      EXPECT_CONTAINS(c.err, "Error from server (Conflict)");
    }
  }
  EXPECT_EQ(patch_exits, (std::vector<int>{1, 0}));
}

}  // namespace
}  // namespace kvsweep::orchestrator::kube::test
