// Inline SVG charts: axes, ticks, legend, lines, CDF steps and grouped bars.
#include "reports/svg_chart.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

#include "figures/units.h"

namespace kvsweep::reports {
namespace {

constexpr std::size_t kMaxCdfSteps = 200;
// Colour-blind-safe (Okabe-Ito), so strategies stay apart on a phone and in print.
constexpr std::array<const char*, 8> kColours = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                                 "#e69f00", "#56b4e9", "#f0e442", "#000000"};
const char* colour(std::size_t i) { return kColours[i % kColours.size()]; }

std::string num(double v) { return figures::format_fixed(v, 1); }

struct Range {
  double low = 0;
  double high = 1;
};

// Maps data to viewBox units inside the layout's plot area.
class Plot {
 public:
  Plot(const ChartFrame& frame, const ChartLayout& layout, Range x, Range y)
      : frame_(frame), layout_(layout), x_(x), y_(y) {
    if (x_.high <= x_.low) x_.high = x_.low + 1;
    if (y_.high <= y_.low) y_.high = y_.low + 1;
  }
  double px(double x) const {
    return left() + (x - x_.low) / (x_.high - x_.low) * (right() - left());
  }
  double py(double y) const {
    return bottom() - (y - y_.low) / (y_.high - y_.low) * (bottom() - top());
  }
  double left() const { return layout_.plot.x; }
  double right() const { return layout_.plot.x + layout_.plot.width; }
  double top() const { return layout_.plot.y; }
  double bottom() const { return layout_.plot.y + layout_.plot.height; }
  const ChartFrame& frame() const { return frame_; }
  const ChartLayout& layout() const { return layout_; }

