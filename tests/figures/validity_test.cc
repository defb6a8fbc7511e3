// Each verdict rule of figures/validity.h on cells whose rows are built to the rule's edge.
#include "figures/validity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "figures/cell_metrics.h"
#include "figures/cell_summary.h"
#include "figures/in_flight.h"
#include "figures/report_model.h"
#include "figures/stored_summaries.h"
#include "store/store.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::figures {
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

// Rows sent every 1/16 s (exact in binary, so the window's edges are exact), each busy
// busy(i) seconds, TTFT 20 ms.
template <typename Busy>
std::vector<store::RequestRow> every_sixteenth(int n, Busy busy) {
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < n; ++i) {
    const double t = i / 16.0;
    rows.push_back(row(i, t, t, 20, busy(i)));
  }
  return rows;
}

// Rule (b): 16 req/s arrive, request i is busy 0.125 + i/64 s, so the server falls behind:
// in flight at send k is k - floor((4k - 8) / 5). The steady window starts at 8.625 s (in
// flight first reaches 0.9 x its time-weighted median of 33) and ends at the last send
// (19.9375 s): 182 sends in 10 bins, whose medians run from 31 to 64; Sen's slope 3.2/s x
// 11.31 s = 36.25 >= max(10, 25% of the median 48). (Figures from the rule as docs/metrics.md
// states it, computed apart from this code.)
TEST(Validity, InFlightGrowingThroughTheWindowIsOverCapacity) {
  const CellValidity v =
      judge(every_sixteenth(320, [](int i) { return 0.125 + i / 64.0; }), open_loop(16, 0));
  EXPECT_EQ(v.verdict, CellVerdict::kOverCapacity) << verdict_line(v);
  ASSERT_TRUE(v.steady);
  EXPECT_DOUBLE_EQ(v.steady->start_s, 8.625);
  EXPECT_TRUE(v.in_flight_trend.rising);
  EXPECT_EQ(v.in_flight_trend.points, 182u);
  // Sen's line at the window's ends (the bins' medians run 31 to 64).
  EXPECT_DOUBLE_EQ(v.in_flight_trend.from, 29.5625);
  EXPECT_DOUBLE_EQ(v.in_flight_trend.to, 65.8125);
  EXPECT_DOUBLE_EQ(v.in_flight_trend.median, 48);
  EXPECT_NEAR(v.in_flight_trend.growth, 36.25, 1e-9);
  EXPECT_DOUBLE_EQ(v.in_flight_trend.min_growth, 12);  // 25% of 48
  EXPECT_LT(v.in_flight_trend.test.p_upward, 0.01);
  EXPECT_NE(verdict_line(v).find("over capacity: in flight grew from 30 to 66 over 11.3 s while "
                                 "16.1 req/s arrived and"),
            std::string::npos)
      << verdict_line(v);
}

// Rule (b)'s size: request i busy 0.125 + 0.0015 i s drifts in flight from 6 to 10 (bins'
// medians) through the window: a significant rise, but Sen's slope 0.365/s x 11.75 s = 4.29
// requests, under the 10 asked. A multi-turn workload's lengthening prompts do this.
TEST(Validity, AnInFlightDriftOfAFewRequestsIsNotOverCapacity) {
  const CellValidity v =
      judge(every_sixteenth(320, [](int i) { return 0.125 + i * 0.0015; }), open_loop(16, 0));
  EXPECT_EQ(v.verdict, CellVerdict::kValid) << verdict_line(v);
  EXPECT_TRUE(v.in_flight_trend.evaluated);
  EXPECT_FALSE(v.in_flight_trend.rising);
  EXPECT_LT(v.in_flight_trend.test.p_upward, 0.01);
  EXPECT_NEAR(v.in_flight_trend.from, 5.714, 1e-3);  // Sen's line: 4.29 from its start
  EXPECT_NEAR(v.in_flight_trend.to - v.in_flight_trend.from, v.in_flight_trend.growth, 1e-9);
  EXPECT_NEAR(v.in_flight_trend.growth, 30.0 / 7, 1e-9);
  EXPECT_DOUBLE_EQ(v.in_flight_trend.min_growth, 10);
}

