// Tests for predict/routing_opportunity.cc against a real KvIndex fed the engine's KV events:
// a request hits what its replica holds, routing loses what another replica holds, eviction
// loses what was stored and is gone everywhere, a block still being computed is not yet
// stored, and a reset forgets what was stored.
#include "predict/routing_opportunity.h"

#include <gtest/gtest.h>

#include <vector>

#include "sim/engine/block_hash.h"
#include "sim/engine/block_pool.h"

namespace kvsweep::predict {
namespace {

constexpr int kBlock = 4;

std::vector<sim::TokenId> prompt(int blocks, sim::TokenId first) {
  std::vector<sim::TokenId> tokens;
  for (int i = 0; i < blocks * kBlock + 2; ++i) tokens.push_back(first + i);  // + a partial block
  return tokens;
}

std::vector<std::uint64_t> hashes_of(const std::vector<sim::TokenId>& tokens) {
  std::vector<std::uint64_t> hashes;
  sim::extend_block_hashes(tokens, kBlock, &hashes);
  return hashes;
}

// A replica's KV events, as the fleet delivers them: to the router's index and, for stores,
// to the tracker.
void event_on(sim::KvIndex& index, RoutingOpportunityTracker& tracker, int replica,
              const std::vector<std::uint64_t>& hashes,
              sim::KvEvent::Kind kind = sim::KvEvent::Kind::kStored) {
  for (const auto h : hashes) {
    index.apply(replica, sim::KvEvent{kind, h});
    if (kind == sim::KvEvent::Kind::kStored) tracker.on_stored(h);
  }
}

TEST(RoutingOpportunity, SplitsAPromptsBlocksIntoHitRoutingLostAndEvictionLost) {
  sim::KvIndex index(2);
  RoutingOpportunityTracker tracker;
  const sim::KvIndex::Clock::time_point now{};
  const auto a = prompt(5, 100);
  const auto a_hashes = hashes_of(a);
  ASSERT_EQ(a_hashes.size(), 5u);  // the partial tail block has no hash

  // First sight: nothing cached, nothing computed before.
  tracker.note(a, kBlock, 0, index, now);
  EXPECT_EQ(tracker.totals().prompt_blocks, 5);
  EXPECT_EQ(tracker.totals().computed_before, 0);
  // A second copy arrives while the first is still computing: not yet stored anywhere.
  tracker.note(a, kBlock, 1, index, now);
  EXPECT_EQ(tracker.totals().computed_before, 0);
  event_on(index, tracker, 0, a_hashes);  // replica 0 finished computing it
  const RoutingOpportunity stored = tracker.totals();

  // Again, routed to replica 1: replica 0 holds all 5 blocks, routing lost them.
  tracker.note(a, kBlock, 1, index, now);
  const RoutingOpportunity t = tracker.totals() - stored;
  EXPECT_EQ(t.requests, 1);
  EXPECT_EQ(t.chosen_cached, 0);
  EXPECT_EQ(t.best_cached, 5);
  EXPECT_EQ(t.computed_before, 5);

  // Replica 0 evicts its last 3 blocks; routed to replica 0: 2 hit, 3 lost to eviction.
  event_on(index, tracker, 0, {a_hashes[2], a_hashes[3], a_hashes[4]},
           sim::KvEvent::Kind::kRemoved);
  const RoutingOpportunity before = tracker.totals();
  tracker.note(a, kBlock, 0, index, now);
  const RoutingOpportunity third = tracker.totals() - before;
  EXPECT_EQ(third.requests, 1);
  EXPECT_EQ(third.prompt_blocks, 5);
  EXPECT_EQ(third.chosen_cached, 2);
  EXPECT_EQ(third.best_cached, 2);
  EXPECT_EQ(third.computed_before, 5);

  // A prompt sharing a's first 2 blocks only: computed before counts the shared prefix.
  auto b = a;
  b[2 * kBlock] += 1000;  // block 3 differs, so do all after it
  const RoutingOpportunity at_b = tracker.totals();
  tracker.note(b, kBlock, 0, index, now);
  EXPECT_EQ((tracker.totals() - at_b).computed_before, 2);

  // The caches were reset: what was computed before is gone by policy, not by eviction.
  event_on(index, tracker, 0, {a_hashes[0], a_hashes[1]}, sim::KvEvent::Kind::kRemoved);
  tracker.forget_computed();
  const RoutingOpportunity at_reset = tracker.totals();
  tracker.note(a, kBlock, 0, index, now);
  EXPECT_EQ((tracker.totals() - at_reset).computed_before, 0);
}

}  // namespace
}  // namespace kvsweep::predict
