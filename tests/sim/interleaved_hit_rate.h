// The cache-behaviour workload of hit_rate_test.cc and epp_fleet_test.cc: many conversations,
// each a long unique prefix re-sent on every turn, interleaved one request at a time through the
// fleet's router; the fleet's prefix-cache hit rate read from the replicas' /metrics counters.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "sim/fleet.h"
#include "tests/sim/fleet_client.h"

namespace kvsweep::sim::testing {

// 128 conversations, each a 1,024-character (256-token, 16-block) unique prefix re-sent on 16
// turns with a short question appended: ideal hit rate 15/16 of the prefix share, about 91 %.
// Each replica's KV holds 640 blocks (40 prefixes): a quarter of the conversations fit on each
// when routing keeps them apart, while random routing makes every replica see all 128.
constexpr int kHitRateConversations = 128;
constexpr int kHitRateTurns = 16;
constexpr std::size_t kHitRatePrefixChars = 1024;

// Fast steps so the check takes seconds; the numbers are not a GPU's, the cache is the point.
// Written as `hit-rate-test.yaml` into a profile directory.
constexpr const char* kHitRateProfile = R"(name: hit-rate-test
source: "test: fast steps, KV for 40 prefixes of 16 blocks"
base_us: 50
per_prefill_token_us: 0.1
per_decode_token_us: 1
max_num_seqs: 64
max_num_batched_tokens: 4096
num_gpu_blocks: 640
max_model_len: 4096
)";

inline std::string conversation_prefix(int conversation) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(conversation) + 1000);
  std::string text = "conversation " + std::to_string(conversation) + ": ";
  static constexpr const char* kWords[] = {"alpha ", "beta ",  "gamma ", "delta ",
                                           "kappa ", "omega ", "sigma ", "theta "};
  while (text.size() < kHitRatePrefixChars) text += kWords[rng() % 8];
  return text.substr(0, kHitRatePrefixChars);
}

// Runs the workload on a fleet made of `options`; -1 (and a test failure) when a request fails.
inline double interleaved_hit_rate(const FleetOptions& options) {
  Fleet fleet(options);
  fleet.start();
  httplib::Client client(fleet.router_url());
  client.set_read_timeout(20);
  // A seeded interleaving of the conversations; turns of one conversation stay in order.
  std::vector<int> next_turn(kHitRateConversations, 0);
  std::vector<int> open(kHitRateConversations);
  for (int c = 0; c < kHitRateConversations; ++c) open[c] = c;
  std::mt19937_64 rng(42);
  while (!open.empty()) {
    const std::size_t pick = rng() % open.size();
    const int c = open[pick];
    const int turn = next_turn[c]++;
    if (next_turn[c] == kHitRateTurns) {
      open[pick] = open.back();
      open.pop_back();
    }
    const nlohmann::json body{
        {"messages",
         nlohmann::json::array({nlohmann::json{
             {"role", "user"},
             {"content", conversation_prefix(c) + " question " + std::to_string(turn)}}})},
        {"max_tokens", 1},
        {"ignore_eos", true}};
    auto res = client.Post("/v1/chat/completions", body.dump(), "application/json");
    if (!res || res->status != 200) {
      ADD_FAILURE() << options.strategy << ": request failed";
      return -1;
    }
  }
  double hits = 0;
  double queries = 0;
  for (const std::string& url : fleet.replica_urls()) {
    hits += metric_sum(url, "vllm:prefix_cache_hits_total");
    queries += metric_sum(url, "vllm:prefix_cache_queries_total");
  }
  return hits / queries;
}

}  // namespace kvsweep::sim::testing
