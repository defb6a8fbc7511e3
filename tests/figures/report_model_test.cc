// Tests for figures/report_model.cc: levels, row order, labels, baseline ratios, setup lines.
#include "figures/report_model.h"

#include <gtest/gtest.h>

namespace kvsweep::figures {
namespace {

store::CellRow cell(const std::string& strategy, int concurrency, int repeat = 0,
                    const std::string& status = "done") {
  store::CellRow c;
  c.arm = strategy;
  c.concurrency = concurrency;
  c.repeat = repeat;
  c.status = status;
  return c;
}

CellMetrics metrics(double ttft_mean_ms, double total_tok_s) {
  CellMetrics m;
  m.ok = 10;
  m.ttft_ms.count = 10;
  m.ttft_ms.mean = ttft_mean_ms;
  m.ttft_ms.p99 = ttft_mean_ms * 2;
  m.window_s = 10;
  m.request_throughput = 1;
  m.output_throughput = total_tok_s / 2;
  m.total_token_throughput = total_tok_s;
  return m;
}

store::ExperimentRow experiment(const std::string& setup_json) {
  store::ExperimentRow e;
  e.name = "x";
  e.setup = kvsweep::store::decode_setup(setup_json);
  e.baseline = "random";
  return e;
}

TEST(ReportModel, LevelsAscendRowsKeepPlanOrderRepeatsAreLabelled) {
  const auto model = make_report_model(
      experiment("{}"),
      {cell("prefix-hash", 16), cell("random", 16), cell("prefix-hash", 8), cell("random", 8),
       cell("random", 8, 1)},
      {metrics(1, 1), metrics(2, 2), metrics(3, 3), metrics(4, 4), metrics(5, 5)});
  ASSERT_EQ(model.levels.size(), 2u);
  EXPECT_EQ(model.levels[0].concurrency, 8);
  EXPECT_EQ(model.levels[1].concurrency, 16);
  ASSERT_EQ(model.levels[0].rows.size(), 3u);
  // Two repeats: every row says which, counted from 1 as the sweep's console does.
  EXPECT_EQ(model.levels[0].rows[0].label, "prefix-hash #1");
  EXPECT_EQ(model.levels[0].rows[1].label, "random #1");
  EXPECT_EQ(model.levels[0].rows[2].label, "random #2");
  EXPECT_EQ(model.levels[1].rows[0].label, "prefix-hash #1");
}

TEST(ReportModel, RepeatLabelsMatchTheSweepsConsole) {
  EXPECT_EQ(repeat_label("random", 0, 1), "random");  // one run per cell: no number
  EXPECT_EQ(repeat_label("random", 0, 3), "random #1");
  EXPECT_EQ(repeat_label("random", 1, 3), "random #2");
  const auto single = make_report_model(experiment("{}"), {cell("random", 8)}, {metrics(1, 1)});
  EXPECT_EQ(single.levels.at(0).rows.at(0).label, "random");
}

TEST(ReportModel, RatiosDivideByTheBaselinesFirstRepeat) {
  const auto model = make_report_model(
      experiment("{}"), {cell("random", 8, 1), cell("random", 8), cell("prefix-hash", 8)},
      {metrics(50, 100), metrics(100, 1000), metrics(31, 1420)});
  const auto& rows = model.levels.at(0).rows;
  EXPECT_TRUE(model.levels[0].has_baseline);
  EXPECT_TRUE(rows[1].is_baseline);
  EXPECT_FALSE(rows[1].vs_baseline.has_value());
  ASSERT_TRUE(rows[2].vs_baseline.has_value());
  EXPECT_DOUBLE_EQ(*rows[2].vs_baseline->ttft_mean, 0.31);
  EXPECT_DOUBLE_EQ(*rows[2].vs_baseline->ttft_p99, 0.31);
  EXPECT_DOUBLE_EQ(*rows[2].vs_baseline->total_token_throughput, 1.42);
  EXPECT_FALSE(rows[2].vs_baseline->tpot_mean.has_value());  // no TPOT sample on either side
  ASSERT_TRUE(rows[0].vs_baseline.has_value());  // the other repeat compares to repeat 0
  EXPECT_DOUBLE_EQ(*rows[0].vs_baseline->ttft_mean, 0.5);
}

TEST(ReportModel, FailedCellsAreNotMeasuredAndBaselineMayBeMissing) {
  const auto model =
      make_report_model(experiment("{}"), {cell("random", 8, 0, "failed"), cell("prefix-hash", 8)},
                        {metrics(1, 1), metrics(2, 2)});
  const auto& level = model.levels.at(0);
  EXPECT_FALSE(level.rows[0].measured);
  EXPECT_FALSE(level.has_baseline);
  EXPECT_FALSE(level.rows[1].vs_baseline.has_value());
}

TEST(ReportModel, SetupLinesFromRowAndSetupJson) {
  store::ExperimentRow e = experiment(
      R"({"target":{"kind":"sim","replicas":8,"profile":"l4","port":9000},"model":"llama",)"
      R"("load":{"request_rate":800,"dataset":{"kind":"sharegpt"}}})");
  e.status = "done";
  e.kvsweep_version = "0.1.0";
  const auto lines = setup_lines(e);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0].label, "Status");
  EXPECT_EQ(lines[1].label, "kvsweep");
  EXPECT_EQ(lines[2].value, "sim, 8 replicas, profile l4, port=9000");
  EXPECT_EQ(lines[3].value, "llama");
  EXPECT_EQ(lines[4].value, R"(request_rate=800, dataset={"kind":"sharegpt"})");
  EXPECT_EQ(lines[5].value, "random");
}

TEST(ReportModel, MalformedSetupJsonIsALineNotAnError) {
  store::ExperimentRow broken = experiment("{not json");
  broken.baseline = "";  // nothing else to say either
  const auto lines = setup_lines(broken);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].label, "Setup");
  const auto model = make_report_model(broken, {cell("a", 1)}, {metrics(1, 1)});
  EXPECT_EQ(model.baseline, "");
  EXPECT_FALSE(model.levels.at(0).rows[0].vs_baseline.has_value());
}

}  // namespace
}  // namespace kvsweep::figures
