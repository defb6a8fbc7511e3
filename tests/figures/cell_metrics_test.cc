// Tests for figures/cell_metrics.cc on hand-made rows with exact expected values.
#include "figures/cell_metrics.h"

#include <gtest/gtest.h>

#include "tests/reports/request_builders.h"

namespace kvsweep::figures {
namespace {

using kvsweep::testing::failed_request;
using kvsweep::testing::ok_request;
using kvsweep::testing::sample;

std::vector<store::RequestRow> mixed_requests() {
  store::RequestRow warm = ok_request(0, 0.0, 1000, 5000, 100, 10, 100, {9999});
  warm.warmup = true;
  return {
      warm,
      ok_request(1, 1.0, 100, 1100, 200, 11, 100, {90, 110, 100}),  // tpot 1000/10 = 100
      ok_request(2, 1.5, 300, 1300, 300, 21, -1, {50, 150}),        // tpot 1000/20 = 50
      ok_request(3, 2.0, 200, 200, 100, 1, 50, {}),                 // one token: no tpot
      failed_request(4, 2.5, 3000, "timeout"),                      // ends at 5.5 s
      failed_request(5, 1.2, 10, "http_status"),
  };
}

// Issue 27 item 8: a dataset smaller than the cell sends its prompts again; the rows say which
// prompt (conversation, turn) each request sent, so the report can tell after the fact.
TEST(CellMetrics, CountsPromptsSentMoreThanOnceInTheMeasuredPhase) {
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < 5; ++i) {
    rows.push_back(ok_request(i, 1.0 + i, 100, 200, 10, 2, 0, {100}));
    rows.back().conversation = i % 2;  // two prompts: 0, 1, 0, 1, 0
  }
  store::RequestRow warm = ok_request(9, 0.5, 100, 200, 10, 2, 0, {100});
  warm.warmup = true;  // the warm-up is not counted
  warm.conversation = 1;
  rows.push_back(warm);
  const CellMetrics m = compute_cell_metrics(rows, {});
  EXPECT_EQ(m.prompt_sends_max, 3);
  EXPECT_EQ(m.repeated_requests, 3);
  EXPECT_EQ(compute_cell_metrics(mixed_requests(), {}).prompt_sends_max, 1);
  EXPECT_EQ(compute_cell_metrics({}, {}).prompt_sends_max, 0);
}

TEST(CellMetrics, CountsOkAndFailedByKindWithoutWarmup) {
  const CellMetrics m = compute_cell_metrics(mixed_requests(), {});
  EXPECT_EQ(m.ok, 3);
  EXPECT_EQ(m.failed, 2);
  EXPECT_EQ(m.failed_by_kind,
            (std::map<std::string, std::int64_t>{{"http_status", 1}, {"timeout", 1}}));
}

TEST(CellMetrics, LatencyOverOkMeasuredRequestsOnly) {
  const CellMetrics m = compute_cell_metrics(mixed_requests(), {});
  EXPECT_EQ(m.ttft_ms.count, 3u);
  EXPECT_DOUBLE_EQ(m.ttft_ms.mean, 200);
  EXPECT_DOUBLE_EQ(m.ttft_ms.median, 200);
  EXPECT_DOUBLE_EQ(m.ttft_ms.p95, 290);  // rank 1.9 between 200 and 300
  EXPECT_DOUBLE_EQ(m.ttft_ms.p99, 298);
  EXPECT_EQ(m.tpot_ms.count, 2u);
  EXPECT_DOUBLE_EQ(m.tpot_ms.mean, 75);
  EXPECT_EQ(m.itl_ms.count, 5u);  // pooled gaps of the ok requests; the warm-up's 9999 is out
  EXPECT_DOUBLE_EQ(m.itl_ms.mean, 100);
  EXPECT_DOUBLE_EQ(m.e2e_ms.mean, 2600.0 / 3.0);
}

TEST(CellMetrics, OkReplyWithoutContentHasNoLatency) {
  auto requests = mixed_requests();
  store::RequestRow empty = ok_request(50, 1.5, 0, 0, 100, 0, -1, {});
  empty.first_token_s = -1;  // the server sent [DONE] without a single content event
  empty.last_token_s = -1;
  requests.push_back(empty);
  const CellMetrics m = compute_cell_metrics(requests, {});
  EXPECT_EQ(m.ok, 4);
  EXPECT_EQ(m.ttft_ms.count, 3u);  // the empty reply contributes no TTFT of 0 ms
  EXPECT_DOUBLE_EQ(m.ttft_ms.mean, 200);
  EXPECT_EQ(m.e2e_ms.count, 3u);
}

TEST(CellMetrics, ScheduleLagAndLatencyFromScheduleForOpenLoopRows) {
  std::vector<store::RequestRow> rows;
  rows.push_back(ok_request(0, 1.000, 100, 300, 10, 3, -1, {100, 100}));
  rows.push_back(ok_request(1, 2.010, 100, 300, 10, 3, -1, {100, 100}));
  rows.push_back(failed_request(2, 3.004, 50, "http_status"));
  rows[0].scheduled_s = 1.000;  // on time
  rows[1].scheduled_s = 2.000;  // sent 10 ms late
  rows[2].scheduled_s = 3.000;  // 4 ms late; failed, but lag is the driver's, so it counts
  const CellMetrics m = compute_cell_metrics(rows, {});
  EXPECT_EQ(m.schedule_lag_ms.count, 3u);
  EXPECT_NEAR(m.schedule_lag_ms.max, 10, 1e-6);
  EXPECT_NEAR(m.schedule_lag_ms.median, 4, 1e-6);
  EXPECT_EQ(m.e2e_from_schedule_ms.count, 2u);  // ok requests only
  EXPECT_NEAR(m.e2e_from_schedule_ms.max, 310, 1e-6);
  EXPECT_EQ(m.samples.ttft_ms, (std::vector<double>{100, 100}));
}

TEST(CellMetrics, ClosedLoopRowsHaveNoScheduleLag) {
  const CellMetrics m = compute_cell_metrics(mixed_requests(), {});
  EXPECT_EQ(m.schedule_lag_ms.count, 0u);
  EXPECT_FALSE(m.goodput.has_value());
}

TEST(CellMetrics, GoodputCountsOkRequestsMeetingEverySlo) {
  std::vector<store::RequestRow> rows;
  rows.push_back(ok_request(0, 0.0, 100, 300, 10, 3, -1, {}));  // tpot 100
  rows.push_back(ok_request(1, 0.0, 250, 400, 10, 3, -1, {}));  // ttft over 200
  rows.push_back(ok_request(2, 0.0, 100, 900, 10, 3, -1, {}));  // tpot 400 over 150
  rows.push_back(failed_request(3, 0.0, 50, "timeout"));        // failed: never good
  Slo slo;
  slo.ttft_ms = 200;
  slo.tpot_ms = 150;
  const CellMetrics m = compute_cell_metrics(rows, {}, slo);
  ASSERT_TRUE(m.good_requests.has_value());
  EXPECT_EQ(*m.good_requests, 1);
  EXPECT_DOUBLE_EQ(*m.goodput, 1 / 0.9);  // window: 0 s to the last completion at 0.9 s
}

TEST(CellMetrics, ThroughputOverFirstSendToLastCompletion) {
  const CellMetrics m = compute_cell_metrics(mixed_requests(), {});
  // From the first measured send (1.0 s; the warm-up at 0 is out) to the failed request that
  // gave up at 2.5 s + 3000 ms = 5.5 s.
  EXPECT_DOUBLE_EQ(m.window_s, 4.5);
  EXPECT_DOUBLE_EQ(m.request_throughput, 3 / 4.5);
  EXPECT_EQ(m.output_tokens, 33);
  EXPECT_EQ(m.prompt_tokens, 600);
  EXPECT_DOUBLE_EQ(m.output_throughput, 33 / 4.5);
  ASSERT_TRUE(m.total_token_throughput.has_value());
  EXPECT_DOUBLE_EQ(*m.total_token_throughput, 633 / 4.5);
}

TEST(CellMetrics, WindowReachesTheEndOfFailuresWithoutTokens) {
  // Two requests that hung until a 5 s timeout, one after the other: the run took 10 s.
  store::RequestRow first = failed_request(0, 0.0, 0, "timeout");
  first.ended_s = 5.0;
  store::RequestRow second = failed_request(1, 5.0, 0, "timeout");
  second.ended_s = 10.0;
  const CellMetrics hung = compute_cell_metrics({first, second}, {});
  EXPECT_DOUBLE_EQ(hung.window_s, 10.0);

  // A run stopped by a signal 20 s in: cancelled requests end when the run stopped them,
  // and a success's end (its [DONE] after the last token) counts too.
  store::RequestRow cancelled = failed_request(2, 0.5, 0, "cancelled");
  cancelled.ended_s = 20.0;
  store::RequestRow ok = ok_request(3, 0.0, 100, 1000, 10, 5, -1, {});
  ok.ended_s = 1.01;
  const CellMetrics stopped = compute_cell_metrics({ok, cancelled}, {});
  EXPECT_DOUBLE_EQ(stopped.window_s, 20.0);
  EXPECT_DOUBLE_EQ(stopped.request_throughput, 1 / 20.0);
}

TEST(CellMetrics, PromptTokensAreUnknownWhenTheServerSentNoUsage) {
  store::RequestRow reported = ok_request(0, 0.0, 100, 1000, 50, 4, -1, {});
  store::RequestRow counted = ok_request(1, 0.0, 100, 1000, -1, 3, -1, {});
  counted.tokens_estimated = true;
  const CellMetrics m = compute_cell_metrics({reported, counted}, {});
  EXPECT_FALSE(m.prompt_tokens.has_value());  // never a sum that silently leaves some out
  EXPECT_EQ(m.prompt_tokens_unknown, 1);
  EXPECT_FALSE(m.total_token_throughput.has_value());
  EXPECT_EQ(m.output_tokens, 7);
  EXPECT_EQ(m.output_tokens_estimated, 1);
  EXPECT_DOUBLE_EQ(m.output_throughput, 7.0);

  const CellMetrics known = compute_cell_metrics({reported}, {});
  EXPECT_EQ(known.prompt_tokens, 50);
  EXPECT_EQ(known.output_tokens_estimated, 0);
  EXPECT_TRUE(known.total_token_throughput.has_value());
}

TEST(CellMetrics, FirstFailureOfEachKindIsKeptWithItsStatus) {
  store::RequestRow warm = failed_request(0, 0.0, 5, "http_status");
  warm.warmup = true;  // warm-up failures are not the cell's
  warm.error = "HTTP 500: warm-up";
  store::RequestRow not_found = failed_request(1, 0.1, 5, "http_status");
  not_found.http_status = 404;
  not_found.error = "HTTP 404: The model `m` does not exist.";
  store::RequestRow later = failed_request(2, 0.2, 5, "http_status");
  later.http_status = 503;
  store::RequestRow cut = failed_request(3, 0.3, 5, "stream_dropped");
  cut.http_status = 200;
  const CellMetrics m = compute_cell_metrics({warm, not_found, later, cut}, {});
  ASSERT_EQ(m.first_failure_by_kind.size(), 2u);
  EXPECT_EQ(m.first_failure_by_kind.at("http_status").http_status, 404);
  EXPECT_EQ(m.first_failure_by_kind.at("http_status").error,
            "HTTP 404: The model `m` does not exist.");
  EXPECT_EQ(m.first_failure_by_kind.at("stream_dropped").http_status, 200);
  EXPECT_EQ(failure_text(404, "HTTP 404: gone"), "HTTP 404: gone");
  EXPECT_EQ(failure_text(200, "stream ended before data: [DONE]"),
            "stream ended before data: [DONE] (HTTP 200)");
  EXPECT_EQ(failure_text(0, "connection refused"), "connection refused");
}

TEST(CellMetrics, ClientCacheHitSkipsUnknownCachedTokens) {
  const CellMetrics m = compute_cell_metrics(mixed_requests(), {});
  // Requests 1 and 3 report cached tokens: (100 + 50) / (200 + 100).
  ASSERT_TRUE(m.cache_hit_client.has_value());
  EXPECT_DOUBLE_EQ(*m.cache_hit_client, 0.5);
}

TEST(CellMetrics, NothingMeasuredIsZeroAndNotAvailable) {
  const CellMetrics m = compute_cell_metrics({ok_request(0, 0, 10, 20, 10, 2, -1, {10})}, {});
  EXPECT_FALSE(m.cache_hit_client.has_value());
  EXPECT_FALSE(m.kv_hit_rate_server.has_value());

  const CellMetrics empty = compute_cell_metrics({}, {});
  EXPECT_EQ(empty.ok, 0);
  EXPECT_EQ(empty.window_s, 0);
  EXPECT_EQ(empty.request_throughput, 0);
  EXPECT_EQ(empty.ttft_ms.count, 0u);
}

TEST(ServerKvHitRate, RatioOfSumsAcrossSourcesAndLabelSets) {
  const std::string a = "http://a/metrics";
  const std::string b = "http://b/metrics";
  const std::vector<store::MetricSample> samples = {
      // a: hits 15 -> 55 summed over two label sets (Δ40), queries 100 -> 200 (Δ100).
      sample("before", a, kPrefixCacheHits, 10, R"({"model_name":"m1"})"),
      sample("before", a, kPrefixCacheHits, 5, R"({"model_name":"m2"})"),
      sample("after", a, kPrefixCacheHits, 40, R"({"model_name":"m1"})"),
      sample("after", a, kPrefixCacheHits, 15, R"({"model_name":"m2"})"),
      sample("before", a, kPrefixCacheQueries, 100),
      sample("after", a, kPrefixCacheQueries, 200),
      // b: hits Δ10, queries Δ400.
      sample("before", b, kPrefixCacheHits, 0),
      sample("after", b, kPrefixCacheHits, 10),
      sample("before", b, kPrefixCacheQueries, 0),
      sample("after", b, kPrefixCacheQueries, 400),
      // Noise that must not count: another metric, and a "during" sample.
      sample("after", b, "vllm:num_requests_running", 1e6),
      sample("during", b, kPrefixCacheQueries, 1e6),
  };
  // (40 + 10) / (100 + 400) = 0.1; a mean of ratios would give (0.4 + 0.025) / 2 = 0.2125.
  const auto rate = server_kv_hit_rate(samples);
  ASSERT_TRUE(rate.has_value());
  EXPECT_DOUBLE_EQ(*rate, 0.1);
  const CellMetrics m = compute_cell_metrics({}, samples);
  ASSERT_TRUE(m.kv_hit_rate_server.has_value());
  EXPECT_DOUBLE_EQ(*m.kv_hit_rate_server, 0.1);
}

TEST(ServerKvHitRate, FallsBackToGpuNamesPerSource) {
  const std::string current = "http://new/metrics";
  const std::string old = "http://old/metrics";
  const std::vector<store::MetricSample> samples = {
      sample("before", current, kPrefixCacheHits, 0),
      sample("after", current, kPrefixCacheHits, 40),
      sample("before", current, kPrefixCacheQueries, 0),
      sample("after", current, kPrefixCacheQueries, 100),
      // A source with both generations of names uses the current ones only.
      sample("before", current, kGpuPrefixCacheHits, 0),
      sample("after", current, kGpuPrefixCacheHits, 1000),
      sample("before", current, kGpuPrefixCacheQueries, 0),
      sample("after", current, kGpuPrefixCacheQueries, 1000),
      // An older vLLM exposes only the gpu_ names.
      sample("before", old, kGpuPrefixCacheHits, 20),
      sample("after", old, kGpuPrefixCacheHits, 50),
      sample("before", old, kGpuPrefixCacheQueries, 100),
      sample("after", old, kGpuPrefixCacheQueries, 200),
  };
  const auto rate = server_kv_hit_rate(samples);
  ASSERT_TRUE(rate.has_value());
  EXPECT_DOUBLE_EQ(*rate, (40.0 + 30.0) / (100.0 + 100.0));
}

TEST(ServerKvHitRate, NotAvailableWithoutBothPhasesOrQueries) {
  EXPECT_FALSE(server_kv_hit_rate({}).has_value());
  EXPECT_FALSE(server_kv_hit_rate({sample("before", "s", kPrefixCacheHits, 1),
                                   sample("before", "s", kPrefixCacheQueries, 2)})
                   .has_value());
  // Both phases, but no query was counted in between: a rate would divide by zero.
  EXPECT_FALSE(server_kv_hit_rate({sample("before", "s", kPrefixCacheHits, 5),
                                   sample("after", "s", kPrefixCacheHits, 5),
                                   sample("before", "s", kPrefixCacheQueries, 9),
                                   sample("after", "s", kPrefixCacheQueries, 9)})
                   .has_value());
}

TEST(ServerFigures, UsageMaxPreemptionsAndSpecDecodeAcceptance) {
  const std::string a = "http://a/metrics";
  const std::string b = "http://b/metrics";
  const std::vector<store::MetricSample> samples = {
      // Usage: the worst replica while the measured phase ran; "before" is the warm-up's and
      // "after" sees an idle server.
      sample("before", a, kKvCacheUsage, 0.99),
      sample("during", a, kKvCacheUsage, 0.40),
      sample("during", b, kGpuCacheUsage, 0.72),  // an older vLLM's name
      sample("after", a, kKvCacheUsage, 0.90),
      // Preemptions: Σ Δ over replicas; b has no "after" and is left out.
      sample("before", a, kPreemptions, 3),
      sample("after", a, kPreemptions, 10),
      sample("before", b, kPreemptions, 100),
      // Spec decode: Σ Δ accepted / Σ Δ draft = (30 + 10) / (50 + 50).
      sample("before", a, kSpecDecodeAccepted, 0),
      sample("after", a, kSpecDecodeAccepted, 30),
      sample("before", a, kSpecDecodeDraft, 0),
      sample("after", a, kSpecDecodeDraft, 50),
      sample("before", b, kSpecDecodeAccepted, 5),
      sample("after", b, kSpecDecodeAccepted, 15),
      sample("before", b, kSpecDecodeDraft, 10),
      sample("after", b, kSpecDecodeDraft, 60),
  };
  const CellMetrics m = compute_cell_metrics({}, samples);
  ASSERT_TRUE(m.kv_usage_max.has_value());
  EXPECT_DOUBLE_EQ(*m.kv_usage_max, 0.72);
  ASSERT_TRUE(m.preemptions.has_value());
  EXPECT_EQ(*m.preemptions, 7);
  ASSERT_TRUE(m.spec_decode_acceptance.has_value());
  EXPECT_DOUBLE_EQ(*m.spec_decode_acceptance, 0.4);
}

TEST(ServerFigures, KvUsageIsUnknownWithoutAScrapeDuringThePhase) {
  // A cell shorter than the scrape interval: only the scrapes around it, at idle.
  const CellMetrics m = compute_cell_metrics(
      {}, {sample("before", "s", kKvCacheUsage, 0.0), sample("after", "s", kKvCacheUsage, 0.0)});
  EXPECT_FALSE(m.kv_usage_max.has_value());  // n/a, not 0.0
}

TEST(ServerFigures, NotAvailableWhenNoReplicaExposesThem) {
  const CellMetrics m = compute_cell_metrics(
      {}, {sample("before", "s", kPrefixCacheHits, 1), sample("after", "s", kPrefixCacheHits, 2)});
  EXPECT_FALSE(m.kv_usage_max.has_value());
  EXPECT_FALSE(m.preemptions.has_value());
  EXPECT_FALSE(m.spec_decode_acceptance.has_value());
  EXPECT_FALSE(server_counter_delta({sample("before", "s", kPreemptions, 1)}, kPreemptions));
}

TEST(EppFigures, MeansOverThePhaseFromTheHistogramsSumAndCount) {
  const std::string epp = "http://10.0.0.9:9090/metrics";
  const std::string later = "http://10.0.0.10:9090/metrics";  // a later llm-d's names
  const std::vector<store::MetricSample> samples = {
      // 4 lookups before the cell (the warm-up's) do not count: Δsum 2.0 over Δcount 5 here.
      sample("before", epp, kEppHitRatioSum, 1.0),
      sample("before", epp, kEppHitRatioCount, 4),
      sample("during", epp, kEppHitRatioSum, 2.0),
      sample("during", epp, kEppHitRatioCount, 6),
      sample("after", epp, kEppHitRatioSum, 3.0),
      sample("after", epp, kEppHitRatioCount, 9),
      // The second picker adds Δsum 2.5 over Δcount 5: (2.0 + 2.5) / (5 + 5) = 0.45.
      sample("before", later, kLlmdEppHitRatioSum, 0.5),
      sample("before", later, kLlmdEppHitRatioCount, 1),
      sample("after", later, kLlmdEppHitRatioSum, 3.0),
      sample("after", later, kLlmdEppHitRatioCount, 6),
      // Scheduling: 0.002 s over 8 decisions = 0.25 ms.
      sample("before", epp, kEppSchedulingSum, 0.001),
      sample("before", epp, kEppSchedulingCount, 4),
      sample("after", epp, kEppSchedulingSum, 0.003),
      sample("after", epp, kEppSchedulingCount, 12),
  };
  const CellMetrics m = compute_cell_metrics({}, samples);
  ASSERT_TRUE(m.epp_prefix_hit_ratio.has_value());
  EXPECT_DOUBLE_EQ(*m.epp_prefix_hit_ratio, 0.45);
  ASSERT_TRUE(m.epp_scheduling_ms.has_value());
  EXPECT_DOUBLE_EQ(*m.epp_scheduling_ms, 0.25);
  EXPECT_FALSE(m.kv_hit_rate_server.has_value());  // the servers' own figure is not the EPP's
}

TEST(EppFigures, NotAvailableWithoutTheSeriesOrWithoutALookup) {
  const CellMetrics none = compute_cell_metrics(
      {}, {sample("before", "s", kPrefixCacheHits, 1), sample("after", "s", kPrefixCacheHits, 2)});
  EXPECT_FALSE(none.epp_prefix_hit_ratio.has_value());
  EXPECT_FALSE(none.epp_scheduling_ms.has_value());
  // No request reached the picker during the cell: n/a, not 0.
  const CellMetrics idle = compute_cell_metrics(
      {}, {sample("before", "e", kEppHitRatioSum, 1), sample("before", "e", kEppHitRatioCount, 2),
           sample("after", "e", kEppHitRatioSum, 1), sample("after", "e", kEppHitRatioCount, 2)});
  EXPECT_FALSE(idle.epp_prefix_hit_ratio.has_value());
}

}  // namespace
}  // namespace kvsweep::figures
