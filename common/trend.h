// Trend tests over a time series: Mann-Kendall's test for a monotonic trend and Sen's slope.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kvsweep {

struct TrendPoint {
  double t = 0;      // when (seconds)
  double value = 0;  // what (any unit)
};

// Mann-Kendall on a series ordered by t: S = sum over pairs i < j of sign(x_j - x_i), its
// variance corrected for ties, the normal approximation with continuity correction, and the
// one-sided p-value of an upward trend. Sen's slope is the median of the pairwise slopes
// (x_j - x_i) / (t_j - t_i), in value units per second. O(n^2): callers bin long series first
// (bin_medians). Fewer than 3 points: no test (p_upward 1, slope 0).
struct TrendTest {
  std::size_t points = 0;
  double s = 0;
  double z = 0;
  double p_upward = 1;  // P(S >= observed | no trend), normal approximation
  double slope_per_s = 0;
};

TrendTest mann_kendall(const std::vector<TrendPoint>& series);

// The series reduced to `bins` equal-width bins over [t0, t1): each non-empty bin's median
// value at the bin's centre, so a test over tens of thousands of requests costs what one over
// `bins` points does, and the per-request noise within a bin does not count as evidence.
// Points outside [t0, t1) are left out.
std::vector<TrendPoint> bin_medians(const std::vector<TrendPoint>& points, double t0, double t1,
                                    int bins);

// The number of bins a series of `points` points is tested in: one per 20 points, at least 10
// (below that a perfect monotone run of bins cannot reach 1% significance) and at most 60.
int trend_bins(std::size_t points);

// The over-capacity rule on a latency series (docs/metrics.md, "Verdicts"): the points in
// [t0, t1), binned (trend_bins), rise by Mann-Kendall at significance `alpha` one-sided, and
// Sen's slope exceeds `min_rise_per_10s` of the points' median per 10 s. A queue that grows
// without bound passes both; noise around a level, or a slow drift, passes neither.
struct TrendRule {
  double alpha = 0.01;
  double min_rise_per_10s = 0.05;  // fraction of the median
};

struct RiseJudgement {
  bool evaluated = false;  // enough points: kMinTrendPoints in the window
  bool rising = false;
  std::size_t points = 0;  // points in the window
  double median = 0;       // of the points' values
  TrendTest test;          // over the bins
};

inline constexpr std::size_t kMinTrendPoints = 30;

RiseJudgement judge_rise(const std::vector<TrendPoint>& points, double t0, double t1,
                         const TrendRule& rule = {});

// "TTFT rises 180 ms per second through the cell (Mann-Kendall p = 1e-05, median 950 ms);
// its mean depends on the cell's length": what a rising judgement says, for `what` in ms.
std::string rising_text(const RiseJudgement& judgement, const std::string& what);

}  // namespace kvsweep
