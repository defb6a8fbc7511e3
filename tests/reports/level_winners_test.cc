// Tests for reports/level_winners.cc (the answer line per level) and the figures' source line.
#include "reports/level_winners.h"

#include <gtest/gtest.h>

#include <optional>

namespace kvsweep::reports {
namespace {

store::CellRow cell(const std::string& strategy, int concurrency,
                    const std::string& status = "done") {
  store::CellRow c;
  c.arm = strategy;
  c.concurrency = concurrency;
  c.status = status;
  return c;
}

figures::CellMetrics metrics(double ttft_p50_ms, double ttft_p95_ms, double total_tok_s,
                             std::optional<double> kv_hit = std::nullopt, std::int64_t ok = 50) {
  figures::CellMetrics m;
  m.ok = ok;
  m.ttft_ms.count = static_cast<std::size_t>(ok);
  m.ttft_ms.median = ttft_p50_ms;
  m.ttft_ms.p95 = ttft_p95_ms;
  m.window_s = 10;
  m.total_token_throughput = total_tok_s;
  m.kv_hit_rate_server = kv_hit;
  return m;
}

figures::ReportModel model(const std::vector<store::CellRow>& cells,
                           const std::vector<figures::CellMetrics>& m) {
  store::ExperimentRow e;
  e.baseline = "random";
  return make_report_model(e, cells, m);
}

TEST(Verdicts, NameTheWinnerAndItsMarginOverTheRunnerUp) {
  // Three arms: the margin is against the next best (least-load), not the baseline.
  const auto verdicts =
      level_winners(model({cell("random", 96), cell("least-load", 96), cell("prefix-hash", 96)},
                          {metrics(58.3, 275.6, 450044, 0.664), metrics(35.3, 94.1, 975606, 0.835),
                           metrics(4.57, 80.5, 2595928, 0.964)}));
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts[0].outcome, WinnerOutcome::kWins);
  EXPECT_EQ(verdicts[0].winner, "prefix-hash");
  EXPECT_EQ(verdicts[0].runner_up, "least-load");
  EXPECT_EQ(verdicts[0].text,
            "Concurrency 96: prefix-hash wins over least-load: TTFT p50 7.7x lower (4.57 vs "
            "35.30 ms), p95 14% lower (80.50 vs 94.10 ms), throughput 2.7x higher (2.60M vs "
            "976k tok/s), KV hit 96.4% vs 83.5%");
}

TEST(Verdicts, OneLinePerLevelInLevelOrder) {
  const auto verdicts = level_winners(model(
      {cell("random", 32), cell("prefix-hash", 32), cell("random", 8), cell("prefix-hash", 8)},
      {metrics(40, 80, 1000), metrics(10, 20, 3000), metrics(10, 20, 900), metrics(9, 19, 950)}));
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_EQ(verdicts[0].concurrency, 8);
  EXPECT_EQ(verdicts[1].concurrency, 32);
  EXPECT_EQ(verdicts[0].winner, "prefix-hash");
  EXPECT_EQ(verdicts[1].winner, "prefix-hash");
}

TEST(Verdicts, WithinFivePercentOnEveryFigureIsNoClearWinner) {
  const auto v = level_winners(model({cell("random", 8), cell("prefix-hash", 8)},
                                     {metrics(10.2, 20, 1000), metrics(10, 20, 1010)}))[0];
  EXPECT_EQ(v.outcome, WinnerOutcome::kNoClearWinner);
  EXPECT_EQ(v.text,
            "Concurrency 8: no clear winner, prefix-hash vs random within 5%: TTFT p50 about the "
            "same (10.00 vs 10.20 ms), p95 about the same (20.00 vs 20.00 ms), throughput about "
            "the same (1.01k vs 1.00k tok/s)");
}

// The same median but a far better tail and throughput is a win, even for the strategy whose
// median is a hair higher.
TEST(Verdicts, ATieOnTheMedianIsDecidedByTheTailAndThroughput) {
  const auto v = level_winners(model({cell("random", 1), cell("prefix-hash", 1)},
                                     {metrics(2.70, 6.06, 40000), metrics(2.74, 3.17, 46200)}))[0];
  EXPECT_EQ(v.outcome, WinnerOutcome::kWins);
  EXPECT_EQ(v.text,
            "Concurrency 1: prefix-hash wins over random: TTFT p50 about the same (2.74 vs 2.70 "
            "ms), p95 1.9x lower (3.17 vs 6.06 ms), throughput 16% higher (46.2k vs 40.0k tok/s)");
}

TEST(Verdicts, LowerMedianButWorseTailOrThroughputIsNoSingleWinner) {
  const auto v = level_winners(model({cell("random", 8), cell("prefix-hash", 8)},
                                     {metrics(20, 40, 1000), metrics(10, 90, 800)}))[0];
  EXPECT_EQ(v.outcome, WinnerOutcome::kMixed);
  EXPECT_EQ(v.text,
            "Concurrency 8: no single winner, prefix-hash vs random: TTFT p50 2.0x lower (10.00 "
            "vs 20.00 ms), p95 2.2x higher (90.00 vs 40.00 ms), throughput 20% lower (800 vs "
            "1.00k tok/s)");
}

// With three strategies, the lowest median is set against the first one it does not beat.
TEST(Verdicts, NoSingleWinnerNamesTheStrategyTheFastestDoesNotBeat) {
  const auto v = level_winners(
      model({cell("random", 8), cell("least-load", 8), cell("prefix-hash", 8)},
            {metrics(30, 60, 1000), metrics(20, 25, 1500), metrics(10, 50, 1400)}))[0];
  EXPECT_EQ(v.outcome, WinnerOutcome::kMixed);
  EXPECT_EQ(v.winner, "prefix-hash");
  EXPECT_EQ(v.runner_up, "least-load");
}

TEST(Verdicts, FailuresAndUnmeasuredCellsAreNamed) {
  figures::CellMetrics failing = metrics(10, 20, 3000, std::nullopt, 1000);
  failing.failed = 7;  // 0.7%: it may still win, named
  const auto v = level_winners(
      model({cell("random", 8), cell("prefix-hash", 8), cell("least-load", 8, "failed")},
            {metrics(40, 80, 1000), failing, figures::CellMetrics{}}))[0];
  EXPECT_EQ(v.outcome, WinnerOutcome::kWins);
  const std::string tail = "; failed requests: prefix-hash 7; not measured: least-load (failed)";
  ASSERT_GE(v.text.size(), tail.size());
  EXPECT_EQ(v.text.substr(v.text.size() - tail.size()), tail) << v.text;
}

// More than 1% of its requests failed: its figures describe the survivors, so it never wins,
// however fast they were.
TEST(Verdicts, ACellWhereMoreThanOnePercentFailedIsNeverAWinner) {
  figures::CellMetrics failing = metrics(10, 20, 3000, std::nullopt, 213);
  failing.failed = 927;
  const auto v =
      level_winners(model({cell("random", 8), cell("least-load", 8), cell("prefix-hash", 8)},
                          {metrics(40, 80, 1000), metrics(30, 70, 1100), failing}))[0];
  EXPECT_EQ(v.outcome, WinnerOutcome::kWins);
  EXPECT_EQ(v.winner, "least-load");
  EXPECT_NE(v.text.find("not compared: prefix-hash (927 of 1140 failed)"), std::string::npos)
      << v.text;
}

TEST(Verdicts, TooFewRequestsLeaveNothingToCompare) {
  const auto one = level_winners(model({cell("random", 8), cell("prefix-hash", 8)},
                                       {metrics(40, 80, 1000), metrics(1, 2, 9000, {}, 2)}))[0];
  EXPECT_EQ(one.outcome, WinnerOutcome::kNothingToCompare);
  EXPECT_EQ(one.text,
            "Concurrency 8: nothing to compare: only random has 3 or more successful requests");
  const auto none = level_winners(model({cell("random", 8)}, {metrics(1, 2, 9, {}, 0)}))[0];
  EXPECT_EQ(none.text,
            "Concurrency 8: nothing to compare: no strategy has 3 or more successful requests");
}

TEST(Verdicts, ClientHitRateStandsInWhenServersExposeNone) {
  figures::CellMetrics a = metrics(40, 80, 1000);
  figures::CellMetrics b = metrics(10, 20, 3000);
  a.cache_hit_client = 0.125;
  b.cache_hit_client = 0.75;
  const auto v = level_winners(model({cell("random", 8), cell("prefix-hash", 8)}, {a, b}))[0];
  const std::string tail = ", cache hit 75.0% vs 12.5%";
  EXPECT_EQ(v.text.substr(v.text.size() - tail.size()), tail) << v.text;
}

store::ExperimentRow with_setup(const std::string& setup_json) {
  store::ExperimentRow e;
  e.setup = kvsweep::store::decode_setup(setup_json);
  return e;
}

TEST(FiguresSource, SaysWhenTheEmbeddedFleetProducedTheFigures) {
  EXPECT_EQ(figures::figures_source(
                with_setup(R"({"target":{"kind":"sim","replicas":4,"profile":"demo"}})")),
            "Simulated: these figures come from kvsweep's embedded fleet (target kind sim, "
            "profile demo, 4 replicas), not from real servers.");
  EXPECT_EQ(figures::figures_source(
                with_setup(R"({"target":{"kind":"sim","replicas":8,)"
                           R"("profile":"l4-llama3.1-8b-fp8","stands_in_for":"kubeai"}})")),
            "Simulated: these figures come from kvsweep's embedded fleet (target kind sim, "
            "profile l4-llama3.1-8b-fp8, 8 replicas), standing in for the kubeai target, not "
            "from real servers.");
  EXPECT_EQ(figures::figures_source(with_setup(R"({"target":{"kind":"kubeai","replicas":8}})")),
            "");
  EXPECT_EQ(figures::figures_source(with_setup("not json")), "");
  EXPECT_EQ(figures::make_report_model(with_setup(R"({"target":{"kind":"sim","profile":"demo"}})"),
                                       {}, {})
                .figures_source,
            "Simulated: these figures come from kvsweep's embedded fleet (target kind sim, "
            "profile demo), not from real servers.");
}

}  // namespace
}  // namespace kvsweep::reports
