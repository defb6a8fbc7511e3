// Tests for reports/svg_chart.cc: escaping, layout, text size and each chart's shape.
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

TEST(SvgChart, DashedSeriesHaveNoMarkersAndMarkerSeriesNoLine) {
  ChartSeries live{"live p95", {{0, 10}, {1, 12}, {2, 11}}};
  ChartSeries baseline{"baseline p95", {{0, 15}, {2, 15}}, SeriesStyle::kDashed};
  ChartSeries marked{"regression", {{1, 12}}, SeriesStyle::kMarkers};
  const std::string svg = svg_line_chart({}, {live, baseline, marked});
  EXPECT_EQ(count(svg, "<polyline"), 2u);
  EXPECT_EQ(count(svg, "stroke-dasharray"), 1u);
  EXPECT_EQ(count(svg, "class=\"series markers\""), 1u);
  EXPECT_EQ(count(svg, "r=\"3.5\""), 3u);                        // the live line's markers only
  EXPECT_EQ(count(svg, "r=\"7\""), 1u);                          // the ring on the marked point
  EXPECT_NE(svg.find(">regression</text>"), std::string::npos);  // in the legend
}

TEST(SvgChart, CdfEndsAtOneAndBarsSkipMissingValues) {
  const std::string cdf = svg_cdf_chart({}, {{"a", {{3, 0}, {1, 0}, {2, 0}}}});
  EXPECT_EQ(count(cdf, "<polyline"), 1u);
  BarData bars{
      {"1", "8"}, {"a", "b"}, {{0.5, 0.7}, {std::numeric_limits<double>::quiet_NaN(), 0.9}}};
  EXPECT_EQ(count(svg_grouped_bars({}, bars), "<rect class=\"bar\""), 3u);
}

TEST(SvgChart, CdfAndThroughputAxesShowExactTicks) {
  const std::string cdf = svg_cdf_chart({}, {{"a", {{3, 0}, {1, 0}, {2, 0}}}});
  EXPECT_NE(cdf.find(">0.25</text>"), std::string::npos) << cdf;
  EXPECT_NE(cdf.find(">0.75</text>"), std::string::npos) << cdf;
  const std::string throughput =
      svg_line_chart({}, {{"a", {{1, 1.2e6}, {8, 1.25e6}}}}, /*categorical_x=*/true);
  EXPECT_NE(throughput.find(">1.25M</text>"), std::string::npos) << throughput;
  EXPECT_EQ(throughput.find(">1.2M</text>"), std::string::npos) << throughput;
}

bool inside(const Box& inner, const ChartFrame& frame) {
  return inner.x >= 0 && inner.y >= 0 && inner.x + inner.width <= frame.width &&
         inner.y + inner.height <= frame.height;
}

// The x-axis title, the tick labels and the legend each get their own band: none touches
// another, with a few units of air between them, for short and long legends alike.
TEST(SvgChart, LayoutKeepsAxisTitleTicksAndLegendApart) {
  const ChartFrame frame;
  for (const std::vector<std::string>& names :
       {std::vector<std::string>{"random", "least-load", "prefix-hash"},
        std::vector<std::string>{"round-robin #1", "least-load #1", "prefix-hash #1", "kv-aware #1",
                                 "session #1", "random #1", "a very long strategy name #12",
                                 std::string(120, 'x')}}) {
    const ChartLayout layout = chart_layout(frame, names);
    ASSERT_EQ(layout.legend.size(), names.size());
    EXPECT_GE(layout.x_tick_labels.y, layout.plot.y + layout.plot.height);
    EXPECT_GE(layout.x_title.y, layout.x_tick_labels.y + layout.x_tick_labels.height + 2);
    EXPECT_TRUE(inside(layout.x_title, frame));
    for (std::size_t i = 0; i < layout.legend.size(); ++i) {
      const Box& entry = layout.legend[i];
      EXPECT_TRUE(inside(entry, frame)) << names[i];
      EXPECT_FALSE(boxes_overlap(entry, layout.x_title, /*gap=*/4)) << names[i];
      EXPECT_FALSE(boxes_overlap(entry, layout.x_tick_labels, 4)) << names[i];
      EXPECT_FALSE(boxes_overlap(entry, layout.plot, 4)) << names[i];
      for (std::size_t j = 0; j < i; ++j) {
        EXPECT_FALSE(boxes_overlap(entry, layout.legend[j], 2)) << names[i] << " / " << names[j];
      }
    }
    EXPECT_GT(layout.plot.height, frame.height / 3.0);
  }
}

TEST(SvgChart, LegendCutsANameWiderThanTheChart) {
  const std::string svg = svg_line_chart({}, {{std::string(200, 'n') + "<end>", {{1, 2}}}}, true);
  EXPECT_NE(svg.find("nnn...</text>"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("&lt;end&gt;"), std::string::npos);
}

TEST(SvgChart, BoxesOverlapCountsTheGap) {
  const Box a{0, 0, 10, 10};
  EXPECT_TRUE(boxes_overlap(a, {5, 5, 10, 10}));
  EXPECT_FALSE(boxes_overlap(a, {0, 12, 10, 10}));
  EXPECT_TRUE(boxes_overlap(a, {0, 12, 10, 10}, /*gap=*/4));
}

// Text sized for reading: the viewBox is about as wide as a chart is shown on a laptop
// (two per row at 1400 px), so 12-unit tick text shows at about 12 px.
TEST(SvgChart, TickTextIsTwelveUnitsInAViewBoxOfDisplayWidth) {
  const ChartFrame frame;
  EXPECT_LE(frame.width, 600);
  const std::string svg = svg_line_chart(frame, {{"a", {{1, 2}, {2, 3}}}}, true);
  EXPECT_NE(svg.find("<g class=\"axes\" font-size=\"12\">"), std::string::npos) << svg;
  EXPECT_NE(svg.find("class=\"x-title\""), std::string::npos);
}

TEST(SvgChart, EmptyDataSaysSoInsteadOfDrawingAxes) {
  EXPECT_NE(svg_line_chart({}, {{"a", {}}}).find("no measured data"), std::string::npos);
  EXPECT_NE(svg_cdf_chart({}, {}).find("no measured data"), std::string::npos);
}

}  // namespace
}  // namespace kvsweep::reports
