// Tests for driver/arrival_schedule.cc: seeded gamma arrivals, rescaling, burstiness.
#include "driver/arrival_schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kvsweep::driver {
namespace {

std::vector<double> gaps_of(const std::vector<double>& times) {
  std::vector<double> gaps;
  double previous = 0;
  for (double t : times) {
    gaps.push_back(t - previous);
    previous = t;
  }
  return gaps;
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double coefficient_of_variation(const std::vector<double>& values) {
  const double m = mean(values);
  double squares = 0;
  for (double v : values) squares += (v - m) * (v - m);
  return std::sqrt(squares / static_cast<double>(values.size())) / m;
}

TEST(ArrivalSchedule, SameSeedSameTimesOtherSeedOtherTimes) {
  EXPECT_EQ(gamma_arrival_times(50, 1, 200, 7), gamma_arrival_times(50, 1, 200, 7));
  EXPECT_NE(gamma_arrival_times(50, 1, 200, 7), gamma_arrival_times(50, 1, 200, 8));
  GammaArrivals a(50, 1, 7), b(50, 1, 7);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next(), b.next());
}

TEST(ArrivalSchedule, RescaledSoTheLastArrivalIsAtCountOverRate) {
  const std::vector<double> times = gamma_arrival_times(40, 0.5, 1000, 3);
  ASSERT_EQ(times.size(), 1000u);
  EXPECT_NEAR(times.back(), 1000.0 / 40.0, 1e-9);
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
  EXPECT_GT(times.front(), 0);
  EXPECT_NEAR(mean(gaps_of(times)), 1.0 / 40.0, 1e-9);
}

TEST(ArrivalSchedule, UnscaledMeanGapIsOneOverRate) {
  GammaArrivals arrivals(100, 1, 11);
  std::vector<double> times;
  for (int i = 0; i < 20000; ++i) times.push_back(arrivals.next());
  // 20,000 exponential gaps: the mean is within a few percent of 1/rate for any seed.
  EXPECT_NEAR(mean(gaps_of(times)), 0.01, 0.0005);
}

TEST(ArrivalSchedule, BurstinessSetsTheVarianceOfGaps) {
  // Gamma gaps have CV = 1/sqrt(shape): 2 for shape 0.25, 1 for Poisson, 0.5 for shape 4.
  const double bursty = coefficient_of_variation(gaps_of(gamma_arrival_times(100, 0.25, 20000, 5)));
  const double poisson = coefficient_of_variation(gaps_of(gamma_arrival_times(100, 1, 20000, 5)));
  const double even = coefficient_of_variation(gaps_of(gamma_arrival_times(100, 4, 20000, 5)));
  EXPECT_NEAR(bursty, 2.0, 0.15);
  EXPECT_NEAR(poisson, 1.0, 0.05);
  EXPECT_NEAR(even, 0.5, 0.03);
}

TEST(ArrivalSchedule, InfiniteRateSendsEverythingAtZero) {
  const auto times = gamma_arrival_times(std::numeric_limits<double>::infinity(), 1, 5, 1);
  EXPECT_EQ(times, std::vector<double>(5, 0.0));
}

TEST(ArrivalSchedule, RejectsBadParameters) {
  EXPECT_THROW(GammaArrivals(0, 1, 1), std::invalid_argument);
  EXPECT_THROW(GammaArrivals(10, 0, 1), std::invalid_argument);
}

}  // namespace
}  // namespace kvsweep::driver
