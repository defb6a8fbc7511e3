// Seeded percentile bootstrap of a relative change between two samples.
#include "figures/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/stats.h"

namespace kvsweep::figures {

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

namespace {

// common/stats.h's rule for percentile p of n sorted values: the two ranks it interpolates
// between and the weight of the upper one (n > 0).
struct PercentilePositions {
  std::size_t lower;
  std::size_t upper;
  double fraction;
};
PercentilePositions percentile_positions(double p, std::size_t n) {
  const double position = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(n - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  return {lower, std::min(lower + 1, n - 1), position - static_cast<double>(lower)};
}

// One side's resamples, each the statistic of size() draws with replacement, in the draw order
// of the plain algorithm (copy the drawn samples, compute_statistic on the copy), so the
// interval is bit for bit what that algorithm gives with the same draws, at O(n) a resample
// without copying:
// sums are taken in draw order; a percentile counts how often each rank of the sorted values
// was drawn and walks the counts to the two ranks it interpolates between, instead of sorting
// every resample (O(n log n)), the cost that made compare of two 96,000-request nights take 37
// CPU seconds.
class SideResampler {
 public:
  SideResampler(const std::vector<WeightedSample>& samples, const StatisticSpec& spec)
      : samples_(samples), spec_(spec) {
    if (spec.kind != Statistic::kPercentile) return;
    std::vector<std::size_t> order(samples.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&samples](std::size_t a, std::size_t b) {
      return samples[a].x < samples[b].x;
    });
    sorted_.resize(order.size());
    rank_of_.resize(order.size());
    for (std::size_t rank = 0; rank < order.size(); ++rank) {
      sorted_[rank] = samples[order[rank]].x;
      rank_of_[order[rank]] = static_cast<std::uint32_t>(rank);
    }
    counts_.resize(order.size());
  }

  template <typename Draw>
  double resample(Draw& draw) {
    const std::size_t n = samples_.size();
    switch (spec_.kind) {
      case Statistic::kMean: {
        double sum = 0;
        for (std::size_t i = 0; i < n; ++i) sum += samples_[draw(n)].x;
        return sum / static_cast<double>(n);
      }
      case Statistic::kRatioOfSums: {
        double x = 0;
        double w = 0;
        for (std::size_t i = 0; i < n; ++i) {
          const WeightedSample& s = samples_[draw(n)];
          x += s.x;
          w += s.w;
        }
        return w > 0 ? x / w : 0;
      }
      case Statistic::kPercentile:
        break;
    }
    std::fill(counts_.begin(), counts_.end(), 0);
    for (std::size_t i = 0; i < n; ++i) ++counts_[rank_of_[draw(n)]];
    // common/stats.h's rule on the sorted resample, its two positions found by the counts.
    const auto [lower, upper, fraction] = percentile_positions(spec_.p, n);
    double at_lower = 0;
    double at_upper = 0;
    std::size_t seen = 0;
    for (std::size_t rank = 0; rank < n; ++rank) {
      if (counts_[rank] == 0) continue;
      const std::size_t next = seen + counts_[rank];
      if (seen <= lower && lower < next) at_lower = sorted_[rank];
      if (seen <= upper && upper < next) {
        at_upper = sorted_[rank];
        break;
      }
      seen = next;
    }
    return at_lower + (at_upper - at_lower) * fraction;
  }

 private:
  const std::vector<WeightedSample>& samples_;
  StatisticSpec spec_;
  std::vector<double> sorted_;
  std::vector<std::uint32_t> rank_of_;  // original index -> rank among the sorted values
  std::vector<std::uint32_t> counts_;   // draws of each rank in one resample
};

// One side of a joint bootstrap: a resample is a count of draws per request; each metric
// reads the counts of the requests that have its values. A mean or ratio is one pass over
// those requests; a percentile walks them in the order of its column's values to the two
// ranks it interpolates between (common/stats.h's rule), as SideResampler does.
class JointSide {
 public:
  JointSide(const RequestColumns& columns, const std::vector<JointMetric>& metrics)
      : rows_(columns.empty() ? 0 : columns.front().size()), counts_(rows_) {
    for (const JointMetric& metric : metrics) {
      Prepared prepared;
      const auto& x = columns.at(metric.column);
      const std::vector<double>* w =
          metric.spec.kind == Statistic::kRatioOfSums ? &columns.at(metric.weight_column) : nullptr;
      for (std::size_t i = 0; i < rows_; ++i) {
        if (std::isnan(x[i]) || (w != nullptr && std::isnan((*w)[i]))) continue;
        prepared.present.push_back(static_cast<std::uint32_t>(i));
        prepared.x.push_back(x[i]);
        prepared.w.push_back(w != nullptr ? (*w)[i] : 1.0);
      }
      if (metric.spec.kind == Statistic::kPercentile) {
        std::vector<std::size_t> order(prepared.present.size());
        for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
        std::stable_sort(order.begin(), order.end(), [&prepared](std::size_t a, std::size_t b) {
          return prepared.x[a] < prepared.x[b];
        });
        Prepared sorted;
        for (const std::size_t k : order) {
          sorted.present.push_back(prepared.present[k]);
          sorted.x.push_back(prepared.x[k]);
        }
        prepared.present = std::move(sorted.present);
        prepared.x = std::move(sorted.x);
        prepared.w.clear();
      }
      prepared.every_request = prepared.present.size() == rows_;
      prepared.spec = metric.spec;
      prepared_.push_back(std::move(prepared));
    }
  }