 private:
  const ChartFrame& frame_;
  const ChartLayout& layout_;
  Range x_;
  Range y_;
};

std::string open_svg(const ChartFrame& frame) {
  std::string s =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" role=\"img\" viewBox=\"0 0 " +
      std::to_string(frame.width) + " " + std::to_string(frame.height) + "\" aria-label=\"" +
      xml_escape(frame.title) + "\">\n";
  s += "<title>" + xml_escape(frame.title) + "</title>\n";
  s += "<text x=\"" + std::to_string(frame.width / 2) +
       "\" y=\"22\" text-anchor=\"middle\" class=\"chart-title\">" + xml_escape(frame.title) +
       "</text>\n";
  return s;
}

// Grid lines, tick labels and axis titles; x_ticks are (position, label).
std::string axes(const Plot& plot, const std::vector<double>& y_ticks,
                 const std::vector<std::pair<double, std::string>>& x_ticks) {
  const ChartLayout& layout = plot.layout();
  std::string s = "<g class=\"axes\" font-size=\"" + std::to_string(kTickFont) + "\">\n";
  const std::vector<std::string> y_labels = tick_labels(y_ticks);
  for (std::size_t i = 0; i < y_ticks.size(); ++i) {
    const std::string y = num(plot.py(y_ticks[i]));
    s += "<line x1=\"" + num(plot.left()) + "\" x2=\"" + num(plot.right()) + "\" y1=\"" + y +
         "\" y2=\"" + y + "\" stroke=\"#ddd\"/>";
    s += "<text x=\"" + num(plot.left() - 8) + "\" y=\"" + y +
         "\" text-anchor=\"end\" dominant-baseline=\"middle\">" + xml_escape(y_labels[i]) +
         "</text>\n";
  }
  const std::string tick_baseline = num(baseline_of(layout.x_tick_labels, kTickFont));
  for (const auto& [x, label] : x_ticks) {
    const std::string xs = num(plot.px(x));
    s += "<line x1=\"" + xs + "\" x2=\"" + xs + "\" y1=\"" + num(plot.bottom()) + "\" y2=\"" +
         num(plot.bottom() + kTickLength) + "\" stroke=\"#444\"/>";
    s += "<text x=\"" + xs + "\" y=\"" + tick_baseline + "\" text-anchor=\"middle\">" +
         xml_escape(label) + "</text>\n";
  }
  s += "<line x1=\"" + num(plot.left()) + "\" x2=\"" + num(plot.left()) + "\" y1=\"" +
       num(plot.top()) + "\" y2=\"" + num(plot.bottom()) + "\" stroke=\"#444\"/>";
  s += "<line x1=\"" + num(plot.left()) + "\" x2=\"" + num(plot.right()) + "\" y1=\"" +
       num(plot.bottom()) + "\" y2=\"" + num(plot.bottom()) + "\" stroke=\"#444\"/>\n";
  s += "<text class=\"x-title\" font-size=\"" + std::to_string(kAxisTitleFont) + "\" x=\"" +
       num(layout.x_title.x + layout.x_title.width / 2) + "\" y=\"" +
       num(baseline_of(layout.x_title, kAxisTitleFont)) + "\" text-anchor=\"middle\">" +
       xml_escape(plot.frame().x_label) + "</text>\n";
  const std::string mid_y = num((plot.top() + plot.bottom()) / 2);
  s += "<text class=\"y-title\" font-size=\"" + std::to_string(kAxisTitleFont) +
       "\" x=\"18\" y=\"" + mid_y + "\" text-anchor=\"middle\" transform=\"rotate(-90 18 " + mid_y +
       ")\">" + xml_escape(plot.frame().y_label) + "</text>\n";
  return s + "</g>\n";
}

// colours[i] is entry i's palette index; entries past its end take their position.
std::string legend(const ChartFrame& frame, const ChartLayout& layout,
                   const std::vector<std::string>& names,
                   const std::vector<std::size_t>& colours = {}) {
  std::string s = "<g class=\"legend\" font-size=\"" + std::to_string(kLegendFont) + "\">\n";
  for (std::size_t i = 0; i < names.size() && i < layout.legend.size(); ++i) {
    const Box& entry = layout.legend[i];
    const double baseline = baseline_of(entry, kLegendFont);
    s += "<rect x=\"" + num(entry.x) + "\" y=\"" + num(baseline - 10) +
         "\" width=\"12\" height=\"10\" fill=\"" + colour(i < colours.size() ? colours[i] : i) +
         "\"/>";
    s += "<text x=\"" + num(entry.x + kLegendSwatch + 4) + "\" y=\"" + num(baseline) + "\">" +
         xml_escape(legend_text(frame, names[i])) + "</text>\n";
  }
  return s + "</g>\n";
}

Range y_range_from_zero(double max_value) { return {0, max_value > 0 ? max_value : 1}; }

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
                     bool markers, SeriesStyle style = SeriesStyle::kLine) {
  if (style == SeriesStyle::kMarkers) {
    // Open rings, larger than a line's markers, so they stand out on the line they mark.
    std::string s = "<g class=\"series markers\" fill=\"none\" stroke-width=\"2.5\" stroke=\"" +
                    std::string(colour(index)) + "\">";
    for (const auto& p : points) {
      s += "<circle cx=\"" + num(plot.px(p.x)) + "\" cy=\"" + num(plot.py(p.y)) + "\" r=\"7\"/>";
    }
    return s + "</g>\n";
  }
  std::string path;
  for (const auto& p : points) {
    path += (path.empty() ? "" : " ") + num(plot.px(p.x)) + "," + num(plot.py(p.y));
  }
  const bool dashed = style == SeriesStyle::kDashed;
  std::string s = "<polyline class=\"series\" fill=\"none\" stroke-width=\"2\" stroke=\"" +
                  std::string(colour(index)) + "\"" + (dashed ? " stroke-dasharray=\"7 5\"" : "") +
                  " points=\"" + path + "\"/>\n";
  if (markers) {
    for (const auto& p : points) {
      s += "<circle cx=\"" + num(plot.px(p.x)) + "\" cy=\"" + num(plot.py(p.y)) +
           (dashed ? "\" r=\"3\" fill=\"#fff\" stroke-width=\"1.5\" stroke=\""
                   : "\" r=\"3.5\" fill=\"") +
           colour(index) + "\"/>";
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
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
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
  const ChartLayout layout = chart_layout(frame, names_of(series));
  const Plot plot(frame, layout, x_range, y_range_from_zero(std::max(y_ticks.back(), y_max)));

  std::vector<std::pair<double, std::string>> x_ticks;
  const std::vector<double> x_values = categorical_x ? xs : nice_ticks(x_range.low, x_range.high);
  const std::vector<std::string> x_labels = tick_labels(x_values);
  for (std::size_t i = 0; i < x_values.size(); ++i) {
    x_ticks.emplace_back(categorical_x ? slot.at(x_values[i]) : x_values[i], x_labels[i]);
  }
  std::string s = open_svg(frame) + axes(plot, y_ticks, x_ticks);
  std::vector<std::size_t> colours;
  for (std::size_t i = 0; i < series.size(); ++i) {
    colours.push_back(series[i].colour >= 0 ? static_cast<std::size_t>(series[i].colour) : i);
    std::vector<ChartPoint> placed;
    for (const auto& p : series[i].points) placed.push_back({place(p.x), p.y});
    s += polyline(plot, placed, colours.back(), /*markers=*/true, series[i].style);
  }
  return s + legend(frame, layout, names_of(series), colours) + "</svg>\n";
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
  const ChartLayout layout = chart_layout(frame, names_of(samples));
  const Plot plot(frame, layout, {0, std::max(x_max, x_ticks_raw.back())}, {0, 1});
  std::vector<std::pair<double, std::string>> x_ticks;
  const std::vector<std::string> x_labels = tick_labels(x_ticks_raw);
  for (std::size_t i = 0; i < x_ticks_raw.size(); ++i) {
    x_ticks.emplace_back(x_ticks_raw[i], x_labels[i]);
  }
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
  return s + legend(frame, layout, names_of(samples)) + "</svg>\n";
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
  const ChartLayout layout = chart_layout(frame, data.series);
  const Plot plot(frame, layout, {0, n_categories},
                  y_range_from_zero(std::max(y_ticks.back(), y_max)));
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
           colour(si) + "\"><title>" +
           xml_escape(data.series[si] + " @ " + data.categories[c] + ": " +
                      figures::format_fixed(v, 2)) +
           "</title></rect>\n";
    }
  }
  return s + legend(frame, layout, data.series) + "</svg>\n";
}

}  // namespace kvsweep::reports
