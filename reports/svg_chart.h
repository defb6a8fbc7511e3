// Inline SVG charts drawn by kvsweep itself (line, CDF, grouped bars), so an HTML report needs
// no script and no network.
#pragma once

#include <string>
#include <vector>

#include "reports/chart_layout.h"
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
