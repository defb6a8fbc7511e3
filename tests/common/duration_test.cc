// Tests for common/duration.cc: the duration forms files and options accept, and how messages
// write one.
#include "common/duration.h"

#include <gtest/gtest.h>

namespace kvsweep {
namespace {

TEST(Duration, AcceptsUnits) {
  EXPECT_DOUBLE_EQ(*parse_duration_s("90s"), 90);
  EXPECT_DOUBLE_EQ(*parse_duration_s("5m"), 300);
  EXPECT_DOUBLE_EQ(*parse_duration_s("250ms"), 0.25);
  EXPECT_DOUBLE_EQ(*parse_duration_s("2h"), 7200);
  EXPECT_DOUBLE_EQ(*parse_duration_s("30d"), 30 * 86400.0);
  EXPECT_DOUBLE_EQ(*parse_duration_s("12.5"), 12.5);
  EXPECT_FALSE(parse_duration_s("5 minutes").has_value());
  EXPECT_FALSE(parse_duration_s("").has_value());
}

TEST(Duration, RefusesInfinityAndNaN) {
  EXPECT_FALSE(parse_duration_s("inf").has_value());
  EXPECT_FALSE(parse_duration_s("nan").has_value());
  EXPECT_FALSE(parse_duration_s("1e999s").has_value());
}

// Messages said "first byte timeout: no response within 5.000000 s of the send".
TEST(Duration, MessagesWriteItAsPeopleDo) {
  EXPECT_EQ(format_duration_s(5), "5 s");
  EXPECT_EQ(format_duration_s(300), "300 s");
  EXPECT_EQ(format_duration_s(12.34), "12.3 s");
  EXPECT_EQ(format_duration_s(1.5), "1.5 s");
  EXPECT_EQ(format_duration_s(1.256), "1.26 s");
  EXPECT_EQ(format_duration_s(0.25), "250 ms");
  EXPECT_EQ(format_duration_s(0.0015), "1.5 ms");
  EXPECT_EQ(format_duration_s(0.9999), "1 s");
  EXPECT_EQ(format_duration_s(0), "0 s");
  EXPECT_EQ(format_duration_s(1800), "1800 s");
}

}  // namespace
}  // namespace kvsweep
