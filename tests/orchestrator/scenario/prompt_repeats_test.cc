// Tests for a dataset smaller than its cell: a random dataset is sized by the cell's requests
// (vLLM's --num-prompts), and a cell that still sends a prompt twice is found before it runs.
#include "orchestrator/scenario/prompt_repeats.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/datasets/load_workload.h"
#include "orchestrator/scenario/plan.h"
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

}  // namespace
}  // namespace kvsweep::orchestrator
