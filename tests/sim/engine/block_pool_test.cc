// Tests sim/engine/block_pool.cc and sim/engine/block_hash.cc: ref counts, LRU free queue, prefix
// cache map.
#include "sim/engine/block_pool.h"

#include <gtest/gtest.h>

#include "sim/engine/block_hash.h"
#include "tests/sim/engine/token_ids.h"

namespace kvsweep::sim {
namespace {

using testing::tokens_from;

TEST(BlockHash, OnlyFullBlocksGetHashes) {
  std::vector<std::uint64_t> hashes;
  extend_block_hashes(tokens_from(0, 47), 16, &hashes);
  EXPECT_EQ(hashes.size(), 2u);
  extend_block_hashes(tokens_from(0, 48), 16, &hashes);
  EXPECT_EQ(hashes.size(), 3u);
}

TEST(BlockHash, ChainDependsOnEveryEarlierBlock) {
  // Same second block, different first block: the second hashes must differ.
  std::vector<TokenId> a = tokens_from(0, 32);
  std::vector<TokenId> b = a;
  b[0] = 999;
  std::vector<std::uint64_t> ha, hb;
  extend_block_hashes(a, 16, &ha);
  extend_block_hashes(b, 16, &hb);
  ASSERT_EQ(ha.size(), 2u);
  ASSERT_EQ(hb.size(), 2u);
  EXPECT_NE(ha[0], hb[0]);
  EXPECT_NE(ha[1], hb[1]);
  EXPECT_EQ(ha[1], hash_block(ha[0], std::span(a).subspan(16, 16)));
}

TEST(BlockHash, IncrementalEqualsAllAtOnce) {
  std::vector<TokenId> tokens = tokens_from(0, 64);
  std::vector<std::uint64_t> once, stepwise;
  extend_block_hashes(tokens, 16, &once);
  for (std::size_t n = 1; n <= tokens.size(); ++n) {
    extend_block_hashes(std::span(tokens).first(n), 16, &stepwise);
  }
  EXPECT_EQ(once, stepwise);
}

TEST(BlockPool, AllocatesFromHeadInIdOrder) {
  BlockPool pool(4);
  std::vector<BlockId> got;
  ASSERT_TRUE(pool.allocate(3, &got));
  EXPECT_EQ(got, (std::vector<BlockId>{0, 1, 2}));
  EXPECT_EQ(pool.num_free(), 1);
  EXPECT_EQ(pool.num_held(), 3);
  EXPECT_FALSE(pool.allocate(2, &got));
  EXPECT_EQ(got.size(), 3u);  // unchanged on failure
  EXPECT_EQ(pool.num_free(), 1);
}

TEST(BlockPool, FreeAppendsInReverseOrder) {
  BlockPool pool(5);
  std::vector<BlockId> a;
  ASSERT_TRUE(pool.allocate(3, &a));  // 0 1 2; free queue: 3 4
  pool.free_blocks(a);
  EXPECT_EQ(pool.free_queue(), (std::vector<BlockId>{3, 4, 2, 1, 0}));
}

TEST(BlockPool, CachedBlockStaysHittableUntilReallocated) {
  BlockPool pool(3);
  std::vector<BlockId> a;
  ASSERT_TRUE(pool.allocate(2, &a));  // 0 1
  pool.cache_block(a[0], 111);
  pool.cache_block(a[1], 222);
  pool.free_blocks(a);  // free queue: 2, 1, 0
  EXPECT_EQ(pool.find_cached({111, 222}, 2), (std::vector<BlockId>{0, 1}));

  // Popping block 2 (no hash) leaves both cached; popping 1 next evicts hash 222, the tail
  // block of the freed request, before its head block 0.
  std::vector<BlockId> b;
  ASSERT_TRUE(pool.allocate(1, &b));
  EXPECT_EQ(b, (std::vector<BlockId>{2}));
  EXPECT_EQ(pool.num_cached(), 2);
  ASSERT_TRUE(pool.allocate(1, &b));
  EXPECT_EQ(b.back(), 1);
  EXPECT_FALSE(pool.is_cached(222));
  EXPECT_TRUE(pool.is_cached(111));
  EXPECT_EQ(pool.find_cached({111, 222}, 2), (std::vector<BlockId>{0}));
}

TEST(BlockPool, TouchPullsHitOutOfFreeQueue) {
  BlockPool pool(3);
  std::vector<BlockId> a;
  ASSERT_TRUE(pool.allocate(1, &a));
  pool.cache_block(a[0], 7);
  pool.free_blocks(a);  // free queue: 1 2 0
  EXPECT_EQ(pool.ref_cnt(0), 0);
  pool.touch({0});
  EXPECT_EQ(pool.ref_cnt(0), 1);
  EXPECT_EQ(pool.free_queue(), (std::vector<BlockId>{1, 2}));
  pool.touch({0});
  EXPECT_EQ(pool.ref_cnt(0), 2);
  pool.free_blocks({0});
  EXPECT_EQ(pool.num_free(), 2);  // still held once
  pool.free_blocks({0});
  EXPECT_EQ(pool.free_queue(), (std::vector<BlockId>{1, 2, 0}));
}

TEST(BlockPool, LookupStopsAtFirstMissAndAtCap) {
  BlockPool pool(4);
  std::vector<BlockId> a;
  ASSERT_TRUE(pool.allocate(3, &a));
  pool.cache_block(a[0], 1);
  pool.cache_block(a[2], 3);  // block 1 (hash 2) never registered
  EXPECT_EQ(pool.find_cached({1, 2, 3}, 3), (std::vector<BlockId>{0}));
  pool.cache_block(a[1], 2);
  EXPECT_EQ(pool.find_cached({1, 2, 3}, 3).size(), 3u);
  EXPECT_EQ(pool.find_cached({1, 2, 3}, 2).size(), 2u);
  EXPECT_TRUE(pool.find_cached({9, 1}, 2).empty());
}

TEST(BlockPool, DuplicateHashKeepsFirstMappingAndSurvivesDuplicateEviction) {
  BlockPool pool(3);
  std::vector<BlockId> a, b;
  ASSERT_TRUE(pool.allocate(1, &a));  // 0
  ASSERT_TRUE(pool.allocate(1, &b));  // 1
  pool.cache_block(a[0], 42);
  pool.cache_block(b[0], 42);
  EXPECT_EQ(pool.find_cached({42}, 1), (std::vector<BlockId>{0}));
  pool.free_blocks(b);  // free queue: 2 1
  std::vector<BlockId> c;
  ASSERT_TRUE(pool.allocate(2, &c));  // pops 2 then the duplicate 1
  EXPECT_TRUE(pool.is_cached(42));
  EXPECT_EQ(pool.find_cached({42}, 1), (std::vector<BlockId>{0}));
}

TEST(BlockPool, ResetForgetsFreeBlocksAndReportsHeldOnes) {
  BlockPool pool(3);
  std::vector<BlockId> a, b;
  ASSERT_TRUE(pool.allocate(1, &a));
  ASSERT_TRUE(pool.allocate(1, &b));
  pool.cache_block(a[0], 1);
  pool.cache_block(b[0], 2);
  pool.free_blocks(a);
  EXPECT_FALSE(pool.reset_cache());  // b still held
  EXPECT_FALSE(pool.is_cached(1));
  EXPECT_TRUE(pool.is_cached(2));
  pool.free_blocks(b);
  EXPECT_TRUE(pool.reset_cache());
  EXPECT_EQ(pool.num_cached(), 0);
  EXPECT_EQ(pool.num_free(), 3);
}

// What a KV-aware router indexes: one stored event when a hash first becomes hittable, one
// removed event when it stops being hittable; a duplicate block never entered the map, so its
// eviction reports nothing.
TEST(BlockPool, ReportsStoredAndRemovedHashesExactlyOnce) {
  BlockPool pool(3);
  std::vector<KvEvent> events;
  pool.set_event_listener([&](const KvEvent& e) { events.push_back(e); });
  std::vector<BlockId> blocks;
  ASSERT_TRUE(pool.allocate(2, &blocks));
  pool.cache_block(blocks[0], 11);
  pool.cache_block(blocks[1], 11);  // duplicate of the same content: no second event
  pool.free_blocks(blocks);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, KvEvent::Kind::kStored);
  EXPECT_EQ(events[0].block_hash, 11u);
  std::vector<BlockId> all;
  ASSERT_TRUE(pool.allocate(3, &all));  // evicts both; only the mapped one reports
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].kind, KvEvent::Kind::kRemoved);
  EXPECT_EQ(events[1].block_hash, 11u);
  pool.cache_block(all[0], 12);
  pool.free_blocks(all);
  EXPECT_TRUE(pool.reset_cache());
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[3].kind, KvEvent::Kind::kRemoved);
  EXPECT_EQ(events[3].block_hash, 12u);
}

