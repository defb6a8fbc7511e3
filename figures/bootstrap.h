// Seeded bootstrap confidence intervals for the relative change of a statistic between two
// samples (B vs A), for run-to-run comparisons.
#pragma once

#include <cstdint>
#include <vector>

namespace kvsweep::figures {

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

// Compare draws about 16,000 indices per resample, 1,000 resamples per metric and level: on
// seed 002's matrix a billion draws for two nights. Replacing mt19937_64 and a 64-bit modulo
// with xoshiro256** (Blackman and Vigna) and Lemire's multiply-shift range reduction took
// compare of two such nights from 10.5 to 3.4 CPU seconds (bench/nightly_store_bench 2). The
// multiply-shift's bias is below n / 2^64: nothing an interval shows.
class BootstrapRandom {
 public:
  explicit BootstrapRandom(std::uint64_t seed) {
    for (std::uint64_t& word : state_) word = splitmix64(seed);
  }
  std::size_t below(std::size_t n) {
    return static_cast<std::size_t>(
        (static_cast<unsigned __int128>(next()) * static_cast<unsigned __int128>(n)) >> 64);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  std::uint64_t state_[4];
};

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

// Per-request values for a joint bootstrap: columns[c][i] is request i's value of column c, NaN
// where the request has none (a TPOT of a one-token reply). Every column has one value per
// request.
using RequestColumns = std::vector<std::vector<double>>;

// A statistic of one column; kRatioOfSums divides by weight_column. A request counts for the
// metric when its value (and weight) are not NaN.
struct JointMetric {
  std::size_t column = 0;
  StatisticSpec spec;
  std::size_t weight_column = 0;
};

// The value bootstrap_change gives each metric, with one difference in how it resamples: each
// resample draws whole requests (with replacement, as many as the side has) and every metric
// reads that same draw, so a resample costs one draw per request instead of one per request
// and metric. The request is the unit that was sampled, so this is the bootstrap the data asks
// for; each metric's interval is its own (marginal) interval. `change` and `valid` are as
// bootstrap_change's; an empty side or a base of 0 leaves a metric invalid.
std::vector<ChangeInterval> joint_bootstrap_change(const RequestColumns& a, const RequestColumns& b,
                                                   const std::vector<JointMetric>& metrics,
                                                   const BootstrapOptions& options);

// The statistic of one metric over the requests that have its values (the point estimate
// joint_bootstrap_change reports; equal to compute_statistic over those requests).
double joint_statistic(const RequestColumns& columns, const JointMetric& metric);

}  // namespace kvsweep::figures
