// Tests for sim/router/replica_health.cc and the strategies' `routable` mask: a replica that fails
// is taken out of routing and every strategy routes around it; one success puts it back.
#include "sim/router/replica_health.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "sim/router/routing_strategy.h"
#include "sim/router/strategy_factory.h"
#include "tests/sim/router/epp_test_config.h"

namespace kvsweep::sim {
namespace {

TEST(ReplicaHealth, TakesOutAtTheThresholdAndPutsBackOnASuccess) {
  ReplicaHealth health(3, 3);
  EXPECT_EQ(health.healthy_count(), 3);
  EXPECT_TRUE(health.routable().empty());  // all may be routed to
  health.on_failure(1, "connect: Connection refused");
  health.on_failure(1, "connect: Connection refused");
  health.on_success(1, "a connection succeeded");  // the count starts over
  health.on_failure(1, "connect: Connection refused");
  health.on_failure(1, "/health: timed out after 1.0 s");
  EXPECT_TRUE(health.healthy(1));
  EXPECT_TRUE(health.events().empty());
  health.on_failure(1, "/health: HTTP 503");
  EXPECT_FALSE(health.healthy(1));
  EXPECT_EQ(health.healthy_count(), 2);
  EXPECT_EQ(health.ejections(1), 1u);
  EXPECT_EQ(std::vector<std::uint8_t>(health.routable().begin(), health.routable().end()),
            (std::vector<std::uint8_t>{1, 0, 1}));
  health.on_failure(1, "/health: HTTP 503");  // still out: no second ejection
  EXPECT_EQ(health.ejections(1), 1u);
  EXPECT_EQ(health.consecutive_failures(1), 4);
  EXPECT_EQ(health.last_error(1), "/health: HTTP 503");
  health.on_success(1, "/health answered 200");
  EXPECT_TRUE(health.healthy(1));
  EXPECT_TRUE(health.routable().empty());

  ASSERT_EQ(health.events().size(), 2u);
  const HealthEvent& out = health.events()[0];
  EXPECT_EQ(out.seq, 1u);
  EXPECT_EQ(out.replica, 1);
  EXPECT_TRUE(out.ejected);
  EXPECT_EQ(out.reason, "3 consecutive failures; last: /health: HTTP 503");
  EXPECT_GT(out.unix_s, 0);
  const HealthEvent& back = health.events()[1];
  EXPECT_EQ(back.seq, 2u);
  EXPECT_FALSE(back.ejected);
  EXPECT_EQ(back.reason, "/health answered 200");
}

TEST(ReplicaHealth, WithEveryReplicaOutAllAreRoutable) {
  ReplicaHealth health(2, 1);
  health.on_failure(0, "down");
  EXPECT_EQ(health.routable().size(), 2u);
  health.on_failure(1, "down");
  EXPECT_EQ(health.healthy_count(), 0);
  EXPECT_TRUE(health.routable().empty());  // better to try than to refuse everything
}

TEST(ReplicaHealth, ThresholdZeroNeverTakesOut) {
  ReplicaHealth health(2, 0);
  for (int i = 0; i < 10; ++i) health.on_failure(0, "down");
  EXPECT_TRUE(health.healthy(0));
  EXPECT_EQ(health.consecutive_failures(0), 10);
}

// Every strategy, asked many times with replica 1 out, never picks it.
TEST(RoutableMask, NoStrategyPicksAReplicaTakenOut) {
  const std::vector<std::uint8_t> routable{1, 0, 1, 1};
  const std::vector<int> loads{3, 0, 2, 1};    // replica 1 is the least loaded
  const std::vector<int> overlap{0, 9, 0, 0};  // and holds the whole prompt
  for (const auto& name : strategy_names()) {
    StrategyParams params;
    params.epp = queue_scorer_epp();
    auto strategy = make_strategy(name, 4, 7, params);
    std::set<int> chosen;
    for (int i = 0; i < 200; ++i) {
      const std::string user = "conversation " + std::to_string(i);
      const std::string session = "s" + std::to_string(i % 5);
      RouteQuery query{user, loads};
      query.routable = routable;
      query.session_id = session;
      query.overlap_blocks = overlap;
      query.prompt_tokens = 144;
      chosen.insert(strategy->pick(query));
    }
    EXPECT_EQ(chosen.count(1), 0u) << name;
    EXPECT_FALSE(chosen.empty()) << name;
  }
}

TEST(RoutableMask, RoundRobinSkipsTheReplicaOutAndKeepsItsTurnOrder) {
  auto rr = make_strategy("round-robin", 3, 1);
  const std::vector<int> loads{0, 0, 0};
  const std::vector<std::uint8_t> routable{1, 0, 1};
  std::vector<int> order;
  for (int i = 0; i < 4; ++i) {
    RouteQuery query{"", loads};
    query.routable = routable;
    order.push_back(rr->pick(query));
  }
  EXPECT_EQ(order, (std::vector<int>{0, 2, 0, 2}));
}

// Consistent hashing: taking a replica out moves only the keys it owned (KubeAI drops a
// not-ready endpoint from the ring).
TEST(RoutableMask, PrefixHashMovesOnlyTheKeysOfTheReplicaOut) {
  auto ring = make_strategy("prefix-hash", 4, 1);
  const std::vector<int> idle{0, 0, 0, 0};
  const std::vector<std::uint8_t> routable{1, 1, 0, 1};
  int moved = 0;
  int owned_by_2 = 0;
  for (int i = 0; i < 400; ++i) {
    const std::string key = "user " + std::to_string(i) + " asks about the weather";
    const int before = ring->pick(RouteQuery{key, idle});
    RouteQuery query{key, idle};
    query.routable = routable;
    const int after = ring->pick(query);
    EXPECT_NE(after, 2);
    if (before == 2) {
      ++owned_by_2;
    } else {
      EXPECT_EQ(after, before) << key;
      moved += after != before;
    }
  }
  EXPECT_GT(owned_by_2, 0);
  EXPECT_EQ(moved, 0);
}

TEST(RoutableMask, SessionLeavesAReplicaTakenOutForGood) {
  auto session = make_strategy("session", 2, 1);
  const std::vector<int> loads{0, 0};
  RouteQuery query{"", loads};
  query.session_id = "abc";
  EXPECT_EQ(session->pick(query), 0);
  const std::vector<std::uint8_t> without_0{0, 1};
  query.routable = without_0;
  EXPECT_EQ(session->pick(query), 1);
  query.routable = {};
  EXPECT_EQ(session->pick(query), 1);  // stays where it moved
}

}  // namespace
}  // namespace kvsweep::sim
