// Tests for reports/svg_chart.cc: ticks, escaping, and each chart's shape.
#include "reports/svg_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kvsweep::reports {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(SvgChart, ValueAxisReachesAboveTheLargestValue) {
  // nice_ticks(0, 62.9) stops at 60; a bar of 62.9 must still sit under a tick.
  EXPECT_EQ(value_axis_ticks(62.9), (std::vector<double>{0, 20, 40, 60, 80}));
  EXPECT_EQ(value_axis_ticks(60), (std::vector<double>{0, 20, 40, 60}));
  const auto empty = value_axis_ticks(0);  // nothing to show: a unit axis, not a crash
  ASSERT_FALSE(empty.empty());
  EXPECT_DOUBLE_EQ(empty.front(), 0);
  EXPECT_NEAR(empty.back(), 1, 1e-9);
}

TEST(SvgChart, NiceTicksAreRoundAndCoverTheRange) {
  EXPECT_EQ(nice_ticks(0, 100), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(nice_ticks(0, 7), (std::vector<double>{0, 2, 4, 6}));
  EXPECT_EQ(nice_ticks(0, 1, 4), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
}

TEST(SvgChart, EscapesEveryUserString) {
  ChartFrame frame;
  frame.title = "<script>alert(1)</script>";
  frame.x_label = "a&b";
  const std::string svg =
      svg_line_chart(frame, {{"\"q\" <b>", {{1, 2}, {2, 3}}}}, /*categorical_x=*/true);
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(svg.find("a&amp;b"), std::string::npos);
  EXPECT_NE(svg.find("&quot;q&quot; &lt;b&gt;"), std::string::npos);
}

TEST(SvgChart, LineChartDrawsOneLineAndMarkersPerSeries) {
  const std::string svg = svg_line_chart(
      {}, {{"random", {{1, 10}, {8, 40}, {64, 90}}}, {"prefix-hash", {{1, 9}, {8, 12}}}}, true);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(count(svg, "<polyline"), 2u);
  EXPECT_EQ(count(svg, "<circle"), 5u);
  EXPECT_NE(svg.find(">64</text>"), std::string::npos);  // categorical tick labels
}

TEST(SvgChart, CdfEndsAtOneAndBarsSkipMissingValues) {
  const std::string cdf = svg_cdf_chart({}, {{"a", {{3, 0}, {1, 0}, {2, 0}}}});
  EXPECT_EQ(count(cdf, "<polyline"), 1u);
  BarData bars{{"1", "8"}, {"a", "b"}, {{0.5, 0.7}, {std::numeric_limits<double>::quiet_NaN(), 0.9}}};
  EXPECT_EQ(count(svg_grouped_bars({}, bars), "<rect class=\"bar\""), 3u);
}

TEST(SvgChart, EmptyDataSaysSoInsteadOfDrawingAxes) {
  EXPECT_NE(svg_line_chart({}, {{"a", {}}}).find("no measured data"), std::string::npos);
  EXPECT_NE(svg_cdf_chart({}, {}).find("no measured data"), std::string::npos);
}

}  // namespace
}  // namespace kvsweep::reports
