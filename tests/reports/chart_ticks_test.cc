// Tests for reports/chart_ticks.cc: nice tick values and labels that read them exactly.
#include "reports/chart_ticks.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kvsweep::reports {
namespace {

TEST(ChartTicks, ValueAxisReachesAboveTheLargestValue) {
  // nice_ticks(0, 62.9) stops at 60; a bar of 62.9 must still sit under a tick.
  EXPECT_EQ(value_axis_ticks(62.9), (std::vector<double>{0, 20, 40, 60, 80}));
  EXPECT_EQ(value_axis_ticks(60), (std::vector<double>{0, 20, 40, 60}));
  const auto empty = value_axis_ticks(0);  // nothing to show: a unit axis, not a crash
  ASSERT_FALSE(empty.empty());
  EXPECT_DOUBLE_EQ(empty.front(), 0);
  EXPECT_NEAR(empty.back(), 1, 1e-9);
}

TEST(ChartTicks, NiceTicksAreRoundAndCoverTheRange) {
  EXPECT_EQ(nice_ticks(0, 100), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(nice_ticks(0, 7), (std::vector<double>{0, 2, 4, 6}));
  EXPECT_EQ(nice_ticks(0, 1, 4), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
}

// Nice ticks read exactly: 0.25 is not "0.2", 1.25M is not "1.2M", 3M is not "3.0M".
TEST(ChartTicks, TickLabelsAreExactAndDistinct) {
  EXPECT_EQ(tick_labels({0, 0.25, 0.5, 0.75, 1}),
            (std::vector<std::string>{"0", "0.25", "0.5", "0.75", "1"}));
  EXPECT_EQ(tick_labels({0, 250e3, 500e3, 750e3, 1e6, 1.25e6}),
            (std::vector<std::string>{"0", "250k", "500k", "750k", "1M", "1.25M"}));
  EXPECT_EQ(tick_labels({0, 1e6, 2e6, 3e6}), (std::vector<std::string>{"0", "1M", "2M", "3M"}));
  EXPECT_EQ(tick_labels({8, 32, 96}), (std::vector<std::string>{"8", "32", "96"}));
  // Accumulated floating-point noise must not show: 0.1 + 0.2 reads "0.3".
  EXPECT_EQ(tick_labels({0.1 + 0.2}), (std::vector<std::string>{"0.3"}));
  // Close ticks get more decimals rather than reading the same.
  EXPECT_EQ(tick_labels({1000, 1000.25, 1000.5}),
            (std::vector<std::string>{"1k", "1.00025k", "1.0005k"}));
}

TEST(ChartTicks, NiceTicksCarryNoAccumulatedError) {
  for (double t : nice_ticks(0, 1, 10)) {
    EXPECT_EQ(t, std::round(t * 10) / 10) << t;
  }
}

}  // namespace
}  // namespace kvsweep::reports
