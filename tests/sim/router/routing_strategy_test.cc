// Tests for sim/router/routing_strategy.cc: random, round-robin, least-load, prefix-hash.
#include "sim/router/routing_strategy.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "sim/router/epp_config.h"
#include "sim/router/strategy_factory.h"

namespace kvsweep::sim {
namespace {

int pick(RoutingStrategy& strategy, const std::vector<int>& loads, std::string_view user = "") {
  return strategy.pick(RouteQuery{user, loads});
}

// "epp" runs an EndpointPickerConfig: without one it is no strategy.
TEST(RoutingStrategy, NamesAreTheSeven) {
  EXPECT_EQ(strategy_names(),
            (std::vector<std::string>{"random", "round-robin", "least-load", "prefix-hash",
                                      "kv-aware", "session", "epp"}));
  StrategyParams params;
  std::string error;
  params.epp = parse_epp_config(
      "epp.yaml",
      "apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\n"
      "plugins: [{type: queue-scorer}]\n",
      &error);
  ASSERT_NE(params.epp, nullptr) << error;
  for (const auto& name : strategy_names()) {
    EXPECT_NE(make_strategy(name, 3, 1, params), nullptr) << name;
  }
  EXPECT_EQ(make_strategy("epp", 3, 1), nullptr);
  EXPECT_EQ(make_strategy("prefix_hash", 3, 1), nullptr);
}

TEST(RoutingStrategy, RoundRobinCyclesInIndexOrderWhateverTheLoad) {
  auto rr = make_strategy("round-robin", 3, 1);
  const std::vector<int> loads{9, 0, 0};
  std::vector<int> order;
  for (int i = 0; i < 7; ++i) order.push_back(pick(*rr, loads));
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 0, 1, 2, 0}));
}

TEST(RoutingStrategy, LeastLoadTakesTheMinimumAndBreaksTiesLow) {
  auto least = make_strategy("least-load", 4, 1);
  EXPECT_EQ(pick(*least, {2, 0, 1, 0}), 1);
  EXPECT_EQ(pick(*least, {0, 0, 0, 0}), 0);
  EXPECT_EQ(pick(*least, {5, 4, 3, 2}), 3);
}

TEST(RoutingStrategy, RandomIsSeededAndCoversEveryReplica) {
  auto a = make_strategy("random", 4, 42);
  auto b = make_strategy("random", 4, 42);
  auto c = make_strategy("random", 4, 43);
  const std::vector<int> loads(4, 0);
  std::vector<int> seq_a, seq_b, seq_c;
  for (int i = 0; i < 64; ++i) {
    seq_a.push_back(pick(*a, loads));
    seq_b.push_back(pick(*b, loads));
    seq_c.push_back(pick(*c, loads));
  }
  EXPECT_EQ(seq_a, seq_b);
  EXPECT_NE(seq_a, seq_c);
  EXPECT_EQ(std::set<int>(seq_a.begin(), seq_a.end()).size(), 4u);
}

TEST(RoutingStrategy, PrefixHashKeysOnTheFirst100RunesOnly) {
  auto prefix = make_strategy("prefix-hash", 8, 1);
  const std::vector<int> idle(8, 0);
  const std::string head(100, 'x');
  const int home = pick(*prefix, idle, head + " then one tail");
  EXPECT_EQ(pick(*prefix, idle, head + " and a quite different tail"), home);
  EXPECT_EQ(pick(*prefix, idle, head), home);
  // The key really depends on the text: across distinct heads several replicas are chosen.
  std::set<int> chosen;
  for (int k = 0; k < 64; ++k) chosen.insert(pick(*prefix, idle, std::to_string(k) + head));
  EXPECT_GE(chosen.size(), 6u);
}

}  // namespace
}  // namespace kvsweep::sim
