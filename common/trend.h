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

// The over-capacity rule on a count of requests (in flight, or the servers' waiting queue;
// docs/metrics.md, "Verdicts"): the points in [t0, t1), binned (trend_bins), rise by
// Mann-Kendall at `alpha` one-sided, and by at least max(min_growth, min_growth_fraction x
// their median, min_growth_per_point x their count) through the window, the growth being Sen's
// slope times the window's length. A queue that grows without bound passes both; a count that
// wanders around its level, or drifts as a workload's prompts lengthen, does not.
struct GrowthRule {
  double alpha = 0.01;
  double min_growth = 10;             // requests
  double min_growth_fraction = 0.25;  // of the points' median
  std::size_t min_points = 30;        // fewer: not evaluated
  // Requests per point in the window: with one point per send, a fraction of the arrivals.
  double min_growth_per_point = 0;
};

struct GrowthJudgement {
  bool evaluated = false;  // min_points in the window
  bool rising = false;
  std::size_t points = 0;  // in the window
  double t0 = 0;
  double t1 = 0;
  double median = 0;      // of the points' values
  double from = 0;        // Sen's line at t0 (through the bins' median residual), at least 0
  double to = 0;          // and at t1 (the line's value there: growth above it)
  double growth = 0;      // Sen's slope x (t1 - t0)
  double min_growth = 0;  // what the rule asked: max(min_growth, fraction x median)
  TrendTest test;         // over the bins
};

GrowthJudgement judge_growth(const std::vector<TrendPoint>& points, double t0, double t1,
                             const GrowthRule& rule);

// A count of requests at each of `times`: how many have started (starts[i] <= t) and not yet
// ended (ends[i] > t), an end and a start at the same instant taking the end first. An end of
// infinity: still there. `times` in any order; the result in the same order, each value at
// its time.
std::vector<TrendPoint> counts_at(const std::vector<double>& starts,
                                  const std::vector<double>& ends,
                                  const std::vector<double>& times);

// "TTFT rises 180 ms per second through the cell (Mann-Kendall p = 1e-05, median 950 ms);
// its mean depends on the cell's length": what a rising judgement says, for `what` in ms.
std::string rising_text(const RiseJudgement& judgement, const std::string& what);

}  // namespace kvsweep
