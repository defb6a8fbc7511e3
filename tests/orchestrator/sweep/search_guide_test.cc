// Tests for the predictor's guidance of a capacity search (search_guide.h): the scenario's
// search runs first in virtual time on the predicted fleet, into a real SQLite store, and each
// arm's real search starts where its prediction ended.
#include "orchestrator/sweep/search_guide.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/targets/target_kinds.h"
#include "store/store.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::orchestrator::test {
namespace {

// Two arms of a rate search on two demo replicas, prompts without a shared prefix.
std::string searching_scenario(const std::string& guide) {
  return R"(name: guided-search
target: {kind: sim, replicas: 2, profile: demo}
model: tiny-model
seed: 7
factors:
  strategy: [least-load, round-robin]
  concurrency: [512]
load:
  dataset: {kind: random, random_input_len: 256, random_output_len: 16}
  max_tokens: 16
  num_requests: 300
  timeout: 60s
slo: {p95_ttft_ms: 25}
search: {factor: load.request_rate, low: 1, high: 2000, precision: 0.25, guide: )" +
         guide + "}\n";
}

ScenarioSpec guided_spec(const std::string& text) {
  std::vector<ScenarioError> errors;
  auto spec = parse_scenario(text, "guided.yaml", &errors, target_kinds());
  if (!spec) ADD_FAILURE() << errors.at(0).text;
  return spec.value_or(ScenarioSpec{});
}

class GuideLines : public SweepOutput {
 public:
  void line(const std::string& text) override { all += text + "\n"; }
  void progress(const std::string&) override {}
  void end_progress() override {}
  std::string all;
};

TEST(SearchGuide, EachArmStartsWhereItsStoredPredictedSearchEnded) {
  testing::TempDir dir;
  store::Store store = store::Store::open(dir.file("guided.db"));
  std::atomic<bool> stop{false};
  RunnerOptions options;
  options.stop = &stop;
  GuideLines output;
  guide_search(guided_spec(searching_scenario("predict")), 0, store, output, options);

  const auto predicted = store.latest_experiment();
  ASSERT_TRUE(predicted) << "no predicted experiment stored\n" << output.all;
  EXPECT_EQ(options.guide_experiment_id, predicted->id);
  EXPECT_NE(output.all.find("guide: predicted experiment " + std::to_string(predicted->id)),
            std::string::npos)
      << output.all;
  const std::vector<store::ArmSearchRow> arms = store.arm_searches(predicted->id);
  ASSERT_EQ(arms.size(), 2u);
  ASSERT_EQ(options.search_guide.size(), 2u);
  for (const store::ArmSearchRow& arm : arms) {
    ASSERT_TRUE(arm.capacity || arm.first_failing) << arm.arm_key << ": " << arm.why;
    const double expected = arm.capacity ? *arm.capacity : *arm.first_failing;
    ASSERT_EQ(options.search_guide.count(arm.arm_key), 1u) << arm.arm_key;
    EXPECT_DOUBLE_EQ(options.search_guide.at(arm.arm_key), expected) << arm.arm_key;
    EXPECT_GE(expected, 1);
    EXPECT_LE(expected, 2000);
  }
  // The real sweep is not touched: its target is still whatever the caller chose.
  EXPECT_EQ(options.target_override, "");
}

TEST(SearchGuide, NothingRunsForGuideNoneOrWhenTheSweepIsItselfAPrediction) {
  testing::TempDir dir;
  store::Store store = store::Store::open(dir.file("unguided.db"));
  std::atomic<bool> stop{false};
  GuideLines output;

  RunnerOptions unguided;
  unguided.stop = &stop;
  guide_search(guided_spec(searching_scenario("none")), 0, store, output, unguided);

  RunnerOptions predicting;
  predicting.stop = &stop;
  predicting.target_override = "predict";
  guide_search(guided_spec(searching_scenario("predict")), 0, store, output, predicting);

  EXPECT_TRUE(unguided.search_guide.empty());
  EXPECT_TRUE(predicting.search_guide.empty());
  EXPECT_EQ(unguided.guide_experiment_id, 0);
  EXPECT_FALSE(store.latest_experiment()) << "an experiment was stored";
  EXPECT_EQ(output.all, "");
}

}  // namespace
}  // namespace kvsweep::orchestrator::test
