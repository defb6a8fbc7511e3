// LogHistogram: counts in log-spaced buckets, for live percentiles at O(1) per sample.
#include "driver/log_histogram.h"

#include <algorithm>
#include <cmath>

namespace kvsweep::driver {

void LogHistogram::add(double value) {
  const double position = value > kLowest ? std::log10(value / kLowest) * kBucketsPerDecade : 0.0;
  const auto last = static_cast<double>(buckets_.size() - 1);
  ++buckets_[static_cast<std::size_t>(std::clamp(position, 0.0, last))];
  ++count_;
}

double LogHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  // The rank of the sample at p, 1-based, as the nearest-rank rule counts it.
  const auto rank = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(
             std::ceil(std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(count_))));
  std::int64_t seen = 0;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= rank) {
      return kLowest * std::pow(10.0, (static_cast<double>(i) + 0.5) / kBucketsPerDecade);
    }
  }
  return kLowest * std::pow(10.0, static_cast<double>(kDecades));
}

}  // namespace kvsweep::driver
