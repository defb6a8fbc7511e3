// The KubeAI target against the fake API server, with a simulated fleet as the model server.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>

#include "orchestrator/targets/kube/kube_targets.h"
#include "tests/orchestrator/targets/kube/kube_test_env.h"

namespace kvsweep::orchestrator::kube::test {
namespace {

json model_object(int ready) {
  return {
      {"apiVersion", "kubeai.org/v1"},
      {"kind", "Model"},
      {"metadata",
       {{"name", "m1"},
        {"namespace", "default"},
        {"labels", {{"team", "serving"}}},
        {"annotations", {{"note", "kept"}}},
        {"finalizers", {"kubeai.org/model-finalizer"}}}},
      {"spec",
       {{"url", "hf://Qwen/Qwen2.5-0.5B"},
        {"engine", "VLLM"},
        {"minReplicas", 2},
        {"loadBalancing", {{"strategy", "LeastLoad"}, {"prefixHash", {{"replication", 256}}}}}}},
      {"status", {{"replicas", {{"all", 2}, {"ready", ready}}}}}};
}

class KubeAITargetTest : public KubeTargetTest {
 protected:
  KubeAITargetTest() : fleet_(start_fleet(2, "sim-model")) {
    server_.put("models", model_object(2));
    put_pods("m1");
  }

  ScenarioSpec kubeai_spec() const {
    ScenarioSpec spec = scenario("kubeai");
    spec.target.resource = "m1";
    spec.target.replicas = 2;
    spec.target.base_url = fleet_->router_url();
    add_factor(spec, "strategy", {"least-load", "prefix-hash"});
    return spec;
  }

  // The Model's pods, one per fleet replica, as KubeAI labels them.
  void put_pods(const std::string& model) {
    const auto replicas = fleet_->replica_urls();
    for (std::size_t i = 0; i < replicas.size(); ++i) {
      server_.put("pods",
                  replica_pod(model + "-" + std::to_string(i), {{"model", model}}, replicas[i]));
    }
  }

  std::unique_ptr<sim::Fleet> fleet_;
};

TEST_F(KubeAITargetTest, ApplyMergePatchesTheStrategy) {
  auto target = make_kubeai_target(kubeai_spec());
  target->start();
  const Treatment t{{{"strategy", "prefix-hash"}}};
  const auto planned = target->planned_commands(nullptr, t);
  const CommandLogs logs = target->apply(t);  // the calls it made, returned by the call

  const auto model = server_.get("models", "default", "m1");
  ASSERT_TRUE(model);
  EXPECT_EQ((*model)["spec"]["loadBalancing"]["strategy"], "PrefixHash");
  EXPECT_EQ((*model)["spec"]["loadBalancing"]["prefixHash"]["replication"], 256);  // untouched

  bool patched = false;
  for (const auto& call : server_.calls()) {
    if (call.method != "PATCH") continue;
    patched = true;
    EXPECT_EQ(call.path, "/apis/kubeai.org/v1/namespaces/default/models/m1");
    EXPECT_EQ(call.content_type, "application/merge-patch+json");
    EXPECT_EQ(json::parse(call.body), json::parse(R"({"spec":{"loadBalancing":
                                                      {"strategy":"PrefixHash"}}})"));
  }
  EXPECT_TRUE(patched);

  EXPECT_EQ(argvs_of(logs), planned);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].step, "apply");
  EXPECT_EQ(logs[0].exit_code, 0);
  EXPECT_EQ(planned[0], (std::vector<std::string>{
                            "kubectl", "--kubeconfig", dir_.file("kubeconfig"), "--namespace",
                            "default", "patch", "model", "m1", "--type=merge", "-p",
                            R"({"spec":{"loadBalancing":{"strategy":"PrefixHash"}}})"}));
}