// Caching off: blocks come and go as usual but nothing is hittable or registered; what was
// cached stops being so (reported removed), free blocks at once and held ones when freed, so an
// index fed by the events ends up empty.
TEST(BlockPool, CachingOffFindsNothingAndForgetsWhatWasCached) {
  BlockPool pool(3);
  std::vector<KvEvent> events;
  pool.set_event_listener([&](const KvEvent& e) { events.push_back(e); });
  std::vector<BlockId> a, b;
  ASSERT_TRUE(pool.allocate(1, &a));
  ASSERT_TRUE(pool.allocate(1, &b));
  pool.cache_block(a[0], 1);
  pool.cache_block(b[0], 2);
  pool.free_blocks(a);
  ASSERT_EQ(events.size(), 2u);

  pool.set_caching(false);
  EXPECT_FALSE(pool.caching());
  EXPECT_FALSE(pool.is_cached(1));
  EXPECT_TRUE(pool.is_cached(2));  // still held
  EXPECT_TRUE(pool.find_cached({2}, 1).empty());
  pool.free_blocks(b);
  EXPECT_EQ(pool.num_cached(), 0);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[2].kind, KvEvent::Kind::kRemoved);
  EXPECT_EQ(events[2].block_hash, 1u);
  EXPECT_EQ(events[3].kind, KvEvent::Kind::kRemoved);
  EXPECT_EQ(events[3].block_hash, 2u);

  std::vector<BlockId> all;
  ASSERT_TRUE(pool.allocate(3, &all));
  pool.cache_block(all[0], 3);
  EXPECT_EQ(pool.num_cached(), 0);
  EXPECT_EQ(events.size(), 4u);
  pool.free_blocks(all);
  EXPECT_EQ(pool.num_free(), 3);

  pool.set_caching(true);
  ASSERT_TRUE(pool.allocate(1, &b));
  pool.cache_block(b.back(), 4);
  EXPECT_EQ(pool.find_cached({4}, 1), (std::vector<BlockId>{b.back()}));
}

}  // namespace
}  // namespace kvsweep::sim
