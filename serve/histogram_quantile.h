// Quantiles of a Prometheus histogram between two scrapes, by Prometheus' own rule
// (histogram_quantile over the bucket deltas), as a Grafana panel on the same server draws them.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "common/prometheus_text.h"

namespace kvsweep::serve {

// One cumulative bucket: observations <= upper_bound (+Inf for the last).
struct Bucket {
  double upper_bound = 0;
  double count = 0;
};

// The buckets of histogram `name` (its "<name>_bucket" series) in one scrape, every label set
// summed per `le` (replicas of one server, engines of one vLLM), sorted by upper bound. Empty
// when the scrape has no such series.
std::vector<Bucket> histogram_buckets(const std::vector<PrometheusSample>& samples,
                                      std::string_view name);

// newer - older per upper bound, as rate() over a window does. A bucket that went down means
// the server restarted (counters reset): then the newer scrape alone is the increase, as
// Prometheus treats a reset. Bounds missing from either side are left out.
std::vector<Bucket> bucket_increase(const std::vector<Bucket>& older,
                                    const std::vector<Bucket>& newer);

// Adds b's counts into a per upper bound (several servers' increases over one window).
void add_buckets(std::vector<Bucket>& a, const std::vector<Bucket>& b);

// Prometheus' histogram_quantile: the rank q * total is found in the first bucket whose
// cumulative count reaches it and interpolated linearly inside it (from 0 for the first
// bucket, when its bound is positive); a rank in the +Inf bucket returns the previous bucket's
// upper bound. nullopt without a +Inf bucket, with fewer than two buckets or no observation.
std::optional<double> histogram_quantile(double q, const std::vector<Bucket>& buckets);

}  // namespace kvsweep::serve
