// Tests for reports/request_sample: a fixed-size seeded sample that compare can still read once
// a cell's raw rows are gone.
#include "figures/request_sample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "common/error_kinds.h"
#include "figures/bootstrap.h"
#include "figures/compare.h"
#include "tests/reports/request_builders.h"

namespace kvsweep::figures {
namespace {

std::vector<store::RequestRow> many_requests(int n) {
  std::mt19937_64 random(3);
  std::lognormal_distribution<double> ttft(4.0, 0.5);
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < n; ++i) {
    const double t = ttft(random);
    rows.push_back(
        testing::ok_request(i, 0.001 * i, t, t + 900 + i % 300, 800, 64 + i % 20, 0, {}));
  }
  return rows;
}

TEST(RequestSample, FixedSizeSameInAnyOrderAndOnlyMeasuredSuccesses) {
  std::vector<store::RequestRow> rows = many_requests(10000);
  rows[5].warmup = true;
  rows[6].ok = false;
  const auto sample = sample_requests(rows);
  ASSERT_EQ(sample.size(), kRequestSampleSize);
  for (const SampledRequest& s : sample) {
    EXPECT_NE(s.index, 5);
    EXPECT_NE(s.index, 6);
  }
  EXPECT_TRUE(std::is_sorted(sample.begin(), sample.end(),
                             [](const auto& a, const auto& b) { return a.index < b.index; }));
  std::shuffle(rows.begin(), rows.end(), std::mt19937_64(9));
  const auto again = sample_requests(rows);
  ASSERT_EQ(again.size(), sample.size());
  for (std::size_t i = 0; i < sample.size(); ++i) EXPECT_EQ(again[i].index, sample[i].index);
  const auto other_seed = sample_requests(rows, kRequestSampleSize, 1);
  std::size_t same = 0;  // another seed draws another sample: about a fifth in common
  for (std::size_t i = 0; i < sample.size(); ++i) same += other_seed[i].index == sample[i].index;
  EXPECT_LT(same, sample.size() / 2);

  const auto small = sample_requests(many_requests(300));
  EXPECT_EQ(small.size(), 300u);  // kept whole
}

TEST(RequestSample, BytesKeepEveryBit) {
  std::vector<SampledRequest> sample = {{0, 1.0 / 3.0, 1e300, 1}, {7, -0.0, 5.5, 1 << 30}};
  const auto back = sample_from_bytes(sample_to_bytes(sample));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].ttft_ms, 1.0 / 3.0);
  EXPECT_EQ(back[0].e2e_ms, 1e300);
  EXPECT_TRUE(std::signbit(back[1].ttft_ms));
  EXPECT_EQ(back[1].index, 7);
  EXPECT_EQ(back[1].output_tokens, 1 << 30);
  EXPECT_EQ(sample_to_bytes(sample).size(), 56u);
  EXPECT_THROW(sample_from_bytes(std::string(27, '\0')), kvsweep::CorruptData);
}

// compare reads the sample as it reads rows: its statistics stay near the whole cell's.
TEST(RequestSample, CompareReadsTheSampleLikeTheRows) {
  const std::vector<store::RequestRow> rows = many_requests(20000);
  const RunSamples whole = run_samples(rows);
  const RunSamples sampled = run_samples(sampled_rows(sample_requests(rows)));
  EXPECT_EQ(sampled.ttft_ms.size(), kRequestSampleSize);
  EXPECT_EQ(sampled.tpot_ms.size(), kRequestSampleSize);
  for (const StatisticSpec spec :
       {StatisticSpec{Statistic::kMean, 0}, StatisticSpec{Statistic::kPercentile, 95}}) {
    const double all = compute_statistic(whole.ttft_ms, spec);
    EXPECT_NEAR(compute_statistic(sampled.ttft_ms, spec), all, 0.05 * all);
  }
  const StatisticSpec ratio{Statistic::kRatioOfSums, 0};
  const double all = compute_statistic(whole.tokens_per_e2e_s, ratio);
  EXPECT_NEAR(compute_statistic(sampled.tokens_per_e2e_s, ratio), all, 0.02 * all);
}

}  // namespace
}  // namespace kvsweep::figures
