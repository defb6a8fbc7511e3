// Tests for sim/metrics_exposition.cc: vLLM metric names and the router's counters.
#include "sim/metrics_exposition.h"

#include <gtest/gtest.h>

#include "common/prometheus_text.h"

namespace kvsweep::sim {
namespace {

TEST(MetricsExposition, ReplicaUsesVllmNamesWithModelLabel) {
  EngineMetrics m;
  m.prefix_cache_queries = 100;
  m.prefix_cache_hits = 40;
  m.kv_cache_usage = 0.25;
  m.num_running = 3;
  m.num_waiting = 1;
  m.num_preemptions = 2;
  m.prompt_tokens_total = 100;
  m.generation_tokens_total = 7;
  m.requests_finished = 5;
  const std::string text = replica_metrics_text("m", m);
  EXPECT_NE(text.find("# TYPE vllm:prefix_cache_queries_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE vllm:kv_cache_usage_perc gauge\n"), std::string::npos);
  EXPECT_NE(text.find("vllm:prefix_cache_hits_total{model_name=\"m\"} 40\n"), std::string::npos);
  const auto samples = parse_prometheus_text(text);
  EXPECT_EQ(sum_metric(samples, "vllm:prefix_cache_queries_total"), 100);
  EXPECT_EQ(sum_metric(samples, "vllm:prompt_tokens_total"), 100);
  EXPECT_EQ(sum_metric(samples, "vllm:generation_tokens_total"), 7);
  EXPECT_EQ(sum_metric(samples, "vllm:num_preemptions_total"), 2);
  EXPECT_EQ(sum_metric(samples, "vllm:request_success_total"), 5);
  EXPECT_EQ(sum_metric(samples, "vllm:kv_cache_usage_perc"), 0.25);
  EXPECT_EQ(sum_metric(samples, "vllm:num_requests_running"), 3);
  EXPECT_EQ(sum_metric(samples, "vllm:num_requests_waiting"), 1);
  for (const auto& sample : samples) EXPECT_EQ(sample.labels.at("model_name"), "m");
}

TEST(MetricsExposition, ReplicaReportsSimulatedStepTimeAndItsCpuCost) {
  EngineMetrics m;
  m.steps_total = 12;
  m.step_seconds_total = 0.5;
  m.scheduler_cpu_seconds_total = 0.001;
  const auto samples = parse_prometheus_text(replica_metrics_text("m", m));
  EXPECT_EQ(sum_metric(samples, "kvsweep_engine_steps_total"), 12);
  EXPECT_EQ(sum_metric(samples, "kvsweep_engine_step_seconds_total"), 0.5);
  EXPECT_EQ(sum_metric(samples, "kvsweep_engine_scheduler_cpu_seconds_total"), 0.001);
}

TEST(MetricsExposition, RouterCountsDecisionsPerStrategyAndInFlight) {
  const std::map<std::string, std::vector<std::uint64_t>> decisions{
      {"prefix-hash", {1, 2}}, {"round-robin", {3, 3}}};
  const std::vector<int> in_flight{0, 4};
  const std::string text = router_metrics_text(decisions, in_flight);
  EXPECT_NE(text.find("kvsweep_router_decisions_total{replica=\"1\",strategy=\"prefix-hash\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("kvsweep_router_in_flight{replica=\"1\"} 4\n"), std::string::npos);
  EXPECT_EQ(sum_metric(parse_prometheus_text(text), "kvsweep_router_decisions_total"), 9);
}

TEST(MetricsExposition, RouterDecisionTimeIsAHistogramInSeconds) {
  Histogram decisions({1e-6, 1e-5});
  decisions.observe(5e-7);
  decisions.observe(3e-6);
  const std::string text =
      router_metrics_text({}, std::vector<int>{0}, RouterStats{nullptr, 0, &decisions});
  EXPECT_NE(text.find("# TYPE kvsweep_router_decision_seconds histogram\n"), std::string::npos);
  EXPECT_NE(text.find("kvsweep_router_decision_seconds_bucket{le=\"1e-06\"} 1\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("kvsweep_router_decision_seconds_bucket{le=\"1e-05\"} 2\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("kvsweep_router_decision_seconds_count 2\n"), std::string::npos);
  // Without the histogram (a router that does not time itself) the family is left out.
  EXPECT_EQ(router_metrics_text({}, std::vector<int>{0}).find("decision_seconds"),
            std::string::npos);
}

}  // namespace
}  // namespace kvsweep::sim
