// Over capacity's rules (b), (c) and (d) over a cell's steady window (docs/metrics.md,
// "Verdicts"): in flight rising, completions short of arrivals, the servers' waiting queue
// rising. The backlog rule (a) stays with the open loop's other send-side rules in validity.cc.
#include "reports/over_capacity_rules.h"

#include <cmath>
#include <limits>
#include <map>

#include "common/trend.h"
#include "reports/units.h"

namespace kvsweep::reports {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// `per_point`: the growth asked per point (of the arrivals for in flight; 0 for scrapes).
GrowthRule growth_rule(const ValidityRules& rules, std::size_t min_points, double per_point) {
  return {rules.trend_alpha, ValidityRules::kMinInFlightGrowth,
          ValidityRules::kMinInFlightGrowthFraction, min_points, per_point};
}

// "while 8.0 req/s arrived and 5.2 req/s finished", over the steady window.
std::string rates_text(const CellValidity& v) {
  const double length = v.steady->end_s - v.steady->start_s;
  return format_figures("while %.3g req/s arrived and %.3g req/s finished",
                        static_cast<double>(v.window_arrivals) / length,
                        static_cast<double>(v.window_completions) / length);
}

}  // namespace

void judge_service(const std::vector<const store::RequestRow*>& rows,
                   const std::vector<StepPoint>& in_flight, const ValidityRules& rules,
                   CellValidity& v) {
  const double t0 = v.steady->start_s;
  const double t1 = v.steady->end_s;
  const double t1_inclusive = std::nextafter(t1, kInf);  // the window's last send is in it
  const bool scheduled = std::isfinite(v.request_rate);
  std::vector<TrendPoint> counts;
  for (const store::RequestRow* r : rows) {
    if (r->sent_s >= t0 && r->sent_s <= t1) {
      counts.push_back({r->sent_s, double(value_at(in_flight, r->sent_s))});
    }
    const double arrival = scheduled && r->scheduled_s >= 0 ? r->scheduled_s : r->sent_s;
    if (arrival >= t0 && arrival <= t1) ++v.window_arrivals;
    const double end = busy_until_s(*r);
    if (r->ok && end >= t0 && end <= t1) ++v.window_completions;
  }
  const double length = t1 - t0;
  // (b) in flight rising.
  v.in_flight_trend = judge_growth(
      counts, t0, t1_inclusive,
      growth_rule(rules, kMinTrendPoints, ValidityRules::kMinInFlightGrowthOfArrivals));
  if (!v.in_flight_trend.evaluated) {
    v.not_evaluated.push_back(
        "over capacity (in flight): " + std::to_string(v.in_flight_trend.points) +
        " sends in the steady window, fewer than the " + std::to_string(kMinTrendPoints) +
        " a trend needs");
  } else if (v.in_flight_trend.rising) {
    v.over_capacity = true;
    v.reasons.push_back(
        format_figures("over capacity: in flight grew from %.0f to %.0f over %.3g s ",
                       v.in_flight_trend.from, v.in_flight_trend.to, length) +
        rates_text(v) +
        format_figures(" (Mann-Kendall p = %.2g, +%.3g >= %.3g)", v.in_flight_trend.test.p_upward,
                       v.in_flight_trend.growth, v.in_flight_trend.min_growth));
  }
  // (c) completions short of arrivals.
  const auto arrivals = static_cast<double>(v.window_arrivals);
  const double shortfall = arrivals - static_cast<double>(v.window_completions);
  constexpr std::int64_t kMinArrivals = 10;
  if (v.window_arrivals < kMinArrivals) {
    v.not_evaluated.push_back("over capacity (completions): " + std::to_string(v.window_arrivals) +
                              " arrivals in the steady window, fewer than " +
                              std::to_string(kMinArrivals));
  } else if (shortfall > ValidityRules::kMaxCompletionShortfall * arrivals &&
             shortfall > ValidityRules::kShortfallSigmas * std::sqrt(arrivals)) {
    v.completions_short = true;
    v.over_capacity = true;
    v.reasons.push_back(
        format_figures("over capacity: %.0f of %.0f arrivals completed over ",
                       static_cast<double>(v.window_completions), arrivals) +
        format_figures("%.3g s (%.0f%% short) ", length, shortfall / arrivals * 100) +
        rates_text(v));
  }
}

// Over capacity (d): the servers' summed waiting queue at each scrape in the steady window.
void judge_queue(const std::vector<store::MetricSample>& samples, const ValidityRules& rules,
                 CellValidity& v) {
  std::map<double, double> queue;  // scrape time -> summed waiting requests
  for (const store::MetricSample& m : samples) {
    for (const char* name : kWaitingQueueSeries) {
      if (m.name == name) queue[m.t_s] += m.value;
    }
  }
  if (queue.empty()) {
    v.not_evaluated.push_back(
        "over capacity (servers' waiting queue): not scraped (no vllm:num_requests_waiting, "
        "dynamo_frontend_queued_requests or sglang:num_queue_reqs in the cell's /metrics)");
    v.notes.push_back("servers' waiting queue not judged: not scraped");
    return;
  }
  const double t0 = v.steady->start_s;
  const double t1 = std::nextafter(v.steady->end_s, kInf);
  std::vector<TrendPoint> points;
  for (const auto& [t, waiting] : queue) {
    points.push_back({t, waiting});
    if (t >= t0 && t < t1) ++v.queue_scrapes;
  }
  v.queue_trend = judge_growth(
      points, t0, t1,
      growth_rule(rules, static_cast<std::size_t>(ValidityRules::kMinQueueScrapes), 0));
  if (!v.queue_trend.evaluated) {
    v.not_evaluated.push_back(
        "over capacity (servers' waiting queue): " + std::to_string(v.queue_scrapes) +
        " scrapes in the steady window, fewer than " +
        std::to_string(ValidityRules::kMinQueueScrapes));
    v.notes.push_back("servers' waiting queue not judged: " + std::to_string(v.queue_scrapes) +
                      " scrapes, fewer than " + std::to_string(ValidityRules::kMinQueueScrapes));
  } else if (v.queue_trend.rising) {
    v.over_capacity = true;
    v.reasons.push_back(
        format_figures(
            "over capacity: the servers' waiting queue grew from %.0f to %.0f over %.3g s ",
            v.queue_trend.from, v.queue_trend.to, v.steady->end_s - v.steady->start_s) +
        rates_text(v) +
        format_figures(" (%.0f scrapes, Mann-Kendall p = %.2g)",
                       static_cast<double>(v.queue_scrapes), v.queue_trend.test.p_upward));
  }
}

}  // namespace kvsweep::reports
