// Tests for the cluster side of a scenario: the target section of each kind, factor phases
// (defaults per kind and the explicit {levels, phase} form), level coverage of kubectl and
// endpoints targets, the bare-level baseline, and the plan order that follows from phases.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/targets/target_kinds.h"

namespace kvsweep::orchestrator {
namespace {

// A KubeAI sweep as a user would write it; the tests below edit one thing at a time.
constexpr const char* kKubeai = R"(name: kubeai
model: llama
target:
  kind: kubeai
  resource: llama
  replicas: 8
  base_url: http://kubeai/openai
  namespace: models
  sim: {replicas: 2, profile: demo, duration: 4s, num_requests: 240, max_tokens: 16}
factors:
  strategy: [LeastLoad, PrefixHash]
  concurrency: [4, 8]
load:
  num_requests: 100
)";

ScenarioSpec parse_ok(const std::string& text) {
  std::vector<ScenarioError> errors;
  auto spec = parse_scenario(text, "s.yaml", &errors, target_kinds());
  EXPECT_TRUE(spec.has_value()) << (errors.empty() ? "" : errors[0].text);
  return spec.value_or(ScenarioSpec{});
}

// The first line of each error: "file:line:col: field: message".
std::vector<std::string> error_heads(const std::string& text) {
  std::vector<ScenarioError> errors;
  EXPECT_FALSE(parse_scenario(text, "s.yaml", &errors, target_kinds()).has_value());
  std::vector<std::string> heads;
  for (const auto& e : errors) heads.push_back(e.text.substr(0, e.text.find('\n')));
  return heads;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(ScenarioTarget, BaseUrlsWithOrWithoutV1AreTheSame) {
  EXPECT_EQ(parse_ok(replaced(kKubeai, "http://kubeai/openai", "http://kubeai/openai/v1/"))
                .target.base_url,
            "http://kubeai/openai");
  const ScenarioSpec endpoints = parse_ok(R"(name: e
model: m
target:
  kind: endpoints
  levels:
    prefix_caching:
      off: {base_url: "http://127.0.0.1:8000/v1"}
      on: {base_url: "http://127.0.0.1:8001/"}
factors:
  prefix_caching: [off, on]
  concurrency: [1]
load:
  num_requests: 10
)");
  EXPECT_EQ(endpoints.target.levels.at("prefix_caching").at("off").base_url,
            "http://127.0.0.1:8000");
  EXPECT_EQ(endpoints.target.levels.at("prefix_caching").at("on").base_url,
            "http://127.0.0.1:8001");
}

TEST(ScenarioTarget, KubeaiReadsItsKeysAndTheRehearsal) {
  const ScenarioSpec spec = parse_ok(kKubeai);
  EXPECT_EQ(spec.target.kind, "kubeai");
  EXPECT_EQ(spec.target.resource, "llama");
  EXPECT_EQ(spec.target.replicas, 8);
  EXPECT_EQ(spec.target.base_url, "http://kubeai/openai");
  EXPECT_EQ(spec.target.namespace_name, "models");
  EXPECT_EQ(spec.target.sim.replicas, 2);
  EXPECT_DOUBLE_EQ(spec.target.sim.duration_s, 4);
  EXPECT_EQ(spec.target.sim.num_requests, 240);
  EXPECT_EQ(spec.target.sim.max_tokens, 16);
  // On kubeai the strategy is a live merge patch: run-time.
  EXPECT_EQ(spec.factor("strategy")->phase, FactorPhase::kRun);
}

TEST(ScenarioTarget, ReadinessSettleAndRetries) {
  const ScenarioSpec defaults = parse_ok(kKubeai);
  EXPECT_DOUBLE_EQ(defaults.target.readiness.settle_s, 10);
  EXPECT_EQ(defaults.target.readiness.retries, 0);
  const std::string with =
      replaced(kKubeai, "  namespace: models\n",
               "  namespace: models\n  readiness: {settle: 30s, retries: 2}\n");
  const ScenarioSpec spec = parse_ok(with);
  EXPECT_DOUBLE_EQ(spec.target.readiness.settle_s, 30);
  EXPECT_EQ(spec.target.readiness.retries, 2);
  EXPECT_EQ(parse_ok(replaced(with, "settle: 30s", "settle: 0")).target.readiness.settle_s, 0);
  // After a live patch (KubeAI's loadBalancing): a short settle of its own.
  EXPECT_DOUBLE_EQ(defaults.target.readiness.live_settle_s, 2);
  const ScenarioSpec live =
      parse_ok(replaced(with, "retries: 2", "retries: 2, live_settle: 500ms"));
  EXPECT_DOUBLE_EQ(live.target.readiness.live_settle_s, 0.5);
  EXPECT_EQ(parse_ok(replaced(with, "retries: 2", "retries: 2, live_settle: 0"))
                .target.readiness.live_settle_s,
            0);

  // Located errors: a settle that is no duration, a negative retry count, a misspelt key.
  EXPECT_EQ(error_heads(replaced(with, "settle: 30s", "settle: soon")),
            (std::vector<std::string>{"s.yaml:9:23: target.readiness.settle: expected a duration "
                                      ">= 0 such as 90s, 5m, 250ms or 30, got \"soon\""}));
  const auto negative = error_heads(replaced(with, "retries: 2", "retries: -1"));
  ASSERT_EQ(negative.size(), 1u);
  EXPECT_EQ(negative[0],
            "s.yaml:9:37: target.readiness.retries: expected an integer from 0 to 100, got "
            "\"-1\"");
  const auto misspelt = error_heads(replaced(with, "retries: 2", "retry: 2"));
  ASSERT_EQ(misspelt.size(), 1u);
  EXPECT_EQ(misspelt[0].rfind("s.yaml:9:28: target.readiness.retry: unknown key", 0), 0u)
      << misspelt[0];
  EXPECT_NE(misspelt[0].find("settle, live_settle, retries"), std::string::npos) << misspelt[0];
}

// Issue 15 item 10: `replicas: 100000` once said "port: out of range: 0".
TEST(ScenarioTarget, TooManySimReplicasIsALocatedLimit) {
  const auto heads = error_heads(
      "name: s\ntarget:\n  kind: sim\n  replicas: 100000\n"
      "factors: {strategy: [random], concurrency: [1]}\n"
      "load: {num_requests: 1}\n");
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(heads[0],
            "s.yaml:4:13: target.replicas: expected an integer from 1 to 256, got "
            "\"100000\"");
}

TEST(ScenarioTarget, SimStandInDefaultsToTheRealReplicaCount) {
  const ScenarioSpec spec = parse_ok(replaced(kKubeai, "sim: {replicas: 2, ", "sim: {"));
  EXPECT_EQ(spec.target.sim.replicas, 8);
}

TEST(ScenarioTarget, KubeaiNeedsResourceReplicasAndBaseUrl) {
  std::string text = replaced(kKubeai, "  resource: llama\n", "");
  text = replaced(text, "  replicas: 8\n", "");
  text = replaced(text, "  base_url: http://kubeai/openai\n", "");
  const auto heads = error_heads(text);
  ASSERT_EQ(heads.size(), 3u);
  EXPECT_EQ(heads[0], "s.yaml:4:3: target.resource: required for kind kubeai: the Model's name");
  EXPECT_EQ(heads[1].rfind("s.yaml:4:3: target.replicas: required for kind kubeai", 0), 0u)
      << heads[1];
  EXPECT_EQ(heads[2].rfind("s.yaml:4:3: target.base_url: required for kind kubeai", 0), 0u)
      << heads[2];
}

TEST(ScenarioTarget, KeyOfAnotherKindIsAnErrorNamingItsKind) {
  const auto heads =
      error_heads(replaced(kKubeai, "  namespace: models\n", "  frontend_service: Frontend\n"));
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_NE(heads[0].find("target.frontend_service: not used by target kind kubeai (used by: "
                          "dynamo)"),
            std::string::npos)
      << heads[0];
}

TEST(ScenarioTarget, KeyOfAnotherKindIsReportedOnce) {
  const auto heads = error_heads(R"(name: x
target: {kind: sim, base_url: http://a, cold_method: reset}
factors: {concurrency: [1]}
load: {num_requests: 3}
)");
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_NE(heads[0].find("target.base_url: not used by target kind sim"), std::string::npos);
  EXPECT_NE(heads[1].find("target.cold_method: not used by target kind sim"), std::string::npos);
}

TEST(ScenarioTarget, LevelsTheRunnerCannotHoldAreRefusedOnce) {
  const auto heads = error_heads(replaced(kKubeai, "  concurrency: [4, 8]\n",
                                          "  concurrency: [3000000000]\n  max_tokens: [0]\n"));
  ASSERT_EQ(heads.size(), 2u);  // no extra "give at least one level" for either
  EXPECT_EQ(heads[0],
            "s.yaml:12:17: factors.concurrency: level \"3000000000\": expected an integer from 1 "
            "to 1000000, got \"3000000000\"");
  // The level is read by load.max_tokens' own reader: the field's own message.
  EXPECT_EQ(heads[1],
            "s.yaml:13:16: factors.max_tokens: level \"0\": expected an integer from 1 to "
            "1000000, got \"0\"");
}

TEST(ScenarioTarget, FactorTheKindCannotApplyIsUnknown) {
  const auto heads = error_heads(replaced(kKubeai, "  concurrency: [4, 8]\n",
                                          "  concurrency: [4, 8]\n  prefix_caching: [off, on]\n"));
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(heads[0].rfind("s.yaml:13:3: factors.prefix_caching: unknown factor for target kind "
                           "kubeai (known: ",
                           0),
            0u)
      << heads[0];
}

TEST(ScenarioTarget, DefaultPhasesFollowTheKind) {
  // Dynamo: a router mode is a redeploy of the frontend.
  std::string dynamo = replaced(kKubeai, "kind: kubeai", "kind: dynamo");
  dynamo = replaced(dynamo, "[LeastLoad, PrefixHash]", "[round-robin, kv]");
  EXPECT_EQ(parse_ok(dynamo).factor("strategy")->phase, FactorPhase::kDeploy);
  // KubeAI: replication is immutable, so a change of it recreates the Model.
  const ScenarioSpec kubeai = parse_ok(replaced(kKubeai, "  concurrency: [4, 8]\n",
                                                "  concurrency: [4, 8]\n  replication: [1, 8]\n"));
  EXPECT_EQ(kubeai.factor("replication")->phase, FactorPhase::kDeploy);
  EXPECT_EQ(kubeai.factor("strategy")->phase, FactorPhase::kRun);
  EXPECT_EQ(kubeai.factor("concurrency")->phase, FactorPhase::kRun);
}

TEST(ScenarioTarget, ExplicitPhaseOverridesTheDefault) {
  const ScenarioSpec spec =
      parse_ok(replaced(kKubeai, "  strategy: [LeastLoad, PrefixHash]\n",
                        "  strategy:\n    levels: [LeastLoad, PrefixHash]\n    phase: deploy\n"));
  const FactorSpec* strategy = spec.factor("strategy");
  ASSERT_NE(strategy, nullptr);
  EXPECT_EQ(strategy->labels(), (std::vector<std::string>{"LeastLoad", "PrefixHash"}));
  EXPECT_EQ(strategy->phase, FactorPhase::kDeploy);
  // The flow form too, and a load factor may say run (its only phase).
  const ScenarioSpec flow = parse_ok(replaced(kKubeai, "  concurrency: [4, 8]\n",
                                              "  concurrency: {levels: [4, 8], phase: run}\n"));
  EXPECT_EQ(flow.factor("concurrency")->labels(), (std::vector<std::string>{"4", "8"}));
}

TEST(ScenarioTarget, LoadFactorCannotBeDeployTime) {
  const auto heads = error_heads(replaced(kKubeai, "  concurrency: [4, 8]\n",
                                          "  concurrency: {levels: [4, 8], phase: deploy}\n"));
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_NE(heads[0].find("factors.concurrency.phase: concurrency is set by the load driver, so "
                          "it can only be a run-time factor"),
            std::string::npos)
      << heads[0];
}

TEST(ScenarioTarget, DetailFormNeedsLevelsAndAKnownPhase) {
  const auto heads = error_heads(
      replaced(kKubeai, "  strategy: [LeastLoad, PrefixHash]\n", "  strategy: {phase: later}\n"));
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_NE(heads[0].find("factors.strategy.phase"), std::string::npos) << heads[0];
  EXPECT_NE(heads[0].find("later"), std::string::npos) << heads[0];
  EXPECT_NE(heads[1].find("factors.strategy.levels: required key is missing"), std::string::npos)
      << heads[1];
}

constexpr const char* kKubectl = R"(name: engines
target:
  kind: kubectl
  base_url: http://vllm.llm:8080
  levels:
    engine:
      v1: {apply: [[set, image, deployment/vllm, vllm=vllm:v1]]}
      v2:
        apply: [[set, image, deployment/vllm, vllm=vllm:v2]]
        wait: [[rollout, status, deployment/vllm]]
factors:
  engine: [v1, v2]
  concurrency: [2]
load:
  num_requests: 10
report:
  baseline: v2
)";

TEST(ScenarioTarget, KubectlLevelsAndBareBaseline) {
  const ScenarioSpec spec = parse_ok(kKubectl);
  const auto& v2 = spec.target.levels.at("engine").at("v2");
  ASSERT_EQ(v2.apply.size(), 1u);
  EXPECT_EQ(v2.apply[0],
            (std::vector<std::string>{"set", "image", "deployment/vllm", "vllm=vllm:v2"}));
  ASSERT_EQ(v2.wait.size(), 1u);
  EXPECT_EQ(v2.wait[0].front(), "rollout");
  EXPECT_TRUE(spec.target.levels.at("engine").at("v1").wait.empty());
  EXPECT_EQ(spec.factor("engine")->phase, FactorPhase::kDeploy);
  // "v2" alone names the arm "engine=v2".
  EXPECT_EQ(spec.baseline, "engine=v2");
}

TEST(ScenarioTarget, EveryKubectlLevelNeedsAnEntry) {
  const auto heads = error_heads(replaced(kKubectl, "engine: [v1, v2]", "engine: [v1, v2, v3]"));
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_NE(heads[0].find("factors.engine: level \"v3\" has no entry in target.levels.engine: "
                          "say what it does there"),
            std::string::npos)
      << heads[0];
}

TEST(ScenarioTarget, KubectlCommandsLeaveOutTheBinary) {
  const auto heads = error_heads(replaced(kKubectl, "[[set, image, deployment/vllm, vllm=vllm:v1]]",
                                          "[[kubectl, set, image, deployment/vllm, vllm=v1]]"));
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_NE(heads[0].find("target.levels.engine.v1.apply"), std::string::npos) << heads[0];
}

TEST(ScenarioTarget, EndpointsLevelNeedsABaseUrl) {
  constexpr const char* kEndpoints = R"(name: probe
target:
  kind: endpoints
  levels:
    prefix_caching:
      off: {base_url: http://127.0.0.1:8000}
      on: {metrics: [http://127.0.0.1:8001/metrics]}
factors:
  prefix_caching: [off, on]
  concurrency: [1]
load:
  num_requests: 10
)";
  const auto heads = error_heads(kEndpoints);
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_NE(heads[0].find("target.levels.prefix_caching.on.base_url: required key is missing"),
            std::string::npos)
      << heads[0];
}

constexpr const char* kReplicas = R"(name: two-llama-cpp
model: qwen
target:
  kind: replicas
  upstreams: [http://127.0.0.1:8001, "http://127.0.0.1:8002/v1/"]
  health: {interval: 500ms, failures: 2}
  kv_ttl: 60s
factors:
  strategy: [round-robin, prefix-hash, kv]
  concurrency: [4]
load:
  num_requests: 10
)";

TEST(ScenarioTarget, ReplicasReadsItsUpstreamsAndSwitchesLive) {
  const ScenarioSpec spec = parse_ok(kReplicas);
  EXPECT_EQ(spec.target.kind, "replicas");
  EXPECT_EQ(spec.target.upstreams,
            (std::vector<std::string>{"http://127.0.0.1:8001", "http://127.0.0.1:8002/v1"}));
  EXPECT_EQ(spec.target.replicas, 2);
  EXPECT_EQ(spec.target.sim.replicas, 2);  // the --target sim stand-in: one per upstream
  EXPECT_DOUBLE_EQ(spec.target.health.interval_s, 0.5);
  EXPECT_EQ(spec.target.health.failures, 2);
  EXPECT_DOUBLE_EQ(spec.target.kv_ttl_s, 60);
  EXPECT_EQ(spec.factor("strategy")->phase, FactorPhase::kRun);
  const ScenarioSpec off = parse_ok(replaced(kReplicas, "interval: 500ms", "interval: 0"));
  EXPECT_EQ(off.target.health.interval_s, 0);
}

TEST(ScenarioTarget, ReplicasRefusesBadUpstreamsWithTheirPlace) {
  std::string text = replaced(kReplicas, "[http://127.0.0.1:8001, \"http://127.0.0.1:8002/v1/\"]",
                              "[https://a:1, http://b:2, http://b:2/, 7]");
  text = replaced(text, "  kv_ttl: 60s\n", "  kv_ttl: 60s\n  replicas: 2\n  base_url: http://x\n");
  const auto heads = error_heads(text);
  ASSERT_EQ(heads.size(), 5u);
  EXPECT_EQ(heads[0].rfind("s.yaml:9:13: target.base_url: not used by target kind replicas", 0), 0u)
      << heads[0];
  EXPECT_EQ(heads[1],
            "s.yaml:8:13: target.replicas: not used by target kind replicas (used by: sim, "
            "kubeai, dynamo, kubectl, endpoints, llmd)");
  EXPECT_EQ(heads[2],
            "s.yaml:5:15: target.upstreams: upstream \"https://a:1\": only http:// URLs are "
            "supported");
  EXPECT_EQ(heads[3],
            "s.yaml:5:40: target.upstreams: \"http://b:2\" is listed twice (each server is one "
            "replica)");
  EXPECT_EQ(heads[4],
            "s.yaml:5:53: target.upstreams: upstream \"7\": only http:// URLs are supported");

  const auto missing = error_heads(replaced(
      kReplicas, "  upstreams: [http://127.0.0.1:8001, \"http://127.0.0.1:8002/v1/\"]\n", ""));
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].rfind("s.yaml:4:3: target.upstreams: required for kind replicas", 0), 0u)
      << missing[0];
}

TEST(ScenarioTarget, ReplicasCannotApplyTheServersOwnSettings) {
  const auto heads = error_heads(
      replaced(kReplicas, "  concurrency: [4]\n", "  concurrency: [4]\n  prefix_caching: [off]\n"));
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(heads[0].rfind("s.yaml:11:3: factors.prefix_caching: unknown factor for target kind "
                           "replicas (known: strategy, mean_load_factor",
                           0),
            0u)
      << heads[0];
  const auto health = error_heads(replaced(kReplicas, "failures: 2", "failures: 0"));
  ASSERT_EQ(health.size(), 1u);
  EXPECT_EQ(
      health[0].rfind("s.yaml:6:39: target.health.failures: expected an integer from 1 to 1000", 0),
      0u)
      << health[0];
}

TEST(PlanPhases, DeployFactorsOutermostEvenWhenWrittenLast) {
  // Seed 003's shape: concurrency written first, the router mode (deploy-time on dynamo) last.
  std::string text = replaced(kKubeai, "kind: kubeai", "kind: dynamo");
  text = replaced(text, "  strategy: [LeastLoad, PrefixHash]\n  concurrency: [4, 8]\n",
                  "  concurrency: [40, 80, 120]\n  strategy: [round-robin, kv]\n  repeats: 2\n");
  const ScenarioSpec spec = parse_ok(text);
  const auto cells = expand_plan(spec);
  ASSERT_EQ(cells.size(), 12u);
  std::vector<std::string> order;
  std::set<int> groups;
  for (const auto& c : cells) {
    order.push_back(c.arm + "/" + std::to_string(c.concurrency) + "/" + std::to_string(c.repeat) +
                    "/g" + std::to_string(c.deploy_group));
    groups.insert(c.deploy_group);
  }
  EXPECT_EQ(order,
            (std::vector<std::string>{
                "round-robin/40/0/g0", "round-robin/40/1/g0", "round-robin/80/0/g0",
                "round-robin/80/1/g0", "round-robin/120/0/g0", "round-robin/120/1/g0", "kv/40/0/g1",
                "kv/40/1/g1", "kv/80/0/g1", "kv/80/1/g1", "kv/120/0/g1", "kv/120/1/g1"}));
  EXPECT_EQ(groups.size(), 2u);  // two deployments, not six
  ASSERT_NE(cells[0].treatment.find("strategy"), nullptr);
  EXPECT_EQ(*cells[0].treatment.find("strategy"), "round-robin");
  ASSERT_NE(cells[6].treatment.find("strategy"), nullptr);
  EXPECT_EQ(*cells[6].treatment.find("strategy"), "kv");
}

TEST(PlanPhases, RunTimeFactorsKeepTheWrittenOrder) {
  // On kubeai both are run-time: concurrency written first changes slowest.
  const ScenarioSpec spec =
      parse_ok(replaced(kKubeai, "  strategy: [LeastLoad, PrefixHash]\n  concurrency: [4, 8]\n",
                        "  concurrency: [4, 8]\n  strategy: [LeastLoad, PrefixHash]\n"));
  const auto cells = expand_plan(spec);
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_EQ(cells[0].arm, "LeastLoad");
  EXPECT_EQ(cells[1].arm, "PrefixHash");
  EXPECT_EQ(cells[1].concurrency, 4);
  EXPECT_EQ(cells[2].concurrency, 8);
  for (const auto& c : cells) EXPECT_EQ(c.deploy_group, 0);  // no deploy-time factor
}

TEST(PlanPhases, TargetOverrideChangesEveryKey) {
  const ScenarioSpec spec = parse_ok(kKubeai);
  const auto cluster = expand_plan(spec);
  const auto rehearsal = expand_plan(spec, "sim");
  ASSERT_EQ(cluster.size(), rehearsal.size());
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_EQ(cluster[i].arm, rehearsal[i].arm);
    EXPECT_NE(cluster[i].key, rehearsal[i].key);  // a rehearsal never resumes a cluster sweep
  }
  EXPECT_NE(scenario_hash(spec.text), scenario_hash(spec.text, "sim"));
}

}  // namespace
}  // namespace kvsweep::orchestrator
