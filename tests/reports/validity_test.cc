// Each verdict rule of reports/validity.h on cells whose rows are built to the rule's edge.
#include "reports/validity.h"

#include <gtest/gtest.h>

#include <limits>

#include "reports/cell_metrics.h"
#include "reports/in_flight.h"

namespace kvsweep::reports {
namespace {

store::RequestRow row(std::int64_t index, double scheduled_s, double sent_s, double ttft_ms,
                      double busy_s) {
  store::RequestRow r;
  r.index = index;
  r.ok = true;
  r.scheduled_s = scheduled_s;
  r.sent_s = sent_s;
  r.ttft_ms = ttft_ms;
  r.first_token_s = sent_s + ttft_ms / 1000;
  r.last_token_s = sent_s + busy_s;
  r.ended_s = r.last_token_s;
  r.e2e_ms = busy_s * 1000;
  r.output_tokens = 10;
  r.tpot_ms = (r.e2e_ms - ttft_ms) / 9;
  return r;
}

store::CellLoadRow open_loop(double rate, int cap) {
  store::CellLoadRow load;
  load.open_loop = true;
  load.request_rate = rate;
  load.max_concurrency = cap;
  load.driver_measured = true;
  load.driver_threads = 1;
  load.driver_cores = 2;
  load.driver_wall_s = 10;
  load.driver_cpu_s = 0.5;
  load.send_delay_count = 100;
  load.send_delay_p50_ms = 0.05;
  load.send_delay_p99_ms = 0.2;
  return load;
}

CellValidity judge(const std::vector<store::RequestRow>& rows, const store::CellLoadRow& load) {
  return compute_cell_metrics(rows, {}, {}, load).validity;
}

TEST(InFlight, TimeWeightedMeanMedianAndGatedMean) {
  // 1 in flight over [0, 2), 2 over [1, 2): mean over [0, 4) = (2 + 1) / 4.
  const auto series = step_series({0, 1}, {2, 2});
  EXPECT_DOUBLE_EQ(time_weighted_mean(series, 0, 4), 0.75);
  EXPECT_DOUBLE_EQ(time_weighted_median(series, 0, 2), 1);
  EXPECT_DOUBLE_EQ(first_reach(series, 2, 0, 4), 1);
  const auto gate = step_series({1.5}, {3});
  const GatedMean gated = mean_while(series, gate, 0, 4);
  EXPECT_DOUBLE_EQ(gated.seconds, 1.5);
  EXPECT_DOUBLE_EQ(gated.mean, (0.5 * 2) / 1.5);
  EXPECT_EQ(value_at(series, 1.5), 2);
  EXPECT_EQ(value_at(series, -1), 0);
}

TEST(Validity, AnOpenLoopWellInsideCapacityIsValid) {
  // 20 req/s for 20 s, each request 0.1 s: 2 in flight, nothing waits, TTFT flat.
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < 400; ++i) {
    const double t = i * 0.05;
    rows.push_back(row(i, t, t + 0.0001, 20 + (i % 7), 0.1));
  }
  const CellValidity v = judge(rows, open_loop(20, 64));
  EXPECT_EQ(v.verdict, CellVerdict::kValid) << verdict_line(v);
  EXPECT_NEAR(v.in_flight_mean, 2, 0.05);
  EXPECT_NEAR(*v.send_rate, 20, 1e-6);
  EXPECT_NEAR(*v.scheduled_rate, 20, 1e-6);
  ASSERT_TRUE(v.little_in_flight);
  EXPECT_NEAR(*v.little_in_flight, 2, 0.05);  // 20 req/s x 0.1 s
  EXPECT_TRUE(v.ttft_trend.evaluated);
  EXPECT_FALSE(v.ttft_trend.rising);
  ASSERT_TRUE(v.steady);
  EXPECT_EQ(v.backlog_s, 0);
}

TEST(Validity, TtftRisingThroughTheCellIsOverCapacity) {
  // Arrivals at 20/s outrun a server that queues: each TTFT 15 ms longer than the last.
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < 400; ++i) {
    const double t = i * 0.05;
    rows.push_back(row(i, t, t, 50 + 15.0 * i, 0.05 + 0.015 * i + 0.2));
  }
  const CellValidity v = judge(rows, open_loop(20, 0));
  EXPECT_EQ(v.verdict, CellVerdict::kOverCapacity) << verdict_line(v);
  EXPECT_TRUE(v.ttft_trend.rising);
  EXPECT_NEAR(v.ttft_trend.test.slope_per_s, 300, 1);  // 15 ms per 0.05 s
  EXPECT_NE(verdict_line(v).find("TTFT rises"), std::string::npos);
}

