// Exact summary statistics over measured samples: mean, std, percentiles (no sketches).
#pragma once

#include <vector>

namespace kvsweep {

// Percentile of an ascending-sorted sample by linear interpolation between closest ranks,
// the same rule as numpy.percentile (which vLLM's benchmark client uses), so our p99 and
// theirs agree on identical samples. p is in [0, 100]. Returns 0 for an empty sample.
double percentile(const std::vector<double>& sorted, double p);

struct SampleSummary {
  std::size_t count = 0;
  double mean = 0;
  double std = 0;  // population standard deviation, as numpy.std
  double min = 0;
  double max = 0;
  double median = 0;
  double p90 = 0;
  double p95 = 0;
  double p99 = 0;
};

// Sorts a copy of the samples once and fills every field. An empty sample gives all zeros.
SampleSummary summarize(std::vector<double> samples);
// The same for samples already sorted ascending (callers that keep the sorted samples for
// further percentiles sort once).
SampleSummary summarize_sorted(const std::vector<double>& sorted);

}  // namespace kvsweep