  void draw(BootstrapRandom& random) {
    std::fill(counts_.begin(), counts_.end(), 0);
    for (std::size_t i = 0; i < rows_; ++i) ++counts_[random.below(rows_)];
  }

  // The metric's statistic on the current resample; 0 when no drawn request has its values
  // (compute_statistic's value for an empty sample).
  double statistic(std::size_t metric) const {
    const Prepared& p = prepared_[metric];
    const std::size_t size = p.present.size();
    switch (p.spec.kind) {
      case Statistic::kMean:
      case Statistic::kRatioOfSums: {
        // Four partial sums: one chain of dependent additions waits on each add's latency,
        // four independent ones overlap (the order of a sum is not the plain algorithm's
        // anyway; the test holds it equal within rounding).
        double x[4] = {0, 0, 0, 0};
        double w[4] = {0, 0, 0, 0};
        std::size_t k = 0;
        for (; k + 4 <= size; k += 4) {
          for (std::size_t lane = 0; lane < 4; ++lane) {
            const double c = counts_[p.present[k + lane]];
            x[lane] += c * p.x[k + lane];
            w[lane] += c * p.w[k + lane];
          }
        }
        for (; k < size; ++k) {
          const double c = counts_[p.present[k]];
          x[0] += c * p.x[k];
          w[0] += c * p.w[k];
        }
        const double x_sum = (x[0] + x[1]) + (x[2] + x[3]);
        const double w_sum = (w[0] + w[1]) + (w[2] + w[3]);
        return w_sum > 0 ? x_sum / w_sum : 0;
      }
      case Statistic::kPercentile:
        break;
    }
    std::size_t drawn = rows_;
    if (!p.every_request) {
      drawn = 0;
      for (std::size_t k = 0; k < size; ++k) drawn += counts_[p.present[k]];
    }
    if (drawn == 0) return 0;
    const auto [lower, upper, fraction] = percentile_positions(p.spec.p, drawn);
    double at_lower = 0;
    double at_upper = 0;
    if (lower < drawn / 2) {
      std::size_t seen = 0;  // drawn values below the current one
      for (std::size_t k = 0; k < size; ++k) {
        // No test for c == 0: a value not drawn matches no position, and the branch on a
        // Poisson(1) count mispredicts a third of the time.
        const std::uint32_t c = counts_[p.present[k]];
        const std::size_t next = seen + c;
        if (seen <= lower && lower < next) at_lower = p.x[k];
        if (seen <= upper && upper < next) {
          at_upper = p.x[k];
          break;
        }
        seen = next;
      }
    } else {
      // A high percentile: walk down from the largest value, so a p95 reads the top 5%.
      std::size_t above = 0;  // drawn values above the current one
      for (std::size_t k = size; k-- > 0;) {
        const std::uint32_t c = counts_[p.present[k]];
        const std::size_t first = drawn - above - c;  // the lowest position this value holds
        if (first <= upper && upper < drawn - above) at_upper = p.x[k];
        if (first <= lower && lower < drawn - above) {
          at_lower = p.x[k];
          break;
        }
        above += c;
      }
    }
    return at_lower + (at_upper - at_lower) * fraction;
  }

