// Tests for sim/router/epp_scheduler.cc: the EPP's hashing, prefix index, scorers and picker.
#include "sim/router/epp_scheduler.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace kvsweep::sim {
namespace {

std::shared_ptr<const EppConfig> config(const std::string& plugins_and_profiles) {
  std::string error;
  auto parsed = parse_epp_config(
      "epp.yaml",
      "apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\n" +
          plugins_and_profiles,
      &error);
  EXPECT_NE(parsed, nullptr) << error;
  return parsed;
}

TEST(EppPrefixHashes, WholeBlocksOfCharactersChainedAfterTheModelName) {
  EXPECT_TRUE(epp_prefix_hashes("m", "short", 8, 256).empty());  // under one block: none
  const std::string prompt = "abcdefgh12345678xyz";              // two blocks and a tail
  const auto hashes = epp_prefix_hashes("m", prompt, 8, 256);
  ASSERT_EQ(hashes.size(), 2u);  // the tail of 3 characters is not hashed
  EXPECT_EQ(hashes[0], XXH64("mabcdefgh", 9, 0));
  std::string second = "12345678";
  for (int i = 0; i < 8; ++i) second += static_cast<char>((hashes[0] >> (8 * i)) & 0xff);
  EXPECT_EQ(hashes[1], XXH64(second.data(), second.size(), 0));
  // Cut at max_blocks blocks; a shared start gives shared leading hashes.
  EXPECT_EQ(epp_prefix_hashes("m", prompt, 8, 1).size(), 1u);
  EXPECT_EQ(epp_prefix_hashes("m", "abcdefgh12345678other", 8, 256)[1], hashes[1]);
  EXPECT_NE(epp_prefix_hashes("m", "abcdefgh02345678", 8, 256)[1], hashes[1]);
}

TEST(EppPrefixIndex, MatchWalksFromTheFirstHashAndStopsAtTheFirstMiss) {
  EppPrefixIndex index(3, 100);
  index.add(std::vector<std::uint64_t>{1, 2, 3}, 0);
  index.add(std::vector<std::uint64_t>{1, 2}, 1);
  index.add(std::vector<std::uint64_t>{9, 3}, 2);
  // As indexer.go counts: every replica holding a hash on the walk scores it, even one that
  // lacks the hashes before (replica 2 holds 3 but not 1 or 2).
  EXPECT_EQ(index.match(std::vector<std::uint64_t>{1, 2, 3}), (std::vector<int>{3, 2, 1}));
  // Hash 3 is held by replicas 0 and 2, but the walk stopped at 7.
  EXPECT_EQ(index.match(std::vector<std::uint64_t>{1, 7, 3}), (std::vector<int>{1, 1, 0}));
  index.clear();
  EXPECT_EQ(index.match(std::vector<std::uint64_t>{1}), (std::vector<int>{0, 0, 0}));
}

TEST(EppPrefixIndex, EvictionFromAReplicasLruForgetsThatReplicaOnly) {
  EppPrefixIndex index(2, 2);
  index.add(std::vector<std::uint64_t>{1, 2}, 0);
  index.add(std::vector<std::uint64_t>{1}, 1);
  index.add(std::vector<std::uint64_t>{1}, 0);  // 1 is the most recent again on replica 0
  index.add(std::vector<std::uint64_t>{3}, 0);  // evicts 2, the least recent
  EXPECT_EQ(index.size(0), 2u);
  EXPECT_EQ(index.match(std::vector<std::uint64_t>{1, 2}), (std::vector<int>{1, 1}));
  index.add(std::vector<std::uint64_t>{4, 5}, 0);  // evicts 1 and 3 from replica 0
  EXPECT_EQ(index.match(std::vector<std::uint64_t>{1}), (std::vector<int>{0, 1}));
}

TEST(EppScores, QueueKvAndLoadAwareAsTheReleaseScoresThem) {
  const std::vector<int> in_flight{0, 0, 0, 0};
  const std::vector<ServerLoad> loads{{0, 0.25}, {4, 0.5}, {8, 1.0}, {300, 0.0}};
  RouteQuery query{"", in_flight};
  query.server_loads = loads;
  EppScorer queue;
  queue.kind = EppScorerKind::kQueue;
  EXPECT_EQ(epp_scores(queue, query, {}, 0),
            (std::vector<double>{1.0, 296.0 / 300, 292.0 / 300, 0.0}));
  const std::vector<std::uint8_t> routable{1, 1, 1, 0};  // min and max over candidates only
  query.routable = routable;
  EXPECT_EQ(epp_scores(queue, query, {}, 0), (std::vector<double>{1.0, 0.5, 0.0, 0.0}));
  query.routable = {};
  EppScorer kv;
  kv.kind = EppScorerKind::kKvCacheUtilization;
  EXPECT_EQ(epp_scores(kv, query, {}, 0), (std::vector<double>{0.75, 0.5, 0.0, 1.0}));
  EppScorer load_aware;
  load_aware.kind = EppScorerKind::kLoadAware;
  load_aware.queue_threshold = 8;
  EXPECT_EQ(epp_scores(load_aware, query, {}, 0), (std::vector<double>{0.5, 0.25, 0.0, 0.0}));
  const std::vector<ServerLoad> equal{{3, 0}, {3, 0}, {3, 0}, {3, 0}};
  query.server_loads = equal;
  EXPECT_EQ(epp_scores(queue, query, {}, 0), (std::vector<double>{1, 1, 1, 1}));
  EppScorer prefix;
  prefix.kind = EppScorerKind::kPrefixCache;
  EXPECT_EQ(epp_scores(prefix, query, std::vector<int>{4, 2, 0, 1}, 4),
            (std::vector<double>{1.0, 0.5, 0.0, 0.25}));
}

// The weighted sum decides; weights are not normalised: prefix 3 x 0.5 beats queue 1 x 1.
TEST(EppStrategy, WeightedSumOfScoresPicksTheMaximum) {
  auto c = config(R"(plugins:
- type: prefix-cache-scorer
  parameters: {hashBlockSize: 4}
- type: queue-scorer
schedulingProfiles:
- name: default
  plugins:
  - {pluginRef: prefix-cache-scorer, weight: 3}
  - {pluginRef: queue-scorer, weight: 1}
)");
  EppStrategy epp(c, 2, 1);
  const std::vector<int> in_flight{0, 0};
  const std::vector<ServerLoad> idle{{0, 0}, {0, 0}};
  RouteQuery first{"", in_flight};
  first.prompt_text = "aaaabbbb";
  first.server_loads = idle;
  const int home = epp.pick(first);  // a tie: either, then it holds both blocks
  const std::vector<ServerLoad> busy_home =
      home == 0 ? std::vector<ServerLoad>{{5, 0}, {0, 0}} : std::vector<ServerLoad>{{0, 0}, {5, 0}};
  RouteQuery half{"", in_flight};
  half.prompt_text = "aaaacccc";  // one of two blocks matches at home: 3 x 0.5 = 1.5 > 1
  half.server_loads = busy_home;
  EXPECT_EQ(epp.pick(half), home);
  EXPECT_DOUBLE_EQ(epp.last_totals()[static_cast<std::size_t>(home)], 1.5);
  EXPECT_DOUBLE_EQ(epp.last_totals()[static_cast<std::size_t>(1 - home)], 1.0);
}

// Ties go to a random candidate (the EPP shuffles before its stable sort), the same sequence
// for the same seed.
TEST(EppStrategy, TiesAreBrokenAtRandomReproduciblyFromTheSeed) {
  auto c = config("plugins:\n- type: queue-scorer\n");
  const std::vector<int> in_flight{0, 0, 0, 0};
  const std::vector<ServerLoad> equal(4);
  auto run = [&](std::uint64_t seed) {
    EppStrategy epp(c, 4, seed);
    std::vector<int> picks;
    for (int i = 0; i < 64; ++i) {
      RouteQuery q{"", in_flight};
      q.server_loads = equal;
      picks.push_back(epp.pick(q));
    }
    return picks;
  };
  const std::vector<int> a = run(7);
  EXPECT_EQ(a, run(7));
  EXPECT_NE(a, run(8));
  EXPECT_EQ(std::set<int>(a.begin(), a.end()).size(), 4u);
}

TEST(EppStrategy, ReadsTextOrLoadsOnlyWhenItsScorersDo) {
  EXPECT_TRUE(
      EppStrategy(config("plugins:\n- type: prefix-cache-scorer\n"), 2, 1).needs_prompt_text());
  EXPECT_FALSE(
      EppStrategy(config("plugins:\n- type: prefix-cache-scorer\n"), 2, 1).needs_server_loads());
  EXPECT_FALSE(EppStrategy(config("plugins:\n- type: queue-scorer\n"), 2, 1).needs_prompt_text());
  EXPECT_TRUE(EppStrategy(config("plugins:\n- type: queue-scorer\n"), 2, 1).needs_server_loads());
}

TEST(EppStrategy, NeverPicksAReplicaTakenOut) {
  EppStrategy epp(config("plugins:\n- type: queue-scorer\n"), 3, 1);
  const std::vector<int> in_flight{0, 0, 0};
  const std::vector<ServerLoad> loads{{9, 0}, {0, 0}, {9, 0}};  // 1 has the shortest queue
  const std::vector<std::uint8_t> routable{1, 0, 1};
  for (int i = 0; i < 50; ++i) {
    RouteQuery q{"", in_flight};
    q.server_loads = loads;
    q.routable = routable;
    EXPECT_NE(epp.pick(q), 1);
  }
}

}  // namespace
}  // namespace kvsweep::sim
