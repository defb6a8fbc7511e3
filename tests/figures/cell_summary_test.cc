// Tests for reports/cell_summary and reports/latency_histogram: the summary gives back every
// figure bit for bit, and a percentile read from a histogram is within 0.5% of the exact one.
#include "figures/cell_summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error_kinds.h"
#include "common/stats.h"
#include "figures/summary_parts.h"
#include "tests/reports/request_builders.h"

namespace kvsweep::figures {
namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_same(const SampleSummary& a, const SampleSummary& b, const std::string& what) {
  EXPECT_EQ(a.count, b.count) << what;
  for (const auto field :
       {&SampleSummary::mean, &SampleSummary::std, &SampleSummary::min, &SampleSummary::max,
        &SampleSummary::median, &SampleSummary::p90, &SampleSummary::p95, &SampleSummary::p99}) {
    EXPECT_TRUE(same_bits(a.*field, b.*field)) << what << ": " << a.*field << " " << b.*field;
  }
}

void expect_same(const std::optional<double>& a, const std::optional<double>& b,
                 const std::string& what) {
  ASSERT_EQ(a.has_value(), b.has_value()) << what;
  if (a) {
    EXPECT_TRUE(same_bits(*a, *b)) << what << ": " << *a << " " << *b;
  }
}

// Every figure but the raw samples.
void expect_same(const CellMetrics& a, const CellMetrics& b) {
  EXPECT_EQ(a.ok, b.ok);
  EXPECT_EQ(a.failed, b.failed);
  EXPECT_EQ(a.failed_by_kind, b.failed_by_kind);
  ASSERT_EQ(a.first_failure_by_kind.size(), b.first_failure_by_kind.size());
  for (const auto& [kind, f] : a.first_failure_by_kind) {
    EXPECT_EQ(f.http_status, b.first_failure_by_kind.at(kind).http_status) << kind;
    EXPECT_EQ(f.error, b.first_failure_by_kind.at(kind).error) << kind;
  }
  expect_same(a.ttft_ms, b.ttft_ms, "ttft");
  expect_same(a.tpot_ms, b.tpot_ms, "tpot");
  expect_same(a.itl_ms, b.itl_ms, "itl");
  expect_same(a.e2e_ms, b.e2e_ms, "e2e");
  expect_same(a.schedule_lag_ms, b.schedule_lag_ms, "schedule lag");
  expect_same(a.e2e_from_schedule_ms, b.e2e_from_schedule_ms, "e2e from schedule");
  EXPECT_TRUE(same_bits(a.window_s, b.window_s));
  EXPECT_TRUE(same_bits(a.request_throughput, b.request_throughput));
  EXPECT_TRUE(same_bits(a.output_throughput, b.output_throughput));
  expect_same(a.total_token_throughput, b.total_token_throughput, "total tok/s");
  EXPECT_EQ(a.prompt_tokens, b.prompt_tokens);
  EXPECT_EQ(a.prompt_tokens_unknown, b.prompt_tokens_unknown);
  EXPECT_EQ(a.output_tokens, b.output_tokens);
  EXPECT_EQ(a.output_tokens_estimated, b.output_tokens_estimated);
  EXPECT_TRUE(same_bits(a.max_output_tokens_per_s, b.max_output_tokens_per_s));
  EXPECT_EQ(a.max_concurrent_requests, b.max_concurrent_requests);
  expect_same(a.kv_hit_rate_server, b.kv_hit_rate_server, "kv hit rate");
  expect_same(a.cache_hit_client, b.cache_hit_client, "client hit");
  expect_same(a.kv_usage_max, b.kv_usage_max, "kv usage");
  EXPECT_EQ(a.preemptions, b.preemptions);
  expect_same(a.spec_decode_acceptance, b.spec_decode_acceptance, "spec decode");
  expect_same(a.epp_prefix_hit_ratio, b.epp_prefix_hit_ratio, "epp prefix hit");
  expect_same(a.epp_scheduling_ms, b.epp_scheduling_ms, "epp scheduling");
  EXPECT_EQ(a.good_requests, b.good_requests);
  expect_same(a.goodput, b.goodput, "goodput");
  EXPECT_EQ(a.prompt_sends_max, b.prompt_sends_max);
  EXPECT_EQ(a.repeated_requests, b.repeated_requests);
  // Every figure of the verdict, compared as the summary writes it (doubles bit for bit).
  EXPECT_EQ(validity_to_summary(a.validity).dump(), validity_to_summary(b.validity).dump());
  EXPECT_EQ(a.validity.verdict, b.validity.verdict);
  EXPECT_EQ(verdict_line(a.validity), verdict_line(b.validity));
}

std::vector<store::RequestRow> cell_rows() {
  std::mt19937_64 random(7);
  std::lognormal_distribution<double> ttft(4.5, 0.6);
  std::lognormal_distribution<double> gap(3.1, 0.3);
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < 400; ++i) {
    std::vector<double> itl(5 + i % 60);
    double e2e = ttft(random);
    const double first = e2e;
    for (double& g : itl) e2e += (g = gap(random));
    rows.push_back(testing::ok_request(i, 0.01 * i, first, e2e, 800 + i,
                                       static_cast<int>(itl.size()) + 1, i % 3 == 0 ? -1 : 200,
                                       std::move(itl)));
    rows.back().scheduled_s = rows.back().sent_s - 0.0001 * (i % 7);
  }
  rows.push_back(testing::failed_request(400, 2.0, 900, "timeout"));
  rows.back().http_status = 504;
  rows.push_back(testing::failed_request(401, 2.5, 100, "http_status"));
  return rows;
}

