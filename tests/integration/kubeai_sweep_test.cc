// The seed-000/002 KubeAI scenario file swept end to end on a stand-in KubeAI cluster whose
// operator acts as the real one does: later than the change, rolling pods one at a time, the
// Model's status following its pods. The real kubectl against the fake API server, a simulated
// fleet on loopback as the model servers, a real SQLite store. No cell measures during a
// rollout; an arm whose pods cannot start fails once, its other cells not run.
#include <algorithm>
#include <cstdio>

#include "orchestrator/cli/console.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/sweep/runner.h"
#include "orchestrator/targets/target_factory.h"
#include "orchestrator/targets/target_kinds.h"
#include "store/store.h"
#include "tests/orchestrator/targets/kube/kube_test_env.h"
#include "tests/support/fake_jobs.h"
#include "tests/support/fake_operators.h"

namespace kvsweep::orchestrator::kube::test {
namespace {

[[maybe_unused]] ::testing::Environment* const kCacheEnv =
    ::testing::AddGlobalTestEnvironment(new KubectlCacheEnvironment);

class KubeAISweepTest : public ::testing::Test {
 protected:
  KubeAISweepTest() {
    server_.write_kubeconfig(dir_.file("kubeconfig"));
    std::vector<ScenarioError> errors;
    auto spec = load_scenario_file(KVSWEEP_SOURCE_DIR "/scenarios/kubeai-l4-8b.yaml", &errors,
                                   target_kinds());
    if (!spec) throw std::runtime_error(errors.at(0).text);
    spec_ = *spec;

    // Two replicas instead of eight: the flow is under test here, not the figures.
    TargetSpec& t = spec_.target;
    t.replicas = 2;
    fleet_ = start_fleet(t.replicas, spec_.model);
    t.kubeconfig = dir_.file("kubeconfig");
    t.command_timeout_s = 20;
    t.base_url = fleet_->router_url();
    t.readiness = ReadinessSpec{300, 300, 10, 10, 0.05};  // failing fast must not wait these out
    t.readiness.settle_s = 0.5;
    t.readiness.live_settle_s = 0.1;  // after each live patch: short here, 2 s by default
    t.metrics.port = 0;               // the pods' containerPort is the replica's loopback port
    t.metrics.interval_s = 0.2;
    spec_.load.duration_s = 0.3;
    spec_.load.num_requests = 12;
    spec_.load.request_rate = 0;
    spec_.load.warmup_requests = 2;
    spec_.load.max_tokens = 4;
    // A real target needs the file: the scenario names the seeds' (not shipped), this the
    // 40-conversation sample.
    spec_.load.dataset.path = KVSWEEP_SOURCE_DIR "/scenarios/data/sharegpt_16_messages_sample.json";
    for (auto& factor : spec_.factors) {
      if (factor.name == "concurrency") {
        factor = value_factor("concurrency", "concurrency", {"1", "2", "4"});
      }
    }

    server_.put("models",
                {{"apiVersion", "kubeai.org/v1"},
                 {"kind", "Model"},
                 {"metadata", {{"name", t.resource}, {"namespace", t.namespace_name}}},
                 {"spec",
                  {{"url", "hf://neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8"},
                   {"replicas", t.replicas},
                   {"loadBalancing",
                    {{"strategy", "LeastLoad"}, {"prefixHash", {{"replication", 256}}}}}}}});
  }

