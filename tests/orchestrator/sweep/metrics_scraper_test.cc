// The /metrics scraper against a real server on loopback: which series it keeps.
#include "orchestrator/sweep/metrics_scraper.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/driver/test_server.h"

namespace kvsweep::orchestrator {
namespace {

using driver::test_support::LoopbackServer;

// What the pinned EPP (Gateway API Inference Extension v1.0.0) exposes, with vLLM's and a
// Go process' series beside it.
const char* const kEppText = R"(# HELP inference_extension_scheduler_e2e_duration_seconds x
# TYPE inference_extension_scheduler_e2e_duration_seconds histogram
inference_extension_scheduler_e2e_duration_seconds_bucket{le="0.0001"} 3
inference_extension_scheduler_e2e_duration_seconds_bucket{le="+Inf"} 4
inference_extension_scheduler_e2e_duration_seconds_sum 0.0012
inference_extension_scheduler_e2e_duration_seconds_count 4
# TYPE inference_extension_prefix_indexer_hit_ratio histogram
inference_extension_prefix_indexer_hit_ratio_bucket{le="0.5"} 2
inference_extension_prefix_indexer_hit_ratio_bucket{le="+Inf"} 4
inference_extension_prefix_indexer_hit_ratio_sum 2.5
inference_extension_prefix_indexer_hit_ratio_count 4
# TYPE inference_extension_prefix_indexer_hit_bytes histogram
inference_extension_prefix_indexer_hit_bytes_sum 640
inference_extension_prefix_indexer_hit_bytes_count 4
# TYPE inference_extension_prefix_indexer_size gauge
inference_extension_prefix_indexer_size 42
# TYPE inference_pool_average_queue_size gauge
inference_pool_average_queue_size{name="pool"} 1.5
inference_pool_average_kv_cache_utilization{name="pool"} 0.25
inference_pool_ready_pods{name="pool"} 8
# TYPE inference_objective_request_total counter
inference_objective_request_total{model_name="m",target_model_name="m"} 4
inference_objective_request_error_total{model_name="m",target_model_name="m",error_code="x"} 1
# TYPE llm_d_epp_prefix_indexer_hit_ratio histogram
llm_d_epp_prefix_indexer_hit_ratio_bucket{le="+Inf"} 2
llm_d_epp_prefix_indexer_hit_ratio_sum 1
llm_d_epp_prefix_indexer_hit_ratio_count 2
# TYPE go_goroutines gauge
go_goroutines 57
process_cpu_seconds_total 3.2
vllm:num_requests_waiting{model_name="m"} 2
vllm:e2e_request_latency_seconds_bucket{le="1"} 1
)";

std::map<std::string, double> by_name(const ScrapeResult& result) {
  std::map<std::string, double> values;
  for (const store::MetricSample& s : result.samples) values[s.name] = s.value;
  return values;
}

TEST(MetricsScraper, KeepsTheEndpointPickersSeriesWithoutBuckets) {
  LoopbackServer server([](httplib::Server& s, const std::atomic<bool>&) {
    s.Get("/metrics", [](const httplib::Request&, httplib::Response& r) {
      r.set_content(kEppText, "text/plain; version=0.0.4");
    });
  });
  const ScrapeResult result =
      scrape_metrics({server.base_url() + "/metrics"}, "after", 1.5, *silent_log());
  EXPECT_TRUE(result.errors.empty());
  const std::map<std::string, double> values = by_name(result);
  const std::map<std::string, double> expected = {
      {"inference_extension_scheduler_e2e_duration_seconds_sum", 0.0012},
      {"inference_extension_scheduler_e2e_duration_seconds_count", 4},
      {"inference_extension_prefix_indexer_hit_ratio_sum", 2.5},
      {"inference_extension_prefix_indexer_hit_ratio_count", 4},
      {"inference_extension_prefix_indexer_hit_bytes_sum", 640},
      {"inference_extension_prefix_indexer_hit_bytes_count", 4},
      {"inference_extension_prefix_indexer_size", 42},
      {"inference_pool_average_queue_size", 1.5},
      {"inference_pool_average_kv_cache_utilization", 0.25},
      {"inference_pool_ready_pods", 8},
      {"inference_objective_request_total", 4},
      {"inference_objective_request_error_total", 1},
      {"llm_d_epp_prefix_indexer_hit_ratio_sum", 1},
      {"llm_d_epp_prefix_indexer_hit_ratio_count", 2},
      {"vllm:num_requests_waiting", 2},
  };
  EXPECT_EQ(values, expected);  // no bucket, no Go runtime or process series
  for (const store::MetricSample& s : result.samples) {
    EXPECT_EQ(s.phase, "after");
    EXPECT_EQ(s.source, server.base_url() + "/metrics");
    EXPECT_DOUBLE_EQ(s.t_s, 1.5);
  }
}

TEST(MetricsScraper, LabelsAreKeptAsJson) {
  LoopbackServer server([](httplib::Server& s, const std::atomic<bool>&) {
    s.Get("/metrics", [](const httplib::Request&, httplib::Response& r) {
      r.set_content("inference_pool_ready_pods{name=\"pool-a\"} 3\n", "text/plain");
    });
  });
  const ScrapeResult result =
      scrape_metrics({server.base_url() + "/metrics"}, "before", 0, *silent_log());
  ASSERT_EQ(result.samples.size(), 1u);
  EXPECT_EQ(result.samples[0].labels_json, R"({"name":"pool-a"})");
}

}  // namespace
}  // namespace kvsweep::orchestrator

namespace kvsweep::orchestrator {
namespace {

// The waiting queues the over-capacity rule (d) sums (figures/cell_validity.h
// kWaitingQueueSeries) are kept from each engine: SGLang's beside vLLM's and Dynamo's
// frontend's, and SGLang's running batch that rule (b) reads beside them (kRunningSeries);
// SGLang's other series are not.
TEST(MetricsScraper, KeepsEveryEnginesWaitingQueue) {
  LoopbackServer server([](httplib::Server& s, const std::atomic<bool>&) {
    s.Get("/metrics", [](const httplib::Request&, httplib::Response& r) {
      r.set_content(
          "sglang:num_queue_reqs{model_name=\"m\"} 7\n"
          "sglang:num_running_reqs{model_name=\"m\"} 3\n"
          "sglang:cache_hit_rate{model_name=\"m\"} 0.5\n"
          "dynamo_frontend_queued_requests{model=\"m\"} 4\n"
          "vllm:num_requests_waiting{model_name=\"m\"} 2\n",
          "text/plain");
    });
  });
  const ScrapeResult result =
      scrape_metrics({server.base_url() + "/metrics"}, "during", 3, *silent_log());
  const std::map<std::string, double> expected = {{"sglang:num_queue_reqs", 7},
                                                  {"sglang:num_running_reqs", 3},
                                                  {"dynamo_frontend_queued_requests", 4},
                                                  {"vllm:num_requests_waiting", 2}};
  EXPECT_EQ(by_name(result), expected);
}

}  // namespace
}  // namespace kvsweep::orchestrator
