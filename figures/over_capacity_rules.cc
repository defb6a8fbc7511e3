// Over capacity's rules (b), (c) and (d) over a cell's steady window (docs/metrics.md,
// "Verdicts"): in flight rising, completions short of arrivals, the servers' waiting queue
// rising. The backlog rule (a) stays with the open loop's other send-side rules in validity.cc.
#include "figures/over_capacity_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "common/trend.h"
#include "figures/units.h"

namespace kvsweep::figures {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int64_t kMinArrivalsForCompletions = 10;  // (c) needs this many in the window

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
  // (b)'s trend; judge_in_flight_and_completions decides it.
  v.in_flight_trend = judge_growth(
      counts, t0, t1_inclusive,
      growth_rule(rules, kMinTrendPoints, ValidityRules::kMinInFlightGrowthOfArrivals));
  if (!v.in_flight_trend.evaluated) {
    v.not_evaluated.push_back(
        "over capacity (in flight): " + std::to_string(v.in_flight_trend.points) +
        " sends in the steady window, fewer than the " + std::to_string(kMinTrendPoints) +
        " a trend needs");
  }
  if (v.window_arrivals < kMinArrivalsForCompletions) {
    v.not_evaluated.push_back("over capacity (completions): " + std::to_string(v.window_arrivals) +
                              " arrivals in the steady window, fewer than " +
                              std::to_string(kMinArrivalsForCompletions));
  }
}

// Over capacity (d): the servers' summed waiting queue at each scrape in the steady window.
void judge_queue(const std::vector<store::MetricSample>& samples, const ValidityRules& rules,
                 CellValidity& v) {
  std::map<double, double> queue;    // scrape time -> summed waiting requests
  std::map<double, double> running;  // scrape time -> summed running batch
  for (const store::MetricSample& m : samples) {
    for (const char* name : kWaitingQueueSeries) {
      if (m.name == name) queue[m.t_s] += m.value;
    }
    for (const char* name : kRunningSeries) {
      if (m.name == name) running[m.t_s] += m.value;
    }
  }
  const auto min_scrapes = static_cast<std::size_t>(ValidityRules::kMinQueueScrapes);
  const double t_end = std::nextafter(v.steady->end_s, kInf);
  if (!running.empty()) {
    std::vector<TrendPoint> points;
    for (const auto& [t, batch] : running) points.push_back({t, batch});
    v.running_trend =
        judge_growth(points, v.steady->start_s, t_end, growth_rule(rules, min_scrapes, 0));
  }
  if (queue.empty()) {
    v.not_evaluated.push_back(
        "over capacity (servers' waiting queue): not scraped (no vllm:num_requests_waiting, "
        "dynamo_frontend_queued_requests or sglang:num_queue_reqs in the cell's /metrics)");
    v.notes.push_back("servers' waiting queue not judged: not scraped");
    return;
  }
  const double t0 = v.steady->start_s;
  std::vector<TrendPoint> points;
  for (const auto& [t, waiting] : queue) {
    points.push_back({t, waiting});
    if (t >= t0 && t < t_end) ++v.queue_scrapes;
  }
  v.queue_trend = judge_growth(points, t0, t_end, growth_rule(rules, min_scrapes, 0));
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

void judge_in_flight_and_completions(CellValidity& v) {
  const double length = v.steady->end_s - v.steady->start_s;
  const GrowthJudgement& batch = v.running_trend;
  // The servers were scraped, queued nothing more and their running batch was seen: what the
  // batch grew by is requests in service, taking longer, not waiting.
  const bool servers_held_the_queue =
      v.queue_trend.evaluated && !v.queue_trend.rising && batch.evaluated;
  const double in_service_growth = servers_held_the_queue ? std::max(0.0, batch.growth) : 0;
  // (b) in flight rising.
  const GrowthJudgement& grew = v.in_flight_trend;
  if (grew.evaluated && grew.rising) {
    v.in_flight_in_servers =
        servers_held_the_queue &&
        in_service_growth >= ValidityRules::kMinServedShareOfInFlightGrowth * grew.growth;
    if (v.in_flight_in_servers) {
      v.notes.push_back(
          format_figures("in flight grew from %.0f to %.0f over %.3g s ", grew.from, grew.to,
                         length) +
          format_figures("while the servers' waiting queue held and their running batch grew "
                         "from %.0f to %.0f: the requests took longer, none waited (not a "
                         "verdict)",
                         batch.from, batch.to));
    } else {
      v.over_capacity = true;
      v.reasons.push_back(
          format_figures("over capacity: in flight grew from %.0f to %.0f over %.3g s ", grew.from,
                         grew.to, length) +
          rates_text(v) +
          format_figures(" (Mann-Kendall p = %.2g, +%.3g >= %.3g)", grew.test.p_upward, grew.growth,
                         grew.min_growth));
    }
  }
  // (c) completions short of arrivals, less what the servers' batch grew by: requests in
  // service at the window's end arrived in it and have not finished, queued or not.
  const auto arrivals = static_cast<double>(v.window_arrivals);
  if (v.window_arrivals < kMinArrivalsForCompletions) return;
  const double shortfall = arrivals - static_cast<double>(v.window_completions);
  const auto short_by = [&](double missing) {
    return missing > ValidityRules::kMaxCompletionShortfall * arrivals &&
           missing > ValidityRules::kShortfallSigmas * std::sqrt(arrivals);
  };
  const std::string completed =
      format_figures("%.0f of %.0f arrivals completed over ",
                     static_cast<double>(v.window_completions), arrivals) +
      format_figures("%.3g s (%.0f%% short) ", length, shortfall / arrivals * 100);
  if (short_by(shortfall - in_service_growth)) {
    v.completions_short = true;
    v.over_capacity = true;
    v.reasons.push_back("over capacity: " + completed + rates_text(v));
  } else if (short_by(shortfall)) {
    v.notes.push_back(completed + format_figures("while the servers' running batch grew by %.0f "
                                                 "and their waiting queue held (not a verdict)",
                                                 in_service_growth));
  }
}

}  // namespace kvsweep::figures
