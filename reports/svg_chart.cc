// Inline SVG charts: axes, ticks, legend, lines, CDF steps and grouped bars.
#include "reports/svg_chart.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

#include "reports/units.h"

namespace kvsweep::reports {
namespace {

constexpr std::size_t kMaxCdfSteps = 200;
// Colour-blind-safe (Okabe-Ito), so strategies stay apart on a phone and in print.
constexpr std::array<const char*, 8> kColours = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                                 "#e69f00", "#56b4e9", "#f0e442", "#000000"};
constexpr int kMarginLeft = 64;
constexpr int kMarginRight = 16;
constexpr int kMarginTop = 34;
constexpr int kMarginBottom = 48;
constexpr int kLegendRow = 18;

const char* colour(std::size_t i) { return kColours[i % kColours.size()]; }

std::string num(double v) { return format_fixed(v, 1); }

struct Range {
  double low = 0;
  double high = 1;
};

// Maps data to pixels inside the plot area (below the title, above the legend).
class Plot {
 public:
  Plot(const ChartFrame& frame, Range x, Range y, int legend_rows)
      : frame_(frame), x_(x), y_(y) {
    left_ = kMarginLeft;
    right_ = frame.width - kMarginRight;
    top_ = kMarginTop;
    bottom_ = frame.height - kMarginBottom - legend_rows * kLegendRow;
    if (x_.high <= x_.low) x_.high = x_.low + 1;
    if (y_.high <= y_.low) y_.high = y_.low + 1;
  }
  double px(double x) const { return left_ + (x - x_.low) / (x_.high - x_.low) * (right_ - left_); }
  double py(double y) const { return bottom_ - (y - y_.low) / (y_.high - y_.low) * (bottom_ - top_); }
  double left() const { return left_; }
  double right() const { return right_; }
  double top() const { return top_; }
  double bottom() const { return bottom_; }
  const ChartFrame& frame() const { return frame_; }

 private:
  const ChartFrame& frame_;
  Range x_;
  Range y_;
  double left_, right_, top_, bottom_;
};

std::string open_svg(const ChartFrame& frame) {
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" role=\"img\" viewBox=\"0 0 " +
                  std::to_string(frame.width) + " " + std::to_string(frame.height) +
                  "\" aria-label=\"" + xml_escape(frame.title) + "\">\n";
  s += "<title>" + xml_escape(frame.title) + "</title>\n";
  s += "<text x=\"" + std::to_string(frame.width / 2) +
       "\" y=\"20\" text-anchor=\"middle\" class=\"chart-title\">" + xml_escape(frame.title) +
       "</text>\n";
  return s;
}

// Grid lines, tick labels and axis titles. x_labels, when given, replaces numeric x ticks.
std::string axes(const Plot& plot, const std::vector<double>& y_ticks,
                 const std::vector<std::pair<double, std::string>>& x_ticks) {
  std::string s = "<g class=\"axes\" font-size=\"11\">\n";
  for (double t : y_ticks) {
    const std::string y = num(plot.py(t));
    s += "<line x1=\"" + num(plot.left()) + "\" x2=\"" + num(plot.right()) + "\" y1=\"" + y +
         "\" y2=\"" + y + "\" stroke=\"#ddd\"/>";
    s += "<text x=\"" + num(plot.left() - 6) + "\" y=\"" + y +
         "\" text-anchor=\"end\" dominant-baseline=\"middle\">" + xml_escape(format_si(t)) +
         "</text>\n";
  }
  for (const auto& [x, label] : x_ticks) {
    const std::string xs = num(plot.px(x));
    s += "<line x1=\"" + xs + "\" x2=\"" + xs + "\" y1=\"" + num(plot.bottom()) + "\" y2=\"" +
         num(plot.bottom() + 4) + "\" stroke=\"#444\"/>";
    s += "<text x=\"" + xs + "\" y=\"" + num(plot.bottom() + 16) + "\" text-anchor=\"middle\">" +
         xml_escape(label) + "</text>\n";
  }
  s += "<line x1=\"" + num(plot.left()) + "\" x2=\"" + num(plot.left()) + "\" y1=\"" +
       num(plot.top()) + "\" y2=\"" + num(plot.bottom()) + "\" stroke=\"#444\"/>";
  s += "<line x1=\"" + num(plot.left()) + "\" x2=\"" + num(plot.right()) + "\" y1=\"" +
       num(plot.bottom()) + "\" y2=\"" + num(plot.bottom()) + "\" stroke=\"#444\"/>\n";
  s += "<text x=\"" + num((plot.left() + plot.right()) / 2) + "\" y=\"" +
       num(plot.bottom() + 34) + "\" text-anchor=\"middle\">" +
       xml_escape(plot.frame().x_label) + "</text>\n";
  const std::string mid_y = num((plot.top() + plot.bottom()) / 2);
  s += "<text x=\"14\" y=\"" + mid_y + "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " +
       mid_y + ")\">" + xml_escape(plot.frame().y_label) + "</text>\n";
  return s + "</g>\n";
}

// Legend rows under the plot: as many entries per row as fit the width.
int legend_rows(const ChartFrame& frame, std::size_t entries) {
  const int per_row = std::max(1, (frame.width - kMarginLeft) / 150);
  return static_cast<int>((entries + per_row - 1) / per_row);
}

std::string legend(const ChartFrame& frame, const std::vector<std::string>& names) {
  const int per_row = std::max(1, (frame.width - kMarginLeft) / 150);
  const int rows = legend_rows(frame, names.size());
  std::string s = "<g class=\"legend\" font-size=\"12\">\n";
  for (std::size_t i = 0; i < names.size(); ++i) {
    const int row = static_cast<int>(i) / per_row;
    const int col = static_cast<int>(i) % per_row;
    const int x = kMarginLeft + col * 150;
    const int y = frame.height - (rows - row) * kLegendRow - 2;
    s += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y - 9) +
         "\" width=\"12\" height=\"10\" fill=\"" + colour(i) + "\"/>";
    s += "<text x=\"" + std::to_string(x + 16) + "\" y=\"" + std::to_string(y) + "\">" +
         xml_escape(names[i]) + "</text>\n";
  }
  return s + "</g>\n";
}

