// llm-d's endpoint picker as the embedded fleet's strategy, over loopback HTTP: weights that
// make the prefix scorer dominant keep conversations together as prefix-hash does, and the
// queue scorer alone spreads concurrent load as least-load does.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "sim/fleet.h"
#include "sim/router/epp_config.h"
#include "tests/sim/interleaved_hit_rate.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::sim {
namespace {

using nlohmann::json;

// Slow enough steps and few sequences a replica that concurrent requests queue: the waiting
// queue the EPP scrapes is the signal.
constexpr const char* kQueueingProfile = R"(name: epp-queueing
source: "test: 4 ms steps, 2 sequences a replica"
base_us: 4000
per_prefill_token_us: 1
per_decode_token_us: 10
max_num_seqs: 2
max_num_batched_tokens: 4096
num_gpu_blocks: 4096
max_model_len: 4096
)";

std::shared_ptr<const EppConfig> epp(const std::string& profile_plugins) {
  std::string error;
  auto config = parse_epp_config("epp.yaml",
                                 std::string("apiVersion: inference.networking.x-k8s.io/v1alpha1\n"
                                             "kind: EndpointPickerConfig\n") +
                                     profile_plugins,
                                 &error);
  EXPECT_NE(config, nullptr) << error;
  return config;
}

class EppFleet : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.file("hit-rate-test.yaml")) << testing::kHitRateProfile;
    std::ofstream(dir_.file("epp-queueing.yaml")) << kQueueingProfile;
  }

  FleetOptions options(const std::string& profile, const std::string& strategy,
                       std::shared_ptr<const EppConfig> config = nullptr) const {
    FleetOptions o;
    o.replicas = 4;
    o.profile = profile;
    o.profile_dirs = {dir_.path().string()};
    o.strategy = strategy;
    o.strategy_params.epp = std::move(config);
    o.seed = 5;
    return o;
  }

  // The fleet's prefix-cache hit rate over hit_rate_test.cc's interleaved conversations.
  static double hit_rate(const FleetOptions& fleet_options) {
    return testing::interleaved_hit_rate(fleet_options);
  }

  // Each replica's share of 8 clients' 24 requests each, every request distinct, 48 tokens out.
  std::vector<double> shares(FleetOptions fleet_options) {
    Fleet fleet(std::move(fleet_options));
    fleet.start();
    std::mutex mutex;
    std::map<int, int> served;
    std::vector<std::thread> clients;
    for (int t = 0; t < 8; ++t) {
      clients.emplace_back([&, t] {
        httplib::Client client(fleet.router_url());
        client.set_read_timeout(30);
        for (int i = 0; i < 24; ++i) {
          const json body{
              {"messages", json::array({json{{"role", "user"},
                                             {"content", "client " + std::to_string(t) +
                                                             " request " + std::to_string(i)}}})},
              {"max_tokens", 48},
              {"ignore_eos", true}};
          auto res = client.Post("/v1/chat/completions", body.dump(), "application/json");
          if (!res || res->status != 200) continue;
          std::lock_guard lock(mutex);
          ++served[std::stoi(res->get_header_value("x-kvsweep-replica"))];
        }
      });
    }
    for (auto& c : clients) c.join();
    std::vector<double> out;
    for (int r = 0; r < 4; ++r) out.push_back(served[r] / (8.0 * 24));
    return out;
  }

  ::kvsweep::testing::TempDir dir_;
};

TEST_F(EppFleet, PrefixDominantWeightsHitTheCacheAsPrefixHashDoes) {
  const double prefix_hash = hit_rate(options("hit-rate-test", "prefix-hash"));
  const double epp_prefix = hit_rate(options("hit-rate-test", "epp", epp(R"(plugins:
- type: prefix-cache-scorer
- type: queue-scorer
- type: kv-cache-utilization-scorer
schedulingProfiles:
- name: default
  plugins:
  - {pluginRef: prefix-cache-scorer, weight: 10}
  - {pluginRef: queue-scorer, weight: 1}
  - {pluginRef: kv-cache-utilization-scorer, weight: 1}
)")));
  const double random = hit_rate(options("hit-rate-test", "random"));
  std::printf("hit rate: random %.3f, prefix-hash %.3f, epp prefix-dominant %.3f\n", random,
              prefix_hash, epp_prefix);
  EXPECT_GT(prefix_hash, 0.85);
  EXPECT_GT(epp_prefix, 0.85);
  EXPECT_NEAR(epp_prefix, prefix_hash, 0.05);
  EXPECT_LT(random, 0.4);
}

TEST_F(EppFleet, QueueScorerAloneSpreadsLoadAsLeastLoadDoes) {
  const std::vector<double> least_load = shares(options("epp-queueing", "least-load"));
  const std::vector<double> queue_only =
      shares(options("epp-queueing", "epp", epp("plugins:\n- type: queue-scorer\n")));
  for (int r = 0; r < 4; ++r) {
    std::printf("replica %d: least-load %.3f, epp queue-only %.3f\n", r, least_load[r],
                queue_only[r]);
    EXPECT_NEAR(least_load[r], 0.25, 0.06) << r;
    EXPECT_NEAR(queue_only[r], 0.25, 0.06) << r;
  }
}

}  // namespace
}  // namespace kvsweep::sim
