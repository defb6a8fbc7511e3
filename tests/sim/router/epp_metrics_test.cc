// Tests for sim/router/epp_metrics.cc: the EPP's own series, from EppStrategy's own lookups.
#include "sim/router/epp_metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/prometheus_text.h"
#include "sim/router/epp_scheduler.h"

namespace kvsweep::sim {
namespace {

// One series' value in the text, -1 when it is missing.
double value(const std::string& text, const std::string& name) {
  return sum_metric(parse_prometheus_text(text), name).value_or(-1);
}

std::shared_ptr<const EppConfig> prefix_only(int lru_capacity) {
  std::string error;
  auto config = parse_epp_config(
      "epp.yaml",
      "apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\n"
      "plugins:\n- type: prefix-cache-scorer\n  parameters: {lruCapacityPerServer: " +
          std::to_string(lru_capacity) + "}\n",
      &error);
  EXPECT_NE(config, nullptr) << error;
  return config;
}

// A config with the queue scorer alone: no prefix index.
std::shared_ptr<const EppConfig> queue_only() {
  std::string error;
  auto config = parse_epp_config(
      "epp.yaml",
      "apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\n"
      "plugins:\n- type: queue-scorer\n",
      &error);
  EXPECT_NE(config, nullptr) << error;
  return config;
}

// With the prefix scorer alone at weight 1, the strategy's total for the chosen replica is its
// prefix score: matched blocks / request blocks, the figure the EPP's hit ratio observes. Over
// picks with shared prefixes, repeats and LRU evictions (4 entries a replica), the published
// ratio must be exactly the strategy's scores.
TEST(EppRouterMetrics, HitRatioIsTheStrategysOwnPrefixMatch) {
  const auto config = prefix_only(4);
  EppStrategy strategy(config, 3, 7);
  EppMetrics metrics;
  const std::vector<int> in_flight(3, 0);
  const std::string stem(64 * 2, 's');  // two blocks every prompt shares
  double scores = 0;
  int lookups = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string text = (i % 3 == 0 ? stem : std::string()) + "conversation " +
                             std::to_string(i % 5) + std::string(64 * (1 + i % 4), 'x');
    RouteQuery query;
    query.in_flight = in_flight;
    query.prompt_text = text;
    const int chosen = strategy.pick(query);
    metrics.observe(1e-5, strategy.last_prefix_lookups());
    scores += strategy.last_totals()[static_cast<std::size_t>(chosen)];
    ++lookups;
  }
  const std::string samples = metrics.text(strategy.prefix_index_entries());
  EXPECT_DOUBLE_EQ(value(samples, "inference_extension_prefix_indexer_hit_ratio_count"), lookups);
  EXPECT_NEAR(value(samples, "inference_extension_prefix_indexer_hit_ratio_sum"), scores,
              1e-4);       // the text prints 6 significant digits
  EXPECT_GT(scores, 1.0);  // repeats did match
  EXPECT_LT(scores, lookups);
  EXPECT_DOUBLE_EQ(value(samples, "inference_extension_scheduler_e2e_duration_seconds_count"),
                   lookups);
  // At most 4 entries on each of 3 replicas.
  const double size = value(samples, "inference_extension_prefix_indexer_size");
  EXPECT_GT(size, 0);
  EXPECT_LE(size, 12);
}

// The lookup is what the chosen replica held before the request was recorded there: a prompt
// sent twice matches none of its blocks the first time and all of them the second.
TEST(EppRouterMetrics, ALookupIsTheChosenReplicasMatchBeforeTheRequestIsRecorded) {
  const auto config = prefix_only(100);
  EppStrategy strategy(config, 2, 3);
  EppMetrics metrics;
  const std::vector<int> in_flight(2, 0);
  const std::string text(64 * 3, 'a');
  RouteQuery query;
  query.in_flight = in_flight;
  query.prompt_text = text;
  const int first = strategy.pick(query);
  ASSERT_EQ(strategy.last_prefix_lookups().size(), 1U);
  EXPECT_EQ(strategy.last_prefix_lookups()[0].matched_blocks, 0);
  EXPECT_EQ(strategy.last_prefix_lookups()[0].request_blocks, 3);
  EXPECT_EQ(strategy.last_prefix_lookups()[0].block_chars, 64);
  metrics.observe(2e-5, strategy.last_prefix_lookups());
  EXPECT_EQ(strategy.pick(query), first);  // its blocks are there: score 1 against 0
  EXPECT_EQ(strategy.last_prefix_lookups()[0].matched_blocks, 3);
  metrics.observe(2e-5, strategy.last_prefix_lookups());
  const std::string samples = metrics.text(strategy.prefix_index_entries());
  EXPECT_DOUBLE_EQ(value(samples, "inference_extension_prefix_indexer_hit_ratio_count"), 2);
  EXPECT_DOUBLE_EQ(value(samples, "inference_extension_prefix_indexer_hit_ratio_sum"), 1);
  EXPECT_DOUBLE_EQ(value(samples, "inference_extension_prefix_indexer_hit_bytes_sum"), 192);
  EXPECT_DOUBLE_EQ(value(samples, "inference_extension_prefix_indexer_size"), 3);
  // A picker built afresh (a cold cell) has an empty index.
  EXPECT_EQ(EppStrategy(config, 2, 3).prefix_index_entries(), 0U);
}

// A picker without a prefix scorer looks nothing up: the scheduling latency counts, the prefix
// families stay at 0 (but are there, for a cell's "before" scrape).
TEST(EppRouterMetrics, APickerWithoutAPrefixScorerPublishesZeroes) {
  EppStrategy strategy(queue_only(), 2, 3);
  EppMetrics metrics;
  const std::vector<int> in_flight(2, 0);
  const std::vector<ServerLoad> loads(2);
  RouteQuery query;
  query.in_flight = in_flight;
  query.server_loads = loads;
  strategy.pick(query);
  EXPECT_TRUE(strategy.last_prefix_lookups().empty());
  metrics.observe(1e-5, strategy.last_prefix_lookups());
  const std::string samples = metrics.text(strategy.prefix_index_entries());
  EXPECT_DOUBLE_EQ(value(samples, "inference_extension_scheduler_e2e_duration_seconds_count"), 1);
  EXPECT_DOUBLE_EQ(value(samples, "inference_extension_prefix_indexer_hit_ratio_count"), 0);
  EXPECT_DOUBLE_EQ(value(samples, "inference_extension_prefix_indexer_size"), 0);
}

}  // namespace
}  // namespace kvsweep::sim