TEST(CellSummary, EveryFigureComesBackBitForBit) {
  const std::vector<store::MetricSample> samples = {
      testing::sample("before", "http://r0/metrics", kPrefixCacheHits, 10),
      testing::sample("before", "http://r0/metrics", kPrefixCacheQueries, 100),
      testing::sample("after", "http://r0/metrics", kPrefixCacheHits, 70),
      testing::sample("after", "http://r0/metrics", kPrefixCacheQueries, 200),
      testing::sample("during", "http://r0/metrics", kKvCacheUsage, 0.8125),
  };
  Slo slo;
  slo.ttft_ms = 120;
  const CellMetrics metrics = compute_cell_metrics(cell_rows(), samples, slo);
  ASSERT_TRUE(metrics.goodput.has_value());
  ASSERT_TRUE(metrics.kv_hit_rate_server.has_value());
  ASSERT_EQ(metrics.failed_by_kind.size(), 2u);
  const CellMetrics back = metrics_from_summary(metrics_to_summary(metrics));
  expect_same(metrics, back);
  EXPECT_TRUE(back.samples.ttft_ms.empty());  // the raw samples are not part of a summary
}

store::CellLoadRow judged_load() {
  store::CellLoadRow load;
  load.open_loop = true;
  load.request_rate = 100;
  load.max_concurrency = 8;
  load.driver_measured = true;
  load.driver_threads = 1;
  load.driver_cores = 2;
  load.driver_wall_s = 4;
  load.driver_cpu_s = 0.3;
  load.send_delay_count = 402;
  load.send_delay_p99_ms = 0.4;
  load.ready_span_s = 4;
  load.sent_span_s = 4.01;
  return load;
}

