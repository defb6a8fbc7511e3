#include "common/wall_clock.h"

#include <gtest/gtest.h>

namespace kvsweep {
namespace {

TEST(WallClock, FormatsUtcIso8601) {
  EXPECT_EQ(utc_iso8601(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(utc_iso8601(1795321800.75), "2026-11-22T04:30:00Z");
}

TEST(WallClock, NowIsAfterThisCodeWasWritten) {
  EXPECT_GT(unix_now_s(), 1767225600.0);  // 2026-01-01
}

}  // namespace
}  // namespace kvsweep
