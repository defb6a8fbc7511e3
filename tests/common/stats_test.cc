#include "common/stats.h"

#include <gtest/gtest.h>

namespace kvsweep {
namespace {

TEST(Percentile, InterpolatesLikeNumpy) {
  // numpy.percentile([1, 2, 3, 4], [0, 25, 50, 90, 100]) = [1, 1.75, 2.5, 3.7, 4]
  const std::vector<double> sorted{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentile(sorted, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile(sorted, 25), 1.75);
  EXPECT_DOUBLE_EQ(percentile(sorted, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile(sorted, 90), 3.7);
  EXPECT_DOUBLE_EQ(percentile(sorted, 100), 4.0);
}

TEST(Percentile, SingleSampleIsEveryPercentile) {
  EXPECT_DOUBLE_EQ(percentile({7.5}, 0), 7.5);
  EXPECT_DOUBLE_EQ(percentile({7.5}, 99), 7.5);
}

TEST(Percentile, EmptySampleIsZero) { EXPECT_DOUBLE_EQ(percentile({}, 50), 0.0); }

TEST(Summarize, SortsAndFillsEveryField) {
  // 1..100 shuffled: numpy gives median 50.5, p90 90.1, p95 95.05, p99 99.01, std 28.866...
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);
  const SampleSummary s = summarize(samples);
  EXPECT_EQ(s.count, 100u);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.median, 50.5);
  EXPECT_NEAR(s.p90, 90.1, 1e-9);
  EXPECT_NEAR(s.p95, 95.05, 1e-9);
  EXPECT_NEAR(s.p99, 99.01, 1e-9);
  EXPECT_NEAR(s.std, 28.86607004772212, 1e-9);
}

TEST(Summarize, EmptyGivesZeros) {
  const SampleSummary s = summarize({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_DOUBLE_EQ(s.mean, 0);
  EXPECT_DOUBLE_EQ(s.p99, 0);
}

}  // namespace
}  // namespace kvsweep