  testing::KubeAIOperatorOptions operator_options() const {
    testing::KubeAIOperatorOptions options;
    options.model = spec_.target.resource;
    options.namespace_name = spec_.target.namespace_name;
    options.replicas = spec_.target.replicas;
    options.replica_urls = fleet_->replica_urls();
    // It acts half a second after a change; each new pod takes half a second to start.
    options.timing = {0.5, 0.5, 0.3};
    options.gc_s = 0.3;
    return options;
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

  int calls_of(const std::string& method, const std::string& resource) const {
    const auto calls = server_.calls();
    return static_cast<int>(std::count_if(calls.begin(), calls.end(), [&](const auto& call) {
      return call.method == method && call.resource == resource;
    }));
  }

  testing::TempDir dir_;
  testing::FakeApiServer server_;
  std::unique_ptr<sim::Fleet> fleet_;
  ScenarioSpec spec_;
  store::Store store_ = store::Store::open(dir_.file("kvsweep.db"));
};

// Item 1: the replication factor recreates the Model at each arm; KubeAI first counts the old
// Model's pods as the new one's, Ready, and replaces them only after the garbage collector and
// its own lag. No request of any cell (warm-up included) may be sent inside a rollout.
TEST_F(KubeAISweepTest, NoCellMeasuresWhileTheOperatorRollsThePods) {
  spec_.factors.insert(spec_.factors.begin(),
                       value_factor("replication", knob_path("replication"), {"256", "32"}));
  // strategy: one level, so 2 arms x 3 levels
  spec_.factors[1] = value_factor("strategy", knob_path("strategy"), {"PrefixHash"});
  server_.set_termination_delay("pods", 0.3);
  testing::KubeAIOperatorOptions options = operator_options();
  // The garbage collector takes the old Model's pods after KubeAI has reported them ready as
  // the new Model's: the status alone says ready while nothing has been replaced yet.
  options.gc_s = 1.0;
  testing::KubeAIOperator kubeai(server_, options);

  const SweepOutcome outcome = sweep();
  EXPECT_EQ(outcome.status, "done");
  EXPECT_EQ(outcome.cells_done, 6);
  EXPECT_EQ(calls_of("DELETE", "models"), 2);
  EXPECT_EQ(calls_of("POST", "models"), 2);

  const auto rollouts = kubeai.rollouts();
  ASSERT_EQ(rollouts.size(), 2u);  // one per arm: the old Model's pods replaced by the new's
  for (const auto& window : rollouts) EXPECT_NE(window.end_s, 0);
  const auto cells = store_.cells(outcome.experiment_id);
  ASSERT_EQ(cells.size(), 6u);
  for (const auto& cell : cells) {
    SCOPED_TRACE("cell " + std::to_string(cell.ordinal + 1));
    EXPECT_EQ(cell.status, "done") << cell.error;
    const auto requests = store_.requests(cell.id);
    ASSERT_FALSE(requests.empty());
    for (const auto& request : requests) {
      const double sent = cell.epoch_wall_s + request.sent_s;
      for (const auto& window : rollouts) {
        EXPECT_FALSE(sent >= window.start_s && sent <= window.end_s)
            << "request " << request.index << " sent " << sent - window.start_s
            << " s into a rollout of " << window.end_s - window.start_s << " s";
      }
    }
  }
}

// Items 2 and 3: every pod of the Model crash-loops on one replica, and KubeAI's status only
// says "1 of 2 ready". Each arm's first cell fails at the resource gate's first poll, naming
// the pod, its container and the reason; the arm's other cells are not run, not re-waited.
TEST_F(KubeAISweepTest, AnArmWhosePodsCannotStartFailsOnceForTheWholeArm) {
  testing::KubeAIOperatorOptions options = operator_options();
  options.initial_problem = "CrashLoopBackOff";
  testing::KubeAIOperator kubeai(server_, options);

  const SweepOutcome outcome = sweep();
  EXPECT_EQ(outcome.status, "failed");
  EXPECT_EQ(outcome.cells_done, 0);
  EXPECT_EQ(outcome.cells_failed, 6);
  EXPECT_EQ(calls_of("PATCH", "models"), 2);  // one apply per arm, none per cell

  const auto cells = store_.cells(outcome.experiment_id);
  ASSERT_EQ(cells.size(), 6u);
  for (const auto& cell : cells) {
    SCOPED_TRACE("cell " + std::to_string(cell.ordinal + 1));
    EXPECT_EQ(cell.status, "failed");
    EXPECT_CONTAINS(cell.error, "readiness gate resource: pod " + spec_.target.resource + "-");
    EXPECT_CONTAINS(cell.error, ": container server: CrashLoopBackOff");
    EXPECT_TRUE(store_.requests(cell.id).empty());
    const bool first_of_arm = cell.ordinal == 0 || cell.ordinal == 3;
    EXPECT_EQ(cell.error.rfind("not run: its deployment failed: ", 0) == 0, !first_of_arm)
        << cell.error;
    const auto commands = store_.commands(cell.id);
    const auto polls = std::count_if(commands.begin(), commands.end(),
                                     [](const auto& c) { return c.step == "gate resource"; });
    // The first poll reads the pods and fails: the Model is not even read.
    EXPECT_EQ(polls, first_of_arm ? 1 : 0);
  }
}

// load.shards on a Kubernetes target: each cell's measured phase runs as an Indexed Job whose
// pods (local kvsweep processes here) the runner reaches with kubectl exec; the Job is created
// before the cell's load, deleted after, and the cell stores its shards.
TEST_F(KubeAISweepTest, ShardedCellsRunAsAnIndexedJobPerCell) {
  spec_.factors[0] = value_factor("strategy", knob_path("strategy"), {"PrefixHash"});
  for (auto& factor : spec_.factors) {
    if (factor.name == "concurrency") factor = value_factor("concurrency", "concurrency", {"4"});
  }
  spec_.load.request_rate = 20;
  spec_.load.duration_s = 0;
  spec_.load.num_requests = 10;
  spec_.load.shards = 2;
  testing::KubeAIOperator kubeai(server_, operator_options());
  testing::JobControllerOptions job_options;
  job_options.binaries = {{"kvsweep", KVSWEEP_BINARY}};
  testing::JobController jobs(server_, job_options);

  const SweepOutcome outcome = sweep();
  EXPECT_EQ(outcome.status, "done");
  const auto cells = store_.cells(outcome.experiment_id);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].status, "done") << cells[0].error;
  const auto load = store_.cell_load(cells[0].id);
  ASSERT_TRUE(load.has_value());
  ASSERT_EQ(load->shards.size(), 2u);
  EXPECT_EQ(load->shards[0].measured + load->shards[1].measured, 10);
  EXPECT_EQ(calls_of("POST", "jobs"), 1);
  EXPECT_TRUE(server_.list("jobs", spec_.target.namespace_name).empty());
  // The Job's kubectl calls are the cell's commands.
  const auto commands = store_.commands(cells[0].id);
  EXPECT_TRUE(std::any_of(commands.begin(), commands.end(), [](const auto& c) {
    return std::find(c.argv.begin(), c.argv.end(), "exec") != c.argv.end();
  }));
}

}  // namespace
}  // namespace kvsweep::orchestrator::kube::test
