// The embedded fleet's router with llm-d's endpoint picker as its strategy publishes the EPP's
// own series on /metrics, over loopback HTTP, with the figures its picks imply.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/prometheus_text.h"
#include "sim/fleet.h"
#include "sim/router/epp_config.h"
#include "sim/router/epp_scheduler.h"
#include "tests/sim/interleaved_hit_rate.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::sim {
namespace {

using nlohmann::json;

std::shared_ptr<const EppConfig> prefix_dominant() {
  std::string error;
  auto config = parse_epp_config("epp.yaml",
                                 "apiVersion: inference.networking.x-k8s.io/v1alpha1\n"
                                 "kind: EndpointPickerConfig\n"
                                 "plugins:\n- type: prefix-cache-scorer\n- type: queue-scorer\n"
                                 "schedulingProfiles:\n- name: default\n  plugins:\n"
                                 "  - {pluginRef: prefix-cache-scorer, weight: 10}\n"
                                 "  - {pluginRef: queue-scorer, weight: 1}\n",
                                 &error);
  EXPECT_NE(config, nullptr) << error;
  return config;
}

double value(const std::string& text, const std::string& name) {
  return sum_metric(parse_prometheus_text(text), name).value_or(-1);
}

class EppRouterFleet : public ::testing::Test {
 protected:
  FleetOptions options(const std::string& strategy) const {
    std::ofstream(dir_.file("hit-rate-test.yaml")) << testing::kHitRateProfile;
    FleetOptions o;
    o.replicas = 4;
    o.profile = "hit-rate-test";
    o.profile_dirs = {dir_.path().string()};
    o.strategy = strategy;
    if (strategy == "epp") o.strategy_params.epp = prefix_dominant();
    o.seed = 5;
    return o;
  }
  ::kvsweep::testing::TempDir dir_;
};

// 6 conversations, each prompt sent twice one after the other: the first send of each matches
// nothing (their first blocks differ), the second matches every block on the replica the first
// went to, which the dominant prefix scorer picks again. Mean hit ratio 6 / 12 = 0.5.
TEST_F(EppRouterFleet, MetricsCarryTheEppSeriesAfterPicks) {
  Fleet fleet(options("epp"));
  fleet.start();
  httplib::Client client(fleet.router_url());
  client.set_read_timeout(30);
  double blocks = 0;
  for (int c = 0; c < 6; ++c) {
    const std::string content = testing::conversation_prefix(c);
    std::string epp_text;
    append_epp_chat_message(&epp_text, "user", content);
    blocks += static_cast<double>(epp_prefix_hashes({}, epp_text, 64, 256).size());
    const json body{{"messages", json::array({json{{"role", "user"}, {"content", content}}})},
                    {"max_tokens", 4}};
    for (int send = 0; send < 2; ++send) {
      const auto res = client.Post("/v1/chat/completions", body.dump(), "application/json");
      ASSERT_TRUE(res) << httplib::to_string(res.error());
      ASSERT_EQ(res->status, 200) << res->body;
    }
  }
  const auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  const std::string& text = metrics->body;
  EXPECT_DOUBLE_EQ(value(text, "inference_extension_prefix_indexer_hit_ratio_count"), 12) << text;
  EXPECT_DOUBLE_EQ(value(text, "inference_extension_prefix_indexer_hit_ratio_sum"), 6) << text;
  EXPECT_DOUBLE_EQ(value(text, "inference_extension_prefix_indexer_hit_bytes_sum"), blocks * 64);
  EXPECT_DOUBLE_EQ(value(text, "inference_extension_prefix_indexer_size"), blocks);
  EXPECT_DOUBLE_EQ(value(text, "inference_extension_scheduler_e2e_duration_seconds_count"), 12);
  const double decision_s = value(text, "inference_extension_scheduler_e2e_duration_seconds_sum");
  EXPECT_GT(decision_s, 0);
  // The same decisions as the router's own histogram counts them.
  EXPECT_DOUBLE_EQ(decision_s, value(text, "kvsweep_router_decision_seconds_sum"));
  std::printf("epp series: %g lookups, mean hit ratio %g, index %g entries, mean decision %g s\n",
              value(text, "inference_extension_prefix_indexer_hit_ratio_count"),
              value(text, "inference_extension_prefix_indexer_hit_ratio_sum") / 12,
              value(text, "inference_extension_prefix_indexer_size"), decision_s / 12);
}

TEST_F(EppRouterFleet, OtherStrategiesPublishNoEppSeries) {
  Fleet fleet(options("prefix-hash"));
  fleet.start();
  httplib::Client client(fleet.router_url());
  const auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->body.find("inference_extension_"), std::string::npos);
}

}  // namespace
}  // namespace kvsweep::sim
