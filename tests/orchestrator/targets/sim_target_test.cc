// Tests for the embedded target: the admin requests an apply makes, kept as the cell's commands;
// the restart that follows a deploy-time change (and only that); what `plan` says it will run;
// the router's health events at the end of a cell.
#include "orchestrator/targets/sim_target.h"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "driver/http_fetch.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/targets/target_kinds.h"

namespace kvsweep::orchestrator {
namespace {

// prefix_caching is deploy-time on the sim (a real fleet restarts for it); strategy is live.
constexpr const char* kScenario = R"(name: engine-probe
target: {kind: sim, replicas: 2, profile: demo}
factors:
  prefix_caching: [off, on]
  strategy: [random, prefix-hash]
  concurrency: [1]
load:
  num_requests: 4
)";

ScenarioSpec parse(const std::string& text) {
  std::vector<ScenarioError> errors;
  auto spec = parse_scenario(text, "s.yaml", &errors, target_kinds());
  if (!spec) ADD_FAILURE() << errors.at(0).text;
  return spec.value_or(ScenarioSpec{});
}

// "POST <path>" of each logged admin request, without the loopback host and port.
std::vector<std::string> requests_of(const std::vector<CommandLog>& logs) {
  std::vector<std::string> requests;
  for (const auto& log : logs) {
    const std::string& url = log.argv.at(1);
    requests.push_back(log.argv.at(0) + " " + url.substr(url.find("/admin/")));
  }
  return requests;
}

// Issue 27 item 2: a run expands its plan once and hands it on; the target checks the plan it
// is given (it expanded its own copy from the spec before, so a cell it was given went unseen).
TEST(SimTarget, ChecksThePlanItIsGivenRatherThanExpandingItsOwn) {
  const ScenarioSpec spec = parse(kScenario);
  std::vector<CellPlan> plan = expand_plan(spec);
  EXPECT_NO_THROW(SimTarget(spec, plan));
  plan.back().treatment.levels.emplace_back("gpu_memory_utilization", "0.9");
  try {
    SimTarget target(spec, plan);
    ADD_FAILURE() << "a treatment the fleet cannot apply was accepted";
  } catch (const TargetError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "factor gpu_memory_utilization: the simulated fleet cannot apply it"),
              std::string::npos)
        << e.what();
  }
}

TEST(SimTarget, RestartsOnlyWhenADeployTimeFactorChanges) {
  const ScenarioSpec spec = parse(kScenario);
  ASSERT_EQ(spec.factor("prefix_caching")->phase, FactorPhase::kDeploy);
  SimTarget target(spec, expand_plan(spec));
  target.start();
  const Treatment off_random{{{"prefix_caching", "off"}, {"strategy", "random"}}, ""};
  const Treatment off_hash{{{"prefix_caching", "off"}, {"strategy", "prefix-hash"}}, ""};
  const Treatment on_random{{{"prefix_caching", "on"}, {"strategy", "random"}}, ""};

  // Each apply returns the requests it made.
  const CommandLogs first = target.apply(off_random);  // follows the start: no restart
  EXPECT_EQ(requests_of(first),
            (std::vector<std::string>{"POST /admin/engine", "POST /admin/strategy"}));
  EXPECT_EQ(first[0].argv.at(2), R"({"enable_prefix_caching":false})");
  EXPECT_EQ(first[0].exit_code, 0);
  EXPECT_EQ(first[0].step, "apply");
  EXPECT_EQ(first[0].out.rfind("HTTP 200: ", 0), 0u) << first[0].out;

  EXPECT_EQ(requests_of(target.apply(off_hash)),  // a run-time change: set live
            (std::vector<std::string>{"POST /admin/engine", "POST /admin/strategy"}));

  // A deploy-time change: the fleet restarts, as a redeploy would.
  EXPECT_EQ(requests_of(target.apply(on_random)),
            (std::vector<std::string>{"POST /admin/engine", "POST /admin/strategy",
                                      "POST /admin/restart"}));
  EXPECT_TRUE(target.cell_finished().empty());  // no health event meanwhile

  // The setting outlives the restart, and the fleet answers again.
  const auto engine = driver::http_get(target.endpoints().base_url + "/admin/engine", 10);
  ASSERT_EQ(engine.status, 200) << engine.error << engine.body;
  const auto body = nlohmann::json::parse(engine.body);
  EXPECT_NE(body.dump().find("\"enable_prefix_caching\":true"), std::string::npos) << body.dump();
  EXPECT_NO_THROW(target.wait_ready());

  // What `kvsweep plan` prints for the same sequence.
  EXPECT_EQ(target.planned_commands(&off_random, off_hash),
            (std::vector<std::vector<std::string>>{
                {"POST", "/admin/engine", R"({"enable_prefix_caching":false})"},
                {"POST", "/admin/strategy", R"({"strategy":"prefix-hash"})"}}));
  EXPECT_EQ(target.planned_commands(&off_hash, on_random),
            (std::vector<std::vector<std::string>>{
                {"POST", "/admin/engine", R"({"enable_prefix_caching":true})"},
                {"POST", "/admin/strategy", R"({"strategy":"random"})"},
                {"POST", "/admin/restart", "{}"}}));
  EXPECT_EQ(target.planned_commands(nullptr, on_random),  // the first apply: no restart
            (std::vector<std::vector<std::string>>{
                {"POST", "/admin/engine", R"({"enable_prefix_caching":true})"},
                {"POST", "/admin/strategy", R"({"strategy":"random"})"}}));
}

