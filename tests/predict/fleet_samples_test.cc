// Tests predict/fleet_samples.cc: a predicted scrape stores what scraping the real-time
// replica's /metrics text would, series for series.
#include "predict/fleet_samples.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "common/prometheus_text.h"
#include "sim/http/latency_histogram.h"
#include "sim/http/metrics_exposition.h"
#include "sim/router/epp_config.h"
#include "sim/router/epp_metrics.h"
#include "sim/router/epp_scheduler.h"

namespace kvsweep::predict {
namespace {

// What orchestrator/sweep/metrics_scraper.cc keeps of a /metrics text.
std::vector<store::MetricSample> scraped(const std::string& text, const std::string& source) {
  std::vector<store::MetricSample> out;
  for (auto& s : parse_prometheus_text(text)) {
    const bool bucket = s.name.size() > 7 && s.name.compare(s.name.size() - 7, 7, "_bucket") == 0;
    if (s.name.rfind("vllm:", 0) != 0 || bucket) continue;
    store::MetricSample row;
    row.phase = "during";
    row.source = source;
    row.name = s.name;
    row.labels_json = nlohmann::json(s.labels).dump();
    row.value = s.value;
    row.t_s = 2.5;
    out.push_back(std::move(row));
  }
  return out;
}

TEST(FleetSamples, SameSeriesLabelsAndValuesAsTheRealTimeReplicasMetricsText) {
  // Awkward values: the text prints 6 significant digits, and so must the prediction.
  ReplicaCounters c;
  c.prefix_cache_queries = 123456789;
  c.prefix_cache_hits = 98765432;
  c.kv_cache_usage = 0.123456789;
  c.num_running = 7;
  c.num_waiting = 3;
  c.num_preemptions = 2;
  c.prompt_tokens_total = 4242424;
  c.generation_tokens_total = 1717171;
  c.requests_finished = 1000;
  c.requests_stopped = 12;
  c.num_gpu_blocks = 11046;
  c.block_size = 16;
  c.enable_prefix_caching = false;
  sim::LatencyHistograms h;
  for (double v : {0.0123456789, 1.87654321, 3.3333333}) {
    h.ttft_s.observe(v);
    c.ttft.observe(v);
  }
  for (double v : {0.0011111, 0.0022222}) {
    h.itl_s.observe(v);
    c.itl.observe(v);
  }
  h.e2e_s.observe(12.3456789);
  c.e2e.observe(12.3456789);

  sim::EngineMetrics m;
  m.prefix_cache_queries = c.prefix_cache_queries;
  m.prefix_cache_hits = c.prefix_cache_hits;
  m.kv_cache_usage = c.kv_cache_usage;
  m.num_running = c.num_running;
  m.num_waiting = c.num_waiting;
  m.num_preemptions = c.num_preemptions;
  m.prompt_tokens_total = c.prompt_tokens_total;
  m.generation_tokens_total = c.generation_tokens_total;
  m.requests_finished = c.requests_finished;
  m.requests_stopped = c.requests_stopped;
  m.num_gpu_blocks = c.num_gpu_blocks;
  m.block_size = c.block_size;
  m.enable_prefix_caching = c.enable_prefix_caching;
  const auto expected = scraped(sim::replica_metrics_text("sim-model", m, &h), "s");

  std::vector<store::MetricSample> got;
  append_replica_samples(c, "sim-model", "s", "during", 2.5, got);
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(expected[i].name + " " + expected[i].labels_json);
    EXPECT_EQ(got[i].name, expected[i].name);
    EXPECT_EQ(got[i].labels_json, expected[i].labels_json);
    EXPECT_EQ(got[i].value, expected[i].value);  // exactly: the same digits were parsed
    EXPECT_EQ(got[i].phase, "during");
    EXPECT_EQ(got[i].t_s, 2.5);
  }
}

TEST(FleetSamples, OneSourcePerReplicaInIndexOrder) {
  VirtualFleetOptions options;
  options.replicas = 3;
  options.profile.num_gpu_blocks = 64;
  VirtualFleet fleet(options);
  const auto samples = fleet_samples(fleet, "before", 0);
  ASSERT_FALSE(samples.empty());
  EXPECT_EQ(samples.front().source, "predict://replica-0/metrics");
  EXPECT_EQ(samples.back().source, "predict://replica-2/metrics");
  EXPECT_EQ(samples.size() % 3, 0u);
}

// While the strategy is epp, a predicted scrape also stores the picker's prefix-indexer series
// as the real-time router's /metrics text has them (sim/router/epp_metrics.cc), from the same
// lookups: a prompt, the same again, one sharing its first block, one too short for a block.
// One replica, so that no tie-break can make the two pick differently.
TEST(FleetSamples, TheEppPrefixSeriesAreTheRealTimeRoutersOwn) {
  std::string error;
  const auto config = sim::parse_epp_config(
      "epp.yaml",
      "apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\n"
      "plugins:\n- type: prefix-cache-scorer\n",
      &error);
  ASSERT_NE(config, nullptr) << error;
  VirtualFleetOptions options;
  options.replicas = 1;
  options.profile.num_gpu_blocks = 64;
  options.strategy = "epp";
  options.params.epp = config;
  VirtualFleet fleet(options);
  sim::EppStrategy strategy(config, 1, 1);
  sim::EppMetrics metrics;
  const std::vector<int> in_flight(1, 0);
  const std::vector<std::string> prompts = {std::string(200, 'a'), std::string(200, 'a'),
                                            std::string(64, 'a') + std::string(150, 'b'), "short"};
  for (const std::string& text : prompts) {
    fleet.router().pick(sim::RouteRequest{{}, {}, {}, text}, {});
    fleet.note_routed({}, 0);
    sim::RouteQuery query;
    query.in_flight = in_flight;
    query.prompt_text = text;
    strategy.pick(query);
    metrics.observe(1e-5, strategy.last_prefix_lookups());
  }
  std::map<std::string, double> real;
  for (const auto& s : parse_prometheus_text(metrics.text(strategy.prefix_index_entries()))) {
    if (s.name.rfind("inference_extension_prefix_indexer_", 0) != 0) continue;
    if (s.name.find("_bucket") != std::string::npos) continue;
    real[s.name] = s.value;
  }
  std::map<std::string, double> predicted;
  for (const auto& s : fleet_samples(fleet, "after", 1)) {
    if (s.source != router_source()) continue;
    EXPECT_EQ(s.labels_json, "{}");
    predicted[s.name] = s.value;
  }
  EXPECT_EQ(predicted, real);
  // 3 + 3 + 3 + 0 blocks looked up, with 0, 3 and 1 matched.
  EXPECT_DOUBLE_EQ(predicted["inference_extension_prefix_indexer_hit_ratio_count"], 3);
  EXPECT_NEAR(predicted["inference_extension_prefix_indexer_hit_ratio_sum"], 1 + 1.0 / 3, 1e-5);
  EXPECT_DOUBLE_EQ(predicted["inference_extension_prefix_indexer_hit_bytes_sum"], 4 * 64);
  EXPECT_DOUBLE_EQ(predicted["inference_extension_prefix_indexer_size"], 5);
  // Another strategy publishes none of them.
  ASSERT_TRUE(fleet.set_strategy("round-robin", options.params));
  for (const auto& s : fleet_samples(fleet, "after", 2)) EXPECT_NE(s.source, router_source());
}

}  // namespace
}  // namespace kvsweep::predict
