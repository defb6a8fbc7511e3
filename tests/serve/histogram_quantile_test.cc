// Tests for serve/histogram_quantile.cc: Prometheus' histogram_quantile rule on
// bucket increases between two scrapes, with exact values worked out by hand.
#include "serve/histogram_quantile.h"

#include <gtest/gtest.h>

#include <limits>

namespace kvsweep::serve {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(HistogramQuantile, InterpolatesLinearlyInsideTheBucketHoldingTheRank) {
  // 10 observations: 2 <= 0.1, 6 more <= 0.5, 2 more <= 1.
  const std::vector<Bucket> b = {{0.1, 2}, {0.5, 8}, {1, 10}, {kInf, 10}};
  // p50: rank 5 lies in (0.1, 0.5], 3 of its 6: 0.1 + 0.4 * 3/6.
  EXPECT_DOUBLE_EQ(*histogram_quantile(0.5, b), 0.3);
  // p95: rank 9.5 in (0.5, 1], 1.5 of 2: 0.5 + 0.5 * 0.75.
  EXPECT_DOUBLE_EQ(*histogram_quantile(0.95, b), 0.875);
  // In the first bucket the lower bound is 0: rank 1 of 2 -> 0.05.
  EXPECT_DOUBLE_EQ(*histogram_quantile(0.1, b), 0.05);
}

TEST(HistogramQuantile, ARankInTheInfBucketIsThePreviousUpperBound) {
  const std::vector<Bucket> b = {{0.1, 1}, {0.5, 2}, {kInf, 10}};
  EXPECT_DOUBLE_EQ(*histogram_quantile(0.95, b), 0.5);
}

TEST(HistogramQuantile, NoObservationOrNoInfBucketIsNoFigure) {
  EXPECT_FALSE(histogram_quantile(0.5, {{0.1, 0}, {kInf, 0}}));
  EXPECT_FALSE(histogram_quantile(0.5, {{0.1, 3}, {0.5, 4}}));  // no +Inf
  EXPECT_FALSE(histogram_quantile(0.5, {{kInf, 4}}));           // fewer than two buckets
}

TEST(HistogramQuantile, BucketsSumOverLabelSetsAndSortByBound) {
  const auto samples = parse_prometheus_text(
      "# TYPE ttft histogram\n"
      "ttft_bucket{engine=\"0\",le=\"0.5\"} 3\n"
      "ttft_bucket{engine=\"0\",le=\"+Inf\"} 4\n"
      "ttft_bucket{engine=\"0\",le=\"0.1\"} 1\n"
      "ttft_bucket{engine=\"1\",le=\"0.1\"} 2\n"
      "ttft_bucket{engine=\"1\",le=\"0.5\"} 2\n"
      "ttft_bucket{engine=\"1\",le=\"+Inf\"} 2\n"
      "ttft_count 6\n"
      "other_bucket{le=\"1\"} 9\n");
  const auto b = histogram_buckets(samples, "ttft");
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].upper_bound, 0.1);
  EXPECT_EQ(b[0].count, 3);
  EXPECT_EQ(b[1].count, 5);
  EXPECT_EQ(b[2].upper_bound, kInf);
  EXPECT_EQ(b[2].count, 6);
  EXPECT_TRUE(histogram_buckets(samples, "missing").empty());
}

TEST(HistogramQuantile, IncreaseIsTheDifferenceAndARestartCountsFromZero) {
  const std::vector<Bucket> older = {{0.1, 5}, {0.5, 10}, {kInf, 12}};
  const std::vector<Bucket> newer = {{0.1, 6}, {0.5, 14}, {kInf, 17}};
  const auto inc = bucket_increase(older, newer);
  ASSERT_EQ(inc.size(), 3u);
  EXPECT_EQ(inc[0].count, 1);
  EXPECT_EQ(inc[1].count, 4);
  EXPECT_EQ(inc[2].count, 5);
  // The server restarted between the scrapes: its counters began again from 0.
  const std::vector<Bucket> restarted = {{0.1, 1}, {0.5, 2}, {kInf, 2}};
  const auto after_reset = bucket_increase(older, restarted);
  EXPECT_EQ(after_reset[2].count, 2);
  EXPECT_EQ(after_reset[0].count, 1);
}

TEST(HistogramQuantile, AddBucketsSumsPerBound) {
  std::vector<Bucket> a = {{0.1, 1}, {kInf, 2}};
  add_buckets(a, {{0.1, 3}, {kInf, 4}});
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].count, 4);
  EXPECT_EQ(a[1].count, 6);
}

}  // namespace
}  // namespace kvsweep::serve