// The whole summary a cell stores: figures, verdict, replicas, histograms and sample come back
// as they went in.
TEST(CellSummary, AStoredSummaryGivesBackTheCellsFiguresVerdictReplicasAndSample) {
  std::vector<store::RequestRow> rows = cell_rows();
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].replica = i % 3 == 0 ? "r0" : "r1";
  const std::vector<store::MetricSample> samples = {
      testing::sample("before", "http://r0/metrics", kPrefixCacheHits, 10),
      testing::sample("before", "http://r0/metrics", kPrefixCacheQueries, 100),
      testing::sample("after", "http://r0/metrics", kPrefixCacheHits, 70),
      testing::sample("after", "http://r0/metrics", kPrefixCacheQueries, 200),
  };
  ValidityRules rules;
  rules.min_in_flight_fraction = 0.5;
  const CellSummary summary = summarize_cell(rows, samples, judged_load(), rules);
  ASSERT_TRUE(summary.metrics.validity.load_known);
  EXPECT_TRUE(summary.metrics.samples.ttft_ms.empty());
  const CellMetrics exact = compute_cell_metrics(rows, samples, {}, judged_load(), rules);
  expect_same(exact, summary.metrics);

  const store::CellSummaryRow row = summary_row(42, summary);
  EXPECT_EQ(row.cell_id, 42);
  EXPECT_EQ(row.format, kSummaryFormat);
  const CellSummary back = summary_from_row(row);
  expect_same(exact, back.metrics);
  EXPECT_EQ(replicas_to_summary(back.replicas).dump(),
            replicas_to_summary(summary.replicas).dump());
  ASSERT_EQ(back.replicas.replicas.size(), 2u);
  EXPECT_EQ(back.replicas.replicas[0].replica, "r0");
  EXPECT_TRUE(back.distributions.ttft_ms == summary.distributions.ttft_ms);
  EXPECT_TRUE(back.distributions.itl_ms == summary.distributions.itl_ms);
  EXPECT_EQ(back.distributions.e2e_ms.count(), exact.e2e_ms.count);
  ASSERT_EQ(back.sample.size(), summary.sample.size());
  EXPECT_EQ(sample_to_bytes(back.sample), sample_to_bytes(summary.sample));
  // Read back, the samples are chart points: ascending, from the smallest to the largest value
  // (each within the histogram's accuracy).
  const auto& points = back.metrics.samples.ttft_ms;
  ASSERT_EQ(points.size(), std::min<std::size_t>(1000, exact.ttft_ms.count));
  EXPECT_TRUE(std::is_sorted(points.begin(), points.end()));
  EXPECT_NEAR(points.front(), exact.ttft_ms.min, exact.ttft_ms.min * 0.005);
  EXPECT_NEAR(points.back(), exact.ttft_ms.max, exact.ttft_ms.max * 0.005);
}

TEST(CellSummary, MalformedStoredPartsAreRefused) {
  const CellSummary summary = summarize_cell(cell_rows(), {}, judged_load(), {});
  store::CellSummaryRow row = summary_row(1, summary);
  store::CellSummaryRow cut = row;
  cut.distributions.resize(cut.distributions.size() - 1);
  EXPECT_THROW(summary_from_row(cut), kvsweep::CorruptData);
  store::CellSummaryRow bad_verdict = row;
  const auto at = bad_verdict.figures.find("\"verdict\":\"");
  ASSERT_NE(at, std::string::npos);
  bad_verdict.figures.insert(at + 11, "not ");
  try {
    summary_from_row(bad_verdict);
    FAIL() << "expected a refusal";
  } catch (const kvsweep::CorruptData& e) {
    EXPECT_NE(std::string(e.what()).find("validity.verdict"), std::string::npos) << e.what();
  }
}

TEST(CellSummary, NonFiniteAndUnknownFiguresSurvive) {
  CellMetrics m;
  m.window_s = std::numeric_limits<double>::infinity();
  m.request_throughput = std::nan("");
  m.ttft_ms.p99 = -std::numeric_limits<double>::infinity();
  m.total_token_throughput = std::nullopt;
  m.prompt_tokens = std::nullopt;
  m.preemptions = 3;
  m.spec_decode_acceptance = -0.0;
  m.epp_prefix_hit_ratio = 0.1;  // a fraction without an exact binary form survives bit for bit
  m.epp_scheduling_ms = 0.0123;
  const CellMetrics back = metrics_from_summary(metrics_to_summary(m));
  expect_same(m, back);
  EXPECT_TRUE(std::isnan(back.request_throughput));
}

