// The five seed scenarios' matrices, counted from their typed plans: what each write-up in the
// seeds ran (cells, arms, levels, rates, prompt counts, patches). Their full `kvsweep plan`
// output is compared with tests/golden/plans by the *_plan_golden CTest cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/cli/sweep_preview.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/targets/target_factory.h"
#include "orchestrator/targets/target_kinds.h"
#include "tests/orchestrator/cli/seed_scenario.h"

namespace kvsweep::orchestrator {
namespace {

std::vector<int> concurrency_levels(const std::vector<CellPlan>& cells) {
  std::vector<int> out;
  for (const auto& c : cells) {
    if (std::find(out.begin(), out.end(), c.concurrency) == out.end()) out.push_back(c.concurrency);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int deployments(const std::vector<CellPlan>& cells) {
  std::set<int> groups;
  for (const auto& c : cells) groups.insert(c.deploy_group);
  return static_cast<int>(groups.size());
}

// Every kubectl command the plan runs, in order, with the arm it is run for.
std::vector<std::pair<std::string, std::string>> planned(const ScenarioSpec& spec,
                                                         const std::vector<CellPlan>& cells) {
  const auto planner = build_planner(spec, cells, "");
  std::vector<std::pair<std::string, std::string>> out;
  std::optional<Treatment> applied;
  for (const auto& c : cells) {
    if (applied && *applied == c.treatment) continue;
    for (const auto& argv : planner->planned_commands(applied ? &*applied : nullptr, c.treatment)) {
      std::string line;
      for (const auto& a : argv) line += (line.empty() ? "" : " ") + a;
      out.emplace_back(c.arm, line);
    }
    applied = c.treatment;
  }
  return out;
}

TEST(SeedPlans, Seed000IsTwoArmsAt200RequestsPerSecondAnd400InFlight) {
  const ScenarioSpec spec = load_seed_scenario("seed-000-kubeai-l4-prefixhash");
  const auto cells = expand_plan(spec);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(arm_labels(spec), (std::vector<std::string>{"LeastLoad", "PrefixHash"}));
  for (const auto& c : cells) {
    EXPECT_EQ(c.concurrency, 400);               // --max-concurrency 400
    EXPECT_DOUBLE_EQ(c.load.request_rate, 200);  // --request-rate 200
    EXPECT_EQ(c.load.num_requests, 2000);        // --num-prompts 2000
    EXPECT_EQ(c.seed, 12345u);
    EXPECT_EQ(c.load.dataset.kind, "sharegpt");
    EXPECT_EQ(c.load.dataset.min_messages, 16);
  }
  EXPECT_EQ(deployments(cells), 1);
}

TEST(SeedPlans, Seed001IsTwoArmsOf320ThreadsWithTwoWarmPassesFirst) {
  const ScenarioSpec spec = load_seed_scenario("seed-001-kubeai-70b-h100-threads");
  const auto cells = expand_plan(spec);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(arm_labels(spec), (std::vector<std::string>{"LeastLoad", "PrefixHash"}));
  for (const auto& c : cells) {
    EXPECT_EQ(c.concurrency, 320);             // k6: 320 VUs
    EXPECT_EQ(c.load.request_rate, 0);         // a closed loop, as k6's VUs
    EXPECT_EQ(c.load.max_tokens, 10);          // low max_tokens
    EXPECT_EQ(c.load.num_requests, 7341);      // the seed's 1,000 iterations
    EXPECT_DOUBLE_EQ(c.load.duration_s, 600);  // maxDuration 10m
    EXPECT_EQ(c.load.cache, CachePolicy::kWarm);
    EXPECT_EQ(c.load.warm_passes, 2);  // run twice, then measure
    EXPECT_EQ(c.load.dataset.kind, "chat-threads");
  }
}

TEST(SeedPlans, Seed002IsThreeArmsAtFourLevelsWithTheServiceArmUnpatched) {
  const ScenarioSpec spec = load_seed_scenario("seed-002-kubeai-l4-three-arms");
  const auto cells = expand_plan(spec);
  ASSERT_EQ(cells.size(), 12u);
  EXPECT_EQ(arm_labels(spec), (std::vector<std::string>{"k8s-service", "LeastLoad", "PrefixHash"}));
  EXPECT_EQ(concurrency_levels(cells), (std::vector<int>{800, 1600, 3200, 8000}));
  EXPECT_EQ(spec.baseline, "k8s-service");
  for (const auto& c : cells) {
    // The request rate of each level as the seed's jobs set it.
    const double rate = c.concurrency == 800 || c.concurrency == 8000 ? 800 : 200;
    EXPECT_DOUBLE_EQ(c.load.request_rate, rate) << c.concurrency;
    EXPECT_EQ(c.load.num_requests, 8000);
    EXPECT_EQ(c.load.dataset.max_conversations, 800);
    EXPECT_EQ(c.seed, 12345u);
    EXPECT_EQ(c.load.turns, driver::LoadOptions::Turns::kIndependent);
    EXPECT_TRUE(c.load.new_connection_per_request);
    if (c.arm == "k8s-service") {
      EXPECT_EQ(c.treatment.base_url, "http://vllm-direct.default");
      EXPECT_TRUE(c.treatment.levels.empty());
    } else {
      EXPECT_EQ(c.treatment.base_url, "");
      EXPECT_EQ(c.treatment.levels,
                (std::vector<std::pair<std::string, std::string>>{{"strategy", c.arm}}));
    }
  }
  // One KubeAI patch per change to a KubeAI arm (2 per level), none for the Service arm.
  const auto commands = planned(spec, cells);
  ASSERT_EQ(commands.size(), 8u);
  for (const auto& [arm, line] : commands) {
    EXPECT_NE(arm, "k8s-service") << line;
    EXPECT_NE(line.find("patch model llama-3.1-8b-instruct-fp8-l4 --type=merge"), std::string::npos)
        << line;
    EXPECT_NE(line.find(R"("strategy":")" + arm + "\""), std::string::npos) << line;
  }
  // The rehearsal routes the Service arm at random (kube-proxy), the others as KubeAI would.
  for (const auto& c : expand_plan(spec, "sim")) {
    EXPECT_EQ(c.treatment.base_url, "");
    const std::string* strategy = c.treatment.find("strategy");
    ASSERT_NE(strategy, nullptr);
    EXPECT_EQ(*strategy, c.arm == "k8s-service" ? "random" : c.arm);
  }
}

TEST(SeedPlans, Seed003IsTwoModesAtFiveLevelsInTwoDeployments) {
  const ScenarioSpec spec = load_seed_scenario("seed-003-dynamo-kv-routing");
  const auto cells = expand_plan(spec);
  ASSERT_EQ(cells.size(), 10u);
  EXPECT_EQ(arm_labels(spec), (std::vector<std::string>{"round-robin", "kv"}));
  EXPECT_EQ(concurrency_levels(cells), (std::vector<int>{40, 60, 80, 100, 120}));
  EXPECT_EQ(deployments(cells), 2);  // all levels without routing, then all with it
  for (const auto& c : cells) {
    EXPECT_DOUBLE_EQ(c.load.duration_s, 300);  // 5 minutes a level
    EXPECT_EQ(c.load.max_tokens, 1024);
    EXPECT_EQ(c.arm, c.ordinal < 5 ? "round-robin" : "kv");
  }
}

TEST(SeedPlans, Seed004IsTwoModesTwoRegimesThreeLevelsInTwoDeployments) {
  const ScenarioSpec spec = load_seed_scenario("seed-004-vllm-prefix-probe");
  const auto cells = expand_plan(spec);
  ASSERT_EQ(cells.size(), 12u);
  EXPECT_EQ(concurrency_levels(cells), (std::vector<int>{1, 8, 16}));
  EXPECT_EQ(deployments(cells), 2);  // --enable-prefix-caching is a server argument
  std::set<std::pair<std::string, int>> mode_regime;
  for (const auto& c : cells) {
    const std::string* caching = c.treatment.find("prefix_caching");
    ASSERT_NE(caching, nullptr);
    const std::string mode = *caching == "on" ? "cache" : "no_cache";
    EXPECT_EQ(c.arm.rfind(mode + ", prefix_tokens=", 0), 0u) << c.arm;
    mode_regime.emplace(mode, c.load.dataset.prefix_tokens);  // typed, not a level string
    EXPECT_EQ(c.load.dataset.kind, "shared-prefix");
    EXPECT_EQ(c.load.dataset.num_prefixes, 1);
  }
  EXPECT_EQ(mode_regime,
            (std::set<std::pair<std::string, int>>{
                {"no_cache", 512}, {"no_cache", 1024}, {"cache", 512}, {"cache", 1024}}));
  // Each mode is one patch of the Deployment's vLLM arguments, with the flag only when on.
  std::vector<std::string> patches;
  for (const auto& [arm, line] : planned(spec, cells)) {
    if (line.find(" patch deployment/phi3-mini ") != std::string::npos) patches.push_back(line);
  }
  ASSERT_EQ(patches.size(), 2u);
  EXPECT_EQ(patches[0].find("--enable-prefix-caching"), std::string::npos);
  EXPECT_NE(patches[1].find("--enable-prefix-caching"), std::string::npos);
}

}  // namespace
}  // namespace kvsweep::orchestrator
