// Tests for figures/replica_breakdown.cc: request share and hit rates per replica and source.
#include "figures/replica_breakdown.h"

#include <gtest/gtest.h>

#include "figures/cell_metrics.h"
#include "tests/reports/request_builders.h"

namespace kvsweep::figures {
namespace {

using kvsweep::testing::failed_request;
using kvsweep::testing::ok_request;
using kvsweep::testing::sample;

store::RequestRow served_by(const std::string& replica, int prompt, int cached) {
  store::RequestRow r = ok_request(0, 1.0, 10, 20, prompt, 4, cached, {});
  r.replica = replica;
  return r;
}

// The skew seen on two real llama.cpp replicas behind the proxy: 19 requests to one, 41 to
// the other.
TEST(ReplicaBreakdown, ShowsTheSkewOfAStickyStrategy) {
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < 19; ++i) rows.push_back(served_by("http://127.0.0.1:8081", 100, 10));
  for (int i = 0; i < 41; ++i) rows.push_back(served_by("http://127.0.0.1:8082", 100, 90));
  const ReplicaBreakdown b = replica_breakdown(rows, {});
  ASSERT_EQ(b.replicas.size(), 2u);
  EXPECT_EQ(b.replicas[0].replica, "http://127.0.0.1:8081");
  EXPECT_EQ(b.replicas[0].requests, 19);
  EXPECT_DOUBLE_EQ(b.replicas[0].share, 19.0 / 60);
  EXPECT_DOUBLE_EQ(*b.replicas[0].cache_hit_client, 0.1);
  EXPECT_EQ(b.replicas[1].requests, 41);
  EXPECT_DOUBLE_EQ(b.replicas[1].share, 41.0 / 60);
  EXPECT_DOUBLE_EQ(*b.replicas[1].cache_hit_client, 0.9);
  EXPECT_TRUE(b.sources.empty());
}

TEST(ReplicaBreakdown, UnknownReplicasAreCountedLastAndWarmupIsLeftOut) {
  store::RequestRow warm = served_by("7", 100, 100);
  warm.warmup = true;
  store::RequestRow lost = failed_request(3, 1.0, 5, "connect");  // no replica answered
  store::RequestRow unnamed = served_by("", 100, 50);             // a server naming none
  const ReplicaBreakdown b = replica_breakdown({served_by("10", 100, 0), served_by("2", 100, 40),
                                                lost, unnamed, warm, served_by("2", 300, 0)},
                                               {});
  ASSERT_EQ(b.replicas.size(), 3u);
  EXPECT_EQ(b.replicas[0].replica, "2");  // natural order: 2 before 10
  EXPECT_EQ(b.replicas[0].requests, 2);
  EXPECT_DOUBLE_EQ(*b.replicas[0].cache_hit_client, 40.0 / 400);  // Σ cached / Σ prompt
  EXPECT_EQ(b.replicas[1].replica, "10");
  EXPECT_EQ(b.replicas[2].replica, kUnknownReplica);
  EXPECT_EQ(b.replicas[2].requests, 2);
  EXPECT_EQ(b.replicas[2].failed, 1);
  EXPECT_DOUBLE_EQ(*b.replicas[2].cache_hit_client, 0.5);  // the failed one is not counted
  EXPECT_DOUBLE_EQ(b.replicas[2].share, 2.0 / 5);
}

TEST(ReplicaBreakdown, ClientHitRateIsNotAvailableWithoutCachedTokens) {
  store::RequestRow r = served_by("0", 100, -1);
  EXPECT_FALSE(replica_breakdown({r}, {}).replicas.at(0).cache_hit_client);
}

TEST(ReplicaBreakdown, ServerHitRatePerMetricsSource) {
  const std::string a = "http://127.0.0.1:9001/metrics";
  const std::string b = "http://127.0.0.1:9002/metrics";
  const std::string c = "http://127.0.0.1:9003/metrics";
  const ReplicaBreakdown breakdown = replica_breakdown(
      {}, {sample("before", a, kPrefixCacheHits, 100), sample("after", a, kPrefixCacheHits, 400),
           sample("before", a, kPrefixCacheQueries, 1000),
           sample("after", a, kPrefixCacheQueries, 1400),
           // An older vLLM on b: the gpu_ names.
           sample("before", b, kGpuPrefixCacheHits, 0), sample("after", b, kGpuPrefixCacheHits, 0),
           sample("before", b, kGpuPrefixCacheQueries, 0),
           sample("after", b, kGpuPrefixCacheQueries, 1600),
           // c was scraped only before: no rate, left out.
           sample("before", c, kPrefixCacheHits, 5), sample("before", c, kPrefixCacheQueries, 9)});
  ASSERT_EQ(breakdown.sources.size(), 2u);
  EXPECT_EQ(breakdown.sources[0].source, a);
  EXPECT_DOUBLE_EQ(breakdown.sources[0].queries, 400);
  EXPECT_DOUBLE_EQ(breakdown.sources[0].share, 0.2);
  EXPECT_DOUBLE_EQ(*breakdown.sources[0].kv_hit_server, 0.75);
  EXPECT_EQ(breakdown.sources[1].source, b);
  EXPECT_DOUBLE_EQ(breakdown.sources[1].share, 0.8);
  EXPECT_DOUBLE_EQ(*breakdown.sources[1].kv_hit_server, 0);
}

}  // namespace
}  // namespace kvsweep::figures