TEST(CellSummary, OlderFormatsReadNewerAndMalformedAreRefused) {
  // A summary of an older format lacks the fields added since: they keep their defaults.
  const CellMetrics old = metrics_from_summary(R"({"format":1,"ok":5})");
  EXPECT_EQ(old.ok, 5);
  EXPECT_EQ(old.failed, 0);
  EXPECT_FALSE(old.goodput.has_value());
  EXPECT_EQ(metrics_from_summary(R"({"format":1,"some_later_figure":1})").ok, 0);
  try {
    metrics_from_summary(R"({"format":1,"ttft_ms":{"p99":"fast"}})");
    FAIL() << "expected a refusal";
  } catch (const kvsweep::CorruptData& e) {
    EXPECT_NE(std::string(e.what()).find("ttft_ms.p99: not a number"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(metrics_from_summary(R"({"format":99})"), kvsweep::CorruptData);
  EXPECT_THROW(metrics_from_summary("[1,2]"), kvsweep::CorruptData);
  EXPECT_THROW(metrics_from_summary("{"), kvsweep::CorruptData);
}

// The promise of the summary's histograms: any percentile within 0.5% of the exact one, for
// every latency a cell reports.
TEST(LatencyHistogram, EveryPercentileOfEveryMetricIsWithinHalfAPercent) {
  const CellMetrics metrics = compute_cell_metrics(cell_rows(), {});
  const CellDistributions d = distributions_of(metrics.samples);
  const std::pair<const LatencyHistogram*, const std::vector<double>*> metrics_and_exact[] = {
      {&d.ttft_ms, &metrics.samples.ttft_ms},
      {&d.tpot_ms, &metrics.samples.tpot_ms},
      {&d.itl_ms, &metrics.samples.itl_ms},
      {&d.e2e_ms, &metrics.samples.e2e_ms}};
  for (const auto& [histogram, exact] : metrics_and_exact) {
    ASSERT_EQ(histogram->count(), static_cast<std::int64_t>(exact->size()));
    for (double p = 0; p <= 100; p += 0.5) {
      const double want = percentile(*exact, p);
      EXPECT_LE(std::fabs(histogram->percentile(p) - want), 0.005 * want) << p;
    }
  }
}

TEST(LatencyHistogram, EvenRanksInOneWalkAreTheValuesAtThoseRanks) {
  LatencyHistogram h;
  std::mt19937_64 random(3);
  std::lognormal_distribution<double> value(3, 1);
  for (int i = 0; i < 5000; ++i) h.add(i % 97 == 0 ? 0.0 : value(random));
  for (const std::int64_t points : {1, 2, 7, 1000, 5000, 9000}) {
    const std::vector<double> got = h.values_at_even_ranks(points);
    const std::int64_t k = std::min<std::int64_t>(points, h.count());
    ASSERT_EQ(static_cast<std::int64_t>(got.size()), k);
    for (std::int64_t i = 0; i < k; ++i) {
      const std::int64_t rank = k == 1 ? 0 : i * (h.count() - 1) / (k - 1);
      ASSERT_EQ(got[static_cast<std::size_t>(i)], h.value_at_rank(rank)) << points << " " << i;
    }
  }
  EXPECT_TRUE(LatencyHistogram().values_at_even_ranks(10).empty());
}

TEST(LatencyHistogram, MergesAndRoundTripsThroughBytes) {
  std::mt19937_64 random(11);
  std::lognormal_distribution<double> latency(3.0, 1.5);
  LatencyHistogram a, b, both;
  std::vector<double> all;
  for (int i = 0; i < 20000; ++i) {
    const double v = i % 500 == 0 ? 0.0 : latency(random);
    (i % 2 == 0 ? a : b).add(v);
    both.add(v);
    all.push_back(v);
  }
  a.merge(b);
  EXPECT_EQ(a, both);
  EXPECT_EQ(a.count(), 20000);
  const LatencyHistogram back = LatencyHistogram::from_bytes(a.to_bytes());
  EXPECT_EQ(back, a);
  EXPECT_EQ(back.count(), a.count());
  std::sort(all.begin(), all.end());
  for (const double p : {0.0, 1.0, 50.0, 99.0, 99.9, 100.0}) {
    EXPECT_LE(std::fabs(back.percentile(p) - percentile(all, p)), 0.005 * percentile(all, p)) << p;
  }
  EXPECT_LT(a.to_bytes().size(), 4000u);  // a few bytes per bucket, not per value
  EXPECT_THROW(LatencyHistogram::from_bytes(std::string("\x01\x80", 2)), kvsweep::CorruptData);
  EXPECT_THROW(LatencyHistogram::from_bytes(std::string("\x00\x02\x01\x01\x01", 5)),
               kvsweep::CorruptData);  // the second bucket is not above the first
  EXPECT_EQ(LatencyHistogram().percentile(50), 0);
}

}  // namespace
}  // namespace kvsweep::figures