// The TTFT trend decides nothing: TTFT rises 0.5 ms per request (20 to 180 ms) while every
// request is busy 0.125 s and 2 are in flight. It is shown as a figure.
TEST(Validity, ATtftRiseAloneIsAFigureNotAVerdict) {
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < 320; ++i) {
    const double t = i / 16.0;
    rows.push_back(row(i, t, t, 20 + 0.5 * i, 0.2));
  }
  const CellValidity v = judge(rows, open_loop(16, 0));
  EXPECT_EQ(v.verdict, CellVerdict::kValid) << verdict_line(v);
  EXPECT_TRUE(v.ttft_trend.rising);
  EXPECT_NEAR(v.ttft_trend.test.slope_per_s, 8, 0.01);  // 0.5 ms per 1/16 s
  EXPECT_FALSE(v.over_capacity);
  EXPECT_NE(verdict_line(v).find("TTFT rose 8 ms/s"), std::string::npos) << verdict_line(v);
  EXPECT_NE(verdict_line(v).find(": not a verdict"), std::string::npos) << verdict_line(v);
}

// Rule (c) and the failures: 16 req/s, each busy 0.125 s (2 in flight), every 4th answered
// HTTP 503. The steady window is [1/16, 319/16] s: 319 arrivals; the requests that ended in it
// are rows 0-317, of which 80 failed, so 238 completed: 81 short, more than 5% (16) and than
// 3 sqrt(319) (53.6). 80 of the 320 measured requests failed.
store::RequestRow failed_row(const store::RequestRow& ok) {
  store::RequestRow r = ok;
  r.ok = false;
  r.error_kind = "http";
  r.error = "HTTP 503: the server is overloaded";
  r.http_status = 503;
  r.first_token_s = -1;
  r.last_token_s = -1;
  r.output_tokens = 0;
  return r;
}

