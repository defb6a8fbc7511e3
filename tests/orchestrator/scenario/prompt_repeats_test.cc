// Tests for a dataset smaller than its cell: a random dataset is sized by the cell's requests
// (vLLM's --num-prompts), and a cell that still sends a prompt twice is found before it runs.
#include "orchestrator/scenario/prompt_repeats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "driver/datasets/load_workload.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/rehearsal.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/targets/target_kinds.h"

namespace kvsweep::orchestrator {
namespace {

ScenarioSpec parse_or_fail(const std::string& text) {
  std::vector<ScenarioError> errors;
  auto spec = parse_scenario(text, "s.yaml", &errors, target_kinds());
  if (!spec) ADD_FAILURE() << (errors.empty() ? "no spec" : errors.front().text);
  return spec ? *spec : ScenarioSpec{};
}

// Two arms over a random dataset; `dataset` adds keys to it.
std::string random_sweep(const std::string& load, const std::string& dataset = "") {
  return "name: r\ntarget: {kind: sim}\nfactors:\n  concurrency: [4]\n"
         "  strategy: [prefix-hash, least-load]\n"
         "load:\n  dataset: {kind: random, random_input_len: 64, random_output_len: 4" +
         dataset + "}\n" + load;
}

// Issue 27 item 8: num_requests 2000 generated vLLM's default 1,000 prompts and sent each
// twice: prefix-hash "found" a 48.8% KV hit on prompts that share nothing.
TEST(PromptRepeats, ARandomDatasetHoldsAsManyPromptsAsTheCellSends) {
  const ScenarioSpec spec =
      parse_or_fail(random_sweep("  num_requests: 2000\n  warmup: {requests: 40}\n"));
  const std::vector<CellPlan> cells = expand_plan(spec);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].load.dataset.num_prompts, 2040);  // warm-up included
  EXPECT_EQ(cells[0].workload, cells[1].workload);     // both arms send the same prompts
  const driver::Workload workload = driver::load_workload(cells[0].load.dataset);
  EXPECT_EQ(workload_prompts(workload), 2040);
  EXPECT_FALSE(prompt_repeats(cells[0], workload, false));
}

TEST(PromptRepeats, ASizeTheScenarioGivesIsKeptAndItsRepeatsAreSaid) {
  const ScenarioSpec spec =
      parse_or_fail(random_sweep("  num_requests: 2000\n", ", num_prompts: 1000"));
  const std::vector<CellPlan> cells = expand_plan(spec);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].load.dataset.num_prompts, 1000);
  const driver::Workload workload = driver::load_workload(cells[0].load.dataset);
  const auto repeats = prompt_repeats(cells[0], workload, false);
  ASSERT_TRUE(repeats);
  EXPECT_EQ(repeats->sends, 2);
  EXPECT_EQ(repeats_text(*repeats),
            "sends each prompt up to 2 times: 2000 requests over a dataset of 1000 prompts");
}

TEST(PromptRepeats, ACellBoundedByItsDurationKeepsTheDefaultSize) {
  const ScenarioSpec spec = parse_or_fail(random_sweep("  duration: 30s\n"));
  const std::vector<CellPlan> cells = expand_plan(spec);
  EXPECT_EQ(cells.at(0).load.dataset.num_prompts, 1000);
  // Unknown before it runs: the report counts what was sent.
  EXPECT_FALSE(prompt_repeats(cells[0], driver::load_workload(cells[0].load.dataset), false));
}

// A file dataset's warm-up replays the file's first prompts, which the measured phase sends
// again: they count.
TEST(PromptRepeats, AWarmUpThatReplaysTheFileCounts) {
  CellPlan cell;
  cell.load.num_requests = 8;
  cell.load.warmup_requests = 4;
  driver::Workload workload;
  workload.conversations.resize(5);
  for (auto& c : workload.conversations) {
    c.user = {"q1", "q2"};
    c.assistant = {"a1", "a2"};
  }
  EXPECT_EQ(workload_prompts(workload), 10);
  EXPECT_FALSE(prompt_repeats(cell, workload, /*warmup_replays_measured=*/false));
  const auto repeats = prompt_repeats(cell, workload, /*warmup_replays_measured=*/true);
  ASSERT_TRUE(repeats);
  EXPECT_EQ(repeats->requests, 12);
  EXPECT_EQ(repeats->sends, 2);
  // A trace sends each row once, at its time.
  workload.arrival_s.assign(5, 0.0);
  EXPECT_FALSE(prompt_repeats(cell, workload, true));
}

// The warnings of a sweep of `text` (planned, or rehearsed with `target_override` "sim").
std::vector<std::string> sweep_warnings(const std::string& text,
                                        const std::string& target_override = "") {
  ScenarioSpec spec = parse_or_fail(text);
  if (target_override == "sim") spec = rehearsal_of(spec);
  const std::vector<CellPlan> cells = expand_plan(spec, target_override);
  std::vector<driver::Workload> loaded;
  for (const auto& cell : cells) {
    if (cell.workload == static_cast<int>(loaded.size())) {
      loaded.push_back(driver::load_workload(cell.load.dataset));
    }
  }
  std::vector<WorkloadPrompts> workloads;
  for (std::size_t i = 0; i < loaded.size(); ++i) {
    const auto& first = *std::find_if(cells.begin(), cells.end(), [&](const CellPlan& c) {
      return c.workload == static_cast<int>(i);
    });
    workloads.push_back({&loaded[i], false, first.load.dataset, "load.dataset"});
  }
  std::vector<std::string> labels;
  for (const auto& c : cells) labels.push_back("cell " + std::to_string(c.ordinal + 1));
  return sweep_repeat_warnings(cells, labels, workloads, rehearsal_cuts(spec, target_override));
}

