// Tests for common/duration.cc: the duration forms files and options accept.
#include "common/duration.h"

#include <gtest/gtest.h>

namespace kvsweep {
namespace {

TEST(Duration, AcceptsUnits) {
  EXPECT_DOUBLE_EQ(*parse_duration_s("90s"), 90);
  EXPECT_DOUBLE_EQ(*parse_duration_s("5m"), 300);
  EXPECT_DOUBLE_EQ(*parse_duration_s("250ms"), 0.25);
  EXPECT_DOUBLE_EQ(*parse_duration_s("2h"), 7200);
  EXPECT_DOUBLE_EQ(*parse_duration_s("12.5"), 12.5);
  EXPECT_FALSE(parse_duration_s("5 minutes").has_value());
  EXPECT_FALSE(parse_duration_s("").has_value());
}

TEST(Duration, RefusesInfinityAndNaN) {
  EXPECT_FALSE(parse_duration_s("inf").has_value());
  EXPECT_FALSE(parse_duration_s("nan").has_value());
  EXPECT_FALSE(parse_duration_s("1e999s").has_value());
}

}  // namespace
}  // namespace kvsweep