// The message of the TargetError the constructor throws with one more factor, or "(no error)".
std::string error_with_factor(const std::string& name, const std::vector<std::string>& levels) {
  ScenarioSpec spec = parse(kScenario);
  spec.factors.push_back(value_factor(name, knob_path(name), levels));
  try {
    SimTarget target(spec, expand_plan(spec));
  } catch (const TargetError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SimTarget, RefusesWhatTheFleetCannotApply) {
  EXPECT_EQ(error_with_factor("replication", {"2", "inf"}),
            "factor replication: level \"inf\" is not a finite number");
  EXPECT_EQ(error_with_factor("engine", {"v1", "v2"})
                .rfind("factor engine: the simulated fleet cannot apply it (it applies: strategy, "
                       "prefix_caching, mean_load_factor",
                       0),
            0u)
      << error_with_factor("engine", {"v1", "v2"});
  EXPECT_EQ(error_with_factor("replication", {"2", "8"}), "(no error)");
}

// The first "health" log the target gives within a liveness bound (not a timing assertion).
std::optional<CommandLog> wait_health_log(Target& target) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline) {
    for (const auto& log : target.cell_finished()) {
      if (log.step == "health") return log;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

// A replica the router takes out of routing, and puts back, is in the cell's log.
TEST(SimTarget, TheRoutersHealthEventsAreInTheCellsLog) {
  std::string text = kScenario;
  text.replace(text.find("profile: demo}"), 14,
               "profile: demo, health: {interval: 50ms, failures: 2}}");
  const ScenarioSpec spec = parse(text);
  EXPECT_EQ(spec.target.health.failures, 2);
  SimTarget target(spec, expand_plan(spec));
  target.start();
  target.apply({{{"prefix_caching", "on"}, {"strategy", "random"}}, ""});
  auto down = driver::http_post_json(target.endpoints().base_url + "/admin/faults",
                                     R"({"replica":1,"down":true})", 10);
  ASSERT_EQ(down.status, 200) << down.error << down.body;
  auto out = wait_health_log(target);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->exit_code, 0);
  EXPECT_EQ(out->argv.at(0), "GET");
  EXPECT_NE(out->argv.at(1).find("/admin/health?since=0"), std::string::npos);
  EXPECT_NE(out->out.find(" UTC replica 1 taken out of routing: 2 consecutive failures; last: "
                          "/health: down\n"),
            std::string::npos)
      << out->out;
  auto up = driver::http_post_json(target.endpoints().base_url + "/admin/faults",
                                   R"({"replica":1,"down":false})", 10);
  ASSERT_EQ(up.status, 200);
  auto back = wait_health_log(target);
  ASSERT_TRUE(back.has_value());
  EXPECT_NE(back->argv.at(1).find("/admin/health?since=1"), std::string::npos);
  EXPECT_NE(back->out.find(" UTC replica 1 back in routing: /health answered 200\n"),
            std::string::npos)
      << back->out;
}

// A cold cell starts llm-d's endpoint picker afresh, as the llmd target restarts the EPP's pods:
// its prefix index is its own routing history, which the replicas' cache reset cannot reach.
TEST(SimTarget, AColdCellBuildsTheEndpointPickerAfreshWithAnEmptyIndex) {
  const ScenarioSpec spec = parse(R"(name: epp-cold
epp:
  prefix:
    apiVersion: inference.networking.x-k8s.io/v1alpha1
    kind: EndpointPickerConfig
    plugins: [{type: prefix-cache-scorer}]
target: {kind: sim, replicas: 2, profile: demo}
factors:
  strategy: [prefix]
  concurrency: [1]
load: {num_requests: 4, cache: cold}
)");
  SimTarget target(spec, expand_plan(spec));
  target.start();
  target.apply({{{"strategy", "prefix"}}, ""});
  const std::string router = target.endpoints().base_url;
  const auto index_size = [&] {
    const auto metrics = driver::http_get(router + "/metrics", 10);
    const std::string name = "\ninference_extension_prefix_indexer_size ";
    const std::size_t at = metrics.body.find(name);
    EXPECT_NE(at, std::string::npos) << metrics.body;
    return at == std::string::npos ? -1 : std::stoi(metrics.body.substr(at + name.size()));
  };
  const std::string prompt(400, 'x');
  const auto sent = driver::http_post_json(
      router + "/v1/completions",
      nlohmann::json{{"model", "sim-model"}, {"prompt", prompt}, {"max_tokens", 2}}.dump(), 10);
  ASSERT_EQ(sent.status, 200) << sent.error << sent.body;
  EXPECT_GT(index_size(), 0);
  const CommandLogs cold = target.make_cold();
  EXPECT_EQ(requests_of(cold), std::vector<std::string>{"POST /admin/strategy"});
  EXPECT_EQ(index_size(), 0);
  // Any other strategy has no index of its own to forget.
  target.apply({{{"strategy", "random"}}, ""});
  EXPECT_TRUE(target.make_cold().empty());
}

}  // namespace
}  // namespace kvsweep::orchestrator
