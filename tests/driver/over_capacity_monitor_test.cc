#include "driver/over_capacity_monitor.h"

#include <gtest/gtest.h>

#include <functional>

namespace kvsweep::driver {
namespace {

// Feeds the monitor an open loop up to `now_s`: request i is sent at send(i) and ends at
// send(i) + busy(i); only what happened by now_s is told.
void feed(OverCapacityMonitor& monitor, double now_s, const std::function<double(int)>& send,
          const std::function<double(int)>& busy) {
  for (int i = 0; send(i) <= now_s; ++i) monitor.sent(i, send(i));
  for (int i = 0; send(i) <= now_s; ++i) {
    if (send(i) + busy(i) <= now_s) monitor.ended(i, send(i) + busy(i));
  }
}

TEST(OverCapacityMonitor, InFlightGrowingStopsTheRunOnceEnoughOfItHasRun) {
  // 20 requests a second, each 20 ms longer than the one before: the server falls behind,
  // in flight climbs about 0.29 per send.
  const auto send = [](int i) { return i * 0.05; };
  const auto busy = [](int i) { return 0.1 + 0.02 * i; };
  OverCapacityMonitor early;
  feed(early, 8, send, busy);
  EXPECT_FALSE(early.check(8, 0));  // before 10 s: too early to tell
  OverCapacityMonitor monitor;
  feed(monitor, 10, send, busy);
  const auto reason = monitor.check(10, 0);
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->rfind("in flight grew from ", 0), 0u) << *reason;
  EXPECT_NE(reason->find(" over 8 s "), std::string::npos) << *reason;
}

TEST(OverCapacityMonitor, ASteadyInFlightNeverStopsIt) {
  const auto send = [](int i) { return i * 0.05; };
  const auto busy = [](int i) { return 0.3 + 0.01 * (i * 37 % 11); };
  for (double now = 10; now <= 30; now += 2) {
    OverCapacityMonitor fresh;
    feed(fresh, now, send, busy);
    for (double t = 0; t <= now; t += 0.05) fresh.backlog(t, 0);
    EXPECT_FALSE(fresh.check(now, 0)) << now;
  }
}

TEST(OverCapacityMonitor, ABacklogGrowingBehindTheCapStopsIt) {
  // 100 arrivals a second, 20 sent a second (a cap of 10 held by 0.5 s requests): in flight
  // stays 10, the requests due and not sent grow by 80 a second.
  OverCapacityMonitor monitor;
  feed(
      monitor, 12, [](int i) { return i * 0.05; }, [](int) { return 0.5; });
  for (int k = 0; k <= 240; ++k) monitor.backlog(k * 0.05, static_cast<std::size_t>(4 * k));
  const auto reason = monitor.check(12, 0);
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->rfind("requests waiting to be sent grew by ", 0), 0u) << *reason;
}

TEST(OverCapacityMonitor, ChecksAtMostEveryTwoSeconds) {
  OverCapacityMonitor monitor;
  EXPECT_FALSE(monitor.check(10, 0));  // nothing yet
  feed(
      monitor, 12, [](int i) { return i * 0.05; }, [](int i) { return 0.1 + 0.02 * i; });
  EXPECT_FALSE(monitor.check(11, 0));  // checked at 10 s: the next check is due at 12 s
  EXPECT_TRUE(monitor.check(12, 0));
}

}  // namespace
}  // namespace kvsweep::driver
