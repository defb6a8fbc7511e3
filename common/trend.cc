// Trend tests over a time series: Mann-Kendall's test for a monotonic trend and Sen's slope.
#include "common/trend.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "common/stats.h"

namespace kvsweep {

TrendTest mann_kendall(const std::vector<TrendPoint>& series) {
  TrendTest test;
  test.points = series.size();
  if (series.size() < 3) return test;
  std::vector<TrendPoint> sorted = series;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const TrendPoint& a, const TrendPoint& b) { return a.t < b.t; });
  const std::size_t n = sorted.size();
  double s = 0;
  std::vector<double> slopes;
  slopes.reserve(n * (n - 1) / 2);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      const double dx = sorted[j].value - sorted[i].value;
      s += dx > 0 ? 1 : (dx < 0 ? -1 : 0);
      const double dt = sorted[j].t - sorted[i].t;
      if (dt > 0) slopes.push_back(dx / dt);
    }
  }
  // Ties in the values shrink the variance of S (Kendall 1975).
  std::map<double, std::size_t> ties;
  for (const TrendPoint& p : sorted) ++ties[p.value];
  const double nn = static_cast<double>(n);
  double variance = nn * (nn - 1) * (2 * nn + 5);
  for (const auto& [value, count] : ties) {
    const double c = static_cast<double>(count);
    variance -= c * (c - 1) * (2 * c + 5);
  }
  variance /= 18.0;
  test.s = s;
  if (variance > 0) {
    if (s > 0) test.z = (s - 1) / std::sqrt(variance);
    if (s < 0) test.z = (s + 1) / std::sqrt(variance);
  }
  test.p_upward = 0.5 * std::erfc(test.z / std::sqrt(2.0));
  std::sort(slopes.begin(), slopes.end());
  test.slope_per_s = percentile(slopes, 50);
  return test;
}

std::vector<TrendPoint> bin_medians(const std::vector<TrendPoint>& points, double t0, double t1,
                                    int bins) {
  std::vector<TrendPoint> out;
  if (bins <= 0 || !(t1 > t0)) return out;
  const double width = (t1 - t0) / bins;
  std::vector<std::vector<double>> values(static_cast<std::size_t>(bins));
  for (const TrendPoint& p : points) {
    if (p.t < t0 || p.t >= t1) continue;
    const auto b =
        std::min(static_cast<std::size_t>((p.t - t0) / width), static_cast<std::size_t>(bins - 1));
    values[b].push_back(p.value);
  }
  for (std::size_t b = 0; b < values.size(); ++b) {
    if (values[b].empty()) continue;
    std::sort(values[b].begin(), values[b].end());
    out.push_back({t0 + (static_cast<double>(b) + 0.5) * width, percentile(values[b], 50)});
  }
  return out;
}

int trend_bins(std::size_t points) {
  return static_cast<int>(std::clamp<std::size_t>(points / 20, 10, 60));
}

RiseJudgement judge_rise(const std::vector<TrendPoint>& points, double t0, double t1,
                         const TrendRule& rule) {
  RiseJudgement judgement;
  std::vector<double> values;
  for (const TrendPoint& p : points) {
    if (p.t >= t0 && p.t < t1) values.push_back(p.value);
  }
  judgement.points = values.size();
  if (values.size() < kMinTrendPoints) return judgement;
  judgement.evaluated = true;
  std::sort(values.begin(), values.end());
  judgement.median = percentile(values, 50);
  judgement.test = mann_kendall(bin_medians(points, t0, t1, trend_bins(values.size())));
  judgement.rising = judgement.test.p_upward < rule.alpha &&
                     judgement.test.slope_per_s * 10 > rule.min_rise_per_10s * judgement.median;
  return judgement;
}

GrowthJudgement judge_growth(const std::vector<TrendPoint>& points, double t0, double t1,
                             const GrowthRule& rule) {
  GrowthJudgement judgement;
  judgement.t0 = t0;
  judgement.t1 = t1;
  std::vector<double> values;
  for (const TrendPoint& p : points) {
    if (p.t >= t0 && p.t < t1) values.push_back(p.value);
  }
  judgement.points = values.size();
  if (values.size() < std::max<std::size_t>(rule.min_points, 3) || !(t1 > t0)) return judgement;
  judgement.evaluated = true;
  std::sort(values.begin(), values.end());
  judgement.median = percentile(values, 50);
  const std::vector<TrendPoint> bins = bin_medians(points, t0, t1, trend_bins(values.size()));
  judgement.test = mann_kendall(bins);
  judgement.growth = judgement.test.slope_per_s * (t1 - t0);
  // The line's ends, not the end bins' medians: a sentence "grew from A to B" then says the
  // growth the rule judged (end bins alone once read "grew from 236 to 216, +70").
  std::vector<double> residuals;
  for (const TrendPoint& b : bins) residuals.push_back(b.value - judgement.test.slope_per_s * b.t);
  std::sort(residuals.begin(), residuals.end());
  // A count is never below 0, though a line through one may start there.
  const double line_t0 = percentile(residuals, 50) + judgement.test.slope_per_s * t0;
  judgement.from = std::max(0.0, line_t0);
  judgement.to = std::max(0.0, line_t0 + judgement.growth);
  judgement.min_growth = std::max({rule.min_growth, rule.min_growth_fraction * judgement.median,
                                   rule.min_growth_per_point * static_cast<double>(values.size())});
  judgement.rising =
      judgement.test.p_upward < rule.alpha && judgement.growth >= judgement.min_growth;
  return judgement;
}

std::vector<TrendPoint> counts_at(const std::vector<double>& starts,
                                  const std::vector<double>& ends,
                                  const std::vector<double>& times) {
  std::vector<double> s = starts;
  std::vector<double> e = ends;
  std::sort(s.begin(), s.end());
  std::sort(e.begin(), e.end());
  std::vector<TrendPoint> out;
  out.reserve(times.size());
  for (const double t : times) {
    const auto started = std::upper_bound(s.begin(), s.end(), t) - s.begin();
    const auto ended = std::upper_bound(e.begin(), e.end(), t) - e.begin();
    out.push_back({t, static_cast<double>(started - ended)});
  }
  return out;
}

std::string rising_text(const RiseJudgement& judgement, const std::string& what) {
  char text[240];
  std::snprintf(text, sizeof text,
                "%s rises %.3g ms per second through the cell (Mann-Kendall p = %.2g, median "
                "%.3g ms); its mean depends on the cell's length",
                what.c_str(), judgement.test.slope_per_s, judgement.test.p_upward,
                judgement.median);
  return text;
}

}  // namespace kvsweep