TEST(Validity, ACapHeldBacklogThatGrowsWhileArrivalsComeIsOverCapacity) {
  // 100 req/s scheduled, cap 10, each request 0.5 s: 20 req/s served, the rest wait. The
  // servers see a full cap (TTFT flat), but the queue before the cap grows without bound.
  std::vector<store::RequestRow> rows;
  const int n = 400;
  std::vector<double> slot_free(10, 0);
  for (int i = 0; i < n; ++i) {
    const double scheduled = i * 0.01;
    auto slot = std::min_element(slot_free.begin(), slot_free.end());
    const double sent = std::max(scheduled, *slot);
    rows.push_back(row(i, scheduled, sent, 30, 0.5));
    *slot = sent + 0.5;
  }
  const CellValidity v = judge(rows, open_loop(100, 10));
  EXPECT_FALSE(v.short_of_concurrency) << verdict_line(v);
  EXPECT_NEAR(*v.in_flight_while_backlogged, 10, 0.1);
  EXPECT_TRUE(v.backlog_trend.rising);
  EXPECT_EQ(v.verdict, CellVerdict::kOverCapacity) << verdict_line(v);
}

TEST(Validity, RequestsDueWhileSlotsStandEmptyAreShortOfConcurrency) {
  // 100 req/s scheduled with a cap of 50, but sent only 25 per second (a transport that hands
  // them on late), each 0.1 s: about 2.5 in flight while hundreds wait.
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < 400; ++i) rows.push_back(row(i, i * 0.01, i * 0.04, 30, 0.1));
  store::CellLoadRow load = open_loop(100, 50);
  const CellValidity v = judge(rows, load);
  EXPECT_TRUE(v.short_of_concurrency) << verdict_line(v);
  EXPECT_EQ(v.verdict, CellVerdict::kShortOfConcurrency);
  EXPECT_LT(*v.in_flight_while_backlogged, 3);
  EXPECT_NE(verdict_line(v).find("short of its concurrency"), std::string::npos);
}

TEST(Validity, AllDueAtOnceUnderACapIsNotLateness) {
  // vLLM's --request-rate inf --max-concurrency 4: every request due at 0, the cap holds the
  // rest, 4 always in flight. The wait for a slot is no verdict.
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < 400; ++i) rows.push_back(row(i, 0, (i / 4) * 0.1, 30, 0.1));
  const CellValidity v = judge(rows, open_loop(std::numeric_limits<double>::infinity(), 4));
  EXPECT_EQ(v.verdict, CellVerdict::kValid) << verdict_line(v);
  EXPECT_NEAR(*v.in_flight_while_backlogged, 4, 0.01);
}

TEST(Validity, ADriverLateOnItsSendsIsClientBound) {
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < 100; ++i) rows.push_back(row(i, i * 0.05, i * 0.05, 30, 0.1));
  store::CellLoadRow load = open_loop(20, 64);
  load.send_delay_p99_ms = 25;
  const CellValidity v = judge(rows, load);
  EXPECT_EQ(v.verdict, CellVerdict::kClientBound);
  EXPECT_NE(verdict_line(v).find("send delay p99 25 ms > 10 ms"), std::string::npos)
      << verdict_line(v);
  // Its CPU explains: 0.5 s of 10 s on min(2 cores, 1 thread + 1) = 2.5%.
  EXPECT_NEAR(*v.driver_cpu_utilisation, 0.025, 1e-9);
}

// A sharded cell (load.shards): each shard is judged by its own driver's figures; one that fell
// behind its part of the schedule makes the cell client-bound, named, though the joined
// figures alone would pass.
TEST(Validity, AClientBoundShardMarksItsCell) {
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < 400; ++i) rows.push_back(row(i, i * 0.05, i * 0.05 + 0.0001, 20, 0.1));
  store::CellLoadRow load = open_loop(20, 64);
  load.send_delay_count = 400;
  load.sent_span_s = 19.95;
  load.ready_span_s = 19.95;
  store::CellShardRow shard;
  shard.request_rate = 10;
  shard.max_concurrency = 32;
  shard.driver_threads = 1;
  shard.driver_cores = 2;
  shard.driver_wall_s = 20;
  shard.driver_cpu_s = 1;
  shard.send_delay_count = 200;
  shard.send_delay_p99_ms = 0.2;
  shard.ready_span_s = 19.9;
  shard.sent_span_s = 19.9;
  load.shards = {shard, shard};
  load.shards[1].shard = 1;
  EXPECT_EQ(judge(rows, load).verdict, CellVerdict::kValid) << verdict_line(judge(rows, load));
  EXPECT_EQ(judge_shard(load.shards[1]).verdict, CellVerdict::kValid);

  load.shards[1].sent_span_s = 21;  // its sends stretched 5% past its ready times
  EXPECT_EQ(judge_shard(load.shards[1]).verdict, CellVerdict::kClientBound);
  const CellValidity v = judge(rows, load);
  EXPECT_EQ(v.verdict, CellVerdict::kClientBound);
  EXPECT_NE(verdict_line(v).find("shard 1 client-bound: sends fell 5.2% short of the schedule"),
            std::string::npos)
      << verdict_line(v);
  EXPECT_EQ(verdict_line(v).find("shard 0"), std::string::npos) << verdict_line(v);
}

