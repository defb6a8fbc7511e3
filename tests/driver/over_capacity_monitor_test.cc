#include "driver/over_capacity_monitor.h"

#include <gtest/gtest.h>

namespace kvsweep::driver {
namespace {

TEST(OverCapacityMonitor, ARisingTtftStopsTheRunOnceEnoughOfItHasRun) {
  OverCapacityMonitor monitor;
  // 20 requests a second, each TTFT 10 ms longer than the one before.
  for (int i = 0; i < 180; ++i) monitor.add(i * 0.05, 100 + 10.0 * i);
  EXPECT_FALSE(monitor.check(8, 0));  // before 10 s: too early to tell
  const auto reason = monitor.check(10, 0);
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->rfind("TTFT rises 200 ms per second through the cell", 0), 0u) << *reason;
}

TEST(OverCapacityMonitor, ASteadyTtftNeverStopsIt) {
  OverCapacityMonitor monitor;
  for (int i = 0; i < 600; ++i) monitor.add(i * 0.05, 100 + (i * 37 % 11));
  for (double now = 10; now <= 30; now += 2) EXPECT_FALSE(monitor.check(now, 0)) << now;
}

TEST(OverCapacityMonitor, ChecksAtMostEveryTwoSeconds) {
  OverCapacityMonitor monitor;
  EXPECT_FALSE(monitor.check(10, 0));  // nothing yet
  for (int i = 0; i < 200; ++i) monitor.add(i * 0.05, 100 + 10.0 * i);
  EXPECT_FALSE(monitor.check(11, 0));  // checked at 10 s: the next check is due at 12 s
  EXPECT_TRUE(monitor.check(12, 0));
}

}  // namespace
}  // namespace kvsweep::driver
