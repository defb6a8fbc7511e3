// A whole sweep over loopback HTTP: scenario -> embedded fleet -> load driver -> SQLite -> report.
#include <gtest/gtest.h>

#include <algorithm>

#include "figures/cell_metrics.h"
#include "orchestrator/cli/console.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/sweep/runner.h"
#include "orchestrator/targets/sim_target.h"
#include "orchestrator/targets/target_kinds.h"
#include "reports/markdown_report.h"
#include "store/store.h"
#include "tests/support/temp_dir.h"

namespace kvsweep {
namespace {

using orchestrator::ScenarioError;

// Concurrency 1 keeps routing decisions deterministic (seeded random, no in-flight ties), so
// the cache effect asserted below does not depend on scheduling luck.
constexpr const char* kTinySweep = R"(name: tiny-sweep
target: {kind: sim, replicas: 4, profile: demo, metrics: {interval: 20ms}}
model: tiny-model
seed: 3
factors:
  strategy: [random, prefix-hash]
  concurrency: [1, 3]
load:
  dataset: {conversations: 6, turns: 5, system_prompt_words: 40, user_words: 30, assistant_words: 30}
  max_tokens: 3
  num_requests: 30
  warmup: {requests: 2}
  timeout: 30s
report:
  baseline: random
)";

orchestrator::ScenarioSpec parse(const std::string& text) {
  std::vector<ScenarioError> errors;
  auto spec =
      orchestrator::parse_scenario(text, "tiny.yaml", &errors, orchestrator::target_kinds());
  if (!spec) ADD_FAILURE() << errors.at(0).text;
  return *spec;
}

TEST(Sweep, RunsEveryCellStoresEveryRequestAndReports) {
  testing::TempDir dir;
  auto store = store::Store::open(dir.file("kvsweep.db"));
  const auto spec = parse(kTinySweep);
  orchestrator::SimTarget target(spec, orchestrator::expand_plan(spec));
  std::FILE* log = std::tmpfile();
  orchestrator::Console console(log);
  const auto outcome = orchestrator::run_sweep(spec, orchestrator::expand_plan(spec), target, store,
                                               console, orchestrator::RunnerOptions{});
  std::fclose(log);

  EXPECT_EQ(outcome.status, "done");
  EXPECT_EQ(outcome.cells_done, 4);
  const auto experiment = store.experiment(outcome.experiment_id);
  ASSERT_TRUE(experiment.has_value());
  EXPECT_EQ(experiment->status, "done");
  EXPECT_EQ(experiment->name, "tiny-sweep");

  const auto cells = store.cells(outcome.experiment_id);
  ASSERT_EQ(cells.size(), 4u);
  std::map<std::string, double> hit_rate_at_1;
  double kv_usage_max = 0;
  for (const auto& cell : cells) {
    EXPECT_EQ(cell.status, "done") << cell.error;
    const auto requests = store.requests(cell.id);
    // 2 warm-up + 30 measured, one row each, all successful over real HTTP.
    ASSERT_EQ(requests.size(), 32u);
    int warmup = 0;
    for (const auto& r : requests) {
      warmup += r.warmup;
      EXPECT_TRUE(r.ok) << r.error_kind << ": " << r.error;
      EXPECT_EQ(r.output_tokens, 3);
      EXPECT_GT(r.ttft_ms, 0);
      EXPECT_GE(r.e2e_ms, r.ttft_ms);
      EXPECT_FALSE(r.replica.empty());
    }
    EXPECT_EQ(warmup, 2);
    const auto metrics = figures::compute_cell_metrics(requests, store.metric_samples(cell.id));
    EXPECT_EQ(metrics.ok, 30);
    ASSERT_TRUE(metrics.kv_hit_rate_server.has_value());
    // The sim exposes vLLM's usage gauge and preemption counter, scraped around each cell.
    // The "during" scrape of a 30-request cell may land between two requests on a loaded
    // machine (the sanitized suite once read 0), so usage is required of the sweep, not of
    // every cell.
    ASSERT_TRUE(metrics.kv_usage_max.has_value());
    EXPECT_GE(*metrics.kv_usage_max, 0.0);
    EXPECT_LE(*metrics.kv_usage_max, 1.0);
    kv_usage_max = std::max(kv_usage_max, *metrics.kv_usage_max);
    EXPECT_TRUE(metrics.preemptions.has_value());
    EXPECT_FALSE(metrics.spec_decode_acceptance.has_value());  // no speculative decoding
    if (cell.concurrency == 1) hit_rate_at_1[cell.arm] = *metrics.kv_hit_rate_server;
  }
  EXPECT_GT(kv_usage_max, 0.0) << "no cell was scraped under load";
  // Conversations stick to one replica under prefix-hash, so their histories stay cached;
  // random spreads each conversation's turns over 4 replicas.
  EXPECT_GT(hit_rate_at_1.at("prefix-hash"), hit_rate_at_1.at("random") + 0.1);

  const std::string report = reports::render_markdown(store, outcome.experiment_id);
  EXPECT_NE(report.find("tiny-sweep"), std::string::npos);
  EXPECT_NE(report.find("prefix-hash"), std::string::npos);
  EXPECT_NE(report.find("| strategy | KV cache usage max (%) | preemptions |"), std::string::npos);
}

TEST(Sweep, AStopRequestEndsTheSweepAndKeepsFinishedCells) {
  testing::TempDir dir;
  auto store = store::Store::open(dir.file("kvsweep.db"));
  const auto spec = parse(kTinySweep);
  orchestrator::SimTarget target(spec, orchestrator::expand_plan(spec));
  std::atomic<bool> stop{true};  // raised before the first cell: nothing may run
  orchestrator::RunnerOptions options;
  options.stop = &stop;
  std::FILE* log = std::tmpfile();
  orchestrator::Console console(log);
  const auto outcome = orchestrator::run_sweep(spec, orchestrator::expand_plan(spec), target, store,
                                               console, options);
  std::fclose(log);
  EXPECT_EQ(outcome.status, "interrupted");
  EXPECT_EQ(store.experiment(outcome.experiment_id)->status, "interrupted");
  for (const auto& cell : store.cells(outcome.experiment_id)) {
    EXPECT_EQ(cell.status, "pending");
    EXPECT_EQ(store.request_count(cell.id), 0);
  }
}

}  // namespace
}  // namespace kvsweep