// Under 100 sends a p99 is their maximum: one send a busy machine delayed would decide the
// cell. The rule is then not evaluated (and says so); the shortfall rule still holds.
TEST(Validity, ASendDelayP99OfFewerThanAHundredSendsDoesNotDecide) {
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < 48; ++i) rows.push_back(row(i, i * 0.125, i * 0.125, 30, 0.1));
  store::CellLoadRow load = open_loop(8, 0);
  load.send_delay_count = 48;
  load.send_delay_p99_ms = 21.9;
  const CellValidity v = judge(rows, load);
  EXPECT_EQ(v.verdict, CellVerdict::kValid) << verdict_line(v);
  ASSERT_TRUE(v.send_delay_p99_ms);
  EXPECT_DOUBLE_EQ(*v.send_delay_p99_ms, 21.9);  // still shown
  bool said = false;
  for (const std::string& s : v.not_evaluated) said |= s.find("48 sends") != std::string::npos;
  EXPECT_TRUE(said) << verdict_line(v);
  load.sent_span_s = 6.2;  // 6 s of ready times sent over 6.2 s: 3.2% short
  load.ready_span_s = 6;
  EXPECT_EQ(judge(rows, load).verdict, CellVerdict::kClientBound);
  load.sent_span_s = 6;
  load.send_delay_count = 100;  // enough sends: the p99 decides again
  EXPECT_EQ(judge(rows, load).verdict, CellVerdict::kClientBound);
}

TEST(Validity, SendsStretchedPastTheirReadyTimesAreClientBound) {
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < 100; ++i) rows.push_back(row(i, i * 0.05, i * 0.05, 30, 0.1));
  store::CellLoadRow load = open_loop(20, 64);
  load.ready_span_s = 10;
  load.sent_span_s = 10.5;  // 4.8% short
  const CellValidity v = judge(rows, load);
  EXPECT_EQ(v.verdict, CellVerdict::kClientBound) << verdict_line(v);
  EXPECT_NEAR(*v.send_shortfall, 0.5 / 10.5, 1e-12);
  load.sent_span_s = 10.2;  // 2%: within the 3% allowed
  EXPECT_EQ(judge(rows, load).verdict, CellVerdict::kValid);
}

TEST(Validity, AClosedLoopWhoseUsersThinkIsNotShort) {
  // 8 users, each request 0.1 s then 0.3 s of thought: 2 in flight of 8, nothing was due.
  std::vector<store::RequestRow> rows;
  std::int64_t index = 0;
  for (int k = 0; k < 50; ++k) {
    for (int u = 0; u < 8; ++u) {
      const double sent = k * 0.4 + u * 0.001;
      store::RequestRow r = row(index++, -1, sent, 30, 0.1);
      r.worker = u;
      rows.push_back(r);
    }
  }
  store::CellLoadRow load;
  load.users = 8;
  load.driver_measured = true;
  const CellValidity v = judge(rows, load);
  EXPECT_EQ(v.verdict, CellVerdict::kValid) << verdict_line(v);
  EXPECT_NEAR(*v.in_flight_fraction, 0.25, 0.02);
}

TEST(Validity, ACellWithoutALoadRecordIsNotJudged) {
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < 10; ++i) rows.push_back(row(i, -1, i * 0.1, 30, 0.1));
  const CellValidity v = compute_cell_metrics(rows, {}).validity;
  EXPECT_FALSE(v.load_known);
  EXPECT_EQ(verdict_line(v), "not judged (no load record)");
}

TEST(Validity, LittlesLawFromTheSeedsFigures) {
  // Seed 002, PrefixHash at 800: 76.43 req/s x (280.20 ms + 86.55 ms x 75.06) = 518.
  LittleInputs in;
  in.request_throughput = 76.43;
  in.ttft_mean_ms = 280.20;
  in.tpot_mean_ms = 86.55;
  in.mean_output_tokens = 608447.0 / 8000;
  EXPECT_NEAR(*little_in_flight(in), 518, 1);
}

}  // namespace
}  // namespace kvsweep::reports
