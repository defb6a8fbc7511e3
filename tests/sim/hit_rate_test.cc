// The issue's cache-behaviour check: 4 replicas, a workload whose ideal hit rate is near 100 %;
// random routing must land near 25-35 %, prefix-hash and kv-aware above 85 %, all measured from
// the replicas' /metrics counters over loopback HTTP.
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "sim/fleet.h"
#include "tests/sim/fleet_client.h"

namespace kvsweep::sim {
namespace {

using nlohmann::json;

// 128 conversations, each a 1,024-character (256-token, 16-block) unique prefix re-sent on 16
// turns with a short question appended: ideal hit rate 15/16 of the prefix share, about 91 %.
// Each replica's KV holds 640 blocks (40 prefixes): a quarter of the conversations fit on each
// when routing keeps them apart, while random routing makes every replica see all 128.
constexpr int kConversations = 128;
constexpr int kTurns = 16;
constexpr int kPrefixChars = 1024;

// Fast steps so the check takes seconds; the numbers are not a GPU's, the cache is the point.
constexpr const char* kProfile = R"(name: hit-rate-test
source: "test: fast steps, KV for 40 prefixes of 16 blocks"
base_us: 50
per_prefill_token_us: 0.1
per_decode_token_us: 1
max_num_seqs: 64
max_num_batched_tokens: 4096
num_gpu_blocks: 640
max_model_len: 4096
)";

std::string prefix_of(int conversation) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(conversation) + 1000);
  std::string text = "conversation " + std::to_string(conversation) + ": ";
  static constexpr const char* kWords[] = {"alpha ", "beta ",  "gamma ", "delta ",
                                           "kappa ", "omega ", "sigma ", "theta "};
  while (text.size() < kPrefixChars) text += kWords[rng() % 8];
  return text.substr(0, kPrefixChars);
}

double hit_rate(const std::string& strategy, const std::string& profile_dir) {
  FleetOptions options;
  options.replicas = 4;
  options.profile = "hit-rate-test";
  options.profile_dirs = {profile_dir};
  options.strategy = strategy;
  options.seed = 5;
  Fleet fleet(options);
  fleet.start();
  httplib::Client client(fleet.router_url());
  client.set_read_timeout(20);
  // A seeded interleaving of the conversations; turns of one conversation stay in order.
  std::vector<int> next_turn(kConversations, 0);
  std::vector<int> open(kConversations);
  for (int c = 0; c < kConversations; ++c) open[c] = c;
  std::mt19937_64 rng(42);
  while (!open.empty()) {
    const std::size_t pick = rng() % open.size();
    const int c = open[pick];
    const int turn = next_turn[c]++;
    if (next_turn[c] == kTurns) {
      open[pick] = open.back();
      open.pop_back();
    }
    const json body{
        {"messages",
         json::array({json{{"role", "user"},
                           {"content", prefix_of(c) + " question " + std::to_string(turn)}}})},
        {"max_tokens", 1},
        {"ignore_eos", true}};
    auto res = client.Post("/v1/chat/completions", body.dump(), "application/json");
    if (!res || res->status != 200) {
      ADD_FAILURE() << strategy << ": request failed";
      return -1;
    }
  }
  double hits = 0;
  double queries = 0;
  for (const std::string& url : fleet.replica_urls()) {
    hits += testing::metric_sum(url, "vllm:prefix_cache_hits_total");
    queries += testing::metric_sum(url, "vllm:prefix_cache_queries_total");
  }
  return hits / queries;
}

class HitRate : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kvsweep_hit_rate_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::ofstream(dir_ + "/hit-rate-test.yaml") << kProfile;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(HitRate, RandomIsNearAQuarterPrefixAwareIsAboveEightyFivePercent) {
  const double random = hit_rate("random", dir_);
  const double prefix_hash = hit_rate("prefix-hash", dir_);
  const double kv_aware = hit_rate("kv-aware", dir_);
  RecordProperty("random", std::to_string(random));
  RecordProperty("prefix_hash", std::to_string(prefix_hash));
  RecordProperty("kv_aware", std::to_string(kv_aware));
  std::printf("hit rate: random %.3f, prefix-hash %.3f, kv-aware %.3f\n", random, prefix_hash,
              kv_aware);
  EXPECT_GE(random, 0.25);
  EXPECT_LE(random, 0.35);
  EXPECT_GT(prefix_hash, 0.85);
  EXPECT_GT(kv_aware, 0.85);
}

}  // namespace
}  // namespace kvsweep::sim
