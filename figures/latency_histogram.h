// A mergeable histogram of latencies with logarithmic buckets, fine enough that any percentile
// read from it is within 0.5% of the exact one: what a cell's summary keeps of its TTFT, TPOT,
// ITL and E2E distributions once its raw request rows are pruned.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kvsweep::figures {

class LatencyHistogram {
 public:
  // Relative accuracy of every value read back (DDSketch's bound): a bucket holds
  // (gamma^(i-1), gamma^i] with gamma = (1 + a) / (1 - a), read as 2 gamma^i / (1 + gamma).
  // 0.49%, a little under the 0.5% promised, for the rounding of the bucket's logarithm.
  static constexpr double kRelativeAccuracy = 0.0049;

  void add(double value);  // values <= 0 (and NaN) are kept in a bucket of their own, read as 0
  void merge(const LatencyHistogram& other);
  std::int64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }

  // common/stats.h's percentile rule (linear between the two nearest ranks) over the values the
  // buckets stand for: within kRelativeAccuracy of percentile() of the exact sorted values.
  // 0 when empty.
  double percentile(double p) const;
  // The value standing for the k-th smallest value (0-based); k < count().
  double value_at_rank(std::int64_t k) const;
  // value_at_rank at min(points, count()) ranks spread evenly from the smallest to the largest
  // (rank i (count - 1) / (points - 1)), ascending, in one walk over the buckets.
  std::vector<double> values_at_even_ranks(std::int64_t points) const;

  // Compact bytes: count of the zero bucket, then (bucket index delta, count) pairs as zigzag
  // varints. from_bytes throws std::invalid_argument on anything it did not write.
  std::string to_bytes() const;
  static LatencyHistogram from_bytes(const std::string& bytes);

  bool operator==(const LatencyHistogram& other) const {
    return zero_count_ == other.zero_count_ && buckets_ == other.buckets_;
  }

 private:
  std::int64_t zero_count_ = 0;
  std::map<int, std::int64_t> buckets_;  // bucket index -> count, ascending
  std::int64_t count_ = 0;
};

}  // namespace kvsweep::figures