TEST_F(KubeAITargetTest, ApplyPatchesOnlyTheKeysTheTreatmentSets) {
  ScenarioSpec spec = kubeai_spec();
  add_factor(spec, "mean_load_factor", {"125", "150"});
  add_factor(spec, "prefix_char_length", {"100", "500"});
  auto target = make_kubeai_target(spec);
  target->apply(
      {{{"strategy", "PrefixHash"}, {"mean_load_factor", "150"}, {"prefix_char_length", "500"}},
       ""});
  const auto lb = (*server_.get("models", "default", "m1"))["spec"]["loadBalancing"];
  EXPECT_EQ(lb, json::parse(R"({"strategy":"PrefixHash","prefixHash":
      {"replication":256,"meanLoadFactor":150,"prefixCharLength":500}})"));
}

TEST_F(KubeAITargetTest, WaitReadyPassesOnceTheControllerHasReadyReplicas) {
  // The operator: after the patch the Model drops to 0 ready, then comes back with its pods.
  server_.put("models", model_object(0));
  for (const auto& pod : server_.list("pods", "default")) {
    server_.remove("pods", "default", pod["metadata"]["name"]);
  }
  server_.set_controller([this](testing::FakeApiServer& s, const testing::ApiCall& call) {
    if (call.method != "PATCH" || call.resource != "models") return;
    auto model = *s.get("models", "default", "m1");
    model["status"]["replicas"]["ready"] = 2;
    s.put("models", model);
    put_pods("m1");
  });
  ScenarioSpec spec = kubeai_spec();
  spec.target.metrics.path = "/metrics";
  auto target = make_kubeai_target(spec);
  target->start();
  target->apply({{{"strategy", "prefix-hash"}}});
  const CommandLogs logs = target->wait_ready();

  expect_metrics_of_every_replica(*target, *fleet_);
  EXPECT_NO_THROW(target->make_cold());  // POST /reset_prefix_cache to both replicas

  EXPECT_FALSE(logs_of_step(logs, "gate resource").empty());
  EXPECT_FALSE(logs_of_step(logs, "gate pods").empty());
  ASSERT_EQ(logs_of_step(logs, "discover").size(), 1u);
  EXPECT_EQ(logs.back().step, "discover");
  EXPECT_EQ(target->describe(), "kubeai model/m1 in namespace default (2 replicas)");
}

// Issue 27 item 6: a loadBalancing patch restarts no pod and no gate can tell when KubeAI's
// proxy has read it (its informer lags the PATCH's answer; 0.5 s was seen, and the first cell's
// load began 0.3 s after the patch). wait_ready settles readiness.live_settle after the patch
// answered, logs it, and `plan` says so.
TEST_F(KubeAITargetTest, ALivePatchSettlesBeforeTheLoad) {
  ScenarioSpec spec = kubeai_spec();
  spec.target.readiness.live_settle_s = 0.4;
  auto target = make_kubeai_target(spec);
  target->start();
  const Treatment t{{{"strategy", "prefix-hash"}}};
  const auto gates = target->planned_gates(nullptr, t);
  const bool planned = std::any_of(gates.begin(), gates.end(), [](const std::string& line) {
    return line.rfind("settle: 0.4s after the patch answered", 0) == 0;
  });
  EXPECT_TRUE(planned) << ::testing::PrintToString(gates);

  target->apply(t);
  const auto patched = std::chrono::steady_clock::now();
  const CommandLogs logs = target->wait_ready();
  // A lower bound only: the settle waits at least its time since the patch answered.
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - patched).count(), 0.4);
  const auto settles = logs_of_step(logs, "settle");
  ASSERT_EQ(settles.size(), 1u);
  EXPECT_EQ(settles[0].argv,
            std::vector<std::string>{"readiness.live_settle 400 ms after the live change"});
  // The serving gates come after it: the load starts once both have passed.
  EXPECT_EQ(logs.back().step, "discover");

  // live_settle: 0 turns it off.
  spec.target.readiness.live_settle_s = 0;
  auto without = make_kubeai_target(spec);
  without->start();
  EXPECT_TRUE(logs_of_step(without->apply(t), "settle").empty());
  EXPECT_TRUE(logs_of_step(without->wait_ready(), "settle").empty());
}