Range y_range_from_zero(double max_value) {
  return {0, max_value > 0 ? max_value : 1};
}

std::vector<std::string> names_of(const std::vector<ChartSeries>& series) {
  std::vector<std::string> names;
  for (const auto& s : series) names.push_back(s.name);
  return names;
}

std::string no_data(const ChartFrame& frame) {
  return open_svg(frame) + "<text x=\"" + std::to_string(frame.width / 2) + "\" y=\"" +
         std::to_string(frame.height / 2) +
         "\" text-anchor=\"middle\" class=\"no-data\">no measured data</text>\n</svg>\n";
}

std::string polyline(const Plot& plot, const std::vector<ChartPoint>& points, std::size_t index,
                     bool markers) {
  std::string path;
  for (const auto& p : points) {
    path += (path.empty() ? "" : " ") + num(plot.px(p.x)) + "," + num(plot.py(p.y));
  }
  std::string s = "<polyline class=\"series\" fill=\"none\" stroke-width=\"2\" stroke=\"" +
                  std::string(colour(index)) + "\" points=\"" + path + "\"/>\n";
  if (markers) {
    for (const auto& p : points) {
      s += "<circle cx=\"" + num(plot.px(p.x)) + "\" cy=\"" + num(plot.py(p.y)) +
           "\" r=\"3.5\" fill=\"" + colour(index) + "\"/>";
    }
    s += "\n";
  }
  return s;
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::vector<double> nice_ticks(double low, double high, int target_count) {
  if (!(high > low) || target_count < 1) return {low};
  const double raw = (high - low) / target_count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  // Half a step of slack so a top value like 99.99999 still gets its 100 tick.
  for (double t = std::ceil(low / step) * step; t <= high + step * 1e-9; t += step) {
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
  }
  return ticks;
}

// Ticks from 0 up to and including the first tick at or above `max`, so the highest bar or
// point is never drawn above the top tick (a 62.9% bar under a top tick of 60 looks clipped).
std::vector<double> value_axis_ticks(double max) {
  std::vector<double> ticks = nice_ticks(0, max > 0 ? max : 1);
  if (ticks.size() >= 2 && ticks.back() < max) ticks.push_back(ticks.back() + ticks[1] - ticks[0]);
  return ticks;
}

std::string svg_line_chart(const ChartFrame& frame, const std::vector<ChartSeries>& series,
                           bool categorical_x) {
  std::vector<double> xs;
  double y_max = 0;
  for (const auto& s : series) {
    for (const auto& p : s.points) {
      xs.push_back(p.x);
      y_max = std::max(y_max, p.y);
    }
  }
  if (xs.empty()) return no_data(frame);
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());

  // Categorical: x becomes the value's rank, with half a slot of room at each end.
  std::map<double, double> slot;
  for (std::size_t i = 0; i < xs.size(); ++i) slot[xs[i]] = static_cast<double>(i);
  auto place = [&](double x) { return categorical_x ? slot.at(x) : x; };
  Range x_range = categorical_x ? Range{-0.5, static_cast<double>(xs.size()) - 0.5}
                                : Range{xs.front(), xs.back()};
  if (!categorical_x && x_range.high == x_range.low) {
    x_range = {x_range.low - 1, x_range.high + 1};
  }
  const std::vector<double> y_ticks = value_axis_ticks(y_max);
  const Plot plot(frame, x_range, y_range_from_zero(std::max(y_ticks.back(), y_max)),
                  legend_rows(frame, series.size()));

  std::vector<std::pair<double, std::string>> x_ticks;
  if (categorical_x) {
    for (double x : xs) x_ticks.emplace_back(slot.at(x), format_si(x));
  } else {
    for (double t : nice_ticks(x_range.low, x_range.high)) x_ticks.emplace_back(t, format_si(t));
  }
  std::string s = open_svg(frame) + axes(plot, y_ticks, x_ticks);
  for (std::size_t i = 0; i < series.size(); ++i) {
    std::vector<ChartPoint> placed;
    for (const auto& p : series[i].points) placed.push_back({place(p.x), p.y});
    s += polyline(plot, placed, i, /*markers=*/true);
  }
  return s + legend(frame, names_of(series)) + "</svg>\n";
}