// Issue 39 item 4: said once for the sweep, with the key to raise and to what.
TEST(SweepRepeats, OneLinePerWorkloadWithTheKeyToRaise) {
  const auto random = sweep_warnings(random_sweep("  num_requests: 2000\n", ", num_prompts: 1000"));
  ASSERT_EQ(random.size(), 1u);
  EXPECT_EQ(random[0],
            "every cell sends a prompt more than once, so the prefix cache finds what the same "
            "cell sent before, whatever the strategy: cell 1 sends each prompt up to 2 times: "
            "2000 requests over a dataset of 1000 prompts; raise load.dataset.num_prompts from "
            "1000 to 2000 (or leave it out: the cell then sizes it), or lower load.num_requests "
            "to 1000");
  const std::string multiturn =
      "name: m\ntarget: {kind: sim}\nfactors:\n  concurrency: [1, 2]\n"
      "load:\n  num_requests: 30\n"
      "  dataset: {kind: synthetic-multiturn, conversations: 4, turns: 3}\n";
  const auto synthetic = sweep_warnings(multiturn);
  ASSERT_EQ(synthetic.size(), 1u);
  EXPECT_NE(synthetic[0].find(": cell 1 sends each prompt up to 3 times: 30 requests over a "
                              "dataset of 12 prompts; raise load.dataset.conversations from 4 "
                              "to 10, or lower load.num_requests to 12"),
            std::string::npos)
      << synthetic[0];
  // Raised as it says, nothing repeats.
  const std::string raised =
      multiturn.substr(0, multiturn.find("conversations: 4")) + "conversations: 10, turns: 3}\n";
  EXPECT_TRUE(sweep_warnings(raised).empty());
  const auto prefixes = sweep_warnings(
      "name: p\ntarget: {kind: sim}\nfactors:\n  concurrency: [1]\nload:\n  num_requests: 50\n"
      "  dataset: {kind: shared-prefix, num_prefixes: 2, prompts_per_prefix: 4, "
      "prefix_tokens: 8, suffix_tokens: 4}\n");
  ASSERT_EQ(prefixes.size(), 1u);
  EXPECT_NE(prefixes[0].find("raise load.dataset.num_prefixes from 2 to 13, or lower "
                             "load.num_requests to 8"),
            std::string::npos)
      << prefixes[0];
}

// A rehearsal's cuts are the keys to change: target.sim.conversations and num_requests.
TEST(SweepRepeats, ARehearsalNamesTargetSimsKeys) {
  const std::string cluster =
      "name: k\nmodel: m\ntarget:\n  kind: kubeai\n  resource: m\n  base_url: http://k\n"
      "  sim: {num_requests: 40, conversations: 5}\n"
      "factors:\n  strategy: [LeastLoad, PrefixHash]\n  concurrency: [4]\n"
      "load:\n  num_requests: 8000\n  dataset: {kind: synthetic-multiturn, conversations: "
      "2000, turns: 4}\n";
  EXPECT_TRUE(sweep_warnings(cluster).empty());
  const auto rehearsed = sweep_warnings(cluster, "sim");
  ASSERT_EQ(rehearsed.size(), 1u);
  EXPECT_NE(rehearsed[0].find("40 requests over a dataset of 20 prompts; raise "
                              "target.sim.conversations from 5 to 10, or lower "
                              "target.sim.num_requests to 20"),
            std::string::npos)
      << rehearsed[0];
}

// A cell whose cache is as-is or warm after a cell of the same workload on the same
// deployment finds what it sent; a cold cell and a new deployment start from empty caches.
TEST(SweepRepeats, EarlierCellsCountUnlessTheCacheStartsEmpty) {
  const auto sweep = [](const std::string& cache, const std::string& phase) {
    return sweep_warnings(
        "name: c\ntarget: {kind: sim}\nfactors:\n"
        "  strategy: {levels: [random, prefix-hash], phase: " +
        phase +
        "}\n  concurrency: [1, 2]\n"
        "load:\n  num_requests: 8\n  cache: " +
        cache +
        "\n  dataset: {kind: synthetic-multiturn, conversations: 4, "
        "turns: 2}\n");
  };
  EXPECT_TRUE(sweep("cold", "run").empty());
  const auto as_is = sweep("as-is", "run");
  ASSERT_EQ(as_is.size(), 1u);
  EXPECT_EQ(as_is[0],
            "3 of 4 cells start from a cache (load.cache: as-is) holding what the cells before "
            "them on the same deployment sent, and every cell starts at the workload's first "
            "prompt, so their KV hit counts it whatever the strategy: cell 2 resends up to 8 of "
            "its 8 requests' prompts; set load.cache: cold to start every cell from empty "
            "caches");
  const auto redeployed = sweep("as-is", "deploy");  // each strategy its own deployment
  ASSERT_EQ(redeployed.size(), 1u);
  EXPECT_EQ(redeployed[0].rfind("2 of 4 cells start from a cache (load.cache: as-is)", 0), 0u)
      << redeployed[0];
  const auto warm = sweep("warm", "run");
  ASSERT_EQ(warm.size(), 1u);
  EXPECT_NE(warm[0].find("(its warm pre-pass aside)"), std::string::npos) << warm[0];
}

}  // namespace
}  // namespace kvsweep::orchestrator
