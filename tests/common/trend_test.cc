#include "common/trend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kvsweep {
namespace {

TEST(MannKendall, AStrictlyRisingSeriesIsSignificantWithItsSlope) {
  std::vector<TrendPoint> series;
  for (int i = 0; i < 10; ++i) series.push_back({static_cast<double>(i), 2.0 * i + 5});
  const TrendTest test = mann_kendall(series);
  EXPECT_EQ(test.points, 10u);
  EXPECT_EQ(test.s, 45);
  // var(S) = 10 * 9 * 25 / 18 = 125; z = (45 - 1) / sqrt(125)
  EXPECT_NEAR(test.z, 44 / std::sqrt(125.0), 1e-12);
  EXPECT_NEAR(test.p_upward, 0.5 * std::erfc(test.z / std::sqrt(2.0)), 1e-15);
  EXPECT_LT(test.p_upward, 1e-4);
  EXPECT_DOUBLE_EQ(test.slope_per_s, 2.0);
}

TEST(MannKendall, AFallingSeriesIsNoEvidenceOfARise) {
  std::vector<TrendPoint> series;
  for (int i = 0; i < 12; ++i) series.push_back({static_cast<double>(i), 100.0 - i});
  const TrendTest test = mann_kendall(series);
  EXPECT_EQ(test.s, -66);
  EXPECT_GT(test.p_upward, 0.99);
  EXPECT_DOUBLE_EQ(test.slope_per_s, -1.0);
}

TEST(MannKendall, TiesShrinkTheVariance) {
  // Values 1,1,2,2,3: S = pairs up (8) - down (0) = 8; ties: two groups of 2.
  const std::vector<TrendPoint> series = {{0, 1}, {1, 1}, {2, 2}, {3, 2}, {4, 3}};
  const TrendTest test = mann_kendall(series);
  EXPECT_EQ(test.s, 8);
  const double variance = (5.0 * 4 * 15 - 2 * (2.0 * 1 * 9)) / 18.0;
  EXPECT_NEAR(test.z, 7 / std::sqrt(variance), 1e-12);
}

TEST(MannKendall, AFlatNoisySeriesIsNotSignificant) {
  // An alternating series: as many rises as falls.
  std::vector<TrendPoint> series;
  for (int i = 0; i < 40; ++i) series.push_back({static_cast<double>(i), i % 2 == 0 ? 10.0 : 12.0});
  const TrendTest test = mann_kendall(series);
  EXPECT_GT(test.p_upward, 0.2);
}

TEST(MannKendall, TooFewPointsAreNoTest) {
  const TrendTest test = mann_kendall({{0, 1}, {1, 2}});
  EXPECT_EQ(test.p_upward, 1);
  EXPECT_EQ(test.slope_per_s, 0);
}

TEST(BinMedians, EachNonEmptyBinGivesItsMedianAtItsCentre) {
  const std::vector<TrendPoint> points = {{0.1, 5}, {0.2, 1}, {0.3, 3}, {2.5, 7}, {3.0, 100}};
  const std::vector<TrendPoint> bins = bin_medians(points, 0, 3, 3);
  ASSERT_EQ(bins.size(), 2u);  // bin [1, 2) is empty; t = 3 is outside [0, 3)
  EXPECT_DOUBLE_EQ(bins[0].t, 0.5);
  EXPECT_DOUBLE_EQ(bins[0].value, 3);
  EXPECT_DOUBLE_EQ(bins[1].t, 2.5);
  EXPECT_DOUBLE_EQ(bins[1].value, 7);
}

TEST(TrendBins, OnePerTwentyPointsBetweenTenAndSixty) {
  EXPECT_EQ(trend_bins(5), 10);
  EXPECT_EQ(trend_bins(600), 30);
  EXPECT_EQ(trend_bins(100000), 60);
}

}  // namespace
}  // namespace kvsweep

namespace kvsweep {
namespace {

TEST(CountsAt, StartedAndNotEndedWithTheEndFirstAtATie) {
  const double inf = std::numeric_limits<double>::infinity();
  const auto counts = counts_at({0, 1, 2}, {2, 3, inf}, {0, 1, 2, 2.5, 5, -1});
  const std::vector<double> expected = {1, 2, 2, 2, 1, 0};
  ASSERT_EQ(counts.size(), expected.size());
  for (std::size_t i = 0; i < counts.size(); ++i) EXPECT_EQ(counts[i].value, expected[i]) << i;
  EXPECT_EQ(counts[3].t, 2.5);
}

// The over-capacity count rule: 40 points rising one a second over [0, 40): 10 bins of 4 s
// whose medians run 1.5 to 37.5 (at the bins' middles, 2 to 38), Sen's slope 1/s, so 40 of
// growth against max(10, 25% of the median 19.5). The line through the bins runs from -0.5 at
// 0 (said as 0: a count) to 39.5 at 40.
TEST(JudgeGrowth, ACountRisingByMoreThanTenIsRising) {
  std::vector<TrendPoint> points;
  for (int t = 0; t < 40; ++t) points.push_back({double(t), double(t)});
  const GrowthJudgement j = judge_growth(points, 0, 40, GrowthRule{});
  EXPECT_TRUE(j.evaluated);
  EXPECT_TRUE(j.rising);
  EXPECT_EQ(j.points, 40u);
  EXPECT_DOUBLE_EQ(j.from, 0);
  EXPECT_DOUBLE_EQ(j.to, 39.5);
  EXPECT_DOUBLE_EQ(j.median, 19.5);
  EXPECT_DOUBLE_EQ(j.test.slope_per_s, 1);
  EXPECT_DOUBLE_EQ(j.growth, 40);
  EXPECT_DOUBLE_EQ(j.min_growth, 10);
  EXPECT_LT(j.test.p_upward, 1e-4);
}

TEST(JudgeGrowth, ASignificantRiseOfAFewIsNot) {
  // The same shape an eighth as tall: 5 of growth, under the 10 asked; Mann-Kendall alone
  // would call it rising.
  std::vector<TrendPoint> points;
  for (int t = 0; t < 40; ++t) points.push_back({double(t), t / 8.0});
  const GrowthJudgement j = judge_growth(points, 0, 40, GrowthRule{});
  EXPECT_TRUE(j.evaluated);
  EXPECT_LT(j.test.p_upward, 1e-4);
  EXPECT_DOUBLE_EQ(j.growth, 5);
  EXPECT_FALSE(j.rising);
  // A larger median raises the bar: 25% of 1000 is 250.
  for (auto& p : points) p.value = 1000 + p.t * 5;  // 200 of growth
  const GrowthJudgement big = judge_growth(points, 0, 40, GrowthRule{});
  EXPECT_DOUBLE_EQ(big.min_growth, 0.25 * 1097.5);
  EXPECT_FALSE(big.rising);
}

TEST(JudgeGrowth, TooFewPointsAreNotEvaluated) {
  std::vector<TrendPoint> points;
  for (int t = 0; t < 29; ++t) points.push_back({double(t), double(t * 10)});
  EXPECT_FALSE(judge_growth(points, 0, 40, GrowthRule{}).evaluated);
  GrowthRule ten;
  ten.min_points = 10;
  EXPECT_TRUE(judge_growth(points, 0, 40, ten).rising);
}

}  // namespace
}  // namespace kvsweep