TEST_F(KubeAITargetTest, TheResourceGateTimesOutWithTheReadyCount) {
  server_.put("models", model_object(1));
  ScenarioSpec spec = kubeai_spec();
  spec.target.readiness.resource_s = 0.5;
  auto target = make_kubeai_target(spec);
  const std::string error = target_error_of([&] { target->wait_ready(); });
  EXPECT_CONTAINS(error, "readiness gate resource: not open after");
  EXPECT_CONTAINS(error, "model/m1: status.replicas.ready is 1, want 2");
  // The failed gate's polls leave with its error, to be kept with the cell.
  const CommandLogs polls = commands_of_failure([&] { target->wait_ready(); });
  ASSERT_FALSE(polls.empty());
  EXPECT_EQ(logs_of_step(polls, "gate resource").size(), polls.size());
}

TEST_F(KubeAITargetTest, AReplicationFactorRecreatesTheModel) {
  ScenarioSpec spec = kubeai_spec();
  add_factor(spec, "replication", {"256", "32"});
  auto target = make_kubeai_target(spec);
  const std::string old_uid = (*server_.get("models", "default", "m1"))["metadata"]["uid"];
  const auto calls_before = server_.calls().size();
  const Treatment t{{{"strategy", "prefix-hash"}, {"replication", "32"}}};
  const auto planned = target->planned_commands(nullptr, t);
  const CommandLogs logs = target->apply(t);

  auto calls = server_.calls();
  calls.erase(calls.begin(), calls.begin() + static_cast<std::ptrdiff_t>(calls_before));
  const auto model_calls = object_calls(calls, "models");
  // get; delete (with --wait=true kubectl then reads until it is gone); create.
  ASSERT_GE(model_calls.size(), 3u);
  EXPECT_EQ(model_calls.front(), "GET m1");
  EXPECT_EQ(model_calls[1], "DELETE m1");
  EXPECT_EQ(model_calls.back(), "POST");

  const auto model = server_.get("models", "default", "m1");
  ASSERT_TRUE(model);
  EXPECT_NE((*model)["metadata"]["uid"], old_uid);
  EXPECT_EQ((*model)["metadata"]["labels"], json({{"team", "serving"}}));
  EXPECT_EQ((*model)["metadata"]["annotations"], json({{"note", "kept"}}));
  EXPECT_FALSE((*model)["metadata"].contains("finalizers"));
  EXPECT_FALSE(model->contains("status"));
  EXPECT_EQ((*model)["spec"]["url"], "hf://Qwen/Qwen2.5-0.5B");
  EXPECT_EQ((*model)["spec"]["loadBalancing"],
            json::parse(R"({"strategy":"PrefixHash","prefixHash":{"replication":32}})"));

  const auto ran = argvs_of(logs);
  ASSERT_EQ(ran.size(), 4u);
  ASSERT_EQ(planned.size(), 4u);
  // The Model's pods first: the gates then wait for the ones the new Model gets.
  EXPECT_EQ(std::vector<std::string>(ran[0].end() - 6, ran[0].end()),
            (std::vector<std::string>{"get", "pods", "-l", "model=m1", "-o", "json"}));
  EXPECT_EQ(ran[0], planned[0]);
  EXPECT_EQ(ran[1], planned[1]);
  EXPECT_EQ(ran[2], planned[2]);
  EXPECT_EQ(ran[2].back(), "--wait=true");
  // The manifest's temp path is only known at run time; the plan says what it holds.
  auto ran_create = ran[3];
  auto planned_create = planned[3];
  EXPECT_CONTAINS(planned_create.back(), "<manifest of model/m1");
  EXPECT_CONTAINS(planned_create.back(), R"("replication":32)");
  const std::string manifest_path = ran_create.back();
  EXPECT_FALSE(std::filesystem::exists(manifest_path)) << "temp manifest left behind";
  ran_create.pop_back();
  planned_create.pop_back();
  EXPECT_EQ(ran_create, planned_create);
}

