// llm-d's endpoint picker as the embedded fleet's strategy, over loopback HTTP: weights that
// make the prefix scorer dominant keep conversations together as prefix-hash does, and the
// queue scorer alone keeps the replicas' queues even, far closer to least-load than to random.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <fstream>
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

  // The mean spread (largest minus smallest) of the replicas' waiting queues, each replica's
  // vllm:num_requests_waiting read from its own /metrics every 10 ms while `clients` closed-loop
  // clients each send 8 requests; only samples taken while every client is still sending count
  // (the ramp-up and the drain have no queues to balance).
  static double waiting_spread(FleetOptions fleet_options, int clients) {
    Fleet fleet(std::move(fleet_options));
    fleet.start();
    std::atomic<int> sending{clients};
    std::atomic<bool> started{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < clients; ++t) {
      threads.emplace_back([&, t] {
        httplib::Client client(fleet.router_url());
        client.set_read_timeout(30);
        for (int i = 0; i < 8; ++i) {
          const json body{
              {"messages", json::array({json{{"role", "user"},
                                             {"content", "client " + std::to_string(t) +
                                                             " request " + std::to_string(i)}}})},
              {"max_tokens", 24},
              {"ignore_eos", true}};
          client.Post("/v1/chat/completions", body.dump(), "application/json");
          if (i == 1) started = true;
        }
        --sending;
      });
    }
    std::vector<std::unique_ptr<httplib::Client>> replicas;
    for (const auto& url : fleet.replica_urls()) {
      replicas.push_back(std::make_unique<httplib::Client>(url));
    }
    double spread_sum = 0;
    int samples = 0;
    while (sending.load() == clients) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (!started) continue;
      double lo = 1e18;
      double hi = -1;
      for (auto& replica : replicas) {
        const auto res = replica->Get("/metrics");
        if (!res) continue;
        const double waiting = gauge(res->body, "vllm:num_requests_waiting");
        if (waiting < 0) continue;
        lo = std::min(lo, waiting);
        hi = std::max(hi, waiting);
      }
      if (hi < 0) continue;
      spread_sum += hi - lo;
      ++samples;
    }
    for (auto& t : threads) t.join();
    EXPECT_GT(samples, 20) << "too few samples while every client was sending";
    return samples == 0 ? 0 : spread_sum / samples;
  }

  // The value of gauge `name` in a Prometheus text (its one series, labelled or not), -1 when
  // the text has none.
  static double gauge(const std::string& text, const std::string& name) {
    std::size_t at = 0;
    while (at < text.size()) {
      const std::size_t end = std::min(text.find('\n', at), text.size());
      const std::string_view line(text.data() + at, end - at);
      if (line.rfind(name, 0) == 0 && line.size() > name.size() &&
          (line[name.size()] == ' ' || line[name.size()] == '{')) {
        return std::stod(std::string(line.substr(line.rfind(' ') + 1)));
      }
      at = end + 1;
    }
    return -1;
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

// The queue scorer reads what the EPP reads: each server's waiting queue as last scraped
// (50 ms, --refresh-metrics-interval), which changes only at the engine's steps. With a queue on
// every replica (32 clients, 8 sequences in all) it keeps the queues far more even than random
// routing does, though not as tightly as least-load, which counts its own requests in flight at
// once (docs/sim.md, "Where the model departs": measured 0.04 / 5.2 / 11.6).
TEST_F(EppFleet, QueueScorerAloneKeepsQueuesEvenWhenEveryReplicaQueues) {
  const double least_load = waiting_spread(options("epp-queueing", "least-load"), 32);
  const double queue_only =
      waiting_spread(options("epp-queueing", "epp", epp("plugins:\n- type: queue-scorer\n")), 32);
  const double random = waiting_spread(options("epp-queueing", "random"), 32);
  std::printf(
      "mean spread of the waiting queues: least-load %.2f, epp queue-only %.2f, "
      "random %.2f\n",
      least_load, queue_only, random);
  EXPECT_LT(queue_only, 0.6 * random);
  EXPECT_LT(least_load, queue_only);
}

}  // namespace
}  // namespace kvsweep::sim
