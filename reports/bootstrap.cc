// Seeded percentile bootstrap of a relative change between two samples.
#include "reports/bootstrap.h"

#include <algorithm>
#include <random>

#include "common/stats.h"

namespace kvsweep::reports {

double compute_statistic(const std::vector<WeightedSample>& samples, const StatisticSpec& spec) {
  if (samples.empty()) return 0;
  switch (spec.kind) {
    case Statistic::kMean: {
      double sum = 0;
      for (const auto& s : samples) sum += s.x;
      return sum / static_cast<double>(samples.size());
    }
    case Statistic::kPercentile: {
      std::vector<double> xs;
      xs.reserve(samples.size());
      for (const auto& s : samples) xs.push_back(s.x);
      std::sort(xs.begin(), xs.end());
      return percentile(xs, spec.p);
    }
    case Statistic::kRatioOfSums: {
      double x = 0;
      double w = 0;
      for (const auto& s : samples) {
        x += s.x;
        w += s.w;
      }
      return w > 0 ? x / w : 0;
    }
  }
  return 0;
}

ChangeInterval bootstrap_change(const std::vector<WeightedSample>& a,
                                const std::vector<WeightedSample>& b, const StatisticSpec& spec,
                                const BootstrapOptions& options) {
  ChangeInterval out;
  if (a.empty() || b.empty()) return out;
  const double base = compute_statistic(a, spec);
  if (base == 0) return out;
  out.valid = true;
  out.change = compute_statistic(b, spec) / base - 1;

  // mt19937_64 and our own index draw (not uniform_int_distribution, whose algorithm differs
  // between standard libraries), so an interval is the same on every platform.
  std::mt19937_64 rng(options.seed);
  auto draw = [&rng](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  std::vector<WeightedSample> ra(a.size());
  std::vector<WeightedSample> rb(b.size());
  std::vector<double> changes;
  changes.reserve(static_cast<std::size_t>(std::max(options.resamples, 1)));
  for (int r = 0; r < options.resamples; ++r) {
    for (auto& s : ra) s = a[draw(a.size())];
    for (auto& s : rb) s = b[draw(b.size())];
    const double sa = compute_statistic(ra, spec);
    if (sa == 0) continue;
    changes.push_back(compute_statistic(rb, spec) / sa - 1);
  }
  if (changes.empty()) {
    out.low = out.high = out.change;
    return out;
  }
  std::sort(changes.begin(), changes.end());
  const double tail = (1 - options.confidence) / 2 * 100;
  out.low = percentile(changes, tail);
  out.high = percentile(changes, 100 - tail);
  return out;
}

}  // namespace kvsweep::reports
