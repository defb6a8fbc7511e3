// Tests for a dataset smaller than its cells: a random dataset is sized by the cell's requests
// (vLLM's --num-prompts), a cell that still sends a prompt twice is found before it runs, and
// so is one whose cache kept what earlier cells sent (SweepRepeats: said once per experiment).
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

ScenarioSpec parse_repeats_scenario(const std::string& text) {
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
      parse_repeats_scenario(random_sweep("  num_requests: 2000\n  warmup: {requests: 40}\n"));
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
      parse_repeats_scenario(random_sweep("  num_requests: 2000\n", ", num_prompts: 1000"));
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
  const ScenarioSpec spec = parse_repeats_scenario(random_sweep("  duration: 30s\n"));
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

// Cells over one workload, `requests` each, of the given cache policies and deployments.
std::vector<CellPlan> cells_of(const std::vector<std::pair<CachePolicy, int>>& shape,
                               std::int64_t requests) {
  std::vector<CellPlan> cells;
  for (const auto& [cache, group] : shape) {
    CellPlan c;
    c.ordinal = static_cast<int>(cells.size());
    c.load.num_requests = requests;
    c.load.cache = cache;
    c.deploy_group = group;
    cells.push_back(c);
  }
  return cells;
}

WorkloadSize synthetic(std::int64_t prompts, int conversations) {
  WorkloadSize w;
  w.prompts = prompts;
  w.conversations = conversations;
  w.kind = "synthetic-multiturn";
  return w;
}

// Issue 39 item 4: every cell over one workload starts at its first prompt, so a cell on a
// cache kept as-is re-sends what the cell before it sent, however large the dataset.
TEST(SweepRepeats, ACacheKeptAsIsCountsWhatEarlierCellsSent) {
  const auto cells =
      cells_of({{CachePolicy::kAsIs, 0}, {CachePolicy::kAsIs, 0}, {CachePolicy::kWarm, 0}},
               /*requests=*/8);
  const auto repeats = experiment_repeats(cells, {synthetic(10, 5)});
  ASSERT_EQ(repeats.size(), 3u);
  EXPECT_FALSE(repeats[0]);
  ASSERT_TRUE(repeats[1]);
  EXPECT_EQ(repeats[1]->sends, 2);
  EXPECT_EQ(repeats[1]->earlier_cells, 1);
  ASSERT_TRUE(repeats[2]);
  EXPECT_EQ(repeats[2]->sends, 3);
  EXPECT_EQ(repeats_text(*repeats[2]),
            "sends each prompt up to 3 times: 8 requests over a dataset of 10 prompts, with "
            "what 2 earlier cells sent on the cache kept warm");
}

TEST(SweepRepeats, AColdCellAndANewDeploymentStartTheCountAgain) {
  const auto cells = cells_of({{CachePolicy::kAsIs, 0},
                               {CachePolicy::kCold, 0},
                               {CachePolicy::kAsIs, 0},
                               {CachePolicy::kAsIs, 1}},
                              8);
  const auto repeats = experiment_repeats(cells, {synthetic(10, 5)});
  EXPECT_FALSE(repeats[0]);
  EXPECT_FALSE(repeats[1]);  // emptied before it ran
  ASSERT_TRUE(repeats[2]);   // what the cold cell sent is still there
  EXPECT_EQ(repeats[2]->earlier_cells, 1);
  EXPECT_FALSE(repeats[3]);  // a new deployment's servers start afresh
  // Another workload (another seed or dataset level) shares no prompt with the first.
  auto other = cells_of({{CachePolicy::kAsIs, 0}, {CachePolicy::kAsIs, 0}}, 8);
  other[1].workload = 1;
  const auto apart = experiment_repeats(other, {synthetic(10, 5), synthetic(10, 5)});
  EXPECT_FALSE(apart[0]);
  EXPECT_FALSE(apart[1]);
}

// A cell bounded by its duration sends an unknown number of requests, but at least its first
// prompt, which an earlier cell on the same cache sent.
TEST(SweepRepeats, ACellOfUnknownLengthRepeatsWhatAnEarlierCellSent) {
  auto cells = cells_of({{CachePolicy::kAsIs, 0}, {CachePolicy::kAsIs, 0}}, 0);
  cells[0].load.duration_s = cells[1].load.duration_s = 30;
  const auto repeats = experiment_repeats(cells, {synthetic(10, 5)});
  EXPECT_FALSE(repeats[0]);
  ASSERT_TRUE(repeats[1]);
  EXPECT_EQ(repeats[1]->sends, 2);
  EXPECT_EQ(repeats_text(*repeats[1]),
            "sends each prompt up to 2 times: its requests over a dataset of 10 prompts, with "
            "what 1 earlier cell sent on the cache kept as-is");
}

// The quickstart before issue 39: 9 cold cells of 5,000 requests over 96 conversations of 8
// turns. One line for the experiment, not one per cell, naming the key to raise and how far.
TEST(SweepRepeats, TheWarningIsSaidOncePerExperimentWithTheFixItNeeds) {
  std::vector<std::pair<CachePolicy, int>> shape(9, {CachePolicy::kCold, 0});
  const auto cells = cells_of(shape, 5000);
  const std::vector<WorkloadSize> sizes = {synthetic(768, 96)};
  const auto lines = repeats_warnings(cells, experiment_repeats(cells, sizes), sizes);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "9 of 9 cells send a prompt more than once within the cell (cell 1 sends each prompt "
            "up to 7 times: 5000 requests over a dataset of 768 prompts): raise "
            "load.dataset.conversations from 96 to at least 625");
  // Raised so, it says nothing.
  const std::vector<WorkloadSize> raised = {synthetic(5000, 625)};
  EXPECT_TRUE(repeats_warnings(cells, experiment_repeats(cells, raised), raised).empty());
}

