// OverCapacityMonitor: the live check behind LoadOptions::stop_when_over_capacity.
#include "driver/over_capacity_monitor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kvsweep::driver {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

void OverCapacityMonitor::sent(std::int64_t index, double sent_s) {
  position_[index] = sent_s_.size();
  sent_s_.push_back(sent_s);
  ended_s_.push_back(kInf);
}

void OverCapacityMonitor::backlog(double t_s, std::size_t waiting) {
  if (!backlog_.empty() && t_s < backlog_.back().t + kBacklogPeriodS) return;
  backlog_.push_back({t_s, static_cast<double>(waiting)});
}

void OverCapacityMonitor::ended(std::int64_t index, double ended_s) {
  const auto it = position_.find(index);
  if (it == position_.end()) return;
  ended_s_[it->second] = std::max(ended_s, sent_s_[it->second]);
  position_.erase(it);
}

std::optional<std::string> OverCapacityMonitor::check(double now_s, double measured_start_s) {
  if (measured_start_s < 0 || now_s < next_check_s_) return std::nullopt;
  next_check_s_ = now_s + kCheckPeriodS;
  const double elapsed_s = now_s - measured_start_s;
  if (elapsed_s < kMinElapsedS) return std::nullopt;
  const double t0 = measured_start_s + kRampFraction * elapsed_s;
  char text[300];

  // (a) The arrivals due and not sent, since the ramp-up.
  const double t1 = std::nextafter(now_s, kInf);
  const RiseJudgement backlog = judge_rise(backlog_, t0, t1, TrendRule{rules_.trend_alpha, 0});
  const double growth = backlog.test.slope_per_s * (now_s - t0);
  if (backlog.rising && growth >= ValidityRules::kMinBacklogGrowth) {
    std::snprintf(text, sizeof text,
                  "requests waiting to be sent grew by %.0f over %.3g s of arrivals "
                  "(Mann-Kendall p = %.2g)",
                  growth, now_s - t0, backlog.test.p_upward);
    return text;
  }

  // (b) The requests in flight at each send since the ramp-up.
  const GrowthJudgement in_flight =
      judge_growth(counts_at(sent_s_, ended_s_, sent_s_), t0, t1,
                   GrowthRule{rules_.trend_alpha, ValidityRules::kMinInFlightGrowth,
                              ValidityRules::kMinInFlightGrowthFraction, kMinTrendPoints,
                              ValidityRules::kMinInFlightGrowthOfArrivals});
  if (!in_flight.rising) return std::nullopt;
  std::snprintf(text, sizeof text,
                "in flight grew from %.0f to %.0f over %.3g s (Mann-Kendall p = %.2g, +%.3g >= "
                "%.3g)",
                in_flight.from, in_flight.to, now_s - t0, in_flight.test.p_upward, in_flight.growth,
                in_flight.min_growth);
  return text;
}

}  // namespace kvsweep::driver
