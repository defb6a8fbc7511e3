// Tests for figures/run_comparison.cc over a real store in a temp dir: which run is "the run
// before", what is stored when a run ends, and the stored regressions read back.
#include "figures/run_comparison.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "common/error_kinds.h"
#include "tests/reports/small_experiment.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::figures {
namespace {

// A finished experiment named `name` of one done cell (random @ 8) of 60 requests whose TTFT is
// about `ttft_ms`; `status` as the run ended.
std::int64_t finished_run(store::Store& store, double ttft_ms,
                          const std::string& name = "small-sim",
                          const std::string& status = "done") {
  store::ExperimentRow row = kvsweep::testing::small_experiment();
  row.name = name;
  const auto id = store.add_experiment(row);
  store::CellRow cell;
  cell.experiment_id = id;
  cell.key = "random/8";
  cell.arm = "random";
  cell.concurrency = 8;
  cell.status = "done";
  cell.id = store.add_cell(cell);
  std::mt19937_64 random(static_cast<std::uint64_t>(id));
  std::vector<store::RequestRow> requests;
  for (int i = 0; i < 60; ++i) {
    store::RequestRow r;
    r.index = i;
    r.ok = true;
    r.ttft_ms = ttft_ms * (0.9 + 0.2 * static_cast<double>(random() % 1000) / 1000.0);
    r.output_tokens = 10;
    r.e2e_ms = r.ttft_ms + 180;
    requests.push_back(r);
  }
  store.add_requests(cell.id, requests);
  if (status != "running") store.finish_experiment(id, status, "2026-11-22T05:00:00Z");
  return id;
}

TEST(RunComparison, ThePreviousRunIsTheLatestEndedRunOfTheSameScenarioBeforeIt) {
  kvsweep::testing::TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto first = finished_run(store, 100);
  const auto other = finished_run(store, 100, "other-scenario");
  const auto interrupted = finished_run(store, 100, "small-sim", "interrupted");
  const auto running = finished_run(store, 100, "small-sim", "running");
  const auto last = finished_run(store, 100);
  EXPECT_EQ(previous_run(store, first), std::nullopt);
  EXPECT_EQ(previous_run(store, other), std::nullopt);
  EXPECT_EQ(previous_run(store, interrupted), first);
  EXPECT_EQ(previous_run(store, last), interrupted);  // a running run is not a run before
  EXPECT_EQ(previous_run(store, running), interrupted);
  EXPECT_EQ(previous_run(store, 99), std::nullopt);
}

TEST(RunComparison, ARunIsComparedWithTheRunBeforeAndTheRegressionsStored) {
  kvsweep::testing::TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto first = finished_run(store, 100);
  EXPECT_EQ(record_run_comparison(store, first), std::nullopt);  // nothing before it
  EXPECT_TRUE(store.run_comparisons("small-sim").empty());

  const auto same = finished_run(store, 100);
  const auto recorded_same = record_run_comparison(store, same);
  ASSERT_TRUE(recorded_same);
  EXPECT_EQ(recorded_same->previous_id, first);
  EXPECT_TRUE(recorded_same->regressions.empty());
  EXPECT_EQ(recorded_same->nothing_compared, "");

  const auto slower = finished_run(store, 200);
  const auto recorded_slower = record_run_comparison(store, slower);
  ASSERT_TRUE(recorded_slower);
  EXPECT_EQ(recorded_slower->previous_id, same);
  // What compare itself says of the pair.
  const auto expected = regressions_of(compare_experiments(store, same, slower, {}));
  ASSERT_EQ(expected.size(), 1u);
  EXPECT_EQ(recorded_slower->regressions, expected);
  EXPECT_EQ(expected[0].strategy, "random");
  EXPECT_EQ(expected[0].concurrency, 8);
  EXPECT_NE(std::find(expected[0].metrics.begin(), expected[0].metrics.end(), "ttft_mean_ms"),
            expected[0].metrics.end());

  const auto stored = store.run_comparisons("small-sim");
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].experiment_id, same);
  EXPECT_EQ(stored[1].experiment_id, slower);
  EXPECT_EQ(stored[1].previous_id, same);
  EXPECT_EQ(stored[1].options, compare_options_key({}));
  EXPECT_EQ(regressions_from_json(stored[1].regressions), expected);
  EXPECT_TRUE(store.run_comparisons("other-scenario").empty());

  // Recorded again (a resumed run that ended again): replaced, not added.
  record_run_comparison(store, slower);
  EXPECT_EQ(store.run_comparisons("small-sim").size(), 2u);
}