TEST(SweepRepeats, CellsOnACacheKeptAsIsAreNamedWithTheirFix) {
  const auto cells = cells_of({{CachePolicy::kAsIs, 0}, {CachePolicy::kAsIs, 0}}, 160);
  WorkloadSize stand_in = synthetic(2014, 200);
  stand_in.stand_in = true;
  const auto lines = repeats_warnings(cells, experiment_repeats(cells, {stand_in}), {stand_in});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "1 of 2 cells (cell 2) re-send the prompts earlier cells sent, on a cache kept as-is "
            "(cell 2 sends each prompt up to 2 times: 160 requests over a dataset of 2014 "
            "prompts, with what 1 earlier cell sent on the cache kept as-is): every cell over "
            "one dataset starts at its first prompt; set load.cache: cold so each cell starts "
            "from empty caches");
  // Too small a stand-in names the stand-in's key.
  WorkloadSize small = synthetic(100, 10);
  small.stand_in = true;
  const auto cold = cells_of({{CachePolicy::kCold, 0}}, 160);
  EXPECT_EQ(repeats_warnings(cold, experiment_repeats(cold, {small}), {small}),
            (std::vector<std::string>{
                "1 of 1 cells send a prompt more than once within the cell (cell 1 sends each "
                "prompt up to 2 times: 160 requests over a dataset of 100 prompts): raise "
                "load.dataset.stand_in.conversations from 10 to at least 16"}));
}

// A capacity search probes each arm many times: on a cache kept as-is every probe after the
// first re-sends what the arm's earlier probes sent.
TEST(SweepRepeats, ASearchOnACacheKeptAsIsSaysItsProbesRepeat) {
  const auto arms = cells_of({{CachePolicy::kAsIs, 0}}, 100);
  const std::vector<WorkloadSize> sizes = {synthetic(1000, 100)};
  EXPECT_EQ(repeats_warnings(arms, experiment_repeats(arms, sizes), sizes, /*search=*/true),
            (std::vector<std::string>{
                "each probe of an arm re-sends the prompts its earlier probes sent, on a cache "
                "kept as-is: set load.cache: cold so each probe starts from empty caches"}));
  const auto cold = cells_of({{CachePolicy::kCold, 0}}, 100);
  EXPECT_TRUE(repeats_warnings(cold, experiment_repeats(cold, sizes), sizes, true).empty());
}

}  // namespace
}  // namespace kvsweep::orchestrator