TEST_F(KubeAITargetTest, ColdRestartDeletesThePodsAndWaitsAgain) {
  ScenarioSpec spec = kubeai_spec();
  spec.target.cold_method = "restart";
  std::atomic<int> deleted{0};
  server_.set_controller([&](testing::FakeApiServer& s, const testing::ApiCall& call) {
    if (call.method != "DELETE" || call.resource != "pods") return;
    ++deleted;
    // The ReplicaSet's replacement, under the same name here, Ready again.
    const auto replicas = fleet_->replica_urls();
    const int index = call.name.back() - '0';
    s.put("pods", replica_pod(call.name, {{"model", "m1"}}, replicas[index]));
  });
  auto target = make_kubeai_target(spec);
  target->wait_ready();
  const CommandLogs logs = target->make_cold();  // the pods read, deleted, then the gates again
  EXPECT_EQ(deleted.load(), 2);
  ASSERT_GE(logs.size(), 2u);
  EXPECT_EQ(logs[0].step, "cold");
  EXPECT_EQ(std::vector<std::string>(logs[0].argv.end() - 6, logs[0].argv.end()),
            (std::vector<std::string>{"get", "pods", "-l", "model=m1", "-o", "json"}));
  EXPECT_EQ(logs[1].step, "cold");
  EXPECT_EQ(std::vector<std::string>(logs[1].argv.end() - 5, logs[1].argv.end()),
            (std::vector<std::string>{"delete", "pods", "-l", "model=m1", "--wait=false"}));
  EXPECT_EQ(logs.back().step, "discover");
}

TEST_F(KubeAITargetTest, StartFailsWhenTheModelDoesNotExist) {
  ScenarioSpec spec = kubeai_spec();
  spec.target.resource = "nope";
  auto target = make_kubeai_target(spec);
  const std::string error = target_error_of([&] { target->start(); });
  EXPECT_CONTAINS(error, "target.resource: reading model/nope: `kubectl");
  EXPECT_CONTAINS(error, "NotFound");
}

TEST_F(KubeAITargetTest, TheConstructorRejectsWhatKubeAICannotApply) {
  const auto message_of = [](const ScenarioSpec& spec) {
    return target_error_of([&] { make_kubeai_target(spec); });
  };
  ScenarioSpec spec = kubeai_spec();
  spec.factors.back().levels.push_back(
      {"round-robin", {{"target.strategy", "round-robin", {}}}, {}});
  EXPECT_EQ(message_of(spec),
            "factor strategy: level \"round-robin\": KubeAI has no round-robin strategy; it has "
            "LeastLoad (least-load) and PrefixHash (prefix-hash)");

  spec = kubeai_spec();
  add_factor(spec, "mean_load_factor", {"125", "90"});
  EXPECT_CONTAINS(message_of(spec),
                  "factor mean_load_factor: level \"90\": meanLoadFactor must "
                  "be a whole number >= 100");

  spec = kubeai_spec();
  add_factor(spec, "replication", {"x"});
  EXPECT_CONTAINS(message_of(spec), "factor replication: level \"x\"");

  spec = kubeai_spec();
  add_factor(spec, "router_replicas", {"1"});
  EXPECT_CONTAINS(message_of(spec),
                  "factor router_replicas: kind kubeai cannot apply it; it "
                  "applies strategy, mean_load_factor, prefix_char_length, "
                  "replication");

  spec = kubeai_spec();
  spec.target.base_url = "";
  EXPECT_CONTAINS(message_of(spec), "target.base_url: required for kind kubeai");
  spec = kubeai_spec();
  spec.target.resource = "";
  EXPECT_CONTAINS(message_of(spec), "target.resource: required for kind kubeai");
  spec = kubeai_spec();
  spec.target.replicas = 0;
  EXPECT_CONTAINS(message_of(spec), "target.replicas: must be > 0 for kind kubeai");
  spec = kubeai_spec();
  spec.target.cold_method = "flush";
  EXPECT_CONTAINS(message_of(spec),
                  "target.cold_method: kind kubeai cannot make a cache cold "
                  "with \"flush\"; it accepts reset, restart");
  EXPECT_EQ(server_.calls().size(), 0u);  // nothing was touched
}

}  // namespace
}  // namespace kvsweep::orchestrator::kube::test
