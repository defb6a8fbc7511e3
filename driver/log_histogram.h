// LogHistogram: counts in log-spaced buckets, for live percentiles at O(1) per sample.
#pragma once

#include <array>
#include <cstdint>

namespace kvsweep::driver {

// For the progress line only (records keep every exact value): add() is O(1) and
// percentile() walks a fixed number of buckets, so the run thread's cost per request does not
// grow with the requests done. Buckets are 1 % wide from 1 us to 10^6 s (in ms: 10^-3 to
// 10^9); a percentile is the geometric middle of its bucket, so within 0.5 % of the exact one.
class LogHistogram {
 public:
  void add(double value);  // values <= 1e-3 fall in the first bucket, beyond 1e9 in the last
  double percentile(double p) const;  // p in [0, 100]; 0 when empty
  std::int64_t count() const { return count_; }

 private:
  static constexpr int kBucketsPerDecade = 231;  // ln(10) / ln(1.01): 1 % per bucket
  static constexpr int kDecades = 12;
  static constexpr double kLowest = 1e-3;
  std::array<std::int64_t, kBucketsPerDecade * kDecades> buckets_{};
  std::int64_t count_ = 0;
};

}  // namespace kvsweep::driver
