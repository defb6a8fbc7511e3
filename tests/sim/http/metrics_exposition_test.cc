// Tests for sim/http/metrics_exposition.cc: vLLM metric names, Prometheus histograms.
#include "sim/http/metrics_exposition.h"

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

// vLLM's info gauge of the KV pool: what `kvsweep calibrate` reads the servers' pool size from.
TEST(MetricsExposition, ReplicaShowsItsKvPoolAsVllmsCacheConfigInfo) {
  EngineMetrics m;
  EXPECT_EQ(replica_metrics_text("m", m).find("cache_config_info"), std::string::npos)
      << "no pool, no gauge";
  m.num_gpu_blocks = 11046;
  m.block_size = 16;
  m.enable_prefix_caching = true;
  const std::string text = replica_metrics_text("m", m);
  EXPECT_NE(text.find("# TYPE vllm:cache_config_info gauge\n"), std::string::npos) << text;
  const auto samples = parse_prometheus_text(text);
  bool found = false;
  for (const auto& sample : samples) {
    if (sample.name != "vllm:cache_config_info") continue;
    found = true;
    EXPECT_EQ(sample.value, 1);
    EXPECT_EQ(sample.labels.at("num_gpu_blocks"), "11046");
    EXPECT_EQ(sample.labels.at("block_size"), "16");
    EXPECT_EQ(sample.labels.at("enable_prefix_caching"), "True");
  }
  EXPECT_TRUE(found) << text;
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

}  // namespace
}  // namespace kvsweep::sim
