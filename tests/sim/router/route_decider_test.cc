// Tests for sim/router/route_decider.cc: the routing decision and its books, without HTTP.
#include "sim/router/route_decider.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <vector>

#include "sim/engine/block_hash.h"
#include "tests/sim/router/epp_test_config.h"

namespace kvsweep::sim {
namespace {

using namespace std::chrono_literals;

// `count` consecutive token ids from `first`: prompts started far apart share no block.
std::vector<TokenId> prompt(TokenId first, int count) {
  std::vector<TokenId> tokens;
  for (int i = 0; i < count; ++i) tokens.push_back(first + static_cast<TokenId>(i));
  return tokens;
}

RouteDeciderOptions options(const std::string& strategy, bool kv_events = true) {
  RouteDeciderOptions o;
  o.strategy = strategy;
  o.block_size = 16;
  o.kv_events = kv_events;
  o.params.epp = queue_scorer_epp();
  return o;
}

TEST(RouteDecider, AsksForTokensOnlyWhenTheStrategyOrTheApproximateIndexNeedsThem) {
  for (const std::string& name : strategy_names()) {
    RouteDecider events(2, options(name, true));
    EXPECT_EQ(events.needs_tokens(), name == "kv-aware") << name;
    RouteDecider approximate(2, options(name, false));
    EXPECT_TRUE(approximate.needs_tokens()) << name;  // the index learns from every request
  }
}

TEST(RouteDecider, ADecisionThatNeedsNoBlocksHashesNothing) {
  RouteDecider decider(2, options("round-robin"));
  const std::vector<TokenId> tokens = prompt(0, 40);
  RouteDecision d = decider.pick(RouteRequest{"hello", "", tokens}, {});
  EXPECT_EQ(d.replica, 0);
  EXPECT_FALSE(d.hashed);
  EXPECT_TRUE(d.block_hashes.empty());
  EXPECT_EQ(d.blocks, 0);
  EXPECT_EQ(d.prefill_tokens, 0);
  decider.on_routed(d);
  EXPECT_EQ(decider.in_flight(), (std::vector<int>{1, 0}));
  EXPECT_EQ(decider.active_blocks(), (std::vector<std::int64_t>{0, 0}));
  EXPECT_EQ(decider.pick(RouteRequest{"hello"}, {}).replica, 1);  // the cursor moved on
}

TEST(RouteDecider, KeepsTheLoadsOfARequestFromRoutedToFinished) {
  RouteDecider decider(2, options("kv-aware"));
  const std::vector<TokenId> tokens = prompt(0, 40);  // 2 full blocks + 8 tokens = 3 blocks
  std::vector<std::uint64_t> hashes;
  extend_block_hashes(tokens, 16, &hashes);
  ASSERT_EQ(hashes.size(), 2u);
  decider.on_kv_event(1, KvEvent{KvEvent::Kind::kStored, hashes[0]});

  RouteDecision d = decider.pick(RouteRequest{"", "", tokens}, {});
  EXPECT_EQ(d.replica, 1);  // it holds the first block: cheaper prefill
  EXPECT_TRUE(d.hashed);
  EXPECT_EQ(d.block_hashes, hashes);
  EXPECT_EQ(d.overlap_blocks, 1);
  EXPECT_EQ(d.blocks, 3);
  EXPECT_EQ(d.prefill_tokens, 40 - 16);
  decider.on_routed(d);
  EXPECT_EQ(decider.in_flight(), (std::vector<int>{0, 1}));
  EXPECT_EQ(decider.active_blocks(), (std::vector<std::int64_t>{0, 3}));
  EXPECT_EQ(decider.prefill_tokens(), (std::vector<std::int64_t>{0, 24}));
  EXPECT_EQ(decider.decisions().at("kv-aware"), (std::vector<std::uint64_t>{0, 1}));

  decider.on_first_token(d);
  decider.on_first_token(d);  // once only
  EXPECT_EQ(decider.prefill_tokens(), (std::vector<std::int64_t>{0, 0}));
  decider.on_finished(d);
  EXPECT_EQ(decider.in_flight(), (std::vector<int>{0, 0}));
  EXPECT_EQ(decider.active_blocks(), (std::vector<std::int64_t>{0, 0}));
  EXPECT_EQ(decider.prefill_tokens(), (std::vector<std::int64_t>{0, 0}));
}

TEST(RouteDecider, AFinishBeforeTheFirstTokenReleasesThePrefillToo) {
  RouteDecider decider(1, options("kv-aware"));
  const std::vector<TokenId> tokens = prompt(0, 32);
  RouteDecision d = decider.pick(RouteRequest{"", "", tokens}, {});
  decider.on_routed(d);
  EXPECT_EQ(decider.prefill_tokens(), (std::vector<std::int64_t>{32}));
  decider.on_finished(d);  // the client left before any token
  EXPECT_EQ(decider.prefill_tokens(), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(decider.active_blocks(), (std::vector<std::int64_t>{0}));
}

TEST(RouteDecider, TheApproximateIndexRemembersRoutedBlocksForItsTtl) {
  RouteDecider decider(2, options("round-robin", false));
  const auto t0 = RouteDecider::Clock::time_point{} + 1h;
  const std::vector<TokenId> a = prompt(0, 64);
  const std::vector<TokenId> b = prompt(100000, 64);
  decider.on_routed(decider.pick(RouteRequest{"", "", a}, {}, t0), t0);  // replica 0
  decider.on_routed(decider.pick(RouteRequest{"", "", b}, {}, t0), t0);  // replica 1
  ASSERT_TRUE(decider.set_strategy("kv-aware", {}));
  EXPECT_EQ(decider.pick(RouteRequest{"", "", b}, {}, t0 + 60s).replica, 1);
  const RouteDecision again = decider.pick(RouteRequest{"", "", a}, {}, t0 + 60s);
  EXPECT_EQ(again.replica, 0);
  EXPECT_EQ(again.overlap_blocks, 4);
  // Past the TTL nothing is believed cached any more.
  EXPECT_EQ(decider.pick(RouteRequest{"", "", b}, {}, t0 + 121s).overlap_blocks, 0);
  // A reset forgets one replica's blocks.
  decider.on_prefix_cache_reset(0);
  EXPECT_EQ(decider.pick(RouteRequest{"", "", a}, {}, t0 + 60s).overlap_blocks, 0);
}

TEST(RouteDecider, OnlyRoutableReplicasAreChosen) {
  RouteDecider decider(3, options("round-robin"));
  const std::vector<std::uint8_t> routable{0, 1, 0};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(decider.pick(RouteRequest{}, routable).replica, 1);
}

TEST(RouteDecider, RestartForgetsTheIndexAndSessionStickiness) {
  RouteDecider decider(2, options("session"));
  RouteDecision first = decider.pick(RouteRequest{"", "s1"}, {});
  decider.on_routed(first);  // s1 sticks to replica 0 while it is the least loaded
  EXPECT_EQ(first.replica, 0);
  EXPECT_EQ(decider.pick(RouteRequest{"", "s1"}, {}).replica, 0);  // sticky despite the load
  decider.on_kv_event(0, KvEvent{KvEvent::Kind::kStored, 42});
  decider.restart();
  EXPECT_EQ(decider.index().sizes(), (std::vector<std::size_t>{0, 0}));
  EXPECT_EQ(decider.pick(RouteRequest{"", "s1"}, {}).replica, 1);  // new session: least load
  EXPECT_EQ(decider.strategy(), "session");
}

TEST(RouteDecider, RejectsAnUnknownStrategyAndNoReplicas) {
  EXPECT_THROW(RouteDecider(2, options("prefix_hash")), std::invalid_argument);
  EXPECT_THROW(RouteDecider(0, options("round-robin")), std::invalid_argument);
  RouteDecider decider(2, options("random"));
  EXPECT_FALSE(decider.set_strategy("nope", {}));
  EXPECT_EQ(decider.strategy(), "random");
}

}  // namespace
}  // namespace kvsweep::sim