TEST(Validity, CompletionsShortOfArrivalsAreOverCapacityAndTheFailuresAreNamed) {
  std::vector<store::RequestRow> rows = every_sixteenth(320, [](int) { return 0.125; });
  for (std::size_t i = 0; i < rows.size(); i += 4) rows[i] = failed_row(rows[i]);
  const CellValidity v = judge(rows, open_loop(16, 0));
  EXPECT_EQ(v.verdict, CellVerdict::kOverCapacity) << verdict_line(v);
  EXPECT_EQ(v.window_arrivals, 319);
  EXPECT_EQ(v.window_completions, 238);
  EXPECT_TRUE(v.completions_short);
  EXPECT_FALSE(v.in_flight_trend.rising);
  EXPECT_EQ(v.failed, 80);
  EXPECT_EQ(v.requests, 320);
  const std::string line = verdict_line(v);
  EXPECT_NE(line.find("over capacity: 238 of 319 arrivals completed over 19.9 s (25% short)"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("80 of 320 failed: HTTP 503: the server is overloaded"), std::string::npos)
      << line;
}

// Below the bounds: 1 in 40 fails (8 of 320), so 319 - 310 = 9 short: under 5% (16). Valid,
// and its verdict line still says 8 of 320 failed (more than 1%).
TEST(Validity, AFewFailuresAreNamedWhateverTheVerdict) {
  std::vector<store::RequestRow> rows = every_sixteenth(320, [](int) { return 0.125; });
  for (std::size_t i = 0; i < rows.size(); i += 40) rows[i] = failed_row(rows[i]);
  const CellValidity v = judge(rows, open_loop(16, 0));
  EXPECT_EQ(v.verdict, CellVerdict::kValid) << verdict_line(v);
  EXPECT_EQ(v.window_arrivals, 319);
  EXPECT_EQ(v.window_completions, 310);
  EXPECT_FALSE(v.completions_short);
  EXPECT_EQ(verdict_line(v).rfind("valid", 0), 0u);
  EXPECT_NE(verdict_line(v).find("8 of 320 failed: HTTP 503"), std::string::npos)
      << verdict_line(v);
  EXPECT_TRUE(too_many_failed(4, 320));   // 1.25%
  EXPECT_FALSE(too_many_failed(3, 320));  // 0.94%
  EXPECT_FALSE(too_many_failed(0, 0));
}

// Two replicas' /metrics every `every_s` until `until_s`: the waiting queue and the running
// batch each summing to the given function of the scrape's time.
std::vector<store::MetricSample> scrapes(double every_s, double until_s,
                                         const std::function<double(double)>& waiting,
                                         const std::function<double(double)>& running) {
  std::vector<store::MetricSample> samples;
  for (double t = 0; t <= until_s; t += every_s) {
    for (const char* source : {"http://a/metrics", "http://b/metrics"}) {
      store::MetricSample m;
      m.phase = "during";
      m.source = source;
      m.t_s = t;
      m.name = "vllm:num_requests_waiting";
      m.value = waiting(t) / 2;
      samples.push_back(m);
      m.name = "vllm:num_requests_running";
      m.value = running(t) / 2;
      samples.push_back(m);
    }
  }
  return samples;
}

// Rule (d): a healthy client side (2 in flight, 16 req/s for 60 s) while two replicas'
// waiting queues each hold t/4 requests at a scrape at t (every 2 s): the sum is t/2. The
// steady window [1/16, 959/16] s holds the 29 scrapes at 2 to 58 s, in 10 bins of 5.99 s whose
// medians run from 2 (scrapes at 2, 4, 6 s) to 28 (54, 56, 58 s). Their running batches fall.
std::vector<store::MetricSample> queue_samples(double every_s, double until_s,
                                               double (*waiting)(double)) {
  return scrapes(
      every_s, until_s, [waiting](double t) { return 2 * waiting(t); },
      [](double t) { return 2 * (1000 - t); });
}

TEST(Validity, TheServersWaitingQueueGrowingIsOverCapacity) {
  const std::vector<store::RequestRow> rows = every_sixteenth(960, [](int) { return 0.125; });
  const auto growing = queue_samples(2, 60, [](double t) { return t / 4; });
  const CellValidity v = compute_cell_metrics(rows, growing, {}, open_loop(16, 0)).validity;
  EXPECT_EQ(v.verdict, CellVerdict::kOverCapacity) << verdict_line(v);
  EXPECT_FALSE(v.in_flight_trend.rising);
  EXPECT_FALSE(v.completions_short);
  EXPECT_EQ(v.queue_scrapes, 29);
  EXPECT_TRUE(v.queue_trend.rising);
  EXPECT_NEAR(v.queue_trend.from, 0.75, 1e-9);  // Sen's line at the window's ends
  EXPECT_NEAR(v.queue_trend.to, 29.3214, 1e-4);
  EXPECT_DOUBLE_EQ(v.queue_trend.median, 15);
  EXPECT_NE(verdict_line(v).find("over capacity: the servers' waiting queue grew from 1 to 29 "
                                 "over 59.9 s while 16 req/s arrived"),
            std::string::npos)
      << verdict_line(v);

  // A queue that holds its level (0, 3, 0, 3 ...) is no evidence.
  const auto level =
      queue_samples(2, 60, [](double t) { return std::fmod(t, 4) == 0 ? 0.0 : 1.5; });
  const CellValidity steady = compute_cell_metrics(rows, level, {}, open_loop(16, 0)).validity;
  EXPECT_EQ(steady.verdict, CellVerdict::kValid) << verdict_line(steady);
  EXPECT_TRUE(steady.queue_trend.evaluated);
  EXPECT_FALSE(steady.queue_trend.rising);

  // Nine scrapes in the window (every 6.5 s): not evaluated, and the verdict says so.
  const auto sparse = queue_samples(6.5, 60, [](double t) { return t / 4; });
  const CellValidity few = compute_cell_metrics(rows, sparse, {}, open_loop(16, 0)).validity;
  EXPECT_EQ(few.verdict, CellVerdict::kValid) << verdict_line(few);
  EXPECT_EQ(few.queue_scrapes, 9);
  EXPECT_FALSE(few.queue_trend.evaluated);
  EXPECT_NE(verdict_line(few).find("servers' waiting queue not judged: 9 scrapes, fewer than 10"),
            std::string::npos)
      << verdict_line(few);

  // Not scraped at all: said so.
  const CellValidity none = compute_cell_metrics(rows, {}, {}, open_loop(16, 0)).validity;
  EXPECT_NE(verdict_line(none).find("servers' waiting queue not judged: not scraped"),
            std::string::npos)
      << verdict_line(none);
}

// Rule (b) read beside the servers' scrapes: the same rising in flight as
// InFlightGrowingThroughTheWindowIsOverCapacity (each request busier than the last, as a
// multi-turn cell's prompts lengthen). The servers held the growth in their running batch and
// queued nothing: the requests took longer, none waited. Not over capacity; the figure says why.
TEST(Validity, InFlightGrowingInTheServersBatchWhileNothingWaitsIsNotOverCapacity) {
  const auto rows = every_sixteenth(320, [](int i) { return 0.125 + i / 64.0; });
  // In flight at t is about 16 t - 0.8 (16 t - 2) = 3.2 t + 1.6; the servers run all of it.
  const auto served = scrapes(
      0.5, 20, [](double) { return 0.0; }, [](double t) { return 3.2 * t + 1.6; });
  const CellValidity v = compute_cell_metrics(rows, served, {}, open_loop(16, 0)).validity;
  EXPECT_EQ(v.verdict, CellVerdict::kValid) << verdict_line(v);
  EXPECT_TRUE(v.in_flight_trend.rising);
  EXPECT_TRUE(v.in_flight_in_servers);
  EXPECT_TRUE(v.queue_trend.evaluated);
  EXPECT_FALSE(v.queue_trend.rising);
  EXPECT_TRUE(v.running_trend.evaluated);
  EXPECT_NEAR(v.running_trend.growth, 3.2 * (v.steady->end_s - v.steady->start_s), 0.5);
  EXPECT_NE(verdict_line(v).find("in flight grew from 30 to 66 over 11.3 s while the servers' "
                                 "waiting queue held and their running batch grew from 29 to "
                                 "65: the requests took longer, none waited (not a verdict)"),
            std::string::npos)
      << verdict_line(v);
}

// The same client-side growth with the servers' batch level: the requests wait somewhere the
// servers do not count (a gateway's queue, a proxy's), so rule (b) stands.
TEST(Validity, InFlightGrowingOutsideTheServersIsOverCapacity) {
  const auto rows = every_sixteenth(320, [](int i) { return 0.125 + i / 64.0; });
  const auto level = scrapes(
      0.5, 20, [](double) { return 0.0; }, [](double t) { return t < 8 ? 3.2 * t : 25.6; });
  const CellValidity v = compute_cell_metrics(rows, level, {}, open_loop(16, 0)).validity;
  EXPECT_EQ(v.verdict, CellVerdict::kOverCapacity) << verdict_line(v);
  EXPECT_FALSE(v.in_flight_in_servers);
  EXPECT_NE(verdict_line(v).find("over capacity: in flight grew from 30 to 66"), std::string::npos)
      << verdict_line(v);

  // No running batch scraped (a Dynamo frontend's queue only): rule (b) stands, as without
  // scrapes.
  auto waiting_only = level;
  std::erase_if(waiting_only,
                [](const store::MetricSample& m) { return m.name == "vllm:num_requests_running"; });
  const CellValidity w = compute_cell_metrics(rows, waiting_only, {}, open_loop(16, 0)).validity;
  EXPECT_EQ(w.verdict, CellVerdict::kOverCapacity) << verdict_line(w);
  EXPECT_FALSE(w.running_trend.evaluated);
}

// Rule (c) read beside the servers' scrapes: over 60 s at 16 req/s each request is busier
// than the last (0.125 s up to 10 s), so in flight climbs towards 160 and the window's
// completions fall short of its arrivals by the growth, more than 5% and 3 sqrt(arrivals).
// Where the servers ran that growth in their batch and queued nothing, it is no shortfall.
TEST(Validity, CompletionsShortByTheServersBatchGrowthAreNotOverCapacity) {
  const auto rows = every_sixteenth(960, [](int i) { return 0.125 + i / 96.0; });
  const CellValidity alone = judge(rows, open_loop(16, 0));
  ASSERT_TRUE(alone.completions_short) << verdict_line(alone);  // the drift alone reads short
  const auto served = scrapes(
      0.5, 80, [](double) { return 0.0; }, [](double t) { return std::min(2 + 2.667 * t, 160.0); });
  const CellValidity v = compute_cell_metrics(rows, served, {}, open_loop(16, 0)).validity;
  EXPECT_EQ(v.verdict, CellVerdict::kValid) << verdict_line(v);
  EXPECT_FALSE(v.completions_short);
  EXPECT_TRUE(v.in_flight_in_servers);
  const std::string line = verdict_line(v);
  EXPECT_NE(line.find("arrivals completed over"), std::string::npos) << line;
  EXPECT_NE(line.find("while the servers' running batch grew by"), std::string::npos) << line;
  EXPECT_NE(line.find("and their waiting queue held (not a verdict)"), std::string::npos) << line;

  // The same with the servers' waiting queue growing: a queue, whatever the batch did.
  const auto queued = scrapes(
      0.5, 80, [](double t) { return t; }, [](double t) { return std::min(2 + 2.667 * t, 160.0); });
  const CellValidity q = compute_cell_metrics(rows, queued, {}, open_loop(16, 0)).validity;
  EXPECT_EQ(q.verdict, CellVerdict::kOverCapacity) << verdict_line(q);
  EXPECT_TRUE(q.queue_trend.rising);
  EXPECT_TRUE(q.completions_short);
}

// A closed loop is never over capacity, whatever its queues do.
TEST(Validity, AClosedLoopIsNeverOverCapacity) {
  std::vector<store::RequestRow> rows = every_sixteenth(960, [](int) { return 0.125; });
  for (auto& r : rows) r.scheduled_s = -1;
  store::CellLoadRow load;
  load.users = 2;
  load.driver_measured = true;
  const auto growing = queue_samples(2, 60, [](double t) { return t / 4; });
  const CellValidity v = compute_cell_metrics(rows, growing, {}, load).validity;
  EXPECT_EQ(v.verdict, CellVerdict::kValid) << verdict_line(v);
  EXPECT_FALSE(v.queue_trend.evaluated);
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

// kSummaryFormat 2: a stored cell summarized by the earlier rules (here over capacity, as the
// TTFT rule said) is judged again once while it has its rows; a pruned experiment keeps the
// old verdict and its report says it was judged by the earlier rules.
std::int64_t store_cell_judged_by_the_earlier_rules(store::Store& store, const std::string& name) {
  store::ExperimentRow e;
  e.name = name;
  e.started_at = "2026-12-01T20:00:00Z";
  e.status = "done";
  e.setup = kvsweep::store::decode_setup("{}");
  const std::int64_t experiment = store.add_experiment(e);
  store::CellRow c;
  c.experiment_id = experiment;
  c.key = "k";
  c.arm = "least-load";
  c.concurrency = 400;
  c.factors = kvsweep::store::decode_factors("{}");
  c.status = "running";
  c.id = store.add_cell(c);
  const auto rows = every_sixteenth(320, [](int) { return 0.125; });
  c.status = "done";
  store.record_cell(c, rows, {}, {});
  store::CellLoadRow load = open_loop(16, 400);
  load.cell_id = c.id;
  store.set_cell_load(load);
  store::CellSummaryRow old = summary_row(c.id, summarize_cell(rows, {}, load, {}));
  old.format = 1;
  const std::string valid = R"("verdict":"valid")";
  const auto at = old.figures.find(valid);
  EXPECT_NE(at, std::string::npos);
  old.figures.replace(at, valid.size(), R"("verdict":"over capacity")");
  store.set_cell_summary(old);
  return experiment;
}

TEST(Validity, CellsJudgedByTheEarlierRulesAreJudgedAgainUnlessPruned) {
  testing::TempDir dir;
  store::Store store = store::Store::open(dir.file("s.db"));
  const std::int64_t kept = store_cell_judged_by_the_earlier_rules(store, "kept");
  const std::int64_t pruned = store_cell_judged_by_the_earlier_rules(store, "pruned");
  store.prune_raw_rows({pruned, "2026-12-01T21:00:00Z", "keep the last 1 runs"});
  const auto verdict = [&](std::int64_t experiment) {
    return build_report_model(store, experiment).levels.at(0).rows.at(0).metrics.validity.verdict;
  };
  const auto setup_says = [&](std::int64_t experiment, const std::string& text) {
    for (const auto& line : build_report_model(store, experiment).setup) {
      if (line.value.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_EQ(verdict(kept), CellVerdict::kOverCapacity);  // before anything wrote the store
  EXPECT_TRUE(setup_says(kept, "1 of 1 cells judged by the earlier rules"));
  EXPECT_EQ(summarize_stored_cells(store, {}), 1);  // only the cell that has its rows
  EXPECT_EQ(verdict(kept), CellVerdict::kValid);
  EXPECT_FALSE(setup_says(kept, "earlier rules"));
  EXPECT_EQ(summarize_stored_cells(store, {}), 0);  // once
  EXPECT_EQ(verdict(pruned), CellVerdict::kOverCapacity);
  EXPECT_TRUE(setup_says(pruned, "1 of 1 cells judged by the earlier rules"));
  EXPECT_TRUE(setup_says(pruned, "raw rows were pruned, so they cannot be judged again"));
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
}  // namespace kvsweep::figures
