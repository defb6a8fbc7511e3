// Tests for reports/history.cc (rolling median baseline) and reports/cell_exports.cc.
#include <gtest/gtest.h>

#include "reports/cell_exports.h"
#include "reports/history.h"
#include "tests/reports/small_experiment.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::reports {
namespace {

using kvsweep::testing::TempDir;

TEST(History, RollingMedianOfPreviousRunsAndDeviation) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  for (int i = 0; i < 3; ++i) kvsweep::testing::write_small_experiment(store);
  const auto series = metric_history(store, "small-sim", "ttft_mean_ms", 5);
  ASSERT_EQ(series.size(), 4u);  // 2 strategies x 2 levels
  EXPECT_EQ(series[0].concurrency, 8);
  ASSERT_EQ(series[0].points.size(), 3u);
  EXPECT_FALSE(series[0].points[0].baseline.has_value());
  ASSERT_TRUE(series[0].points[2].deviation.has_value());
  EXPECT_DOUBLE_EQ(*series[0].points[2].deviation, 0.0);
  EXPECT_NE(history_table(series, "ttft_mean_ms").find("+0.0%"), std::string::npos);
  EXPECT_THROW(metric_history(store, "small-sim", "ttft_fast", 5), std::invalid_argument);
  EXPECT_TRUE(metric_history(store, "other", "ttft_mean_ms", 5).empty());
  // An endpoint picker's figure is a known metric; runs without one have no series of it.
  EXPECT_TRUE(metric_history(store, "small-sim", "epp_prefix_hit_ratio", 5).empty());
}

// A prediction's baseline is earlier predictions only, and a run's never includes one.
TEST(History, PredictionsAndRunsHaveTheirOwnBaselines) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  store::ExperimentRow predicted = kvsweep::testing::small_experiment();
  predicted.setup.target->kind = "predict";
  kvsweep::testing::write_small_experiment(store);             // simulated
  kvsweep::testing::write_small_experiment(store, predicted);  // predicted
  kvsweep::testing::write_small_experiment(store);             // simulated
  const auto series = metric_history(store, "small-sim", "ttft_mean_ms", 5);
  ASSERT_FALSE(series.empty());
  const auto& points = series[0].points;
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].figures, "simulated");
  EXPECT_EQ(points[1].figures, "predicted");
  EXPECT_FALSE(points[1].baseline.has_value());  // no earlier prediction
  ASSERT_TRUE(points[2].baseline.has_value());   // the first run, not the prediction
  EXPECT_NE(history_table(series, "ttft_mean_ms").find("predicted"), std::string::npos);
}

TEST(CellExports, VllmResultAndLlmdReportPerDoneCell) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto files = cell_exports(store, kvsweep::testing::write_small_experiment(store));
  ASSERT_EQ(files.size(), 8u);
  EXPECT_EQ(files[0].name, "cell-001-random-c8-r1.vllm.json");
  EXPECT_EQ(files[1].name, "cell-001-random-c8-r1.llmd-br-v0.2.1.json");
  const auto vllm = nlohmann::json::parse(files[0].text);
  EXPECT_EQ(vllm["completed"], 4);
  EXPECT_DOUBLE_EQ(vllm["mean_ttft_ms"].get<double>(), 130.0);
  const auto br = nlohmann::json::parse(files[1].text);
  EXPECT_EQ(br["version"], "0.2.1");
  const auto& ttft =
      br["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"];
  EXPECT_EQ(ttft["units"], "ms");
  EXPECT_DOUBLE_EQ(ttft["mean"].get<double>(), 130.0);
  EXPECT_DOUBLE_EQ(ttft["p50"].get<double>(), 130.0);
  EXPECT_EQ(br["scenario"]["load"]["standardized"]["concurrency"], 8);
  EXPECT_EQ(br["scenario"]["stack"][1]["native"]["config"]["strategy"], "random");
}

}  // namespace
}  // namespace kvsweep::reports