// `kvsweep migrate` on runs stored before schema 10: each run with one before it, once.
TEST(RunComparison, StoredRunsAreComparedOnceEach) {
  kvsweep::testing::TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto first = finished_run(store, 100);
  finished_run(store, 100, "other-scenario");  // the first of its scenario: nothing before
  const auto second = finished_run(store, 100);
  finished_run(store, 100, "small-sim", "running");  // not ended: not compared
  const auto third = finished_run(store, 200);
  std::vector<std::string> told;
  EXPECT_EQ(compare_stored_runs(store, [&told](const std::string& line) { told.push_back(line); }),
            2);
  ASSERT_FALSE(told.empty());
  EXPECT_NE(told[0].find("comparing 2 stored runs with the run before each"), std::string::npos)
      << told[0];
  const auto stored = store.run_comparisons("small-sim");
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].experiment_id, second);
  EXPECT_EQ(stored[0].previous_id, first);
  EXPECT_EQ(stored[1].experiment_id, third);
  EXPECT_EQ(stored[1].previous_id, second);
  EXPECT_NE(stored[1].regressions, "[]");
  EXPECT_EQ(compare_stored_runs(store, nullptr), 0);  // nothing left to compare
}

TEST(RunComparison, OptionsThatDecideAVerdictAreInItsKey) {
  CompareOptions other;
  other.min_change = 0.1;
  EXPECT_NE(compare_options_key(other), compare_options_key({}));
  other = {};
  other.bootstrap.seed = 2;
  EXPECT_NE(compare_options_key(other), compare_options_key({}));
  other = {};
  other.min_tail_samples = 5;
  EXPECT_NE(compare_options_key(other), compare_options_key({}));
  other = {};
  other.min_change_ms = 2;
  EXPECT_NE(compare_options_key(other), compare_options_key({}));
  EXPECT_EQ(compare_options_key({}),
            "resamples=1000 confidence=0.9500 seed=1 min_samples=20 min_tail_samples=10 "
            "min_change=0.0500 min_change_ms=1.000");
}

// A comparison stored under other options (an older kvsweep's rules) is not the verdict compare
// gives now: `kvsweep migrate` compares that run again, and a row under today's options stays.
TEST(RunComparison, AComparisonStoredUnderOtherOptionsIsComparedAgain) {
  kvsweep::testing::TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto first = finished_run(store, 100);
  const auto second = finished_run(store, 100);
  const auto third = finished_run(store, 200);
  const std::string old_rules =
      "resamples=1000 confidence=0.9500 seed=1 min_samples=20 min_change=0.0500";
  store.set_run_comparison({second, first, "2026-11-22T05:00:00Z", compare_options_key({}), "[]"});
  store.set_run_comparison({third, second, "2026-11-22T05:00:00Z", old_rules, "[]"});
  EXPECT_EQ(compare_stored_runs(store, nullptr), 1);
  const auto stored = store.run_comparisons("small-sim");
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].experiment_id, second);
  EXPECT_EQ(stored[0].computed_at, "2026-11-22T05:00:00Z");  // today's options: kept
  EXPECT_EQ(stored[1].experiment_id, third);
  EXPECT_EQ(stored[1].options, compare_options_key({}));
  EXPECT_NE(stored[1].regressions, "[]");  // 100 -> 200 ms is a regression under either
  EXPECT_EQ(compare_stored_runs(store, nullptr), 0);
}

TEST(RunComparison, RegressionsReadBackAndAMalformedRowIsNamed) {
  const std::vector<LevelRegressions> levels = {{"random", 8, {"ttft_mean_ms", "ttft_p95_ms"}},
                                                {"prefix-hash", 16, {"tpot_mean_ms"}}};
  EXPECT_EQ(regressions_from_json(regressions_to_json(levels)), levels);
  EXPECT_TRUE(regressions_from_json("[]").empty());
  for (const char* bad :
       {"{}", "not json", R"([{"strategy":"random","concurrency":"8","metrics":[]}])",
        R"([{"strategy":"random","concurrency":8,"metrics":[1]}])"}) {
    EXPECT_THROW(regressions_from_json(bad), kvsweep::CorruptData) << bad;
  }
  try {
    regressions_from_json(R"([{"strategy":"random","concurrency":8}])");
    FAIL();
  } catch (const kvsweep::CorruptData& e) {
    EXPECT_STREQ(e.what(),
                 "run comparison: regressions[0]: expected {strategy: text, concurrency: whole "
                 "number, metrics: [text]}");
  }
}

}  // namespace
}  // namespace kvsweep::figures
