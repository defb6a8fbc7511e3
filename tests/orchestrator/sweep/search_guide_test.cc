// Tests for the predictor's guidance of a capacity search, which run_sweep runs itself
// (runner.cc): the scenario's search runs first in virtual time on the predicted fleet, into a
// real SQLite store, and each arm's real search (on a scripted target) starts where its
// prediction ended.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/sweep/runner.h"
#include "orchestrator/targets/target_kinds.h"
#include "store/store.h"
#include "tests/orchestrator/sweep/fake_target.h"
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
search: {factor: load.request_rate, low: 1, high: 2000, precision: 0.25, min_probe: 0, guide: )" +
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

// The real search's load step: p95 TTFT is 0.05 ms per request a second, so each arm's real
// capacity is 500 req/s (the SLO's 25 ms), wherever the prediction put it.
driver::LoadResult scripted_load(const driver::LoadOptions& o) {
  driver::LoadResult result;
  result.epoch_wall_s = 1'700'000'000.0;
  for (std::int64_t i = 0; i < o.num_requests; ++i) {
    result.records.push_back(
        ok_record(i, static_cast<double>(i) / o.request_rate, 0.05 * o.request_rate, 256));
  }
  return result;
}

struct GuidedSweep {
  SweepOutcome run(const std::string& guide) {
    const ScenarioSpec spec = guided_spec(searching_scenario(guide));
    RunnerOptions options;
    options.stop = &stop;
    options.load = [](const driver::LoadOptions& o, const driver::Workload&,
                      const std::function<void(const driver::Progress&)>&) {
      return scripted_load(o);
    };
    return run_sweep(spec, expand_plan(spec), target, store, output, options);
  }

  testing::TempDir dir;
  store::Store store = store::Store::open(dir.file("guided.db"));
  std::vector<std::string> calls;
  FakeTarget target{calls};
  std::atomic<bool> stop{false};
  GuideLines output;
};

TEST(SearchGuide, RunSweepStartsEachArmsRealSearchWhereItsStoredPredictionEnded) {
  GuidedSweep sweep;
  const SweepOutcome real = sweep.run("predict");
  ASSERT_EQ(real.status, "done") << sweep.output.all;

  // The prediction is an experiment of its own, stored before the real one.
  const std::vector<store::ExperimentRow> experiments = sweep.store.experiments();
  ASSERT_EQ(experiments.size(), 2u) << sweep.output.all;
  const store::ExperimentRow& predicted = experiments[0];
  EXPECT_EQ(experiments[1].id, real.experiment_id);
  EXPECT_NE(sweep.output.all.find("guide: predicted experiment " + std::to_string(predicted.id)),
            std::string::npos)
      << sweep.output.all;
  const std::vector<store::ArmSearchRow> arms = sweep.store.arm_searches(predicted.id);
  ASSERT_EQ(arms.size(), 2u);
  ASSERT_EQ(real.capacities.size(), 2u);
  for (const store::ArmSearchRow& arm : arms) {
    ASSERT_TRUE(arm.capacity || arm.first_failing) << arm.arm_key << ": " << arm.why;
    const double start = arm.capacity ? *arm.capacity : *arm.first_failing;
    EXPECT_GE(start, 1);
    EXPECT_LE(start, 2000);
    bool found = false;
    for (const ArmCapacity& capacity : real.capacities) {
      if (capacity.key != arm.arm_key) continue;
      found = true;
      ASSERT_FALSE(capacity.probes.empty()) << arm.arm_key;
      EXPECT_DOUBLE_EQ(capacity.probes.front().load, start) << arm.arm_key;
      // The real target's own capacity, found from there.
      ASSERT_TRUE(capacity.result.capacity) << arm.arm_key;
      EXPECT_NEAR(*capacity.result.capacity, 500, 0.25 * 500) << arm.arm_key;
    }
    EXPECT_TRUE(found) << arm.arm_key << " has no real search";
  }
}

TEST(SearchGuide, NothingIsPredictedForGuideNone) {
  GuidedSweep sweep;
  const SweepOutcome real = sweep.run("none");
  ASSERT_EQ(real.status, "done") << sweep.output.all;
  ASSERT_EQ(sweep.store.experiments().size(), 1u);
  EXPECT_EQ(sweep.output.all.find("guide:"), std::string::npos) << sweep.output.all;
}

}  // namespace
}  // namespace kvsweep::orchestrator::test
