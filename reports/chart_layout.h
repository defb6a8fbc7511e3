// Where a chart's parts go: its frame, fonts and margins, estimated text boxes, the layout.
#pragma once

#include <string>
#include <vector>

namespace kvsweep::reports {

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

// Font sizes in viewBox units; ChartFrame's width makes one unit about one CSS pixel.
inline constexpr int kTickFont = 12;
inline constexpr int kAxisTitleFont = 13;
inline constexpr int kLegendFont = 12;
inline constexpr double kTickLength = 4;
inline constexpr double kLegendSwatch = 12;

// The baseline of text drawn in `text_box` at `font`.
double baseline_of(const Box& text_box, double font);

// A legend entry's text as drawn: cut with "..." to fit one row of the plot's width.
std::string legend_text(const ChartFrame& frame, const std::string& name);

}  // namespace kvsweep::reports
