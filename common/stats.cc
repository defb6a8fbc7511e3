// Exact summary statistics over measured samples.
#include "common/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kvsweep {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  p = std::clamp(p, 0.0, 100.0);
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(rank));
  const auto upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

SampleSummary summarize(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return summarize_sorted(samples);
}

SampleSummary summarize_sorted(const std::vector<double>& samples) {
  SampleSummary s;
  if (samples.empty()) return s;
  s.count = samples.size();
  const double n = static_cast<double>(s.count);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  double squares = 0;
  for (double v : samples) squares += (v - s.mean) * (v - s.mean);
  s.std = std::sqrt(squares / n);
  s.min = samples.front();
  s.max = samples.back();
  s.median = percentile(samples, 50);
  s.p90 = percentile(samples, 90);
  s.p95 = percentile(samples, 95);
  s.p99 = percentile(samples, 99);
  return s;
}

}  // namespace kvsweep
