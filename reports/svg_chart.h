// Inline SVG charts drawn by kvsweep itself (line, CDF, grouped bars), so an HTML report needs
// no script and no network.
#pragma once

#include <string>
#include <vector>

namespace kvsweep::reports {

struct ChartPoint {
  double x = 0;
  double y = 0;
};

struct ChartSeries {
  std::string name;                // legend text; escaped by the chart
  std::vector<ChartPoint> points;  // drawn in the given order
};

// What every chart shares. Every string is plain text: the chart escapes it for SVG.
struct ChartFrame {
  std::string title;
  std::string x_label;
  std::string y_label;
  int width = 640;   // the viewBox; the SVG scales to its container
  int height = 360;
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

// Up to ~target_count round tick values (1, 2, 2.5, 5 x 10^k) covering [low, high].
std::vector<double> nice_ticks(double low, double high, int target_count = 5);
// Ticks of a value axis from 0: nice_ticks, plus one more step when the largest value would
// stand above the last tick.
std::vector<double> value_axis_ticks(double max);

}  // namespace kvsweep::reports