 private:
  struct Prepared {
    StatisticSpec spec;
    std::vector<std::uint32_t> present;  // requests with the metric's values (sorted by x for
                                         // a percentile)
    std::vector<double> x;
    std::vector<double> w;  // 1 for a mean; none for a percentile
    bool every_request = false;
  };
  std::size_t rows_;
  std::vector<std::uint32_t> counts_;  // draws of each request in one resample
  std::vector<Prepared> prepared_;
};

std::vector<WeightedSample> present_values(const RequestColumns& columns,
                                           const JointMetric& metric) {
  std::vector<WeightedSample> out;
  if (columns.empty()) return out;
  const auto& x = columns.at(metric.column);
  const std::vector<double>* w =
      metric.spec.kind == Statistic::kRatioOfSums ? &columns.at(metric.weight_column) : nullptr;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) || (w != nullptr && std::isnan((*w)[i]))) continue;
    out.push_back({x[i], w != nullptr ? (*w)[i] : 1.0});
  }
  return out;
}

}  // namespace

ChangeInterval bootstrap_change(const std::vector<WeightedSample>& a,
                                const std::vector<WeightedSample>& b, const StatisticSpec& spec,
                                const BootstrapOptions& options) {
  ChangeInterval out;
  if (a.empty() || b.empty()) return out;
  const double base = compute_statistic(a, spec);
  if (base == 0) return out;
  out.valid = true;
  out.change = compute_statistic(b, spec) / base - 1;

  // Our own generator and index draw (not the standard distributions, whose algorithms differ
  // between libraries), so an interval is the same on every platform.
  BootstrapRandom random(options.seed);
  auto draw = [&random](std::size_t n) { return random.below(n); };
  SideResampler side_a(a, spec);
  SideResampler side_b(b, spec);
  std::vector<double> changes;
  changes.reserve(static_cast<std::size_t>(std::max(options.resamples, 1)));
  for (int r = 0; r < options.resamples; ++r) {
    const double sa = side_a.resample(draw);
    const double sb = side_b.resample(draw);  // drawn after A's, as the plain algorithm did
    if (sa == 0) continue;
    changes.push_back(sb / sa - 1);
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

double joint_statistic(const RequestColumns& columns, const JointMetric& metric) {
  return compute_statistic(present_values(columns, metric), metric.spec);
}

std::vector<ChangeInterval> joint_bootstrap_change(const RequestColumns& a, const RequestColumns& b,
                                                   const std::vector<JointMetric>& metrics,
                                                   const BootstrapOptions& options) {
  std::vector<ChangeInterval> out(metrics.size());
  bool any_valid = false;
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    const auto sa = present_values(a, metrics[m]);
    const auto sb = present_values(b, metrics[m]);
    if (sa.empty() || sb.empty()) continue;
    const double base = compute_statistic(sa, metrics[m].spec);
    if (base == 0) continue;
    out[m].valid = any_valid = true;
    out[m].change = compute_statistic(sb, metrics[m].spec) / base - 1;
  }
  if (!any_valid) return out;

  BootstrapRandom random(options.seed);
  JointSide side_a(a, metrics);
  JointSide side_b(b, metrics);
  std::vector<std::vector<double>> changes(metrics.size());
  for (auto& c : changes) c.reserve(static_cast<std::size_t>(std::max(options.resamples, 1)));
  for (int r = 0; r < options.resamples; ++r) {
    side_a.draw(random);
    side_b.draw(random);
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      if (!out[m].valid) continue;
      const double sa = side_a.statistic(m);
      if (sa == 0) continue;
      changes[m].push_back(side_b.statistic(m) / sa - 1);
    }
  }
  const double tail = (1 - options.confidence) / 2 * 100;
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    if (!out[m].valid) continue;
    if (changes[m].empty()) {
      out[m].low = out[m].high = out[m].change;
      continue;
    }
    std::sort(changes[m].begin(), changes[m].end());
    out[m].low = percentile(changes[m], tail);
    out[m].high = percentile(changes[m], 100 - tail);
  }
  return out;
}

}  // namespace kvsweep::figures
