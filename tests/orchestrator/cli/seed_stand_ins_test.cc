// The seeds whose dataset file cannot be shipped (seeds 000 and 002: the ShareGPT selection
// sharegpt_16_messages_or_more.json; seed 001: KubeAI's message-threads.json): each seed
// scenario points at the file as its seed did and carries a generated stand-in whose measured
// statistics, counted as the simulated fleet counts them, are the published workload's; and
// `kvsweep plan` names the stand-in with those statistics.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "driver/datasets/load_workload.h"
#include "orchestrator/cli/dataset_preview.h"
#include "orchestrator/scenario/dataset_tokens.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/targets/target_kinds.h"
#include "tests/orchestrator/cli/seed_scenario.h"

namespace kvsweep::orchestrator {
namespace {

// A stand-in's mean prompt and output tokens per request stay within 2% of the published
// means, and its request count within 3% of the published one (its turns per conversation are
// drawn, so the total is near, not at, the count the seed ran).
constexpr double kMeanTolerance = 0.02;
constexpr double kRequestTolerance = 0.03;

struct Published {
  const char* scenario;
  const char* file;      // the seed's own file name
  const char* kind;      // the file's dataset kind
  double requests;       // what the seed's run sent
  double prompt_tokens;  // ... and carried, in all
  double output_tokens;
  int max_tokens;             // > 0: the seed's requests asked for this many at most
  const char* plan_stand_in;  // what `plan` says the stand-in is
};

const Published kSeeds[] = {
    // Seed 000: "Successful requests: 2000", "Total input tokens: 1774781", "Total generated
    // tokens: 163963" (both runs).
    {"seed-000-kubeai-l4-prefixhash", "sharegpt_16_messages_or_more.json", "sharegpt", 2000,
     1774781, 163963, 0,
     "synthetic-multiturn, 200 conversations of 8-12 turns, no system prompt, user messages of "
     "47 words, replies of 53 words; max_tokens 82 (the dataset's output_tokens)"},
    // Seed 001 (LeastLoad, 8 replicas, the measured 2nd run): "http_reqs: 7341",
    // "input_tokens: 4990165", "new_tokens: 67808"; max_tokens 10.
    {"seed-001-kubeai-70b-h100-threads", "message-threads.json", "chat-threads", 7341, 4990165,
     67808, 10,
     "synthetic-multiturn, 1000 conversations of 5-10 turns, no system prompt, user messages "
     "of 83 words, replies of 6 words; max_tokens 10"},
    // Seed 002 (all 12 runs): "Successful requests: 8000", "Total input tokens: 6656338",
    // "Total generated tokens: 608447".
    {"seed-002-kubeai-l4-three-arms", "sharegpt_16_messages_or_more.json", "sharegpt", 8000,
     6656338, 608447, 0,
     "synthetic-multiturn, 800 conversations of 8-12 turns, no system prompt, user messages of "
     "43 words, replies of 50 words; max_tokens 76 (the dataset's output_tokens)"},
};

// What the stand-in sends in a cell: its dataset is seeded by the cell's seed (the scenario's).
DatasetTokens stand_in_tokens(const ScenarioSpec& spec) {
  driver::DatasetOptions stand_in = *spec.load.stand_in;
  stand_in.seed = spec.seed;
  return count_dataset_tokens(driver::load_workload(stand_in), spec.load.max_tokens);
}

class SeedStandIn : public ::testing::TestWithParam<Published> {};

TEST_P(SeedStandIn, PointsAtTheSeedsOwnFileWhichIsNotShipped) {
  const Published& seed = GetParam();
  const ScenarioSpec spec = load_seed_scenario(seed.scenario);
  EXPECT_EQ(spec.load.dataset.kind, seed.kind);
  EXPECT_EQ(std::filesystem::path(spec.load.dataset.path).filename().string(), seed.file);
  EXPECT_FALSE(std::filesystem::exists(spec.load.dataset.path)) << spec.load.dataset.path;
  ASSERT_TRUE(spec.load.stand_in.has_value());
  EXPECT_EQ(spec.load.stand_in->kind, "synthetic-multiturn");
}

TEST_P(SeedStandIn, SendsThePublishedTokensPerRequest) {
  const Published& seed = GetParam();
  const ScenarioSpec spec = load_seed_scenario(seed.scenario);
  ASSERT_TRUE(spec.load.stand_in.has_value());
  const DatasetTokens sent = stand_in_tokens(spec);
  const double published_prompt = seed.prompt_tokens / seed.requests;
  const double published_output = seed.output_tokens / seed.requests;
  EXPECT_NEAR(static_cast<double>(sent.requests), seed.requests, seed.requests * kRequestTolerance);
  EXPECT_NEAR(sent.mean_prompt_tokens(), published_prompt, published_prompt * kMeanTolerance);
  if (seed.max_tokens > 0) {
    // The seed's figure is what max_tokens let through (answers that ended sooner count
    // less): the stand-in asks for exactly the seed's max_tokens, which bounds it.
    EXPECT_DOUBLE_EQ(sent.mean_output_tokens(), seed.max_tokens);
    EXPECT_LE(published_output, seed.max_tokens);
  } else {
    EXPECT_NEAR(sent.mean_output_tokens(), published_output, published_output * kMeanTolerance);
  }
}

TEST_P(SeedStandIn, PlanNamesTheStandInAndWhatItSends) {
  const Published& seed = GetParam();
  const ScenarioSpec spec = load_seed_scenario(seed.scenario);
  const std::vector<std::string> lines = dataset_lines(spec);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind(std::string("dataset: ") + seed.kind + " ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find(seed.file), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1].rfind("stand-in (the file is absent: --target sim and predict send this, a "
                           "real target stops): ",
                           0),
            0u)
      << lines[1];
  EXPECT_NE(lines[1].find(seed.plan_stand_in), std::string::npos) << lines[1];
  // The statistics it prints are the ones measured here.
  const DatasetTokens sent = stand_in_tokens(spec);
  char figures[160];
  std::snprintf(figures, sizeof figures, "sends %lld requests of %.1f prompt and %.1f output",
                static_cast<long long>(sent.requests), sent.mean_prompt_tokens(),
                sent.mean_output_tokens());
  EXPECT_NE(lines[1].find(figures), std::string::npos) << lines[1];
}

INSTANTIATE_TEST_SUITE_P(Seeds, SeedStandIn, ::testing::ValuesIn(kSeeds),
                         [](const ::testing::TestParamInfo<Published>& info) {
                           return std::string("Seed00") + std::to_string(info.index);
                         });

// The count itself, on a conversation small enough to count by hand: turn 2's prompt is
// "<|user|>\nabcd\n<|assistant|>\nxy\n<|user|>\nefgh\n<|assistant|>\n", 59 bytes, 15 tokens
// of 4 bytes (the last one 3); turn 1's is "<|user|>\nabcd\n<|assistant|>\n", 28 bytes, 7.
TEST(DatasetTokens, CountsTheSimsTemplatedPromptAndEachTurnsMaxTokens) {
  driver::Workload workload;
  driver::Conversation c;
  c.user = {"abcd", "efgh"};
  c.assistant = {"xy", "zz"};
  c.max_tokens = {5, 0};  // turn 2 leaves it to the run
  workload.conversations.push_back(c);
  const DatasetTokens counted = count_dataset_tokens(workload, 64);
  EXPECT_EQ(counted.requests, 2);
  EXPECT_EQ(counted.prompt_tokens, 7 + 15);
  EXPECT_EQ(counted.output_tokens, 5 + 64);
  EXPECT_DOUBLE_EQ(counted.mean_prompt_tokens(), 11);
  EXPECT_DOUBLE_EQ(DatasetTokens{}.mean_prompt_tokens(), 0);
}

// What `plan` says a request's max_tokens is, per dataset kind, as the driver decides it.
TEST(DatasetPreview, MaxTokensSaysWhereEachRequestsLimitComesFrom) {
  driver::DatasetOptions d;
  d.kind = "sharegpt";
  EXPECT_EQ(max_tokens_text(d, "64"),
            "each turn's answer length in the dataset (its bytes / 4, at least 1)");
  d.kind = "chat-threads";
  EXPECT_EQ(max_tokens_text(d, "10"), "10");
  d.kind = "jsonl";
  EXPECT_EQ(max_tokens_text(d, "64"), "each row's max_tokens, else 64");
  d.kind = "synthetic-multiturn";
  EXPECT_EQ(max_tokens_text(d, "by factor"), "by factor");  // output_tokens 0: the run's
  d.output_tokens = {0, 0, 60, 90};
  EXPECT_EQ(max_tokens_text(d, "64"), "60-90 (the dataset's output_tokens)");
}

}  // namespace
}  // namespace kvsweep::orchestrator
