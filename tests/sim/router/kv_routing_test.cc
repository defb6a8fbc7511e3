// Tests sim/router/kv_index.cc and the kv-aware and session strategies of
// sim/router/routing_strategy.cc.
#include <gtest/gtest.h>

#include <chrono>

#include "sim/router/kv_index.h"
#include "sim/router/routing_strategy.h"
#include "sim/router/strategy_factory.h"

namespace kvsweep::sim {
namespace {

using namespace std::chrono_literals;

TEST(KvIndex, OverlapCountsConsecutiveBlocksFromTheRoot) {
  KvIndex index(3);
  for (std::uint64_t h : {1, 2, 4}) index.apply(0, {KvEvent::Kind::kStored, h});
  for (std::uint64_t h : {1, 2, 3}) index.apply(1, {KvEvent::Kind::kStored, h});
  std::vector<int> out;
  index.overlaps(std::vector<std::uint64_t>{1, 2, 3, 4}, &out);
  EXPECT_EQ(out, (std::vector<int>{2, 3, 0}));  // replica 0 holds 4 but misses 3 first
  index.apply(1, {KvEvent::Kind::kRemoved, 2});
  index.overlaps(std::vector<std::uint64_t>{1, 2, 3, 4}, &out);
  EXPECT_EQ(out, (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(index.sizes(), (std::vector<std::size_t>{3, 2, 0}));
  index.clear();
  EXPECT_EQ(index.sizes(), (std::vector<std::size_t>{0, 0, 0}));
}

TEST(KvIndex, ApproximateEntriesExpireAfterTheirTtl) {
  KvIndex index(2);
  const auto t0 = KvIndex::Clock::time_point{} + 1h;
  index.record(1, std::vector<std::uint64_t>{7, 8}, 120s, t0);
  std::vector<int> out;
  index.overlaps(std::vector<std::uint64_t>{7, 8, 9}, &out, t0 + 119s);
  EXPECT_EQ(out, (std::vector<int>{0, 2}));
  index.overlaps(std::vector<std::uint64_t>{7, 8, 9}, &out, t0 + 121s);
  EXPECT_EQ(out, (std::vector<int>{0, 0}));
}

// Dynamo's docs/router/kv_cache_routing.md shape: cost = w * prefill_blocks + decode_blocks.
TEST(KvAware, CostIsWeightedPrefillPlusDecodeBlocks) {
  const std::vector<int> in_flight{0, 0, 0};
  const std::vector<int> overlap{2, 5, 8};  // blocks of 16 cached of a 160-token prompt
  const std::vector<std::int64_t> active{3, 5, 7};
  const std::vector<std::int64_t> pending{0, 16, 0};
  RouteQuery q{"", in_flight};
  q.overlap_blocks = overlap;
  q.prompt_tokens = 160;
  q.block_size = 16;
  q.active_blocks = active;
  q.prefill_tokens = pending;
  // r0: prefill (160-32)/16 = 8, decode 3 + 8 = 11 -> 19; r1: (16+80)/16 = 6, 5+5 = 10 -> 16;
  // r2: 32/16 = 2, 7 + 2 = 9 -> 11.
  EXPECT_EQ(kv_aware_costs(q, 1.0), (std::vector<double>{19, 16, 11}));
  EXPECT_EQ(kv_aware_costs(q, 2.0), (std::vector<double>{27, 22, 13}));
  auto strategy = make_strategy("kv-aware", 3, 1);
  EXPECT_EQ(strategy->pick(q), 2);
}

TEST(KvAware, TiesGoToTheSmallerIndex) {
  const std::vector<int> in_flight{0, 0, 0};
  const std::vector<std::size_t> sizes{9, 4, 6};
  RouteQuery q{"", in_flight};
  q.prompt_tokens = 64;
  q.index_sizes = sizes;
  auto strategy = make_strategy("kv-aware", 3, 1);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(strategy->pick(q), 1);
}

TEST(KvAware, TemperatureSamplesCheaperReplicasMoreOften) {
  const std::vector<int> in_flight{0, 0};
  const std::vector<int> overlap{0, 4};
  RouteQuery q{"", in_flight};
  q.overlap_blocks = overlap;
  q.prompt_tokens = 64;
  StrategyParams params;
  params.kv_aware.temperature = 0.5;  // p1/p0 = e^2
  auto strategy = make_strategy("kv-aware", 2, 3, params);
  int cheap = 0;
  for (int i = 0; i < 2000; ++i) cheap += strategy->pick(q) == 1;
  EXPECT_GT(cheap, 1600);  // expected 2000 * e^2 / (1 + e^2) = 1762
  EXPECT_LT(cheap, 1950);  // but the other replica is still picked sometimes
}

TEST(Session, SameSessionSticksAndOthersGoLeastLoad) {
  auto strategy = make_strategy("session", 3, 1);
  std::vector<int> loads{2, 0, 1};
  RouteQuery q{"", loads};
  q.session_id = "alice";
  EXPECT_EQ(strategy->pick(q), 1);
  loads = {0, 5, 5};
  EXPECT_EQ(strategy->pick(q), 1);  // sticky, whatever the load
  q.session_id = "bob";
  EXPECT_EQ(strategy->pick(q), 0);
  q.session_id = "";
  loads = {3, 3, 2};
  EXPECT_EQ(strategy->pick(q), 2);
}

}  // namespace
}  // namespace kvsweep::sim
