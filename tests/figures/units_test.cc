// Tests for figures/units.cc: the number formats every renderer shares.
#include "figures/units.h"

#include <gtest/gtest.h>

namespace kvsweep::figures {
namespace {

TEST(Units, FixedRoundsAndNeverPrintsNegativeZero) {
  EXPECT_EQ(format_fixed(39163.8, 2), "39163.80");
  EXPECT_EQ(format_fixed(0.125, 1), "0.1");  // round-half-even on the binary value, as printf
  EXPECT_EQ(format_fixed(-0.001, 2), "0.00");
  EXPECT_EQ(format_fixed(-1.5, 1), "-1.5");
}

TEST(Units, MillisecondsAndRates) {
  EXPECT_EQ(format_ms(237.0649), "237.06");
  EXPECT_EQ(format_rate(67333.714), "67333.71");
}

TEST(Units, PercentAndRatioSayNotAvailable) {
  EXPECT_EQ(format_percent(0.8734), "87.3");
  EXPECT_EQ(format_percent(std::nullopt), "n/a");
  EXPECT_EQ(format_ratio(0.3127), "0.31x");
  EXPECT_EQ(format_ratio(std::nullopt), "n/a");
}

TEST(Units, SiScalesByThousands) {
  EXPECT_EQ(format_si(950), "950");
  EXPECT_EQ(format_si(12.5), "12.5");
  EXPECT_EQ(format_si(1234), "1.2k");
  EXPECT_EQ(format_si(999960), "1.0M");
  EXPECT_EQ(format_si(2.5e6), "2.5M");
  EXPECT_EQ(format_si(-47609.83), "-47.6k");
}

TEST(Units, SiWithThreeSignificantDigits) {
  EXPECT_EQ(format_si3(1243.74), "1.24k");
  EXPECT_EQ(format_si3(409363.2), "409k");
  EXPECT_EQ(format_si3(2694123), "2.69M");
  EXPECT_EQ(format_si3(63.55), "63.5");  // round-half-even on the binary value, as printf
  EXPECT_EQ(format_si3(7), "7.00");
  EXPECT_EQ(format_si3(999.6), "1.00k");
  EXPECT_EQ(format_si3(0), "0.00");
}

}  // namespace
}  // namespace kvsweep::figures
