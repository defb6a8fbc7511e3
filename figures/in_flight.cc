// The requests-in-flight series of a cell, from its stored rows.
#include "figures/in_flight.h"

#include <algorithm>
#include <map>
#include <utility>

namespace kvsweep::figures {

std::vector<StepPoint> step_series(const std::vector<double>& starts,
                                   const std::vector<double>& ends) {
  std::vector<std::pair<double, int>> events;
  events.reserve(starts.size() + ends.size());
  for (double t : starts) events.emplace_back(t, +1);
  for (double t : ends) events.emplace_back(t, -1);
  std::sort(events.begin(), events.end());  // -1 sorts before +1 at the same t
  std::vector<StepPoint> series;
  series.reserve(events.size());
  int value = 0;
  for (const auto& [t, delta] : events) {
    value += delta;
    if (!series.empty() && series.back().t == t) {
      series.back().value = value;
    } else {
      series.push_back({t, value});
    }
  }
  return series;
}

namespace {

// Calls f(from, to, value) for each constant piece of the series within [t0, t1).
template <typename F>
void for_each_piece(const std::vector<StepPoint>& series, double t0, double t1, F f) {
  if (!(t1 > t0)) return;
  int value = 0;
  double at = t0;
  for (const StepPoint& p : series) {
    if (p.t <= t0) {
      value = p.value;
      continue;
    }
    if (p.t >= t1) break;
    f(at, p.t, value);
    at = p.t;
    value = p.value;
  }
  f(at, t1, value);
}

}  // namespace

double time_weighted_mean(const std::vector<StepPoint>& series, double t0, double t1) {
  if (!(t1 > t0)) return 0;
  double area = 0;
  for_each_piece(series, t0, t1, [&](double a, double b, int v) { area += (b - a) * v; });
  return area / (t1 - t0);
}

double time_weighted_median(const std::vector<StepPoint>& series, double t0, double t1) {
  if (!(t1 > t0)) return 0;
  std::map<int, double> time_at;
  for_each_piece(series, t0, t1, [&](double a, double b, int v) { time_at[v] += b - a; });
  double covered = 0;
  for (const auto& [value, seconds] : time_at) {
    covered += seconds;
    if (covered >= (t1 - t0) / 2) return value;
  }
  return time_at.empty() ? 0 : time_at.rbegin()->first;
}

double first_reach(const std::vector<StepPoint>& series, double level, double t0, double t1) {
  double found = t1;
  bool done = false;
  for_each_piece(series, t0, t1, [&](double a, double, int v) {
    if (!done && v >= level) {
      found = a;
      done = true;
    }
  });
  return found;
}

GatedMean mean_while(const std::vector<StepPoint>& series, const std::vector<StepPoint>& gate,
                     double t0, double t1) {
  GatedMean out;
  if (!(t1 > t0)) return out;
  // One sweep over both series' change points.
  std::size_t i = 0;
  std::size_t j = 0;
  int value = 0;
  int open = 0;
  while (i < series.size() && series[i].t <= t0) value = series[i++].value;
  while (j < gate.size() && gate[j].t <= t0) open = gate[j++].value;
  double at = t0;
  double area = 0;
  while (at < t1) {
    double next = t1;
    if (i < series.size()) next = std::min(next, series[i].t);
    if (j < gate.size()) next = std::min(next, gate[j].t);
    if (open > 0) {
      out.seconds += next - at;
      area += (next - at) * value;
    }
    at = next;
    while (i < series.size() && series[i].t <= at) value = series[i++].value;
    while (j < gate.size() && gate[j].t <= at) open = gate[j++].value;
  }
  if (out.seconds > 0) out.mean = area / out.seconds;
  return out;
}

int value_at(const std::vector<StepPoint>& series, double t) {
  const auto it = std::upper_bound(series.begin(), series.end(), t,
                                   [](double x, const StepPoint& p) { return x < p.t; });
  return it == series.begin() ? 0 : std::prev(it)->value;
}

double busy_until_s(const store::RequestRow& r) {
  if (r.last_token_s >= 0) return r.last_token_s;
  if (r.ended_s >= 0) return r.ended_s;
  return r.sent_s + r.e2e_ms / 1000.0;
}

}  // namespace kvsweep::figures
