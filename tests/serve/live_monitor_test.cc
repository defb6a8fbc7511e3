// Tests for serve/live_monitor.cc: figures over the sliding window from scripted
// /metrics answers (no network), stale sources left out, Dynamo's and vLLM's names.
#include "serve/live_monitor.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>

namespace kvsweep::serve {
namespace {

// A vLLM replica's /metrics: a TTFT histogram with buckets 0.1, 0.5, +Inf and hit counters.
std::string vllm_metrics(int le_01, int le_05, int all, int hits, int queries) {
  return "vllm:time_to_first_token_seconds_bucket{model_name=\"m\",le=\"0.1\"} " +
         std::to_string(le_01) +
         "\nvllm:time_to_first_token_seconds_bucket{model_name=\"m\",le=\"0.5\"} " +
         std::to_string(le_05) +
         "\nvllm:time_to_first_token_seconds_bucket{model_name=\"m\",le=\"+Inf\"} " +
         std::to_string(all) + "\nvllm:prefix_cache_hits_total{model_name=\"m\"} " +
         std::to_string(hits) + "\nvllm:prefix_cache_queries_total{model_name=\"m\"} " +
         std::to_string(queries) + "\n";
}

// Scripted answers per URL; a URL with no answer set refuses the connection.
struct ScriptedFetch {
  std::map<std::string, std::string> bodies;
  driver::HttpResponse operator()(const std::string& url, double) const {
    const auto it = bodies.find(url);
    if (it == bodies.end()) return {0, "", "connection refused"};
    return {200, it->second, ""};
  }
};

LiveSettings settings() {
  LiveSettings s;
  s.interval_s = 2;
  s.window_s = 30;
  return s;
}

TEST(LiveMonitor, QuantilesAndHitRateComeFromTheIncreaseOverTheWindow) {
  auto fetch = std::make_shared<ScriptedFetch>();
  LiveMonitor monitor({"http://a/metrics", "http://b/metrics"}, settings(),
                      [fetch](const std::string& u, double t) { return (*fetch)(u, t); });
  fetch->bodies["http://a/metrics"] = vllm_metrics(100, 200, 300, 1000, 4000);
  fetch->bodies["http://b/metrics"] = vllm_metrics(50, 50, 50, 0, 0);
  LiveSnapshot s = monitor.poll(1000);
  ASSERT_EQ(s.points.size(), 1u);
  EXPECT_FALSE(s.points[0].ttft_p50_ms);  // one scrape: no increase yet
  // a: +2 <= 0.1 s, +6 more <= 0.5, +2 more above; b: +0, +2, +0. Together 10 requests:
  // 2 | 8 (cumulative) | 10. p50: rank 5 in (0.1, 0.5]: 0.1 + 0.4 * 3/6 = 0.3 s.
  fetch->bodies["http://a/metrics"] = vllm_metrics(102, 206, 308, 1300, 4400);
  fetch->bodies["http://b/metrics"] = vllm_metrics(50, 52, 52, 100, 600);
  s = monitor.poll(1002);
  ASSERT_EQ(s.points.size(), 2u);
  const LivePoint& p = s.points.back();
  EXPECT_DOUBLE_EQ(*p.ttft_p50_ms, 300);
  EXPECT_DOUBLE_EQ(*p.ttft_p95_ms, 500);  // rank 9.5 in +Inf: the previous bound
  EXPECT_EQ(p.requests, 10);
  EXPECT_DOUBLE_EQ(*p.kv_hit, 400.0 / 1000.0);  // (300 + 100) / (400 + 600)
  EXPECT_EQ(p.fresh_sources, 2);
  // Polled again within the interval: no new round.
  EXPECT_EQ(monitor.poll(1003).points.size(), 2u);
}

TEST(LiveMonitor, AUrlThatStopsAnsweringIsStaleAndLeftOutNotZero) {
  auto fetch = std::make_shared<ScriptedFetch>();
  LiveMonitor monitor({"http://a/metrics", "http://dead/metrics"}, settings(),
                      [fetch](const std::string& u, double t) { return (*fetch)(u, t); });
  fetch->bodies["http://a/metrics"] = vllm_metrics(0, 0, 0, 0, 0);
  monitor.poll(1000);
  fetch->bodies["http://a/metrics"] = vllm_metrics(4, 4, 4, 10, 10);
  const LiveSnapshot s = monitor.poll(1002);
  ASSERT_EQ(s.sources.size(), 2u);
  EXPECT_FALSE(s.sources[0].stale);
  EXPECT_TRUE(s.sources[1].stale);
  EXPECT_EQ(s.sources[1].error, "connection refused");
  EXPECT_FALSE(s.sources[1].last_ok_wall_s);
  // Only a's requests, all <= 0.1 s: p50 = 0.05 s. A dead URL adds no zero-latency requests.
  EXPECT_DOUBLE_EQ(*s.points.back().ttft_p50_ms, 50);
  EXPECT_EQ(s.points.back().requests, 4);
  EXPECT_EQ(s.points.back().fresh_sources, 1);
  EXPECT_DOUBLE_EQ(*s.points.back().kv_hit, 1.0);

  // Every source gone: a point with no figures (a gap), not a zero.
  fetch->bodies.clear();
  const LiveSnapshot gone = monitor.poll(1004);
  EXPECT_FALSE(gone.points.back().ttft_p50_ms);
  EXPECT_FALSE(gone.points.back().kv_hit);
  EXPECT_EQ(gone.points.back().fresh_sources, 0);
  EXPECT_EQ(gone.sources[0].error, "connection refused");
}

TEST(LiveMonitor, ReadsDynamosFrontendHistogramAndTokenCounters) {
  auto fetch = std::make_shared<ScriptedFetch>();
  LiveMonitor monitor({"http://frontend/metrics"}, settings(),
                      [fetch](const std::string& u, double t) { return (*fetch)(u, t); });
  auto dynamo = [](int le_1, int all, int cached, int input) {
    return "dynamo_frontend_time_to_first_token_seconds_bucket{le=\"1\"} " + std::to_string(le_1) +
           "\ndynamo_frontend_time_to_first_token_seconds_bucket{le=\"+Inf\"} " +
           std::to_string(all) + "\ndynamo_frontend_cached_tokens_sum " + std::to_string(cached) +
           "\ndynamo_frontend_input_sequence_tokens_sum " + std::to_string(input) + "\n";
  };
  fetch->bodies["http://frontend/metrics"] = dynamo(0, 0, 0, 0);
  monitor.poll(1000);
  fetch->bodies["http://frontend/metrics"] = dynamo(8, 8, 750, 1000);
  const LiveSnapshot s = monitor.poll(1002);
  EXPECT_EQ(s.sources[0].ttft_metric, kDynamoTtft);
  EXPECT_DOUBLE_EQ(*s.points.back().ttft_p50_ms, 500);  // rank 4 of 8 in (0, 1]
  EXPECT_DOUBLE_EQ(*s.points.back().kv_hit, 0.75);
}

TEST(LiveMonitor, OldScrapesLeaveTheWindow) {
  auto fetch = std::make_shared<ScriptedFetch>();
  LiveSettings short_window = settings();
  short_window.window_s = 4;
  LiveMonitor monitor({"http://a/metrics"}, short_window,
                      [fetch](const std::string& u, double t) { return (*fetch)(u, t); });
  fetch->bodies["http://a/metrics"] = vllm_metrics(0, 0, 0, 0, 0);
  monitor.poll(1000);
  fetch->bodies["http://a/metrics"] = vllm_metrics(10, 10, 10, 0, 0);  // 10 fast requests
  monitor.poll(1002);
  fetch->bodies["http://a/metrics"] = vllm_metrics(10, 12, 12, 0, 0);
  monitor.poll(1004);
  fetch->bodies["http://a/metrics"] = vllm_metrics(10, 14, 14, 0, 0);
  const LiveSnapshot s = monitor.poll(1006);
  // The window reaches back to 1002 at most: the 10 fast requests before it are gone and
  // the 4 slower ones since are all that is left.
  EXPECT_EQ(s.points.back().requests, 4);
  EXPECT_DOUBLE_EQ(*s.points.back().ttft_p50_ms, 100 + 400 * 0.5);
}

}  // namespace
}  // namespace kvsweep::serve
