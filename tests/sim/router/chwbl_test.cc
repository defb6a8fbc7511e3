// Tests for sim/router/chwbl.cc: KubeAI's consistent hashing with bounded loads.
#include "sim/router/chwbl.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "sim/router/routing_strategy.h"

namespace kvsweep::sim {
namespace {

std::vector<std::string> names(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(replica_name(i));
  return out;
}

TEST(Chwbl, HashIsXxhash64SeedZero) {
  EXPECT_EQ(xxhash64(""), 0xEF46DB3751D8E999ull);  // the XXH64 reference value for ""
}

TEST(Chwbl, FirstRunesCountsCodePointsNotBytes) {
  EXPECT_EQ(first_runes("hello", 3), "hel");
  EXPECT_EQ(first_runes("hi", 100), "hi");
  EXPECT_EQ(first_runes("", 5), "");
  std::string accents;
  for (int i = 0; i < 150; ++i) accents += "\xC3\xA9";  // é, two bytes each
  EXPECT_EQ(first_runes(accents, 100).size(), 200u);
  EXPECT_EQ(first_runes("a\xE2\x82\xAC"
                        "b",
                        2),
            "a\xE2\x82\xAC");  // euro sign kept whole
}

TEST(Chwbl, LoadOkFollowsKubeAiRule) {
  EXPECT_TRUE(chwbl_load_ok(100, 0, 4, 1.25));  // idle fleet: anything goes
  // total 8 over 4 replicas: limit = (8+1)/4 * 1.25 = 2.8125
  EXPECT_TRUE(chwbl_load_ok(2, 8, 4, 1.25));
  EXPECT_FALSE(chwbl_load_ok(3, 8, 4, 1.25));
  EXPECT_TRUE(chwbl_load_ok(3, 8, 4, 1.5));  // 3.375
}

TEST(Chwbl, SameKeySameReplica) {
  const ChwblRing ring(names(4), {});
  const std::vector<int> idle(4, 0);
  for (int k = 0; k < 50; ++k) {
    const std::string key = "conversation " + std::to_string(k);
    EXPECT_EQ(ring.pick(key, idle), ring.pick(key, idle)) << key;
  }
  // A second ring built from the same names agrees: nothing depends on process state.
  const ChwblRing again(names(4), {});
  EXPECT_EQ(ring.pick("stable", idle), again.pick("stable", idle));
}

TEST(Chwbl, KeysSpreadRoughlyEvenly) {
  const ChwblRing ring(names(4), {});
  const std::vector<int> idle(4, 0);
  std::vector<int> hits(4, 0);
  const int keys = 8000;
  for (int k = 0; k < keys; ++k) ++hits[ring.pick("user prompt #" + std::to_string(k), idle)];
  for (int r = 0; r < 4; ++r) {
    EXPECT_GT(hits[r], keys * 0.17) << "replica " << r;
    EXPECT_LT(hits[r], keys * 0.33) << "replica " << r;
  }
}

TEST(Chwbl, OverloadedReplicaSendsRequestAlongTheRing) {
  const ChwblRing ring(names(4), {});
  const std::string key = "a long shared system prompt and the first user turn";
  std::vector<int> loads(4, 0);
  const int home = ring.pick(key, loads);

  // Within the bound the home replica keeps the key: total 3, limit (3+1)/4*1.25 = 1.25.
  loads = {1, 1, 1, 1};
  loads[home] = 0;
  EXPECT_EQ(ring.pick(key, loads), home);

  // Over the bound (8 of 8 in flight there: limit 2.25) it moves on, to a replica that passes.
  loads = {0, 0, 0, 0};
  loads[home] = 8;
  const int moved = ring.pick(key, loads);
  EXPECT_NE(moved, home);
  EXPECT_TRUE(chwbl_load_ok(loads[moved], 8, 4, 1.25));
  // ... and always to the same next replica: the walk is deterministic.
  EXPECT_EQ(ring.pick(key, loads), moved);
}

TEST(Chwbl, BoundedLoadKeepsEveryReplicaNearTheMean) {
  // One hot key, 40 concurrent requests that never finish: the bound spreads them.
  const ChwblRing ring(names(4), {});
  std::vector<int> loads(4, 0);
  for (int i = 0; i < 40; ++i) ++loads[ring.pick("the same hot prefix", loads)];
  for (int r = 0; r < 4; ++r) EXPECT_LE(loads[r], 13) << "replica " << r;  // 1.25 * 41/4
  std::set<int> used;
  for (int r = 0; r < 4; ++r) {
    if (loads[r] > 0) used.insert(r);
  }
  EXPECT_GE(used.size(), 3u);
}

TEST(Chwbl, LoadFactorIsAParameter) {
  // Ten requests for one key on two replicas, none finishing. Worked by hand from the rule:
  // factor 1.0 lets the home replica hold 6, factor 1.25 lets it hold 7.
  auto spread = [](double factor) {
    ChwblOptions options;
    options.mean_load_factor = factor;
    options.virtual_nodes = 16;
    const ChwblRing ring(names(2), options);
    std::vector<int> loads(2, 0);
    const int home = ring.pick("k", loads);
    for (int i = 0; i < 10; ++i) ++loads[ring.pick("k", loads)];
    return std::pair{loads[home], loads[1 - home]};
  };
  EXPECT_EQ(spread(1.0), (std::pair{6, 4}));
  EXPECT_EQ(spread(1.25), (std::pair{7, 3}));
}

}  // namespace
}  // namespace kvsweep::sim
