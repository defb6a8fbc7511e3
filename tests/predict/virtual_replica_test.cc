// Tests predict/virtual_replica.cc: steps end at their modelled time, counters as the engine's.
#include "predict/virtual_replica.h"

#include <gtest/gtest.h>

namespace kvsweep::predict {
namespace {

sim::TimingProfile tiny_profile() {
  sim::TimingProfile p;
  p.name = "tiny";
  p.base_us = 1000;
  p.per_prefill_token_us = 10;
  p.per_decode_token_us = 100;
  p.max_num_seqs = 4;
  p.max_num_batched_tokens = 64;
  p.num_gpu_blocks = 32;
  p.block_size = 16;
  return p;
}

std::vector<sim::TokenId> tokens(int count) {
  std::vector<sim::TokenId> t;
  for (int i = 0; i < count; ++i) t.push_back(static_cast<sim::TokenId>(i + 1));
  return t;
}

TEST(VirtualReplica, StepsEndAtTheirModelledDuration) {
  VirtualReplica replica(tiny_profile(), 1);
  replica.add(replica.take_request_id(), tokens(40), 3, true, 0.5);
  // Prefill of 40 tokens: 1000 + 10 * 40 us; then two decode steps of 1000 + 100 us.
  const auto end1 = replica.start_step(0.5);
  ASSERT_TRUE(end1);
  EXPECT_DOUBLE_EQ(*end1, 0.5 + 1400e-6);
  EXPECT_FALSE(replica.start_step(0.5));  // one step at a time
  auto results = replica.finish_step(*end1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].new_tokens, 1);
  const auto end2 = replica.start_step(*end1);
  EXPECT_DOUBLE_EQ(*end2, *end1 + 1100e-6);
  replica.finish_step(*end2);
  const auto end3 = replica.start_step(*end2);
  results = replica.finish_step(*end3);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].finished);
  EXPECT_FALSE(replica.start_step(*end3));
  EXPECT_TRUE(replica.idle());

  const ReplicaCounters c = replica.counters();
  EXPECT_EQ(c.prompt_tokens_total, 40u);
  EXPECT_EQ(c.generation_tokens_total, 3u);
  EXPECT_EQ(c.requests_finished, 1u);
  EXPECT_EQ(c.prefix_cache_queries, 40u);
  EXPECT_EQ(c.ttft.count, 1u);
  EXPECT_NEAR(c.ttft.sum_s, 1400e-6, 1e-12);
  EXPECT_EQ(c.itl.count, 2u);
  EXPECT_NEAR(c.itl.sum_s, 2200e-6, 1e-12);
  EXPECT_EQ(c.e2e.count, 1u);
  EXPECT_NEAR(c.e2e.sum_s, 3600e-6, 1e-12);
}

TEST(VirtualReplica, RequestIdsRunOnAcrossARestartWhichZeroesTheCounters) {
  VirtualReplica replica(tiny_profile(), 1);
  EXPECT_EQ(replica.take_request_id(), 1u);
  replica.add(2, tokens(20), 1, true, 0);
  const auto end = replica.start_step(0);
  replica.finish_step(*end);
  EXPECT_EQ(replica.counters().requests_finished, 1u);
  replica.restart();
  EXPECT_EQ(replica.take_request_id(), 2u);
  EXPECT_EQ(replica.counters().requests_finished, 0u);
  EXPECT_EQ(replica.counters().prefix_cache_queries, 0u);
}

TEST(VirtualReplica, CancelledRequestsPartOfAStepIsDropped) {
  VirtualReplica replica(tiny_profile(), 1);
  replica.add(1, tokens(20), 5, true, 0);
  const auto end = replica.start_step(0);
  EXPECT_TRUE(replica.cancel(1));
  EXPECT_TRUE(replica.finish_step(*end).empty());
  EXPECT_FALSE(replica.start_step(*end));
  EXPECT_EQ(replica.counters().kv_cache_usage, 0);
}

TEST(VirtualReplica, TurningPrefixCachingOffResetsTheCacheAndStopsCounting) {
  VirtualReplica replica(tiny_profile(), 1);
  replica.add(1, tokens(40), 1, true, 0);
  replica.finish_step(*replica.start_step(0));
  replica.set_prefix_caching(false);
  EXPECT_FALSE(replica.prefix_caching());
  replica.add(2, tokens(40), 1, true, 1);
  replica.finish_step(*replica.start_step(1));
  EXPECT_EQ(replica.counters().prefix_cache_queries, 40u);  // the second lookup is not counted
  EXPECT_EQ(replica.counters().prefix_cache_hits, 0u);
}

}  // namespace
}  // namespace kvsweep::predict
