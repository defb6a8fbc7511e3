// Seeded bootstrap confidence intervals for the relative change of a statistic between two
// samples (B vs A), for run-to-run comparisons.
#pragma once

#include <cstdint>
#include <vector>

namespace kvsweep::reports {

// A per-request value x with a weight w (only kRatioOfSums reads w).
struct WeightedSample {
  double x = 0;
  double w = 1;
};

enum class Statistic {
  kMean,         // mean of x
  kPercentile,   // percentile p of x (common/stats.h rule)
  kRatioOfSums,  // Σx / Σw, e.g. output tokens / e2e seconds
};

struct StatisticSpec {
  Statistic kind = Statistic::kMean;
  double p = 50;  // for kPercentile
};

double compute_statistic(const std::vector<WeightedSample>& samples, const StatisticSpec& spec);

struct BootstrapOptions {
  int resamples = 1000;
  double confidence = 0.95;
  std::uint64_t seed = 1;  // same seed, same samples: same interval
};

// Relative change stat(B) / stat(A) - 1 and its percentile-bootstrap interval, resampling each
// side independently with replacement. valid is false when a side is empty or stat(A) is 0.
struct ChangeInterval {
  bool valid = false;
  double change = 0;
  double low = 0;
  double high = 0;
};
ChangeInterval bootstrap_change(const std::vector<WeightedSample>& a,
                                const std::vector<WeightedSample>& b, const StatisticSpec& spec,
                                const BootstrapOptions& options);

}  // namespace kvsweep::reports