std::string svg_cdf_chart(const ChartFrame& frame, const std::vector<ChartSeries>& samples) {
  double x_max = 0;
  bool any = false;
  for (const auto& s : samples) {
    for (const auto& p : s.points) {
      x_max = std::max(x_max, p.x);
      any = true;
    }
  }
  if (!any) return no_data(frame);
  const std::vector<double> x_ticks_raw = nice_ticks(0, x_max > 0 ? x_max : 1);
  const Plot plot(frame, {0, std::max(x_max, x_ticks_raw.back())}, {0, 1},
                  legend_rows(frame, samples.size()));
  std::vector<std::pair<double, std::string>> x_ticks;
  for (double t : x_ticks_raw) x_ticks.emplace_back(t, format_si(t));
  // The y axis is a fraction; format_si would print 0.2 as "0.2", which is what we want.
  std::string s = open_svg(frame) + axes(plot, {0, 0.25, 0.5, 0.75, 1.0}, x_ticks);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    std::vector<double> sorted;
    for (const auto& p : samples[i].points) sorted.push_back(p.x);
    if (sorted.empty()) continue;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const std::size_t stride = std::max<std::size_t>(1, n / kMaxCdfSteps);
    std::vector<ChartPoint> steps = {{sorted.front(), 0}};
    for (std::size_t k = 0; k < n; k += stride) {
      const double y = static_cast<double>(k + 1) / static_cast<double>(n);
      steps.push_back({sorted[k], steps.back().y});
      steps.push_back({sorted[k], y});
    }
    steps.push_back({sorted.back(), steps.back().y});
    steps.push_back({sorted.back(), 1.0});
    s += polyline(plot, steps, i, /*markers=*/false);
  }
  return s + legend(frame, names_of(samples)) + "</svg>\n";
}

std::string svg_grouped_bars(const ChartFrame& frame, const BarData& data) {
  double y_max = 0;
  bool any = false;
  for (const auto& row : data.values) {
    for (double v : row) {
      if (std::isnan(v)) continue;
      y_max = std::max(y_max, v);
      any = true;
    }
  }
  if (!any || data.categories.empty()) return no_data(frame);
  const std::vector<double> y_ticks = value_axis_ticks(y_max);
  const double n_categories = static_cast<double>(data.categories.size());
  const Plot plot(frame, {0, n_categories}, y_range_from_zero(std::max(y_ticks.back(), y_max)),
                  legend_rows(frame, data.series.size()));
  std::vector<std::pair<double, std::string>> x_ticks;
  for (std::size_t c = 0; c < data.categories.size(); ++c) {
    x_ticks.emplace_back(static_cast<double>(c) + 0.5, data.categories[c]);
  }
  std::string s = open_svg(frame) + axes(plot, y_ticks, x_ticks);
  const double slot = plot.px(1) - plot.px(0);
  const double bar = slot * 0.8 / static_cast<double>(std::max<std::size_t>(1, data.series.size()));
  for (std::size_t si = 0; si < data.values.size(); ++si) {
    for (std::size_t c = 0; c < data.values[si].size() && c < data.categories.size(); ++c) {
      const double v = data.values[si][c];
      if (std::isnan(v)) continue;
      const double x = plot.px(static_cast<double>(c)) + slot * 0.1 + bar * static_cast<double>(si);
      const double y = plot.py(v);
      s += "<rect class=\"bar\" x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" +
           num(std::max(1.0, bar - 1)) + "\" height=\"" + num(plot.bottom() - y) + "\" fill=\"" +
           colour(si) + "\"><title>" + xml_escape(data.series[si] + " @ " + data.categories[c] +
                                                  ": " + format_fixed(v, 2)) +
           "</title></rect>\n";
    }
  }
  return s + legend(frame, data.series) + "</svg>\n";
}

}  // namespace kvsweep::reports
