// Every shipped scenario (scenarios/*.yaml) sized so nothing repeats (issue 39 item 4): its
// datasets hold at least as many distinct user turns as its cells send, as the run and the
// prediction load them, and no cell re-sends on a kept cache what earlier cells sent. Where
// repeats are the scenario's design, it is listed below with the reason, and must still warn.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/prompt_repeats.h"
#include "orchestrator/scenario/rehearsal.h"
#include "orchestrator/sweep/cell_runner.h"
#include "tests/orchestrator/cli/seed_scenario.h"

namespace kvsweep::orchestrator {
namespace {

// The scenarios that warn by design, and why. Each keeps its warning (checked below), so an
// entry that stops being true fails here rather than going stale.
const std::map<std::string, std::string>& repeats_by_design() {
  static const std::map<std::string, std::string> reasons = {
      {"seed-000-kubeai-l4-prefixhash",
       "cache as-is, as the seed reset nothing between its runs: PrefixHash's cell re-sends "
       "LeastLoad's prompts on the caches it left, as the published runs did"},
      {"seed-001-kubeai-70b-h100-threads",
       "cache warm, as the seed ran everything twice before measuring: the repeats are the "
       "preloaded cache the seed asked for"},
      {"kubeai-70b-h100", "seed 001's warm cache, as the seed file above"},
      {"seed-002-kubeai-l4-three-arms",
       "cache as-is, as the seed reset nothing between its 12 runs: each arm re-sends the "
       "prompts the runs before it sent, as published"},
      {"seed-002-capacity-search",
       "cache as-is, as seed 002: each probe re-sends what the arm's earlier probes sent"},
      {"seed-003-dynamo-kv-routing",
       "cache as-is within an arm, as the seed asked (the redeploy is the cold start; levels "
       "share it): each level re-sends what the lower levels sent"},
      {"dynamo-70b-kv-routing", "seed 003's levels sharing one deployment, as the seed file"},
      {"seed-004-vllm-prefix-probe",
       "the seed's design: 50 prompt variants of one prefix, 200 requests a cell, on a server "
       "kept running (as-is) across its levels"},
      {"seed-004-capacity-search",
       "seed 004's 50 prompt variants, probed again and again on one server kept running"},
  };
  return reasons;
}

struct Shipped {
  std::string name;
  std::string target;  // the --target a user runs it with: "" (its own kind), sim, predict
};

std::vector<Shipped> shipped() {
  std::vector<Shipped> out;
  std::set<std::string> names;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(KVSWEEP_SOURCE_DIR) + "/scenarios")) {
    if (entry.path().extension() == ".yaml") names.insert(entry.path().stem().string());
  }
  for (const auto& name : names) {
    const ScenarioSpec spec = load_seed_scenario(name);
    if (spec.target.kind == "sim") {
      out.push_back({name, ""});
    } else {
      out.push_back({name, "sim"});
      out.push_back({name, "predict"});
    }
  }
  return out;
}

// The warning the run would print before its first cell.
std::vector<std::string> warnings(const Shipped& s) {
  ScenarioSpec spec = load_seed_scenario(s.name);
  if (s.target == "sim") spec = rehearsal_of(spec);
  const std::vector<CellPlan> cells = expand_plan(spec, s.target);
  const std::vector<WorkloadSize> sizes =
      workload_sizes(load_workloads(spec, cells, /*simulated=*/true));
  return repeats_warnings(cells, experiment_repeats(cells, sizes), sizes, spec.search.enabled());
}

TEST(ShippedScenarios, RepeatNoPromptButWhereThatIsTheirDesign) {
  const std::vector<Shipped> all = shipped();
  ASSERT_GE(all.size(), 20u);  // 15 files, most of them run two ways
  std::set<std::string> warned;
  for (const auto& s : all) {
    const std::vector<std::string> said = warnings(s);
    const std::string where = s.name + (s.target.empty() ? "" : " --target " + s.target);
    std::string text;
    for (const auto& line : said) text += "\n  warning: " + line;
    if (repeats_by_design().count(s.name)) {
      EXPECT_FALSE(said.empty()) << where << " is listed as repeating by design, but says nothing";
      warned.insert(s.name);
    } else {
      EXPECT_TRUE(said.empty()) << where << text;
    }
  }
  for (const auto& [name, reason] : repeats_by_design()) {
    EXPECT_TRUE(warned.count(name)) << name << " is listed but not shipped (" << reason << ")";
  }
}

// The check: 9 cells of 5,000 requests sent 768 user turns up to 7 times each.
TEST(ShippedScenarios, TheQuickstartsCellsRepeatNothing) {
  const Shipped quickstart{"quickstart", ""};
  EXPECT_TRUE(warnings(quickstart).empty());
  const ScenarioSpec spec = load_seed_scenario("quickstart");
  const std::vector<CellPlan> cells = expand_plan(spec);
  ASSERT_EQ(cells.size(), 9u);
  const auto workloads = load_workloads(spec, cells, true);
  ASSERT_EQ(workloads.size(), 1u);
  EXPECT_GE(workload_prompts(workloads[0].measured), cells[0].load.num_requests);
}

// target.sim.conversations: the llm-d rehearsal's 160 requests in turn-major order reach past
// the first turn of its 20 conversations (800 sent nothing but first turns).
TEST(ShippedScenarios, TheLlmdRehearsalReachesLaterTurns) {
  const ScenarioSpec spec = rehearsal_of(load_seed_scenario("llmd-l4-epp-weights"));
  ASSERT_TRUE(spec.load.stand_in);
  EXPECT_EQ(spec.load.stand_in->conversations, 20);
  const std::vector<CellPlan> cells = expand_plan(spec, "sim");
  const auto workloads = load_workloads(spec, cells, true);
  ASSERT_EQ(workloads.size(), 1u);
  const std::int64_t conversations =
      static_cast<std::int64_t>(workloads[0].measured.conversations.size());
  EXPECT_EQ(conversations, 20);
  EXPECT_GT(cells[0].load.num_requests, conversations * 2);  // turns 0, 1 and later
  EXPECT_GE(workload_prompts(workloads[0].measured), cells[0].load.num_requests);
  // The prediction stays uncut.
  const ScenarioSpec full = load_seed_scenario("llmd-l4-epp-weights");
  EXPECT_EQ(full.load.stand_in->conversations, 800);
}

}  // namespace
}  // namespace kvsweep::orchestrator
