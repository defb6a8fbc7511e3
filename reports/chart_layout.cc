// Where a chart's parts go: text widths estimated from glyph counts, legend rows, plot area.
#include "reports/chart_layout.h"

#include <algorithm>

namespace kvsweep::reports {
namespace {

// Text boxes are estimated, not measured (no script in the page): 0.62 em per character is
// wider than DejaVu Sans and system-ui fonts average, so estimated boxes contain real ones.
constexpr double kEmPerChar = 0.62;
constexpr double kAscent = 0.95;     // of the font size, above the baseline
constexpr double kDescent = 0.3;     // below it
constexpr double kMarginLeft = 72;   // y tick labels and the rotated y title
constexpr double kMarginRight = 24;  // half of a last x tick label
constexpr double kPlotTop = 40;      // below the chart title
constexpr double kBottomPad = 6;
constexpr double kBandGap = 6;  // air between tick labels, x title and legend
constexpr double kLegendRow = 20;
constexpr double kLegendEntryGap = 18;

// Characters, not bytes: a UTF-8 strategy name is as wide as it reads.
std::size_t glyphs(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

double text_width(const std::string& text, double font) {
  return static_cast<double>(glyphs(text)) * kEmPerChar * font;
}

// The longest prefix of text (whole UTF-8 characters) that fits max_width, with "..." when cut:
// a legend entry never runs past the chart's edge.
std::string fit_text(const std::string& text, double max_width, double font) {
  if (text_width(text, font) <= max_width) return text;
  const auto keep = static_cast<std::size_t>(std::max(0.0, max_width / (kEmPerChar * font) - 3));
  std::size_t chars = 0;
  std::size_t end = 0;
  for (; end < text.size(); ++end) {
    if ((static_cast<unsigned char>(text[end]) & 0xC0) != 0x80 && chars++ == keep) break;
  }
  return text.substr(0, end) + "...";
}

// The widest a legend entry may be: one row of the plot's width.
double legend_row_width(const ChartFrame& frame) {
  return frame.width - kMarginLeft - kMarginRight;
}

}  // namespace

double baseline_of(const Box& text_box, double font) { return text_box.y + kAscent * font; }

std::string legend_text(const ChartFrame& frame, const std::string& name) {
  return fit_text(name, legend_row_width(frame) - kLegendSwatch - 4, kLegendFont);
}

bool boxes_overlap(const Box& a, const Box& b, double gap) {
  return a.x < b.x + b.width + gap && b.x < a.x + a.width + gap && a.y < b.y + b.height + gap &&
         b.y < a.y + a.height + gap;
}

ChartLayout chart_layout(const ChartFrame& frame, const std::vector<std::string>& legend_names) {
  ChartLayout layout;
  const double left = kMarginLeft;
  const double right = frame.width - kMarginRight;
  const double entry_height = (kAscent + kDescent) * kLegendFont;

  // Legend entries flow left to right under the plot, a new row when the next would pass the
  // plot's right edge; rows are placed once their number is known.
  std::vector<int> rows;
  double x = left;
  int row = 0;
  for (const std::string& name : legend_names) {
    const double width = kLegendSwatch + 4 + text_width(legend_text(frame, name), kLegendFont);
    if (x > left && x + width > right) {
      ++row;
      x = left;
    }
    layout.legend.push_back({x, 0, width, entry_height});
    rows.push_back(row);
    x += width + kLegendEntryGap;
  }
  const int row_count = legend_names.empty() ? 0 : row + 1;
  const double legend_top = frame.height - kBottomPad - row_count * kLegendRow;
  for (std::size_t i = 0; i < layout.legend.size(); ++i) {
    layout.legend[i].y = legend_top + rows[i] * kLegendRow + (kLegendRow - entry_height) / 2;
  }

  // From the legend up: the x title, then the tick labels, then the plot.
  const double title_height = (kAscent + kDescent) * kAxisTitleFont;
  const double title_width = text_width(frame.x_label, kAxisTitleFont);
  layout.x_title = {(left + right - title_width) / 2, legend_top - kBandGap - title_height,
                    title_width, title_height};
  const double ticks_height = (kAscent + kDescent) * kTickFont;
  layout.x_tick_labels = {left - kMarginRight, layout.x_title.y - kBandGap / 3 - ticks_height,
                          right - left + 2 * kMarginRight, ticks_height};
  const double plot_bottom = layout.x_tick_labels.y - kTickLength - 2;
  layout.plot = {left, kPlotTop, right - left, std::max(1.0, plot_bottom - kPlotTop)};
  return layout;
}

}  // namespace kvsweep::reports
