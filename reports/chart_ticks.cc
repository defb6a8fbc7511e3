// Axis ticks: round values covering a range, and labels that read them exactly.
#include "reports/chart_ticks.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "figures/units.h"

namespace kvsweep::reports {

std::vector<double> nice_ticks(double low, double high, int target_count) {
  if (!(high > low) || target_count < 1) return {low};
  const double raw = (high - low) / target_count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double multiple = 1;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    multiple = m;
    if (m * magnitude >= raw) break;
  }
  const double step = multiple * magnitude;
  // Each tick is k * multiple scaled by the power of ten in one operation, never a running
  // sum: 3 * 0.1 accumulated is 0.30000000000000004, 3 / 10 is the double nearest 0.3.
  const double tenths = magnitude < 1 ? std::round(1 / magnitude) : 0;
  auto tick = [&](double k) {
    return tenths > 0 ? k * multiple / tenths : k * multiple * magnitude;
  };
  std::vector<double> ticks;
  // A little slack so a top value like 99.99999 still gets its 100 tick.
  for (double k = std::ceil(low / step); tick(k) <= high + step * 1e-9; ++k) {
    ticks.push_back(k == 0 ? 0 : tick(k));
  }
  return ticks;
}

namespace {

constexpr std::array<const char*, 5> kSiSuffixes = {"", "k", "M", "G", "T"};

// value / 1000^i for the largest i that keeps the scaled value at or above 1 (up to T).
std::pair<double, const char*> si_scaled(double value) {
  double scaled = value;
  std::size_t i = 0;
  while (i + 1 < kSiSuffixes.size() && std::fabs(scaled) >= 1000) {
    scaled /= 1000;
    ++i;
  }
  return {scaled, kSiSuffixes[i]};
}

// Whether value shows exactly with this many decimals (floating-point noise aside).
bool exact_with(double value, int decimals) {
  const double shifted = value * std::pow(10.0, decimals);
  return std::fabs(shifted - std::round(shifted)) <= 1e-6 * std::max(1.0, std::fabs(shifted));
}

std::string si_label(double value, int decimals) {
  const auto [scaled, suffix] = si_scaled(value);
  std::string text = figures::format_fixed(scaled, decimals);
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  return text == "0" ? text : text + suffix;
}

constexpr int kMaxTickDecimals = 9;
constexpr int kInexactTickDecimals = 3;  // for a value no decimal count shows exactly

int decimals_for(double value) {
  const double scaled = si_scaled(value).first;
  for (int d = 0; d <= kMaxTickDecimals; ++d) {
    if (exact_with(scaled, d)) return d;
  }
  return kInexactTickDecimals;
}

bool all_distinct(std::vector<std::string> labels) {
  std::sort(labels.begin(), labels.end());
  return std::adjacent_find(labels.begin(), labels.end()) == labels.end();
}

}  // namespace

std::vector<std::string> tick_labels(const std::vector<double>& ticks) {
  std::vector<int> decimals;
  for (double t : ticks) decimals.push_back(decimals_for(t));
  std::vector<std::string> labels;
  // Exact labels are distinct for distinct ticks; only inexact ones can collide, and they
  // get more decimals until they do not.
  for (int extra = 0;; ++extra) {
    labels.clear();
    for (std::size_t i = 0; i < ticks.size(); ++i) {
      const bool inexact = !exact_with(si_scaled(ticks[i]).first, decimals[i]);
      labels.push_back(si_label(ticks[i], inexact ? decimals[i] + extra : decimals[i]));
    }
    if (all_distinct(labels) || kInexactTickDecimals + extra >= kMaxTickDecimals) return labels;
  }
}

// Ticks from 0 up to and including the first tick at or above `max`, so the highest bar or
// point is never drawn above the top tick (a 62.9% bar under a top tick of 60 looks clipped).
std::vector<double> value_axis_ticks(double max) {
  std::vector<double> ticks = nice_ticks(0, max > 0 ? max : 1);
  if (ticks.size() >= 2 && ticks.back() < max) ticks.push_back(ticks.back() + ticks[1] - ticks[0]);
  return ticks;
}

}  // namespace kvsweep::reports
