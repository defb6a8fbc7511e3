// Inline SVG charts drawn by kvsweep itself (line, CDF, grouped bars), so an HTML report needs
// no script and no network.
#pragma once

#include <string>
#include <vector>

#include "reports/chart_ticks.h"

namespace kvsweep::reports {

struct ChartPoint {
  double x = 0;
  double y = 0;
};

// How a line chart draws a series: a solid line with markers (the default), a dashed line
// without markers (a reference, such as a stored baseline under live figures), or markers
// alone (points picked out on another series, such as regressions on a history line).
// Dashed lines mark their points with small open rings, so a reference of one point shows.
enum class SeriesStyle { kLine, kDashed, kMarkers };

struct ChartSeries {
  std::string name;                        // legend text; escaped by the chart
  std::vector<ChartPoint> points;          // drawn in the given order
  SeriesStyle style = SeriesStyle::kLine;  // line charts only
  // Line charts: the palette entry; -1 takes the series' position. A reference drawn for
  // another series (its baseline, its rolling median) takes that series' colour.
  int colour = -1;
};

// What every chart shares. Every string is plain text: the chart escapes it for SVG.
struct ChartFrame {
  std::string title;
  std::string x_label;
  std::string y_label;
  // The viewBox. The SVG scales to its container, text with it: the width is about what a
  // chart is shown at (two per row on a 1400 px page), so 12-unit text reads at ~12 px.
  int width = 560;
  int height = 340;
};

// A rectangle in viewBox units, y downwards.
struct Box {
  double x = 0;
  double y = 0;
  double width = 0;
  double height = 0;
};

// True when a and b come closer than gap (0: when they intersect).
bool boxes_overlap(const Box& a, const Box& b, double gap = 0);

// Where the parts of a chart go. Each text box is an estimate that errs wide (0.62 em per
// character, ascent and descent included), so parts placed apart here stay apart on screen.
struct ChartLayout {
  Box plot;                 // the data area
  Box x_tick_labels;        // the band of x tick labels under the plot
  Box x_title;              // the x-axis title
  std::vector<Box> legend;  // one box per entry (swatch and name), in the given order
};
ChartLayout chart_layout(const ChartFrame& frame, const std::vector<std::string>& legend_names);

// A line chart on linear axes with "nice" ticks, one colour and marker per series, a legend.
// With categorical_x, the x values are placed evenly in ascending order (concurrency levels
// 1, 8, 64 read better evenly spaced) and labelled with their values.
std::string svg_line_chart(const ChartFrame& frame, const std::vector<ChartSeries>& series,
                           bool categorical_x = false);

// Empirical CDFs: each series holds raw samples in points[i].x (any order); y is computed.
// Large samples are thinned to at most kMaxCdfSteps steps, keeping the first and last.
std::string svg_cdf_chart(const ChartFrame& frame, const std::vector<ChartSeries>& samples);

// Grouped bars: one group per category, one bar per series; values[s][c] is series s in
// category c (a NaN value draws no bar).
struct BarData {
  std::vector<std::string> categories;
  std::vector<std::string> series;
  std::vector<std::vector<double>> values;
};
std::string svg_grouped_bars(const ChartFrame& frame, const BarData& data);

// &, <, >, " and ' as entities: safe in element text and in quoted attributes of HTML and SVG.
std::string xml_escape(const std::string& text);

}  // namespace kvsweep::reports
