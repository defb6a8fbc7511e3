// Did a cell measure the load it was asked for, and was the system steady?
#include "figures/validity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "common/utf8_prefix.h"
#include "figures/in_flight.h"
#include "figures/over_capacity_rules.h"
#include "figures/units.h"

namespace kvsweep::figures {
namespace {

constexpr double kValidityInf = std::numeric_limits<double>::infinity();
// The ramp-up ends when the in-flight series first reaches this fraction of its time-weighted
// median over the sending period.
constexpr double kRampLevel = 0.9;
// A backlog shorter than this fraction of the window is too brief to judge the cap by.
constexpr double kMinBacklogFraction = 0.05;

std::vector<const store::RequestRow*> measured_rows(const std::vector<store::RequestRow>& rows) {
  std::vector<const store::RequestRow*> out;
  for (const auto& r : rows) {
    if (!r.warmup) out.push_back(&r);
  }
  return out;
}

SteadyFigures steady_figures(const std::vector<const store::RequestRow*>& rows,
                             const std::vector<StepPoint>& in_flight, double t0, double t1) {
  SteadyFigures f;
  f.start_s = t0;
  f.end_s = t1;
  std::vector<double> ttft;
  std::vector<double> tpot;
  std::int64_t ended = 0;
  std::int64_t tokens = 0;
  for (const store::RequestRow* r : rows) {
    if (!r->ok) continue;
    if (r->sent_s >= t0 && r->sent_s <= t1) {
      ++f.requests;
      if (r->first_token_s >= 0) ttft.push_back(r->ttft_ms);
      if (r->output_tokens > 1) tpot.push_back(r->tpot_ms);
    }
    const double end = busy_until_s(*r);
    if (end >= t0 && end <= t1) {
      ++ended;
      tokens += r->output_tokens;
    }
  }
  const double length = t1 - t0;
  if (length > 0) {
    f.request_throughput = static_cast<double>(ended) / length;
    f.output_throughput = static_cast<double>(tokens) / length;
  }
  f.ttft_ms = summarize(std::move(ttft));
  f.tpot_ms = summarize(std::move(tpot));
  f.in_flight_mean = time_weighted_mean(in_flight, t0, t1);
  return f;
}

void judge_driver(const store::CellLoadRow& load, const ValidityRules& rules, CellValidity& v) {
  v.driver_measured = load.driver_measured;
  v.stopped_over_capacity = load.stopped_over_capacity;
  if (!load.driver_measured) {
    v.not_evaluated.push_back("client-bound: no driver figures (a predicted cell)");
    return;
  }
  const int usable = std::max(1, std::min(load.driver_cores, load.driver_threads + 1));
  if (load.driver_wall_s > 0) {
    v.driver_cpu_utilisation = load.driver_cpu_s / (load.driver_wall_s * usable);
  }
  if (load.send_delay_count == 0) return;
  v.send_delay_p99_ms = load.send_delay_p99_ms;
  // The shortfall needs a span long enough that the delay threshold is a small part of it.
  const double stretch_s = load.sent_span_s - load.ready_span_s;
  if (load.sent_span_s >= 1 && stretch_s * 1000 >= rules.max_send_delay_p99_ms) {
    v.send_shortfall = stretch_s / load.sent_span_s;
  } else {
    v.send_shortfall = 0.0;
  }
  const std::string cpu = v.driver_cpu_utilisation
                              ? format_figures("; driver CPU %.0f%% of %.0f usable cores",
                                               *v.driver_cpu_utilisation * 100, usable)
                              : "";
  const bool enough_sends = load.send_delay_count >= ValidityRules::kMinSendsForDelayP99;
  if (!enough_sends) {
    v.not_evaluated.push_back("client-bound by send delay: " +
                              std::to_string(load.send_delay_count) + " sends, fewer than the " +
                              std::to_string(ValidityRules::kMinSendsForDelayP99) + " a p99 needs");
  }
  if (enough_sends && load.send_delay_p99_ms > rules.max_send_delay_p99_ms) {
    v.client_bound = true;
    v.reasons.push_back(format_figures("client-bound: send delay p99 %.3g ms > %.3g ms",
                                       load.send_delay_p99_ms, rules.max_send_delay_p99_ms) +
                        cpu);
  } else if (*v.send_shortfall > rules.max_send_shortfall) {
    v.client_bound = true;
    v.reasons.push_back(
        format_figures("client-bound: sends fell %.1f%% short of the schedule (> %.1f%%)",
                       *v.send_shortfall * 100, rules.max_send_shortfall * 100) +
        cpu);
  }
}

// Open loop: backlog, short of concurrency, and the trends of over capacity.
void judge_open_loop(const std::vector<const store::RequestRow*>& rows,
                     const std::vector<StepPoint>& in_flight, double window_t0, double window_t1,
                     const ValidityRules& rules, CellValidity& v) {
  std::vector<double> due;
  std::vector<double> sent;
  double first_scheduled = kValidityInf;
  double last_scheduled = -kValidityInf;
  for (const store::RequestRow* r : rows) {
    if (r->scheduled_s < 0) continue;
    first_scheduled = std::min(first_scheduled, r->scheduled_s);
    last_scheduled = std::max(last_scheduled, r->scheduled_s);
    const double from = r->scheduled_s + rules.backlog_grace_ms / 1000;
    if (r->sent_s > from) {
      due.push_back(from);
      sent.push_back(r->sent_s);
    }
  }
  if (last_scheduled > first_scheduled && rows.size() > 1) {
    v.scheduled_rate = static_cast<double>(rows.size() - 1) / (last_scheduled - first_scheduled);
  }
  const std::vector<StepPoint> backlog = step_series(due, sent);
  const GatedMean backlogged = mean_while(in_flight, backlog, window_t0, window_t1);
  v.backlog_s = backlogged.seconds;
  if (backlogged.seconds > 0) v.in_flight_while_backlogged = backlogged.mean;

  if (v.cap > 0 && backlogged.seconds >= kMinBacklogFraction * (window_t1 - window_t0)) {
    if (backlogged.mean < rules.min_in_flight_fraction * v.cap) {
      v.short_of_concurrency = true;
      v.reasons.push_back(format_figures(
          "short of its concurrency: %.0f in flight (%.0f%% of the cap) while requests waited "
          "to be sent for %.3g s",
          backlogged.mean, backlogged.mean / v.cap * 100, backlogged.seconds));
    }
  }

  // Over capacity (a): the backlog growing while arrivals still came (with an infinite rate
  // they all came at once: nothing grows).
  const double t0 = v.steady ? v.steady->start_s : window_t0;
  const double t1 = std::min(last_scheduled, window_t1);
  if (t1 > t0) {
    std::vector<TrendPoint> points;
    for (const store::RequestRow* r : rows) {
      if (r->scheduled_s >= 0)
        points.push_back({r->scheduled_s, double(value_at(backlog, r->scheduled_s))});
    }
    TrendRule rule{rules.trend_alpha, 0};
    v.backlog_trend = judge_rise(points, t0, t1, rule);
    const double growth = v.backlog_trend.test.slope_per_s * (t1 - t0);
    if (v.backlog_trend.rising && growth >= ValidityRules::kMinBacklogGrowth) {
      v.over_capacity = true;
      v.reasons.push_back(
          format_figures("over capacity: requests waiting to be sent grew by %.0f over %.3g s of "
                         "arrivals (Mann-Kendall p = %.2g)",
                         growth, t1 - t0, v.backlog_trend.test.p_upward));
    }
  }
}

// TTFT against send time over the steady window: shown, never decides.
void note_ttft(const std::vector<const store::RequestRow*>& rows, const ValidityRules& rules,
               CellValidity& v) {
  std::vector<TrendPoint> ttft;
  for (const store::RequestRow* r : rows) {
    if (r->ok && r->first_token_s >= 0) ttft.push_back({r->sent_s, r->ttft_ms});
  }
  TrendRule rule{rules.trend_alpha, rules.min_ttft_rise_per_10s};
  v.ttft_trend =
      judge_rise(ttft, v.steady->start_s, std::nextafter(v.steady->end_s, kValidityInf), rule);
  if (v.ttft_trend.rising) {
    v.notes.push_back(format_figures(
        "TTFT rose %.3g ms/s (median %.3g ms, Mann-Kendall p = %.2g): not a "
        "verdict",
        v.ttft_trend.test.slope_per_s, v.ttft_trend.median, v.ttft_trend.test.p_upward));
  }
}

// Written forward, not by inserting into the digits: gcc 12 warns (a false positive) on the
// inserting form once a unity build inlines it with its neighbours.
std::string with_thousands(std::int64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (std::size_t k = 0; k < digits.size(); ++k) {
    if (k > 0 && (digits.size() - k) % 3 == 0) out += ',';
    out += digits[k];
  }
  return out;
}

// The commonest kind of failure, by its first request: "total timeout after 60 s".
std::string main_failure(const std::vector<const store::RequestRow*>& rows) {
  std::map<std::string, std::pair<std::int64_t, const store::RequestRow*>> kinds;
  for (const store::RequestRow* r : rows) {
    if (r->ok) continue;
    auto& [count, first] = kinds[r->error_kind];
    ++count;
    if (first == nullptr || r->sent_s < first->sent_s) first = r;
  }
  const store::RequestRow* commonest = nullptr;
  std::int64_t most = 0;
  for (const auto& [kind, entry] : kinds) {
    if (entry.first > most) {
      most = entry.first;
      commonest = entry.second;
    }
  }
  if (commonest == nullptr) return "";
  std::string text = commonest->error;
  // The driver's own reason comes before curl's ("total timeout after 60 s: Operation timed
  // out ..."); a server's answer keeps its message ("HTTP 400: ...").
  if (text.rfind("HTTP ", 0) != 0) {
    if (const std::size_t colon = text.find(": "); colon != std::string::npos) text.resize(colon);
  }
  if (text.empty())
    text = commonest->error_kind.empty() ? "no reason stored" : commonest->error_kind;
  if (commonest->http_status != 0 && text.rfind("HTTP ", 0) != 0) {
    text += " (HTTP " + std::to_string(commonest->http_status) + ")";
  }
  return std::string(utf8_prefix(text, 120));
}
}  // namespace

const char* verdict_name(CellVerdict verdict) {
  switch (verdict) {
    case CellVerdict::kValid:
      return "valid";
    case CellVerdict::kClientBound:
      return "client-bound";
    case CellVerdict::kShortOfConcurrency:
      return "short of its concurrency";
    case CellVerdict::kOverCapacity:
      return "over capacity";
  }
  return "valid";
}

CellValidity judge_shard(const store::CellShardRow& shard, const ValidityRules& rules) {
  store::CellLoadRow load;
  load.request_rate = shard.request_rate;
  load.max_concurrency = shard.max_concurrency;
  load.users = shard.users;
  load.open_loop = shard.users == 0;
  load.driver_measured = true;
  load.driver_threads = shard.driver_threads;
  load.driver_cores = shard.driver_cores;
  load.driver_wall_s = shard.driver_wall_s;
  load.driver_cpu_s = shard.driver_cpu_s;
  load.send_delay_count = shard.send_delay_count;
  load.send_delay_p50_ms = shard.send_delay_p50_ms;
  load.send_delay_p99_ms = shard.send_delay_p99_ms;
  load.send_delay_max_ms = shard.send_delay_max_ms;
  load.ready_span_s = shard.ready_span_s;
  load.sent_span_s = shard.sent_span_s;
  CellValidity v;
  v.load_known = true;
  v.open_loop = load.open_loop;
  v.request_rate = load.request_rate;
  v.cap = load.open_loop ? load.max_concurrency : load.users;
  judge_driver(load, rules, v);
  if (shard.sent_span_s > 0 && shard.send_delay_count > 1) {
    v.send_rate = static_cast<double>(shard.send_delay_count - 1) / shard.sent_span_s;
  }
  if (shard.ready_span_s > 0 && shard.send_delay_count > 1) {
    v.scheduled_rate = static_cast<double>(shard.send_delay_count - 1) / shard.ready_span_s;
  }
  if (v.client_bound) v.verdict = CellVerdict::kClientBound;
  return v;
}

std::optional<double> little_in_flight(const LittleInputs& in) {
  if (!(in.request_throughput > 0)) return std::nullopt;
  const double seconds =
      (in.ttft_mean_ms + in.tpot_mean_ms * std::max(0.0, in.mean_output_tokens - 1)) / 1000;
  return in.request_throughput * seconds;
}

bool too_many_failed(std::int64_t failed, std::int64_t requests) {
  return requests > 0 && static_cast<double>(failed) >
                             ValidityRules::kMaxFailedFraction * static_cast<double>(requests);
}

std::string failures_text(const CellValidity& v) {
  if (!too_many_failed(v.failed, v.requests)) return "";
  return with_thousands(v.failed) + " of " + with_thousands(v.requests) + " failed" +
         (v.main_failure.empty() ? "" : ": " + v.main_failure);
}

CellValidity judge_cell(const std::vector<store::RequestRow>& requests,
                        const std::vector<store::MetricSample>& samples,
                        const std::optional<store::CellLoadRow>& load, const LittleInputs& little,
                        const ValidityRules& rules) {
  CellValidity v;
  const std::vector<const store::RequestRow*> rows = measured_rows(requests);
  v.requests = static_cast<std::int64_t>(rows.size());
  for (const store::RequestRow* r : rows) v.failed += r->ok ? 0 : 1;
  if (v.failed > 0) v.main_failure = main_failure(rows);
  if (load) {
    v.load_known = true;
    v.open_loop = load->open_loop;
    v.request_rate = load->request_rate;
    v.cap = load->open_loop ? load->max_concurrency : load->users;
  } else {
    v.not_evaluated.push_back(
        "every rule: the cell has no load record (stored before kvsweep "
        "judged cells)");
  }
  v.little_in_flight = little_in_flight(little);
  if (rows.empty()) return v;

  std::vector<double> starts;
  std::vector<double> ends;
  double first_sent = kValidityInf;
  double last_sent = -kValidityInf;
  double last_end = -kValidityInf;
  for (const store::RequestRow* r : rows) {
    starts.push_back(r->sent_s);
    ends.push_back(std::max(r->sent_s, busy_until_s(*r)));
    first_sent = std::min(first_sent, r->sent_s);
    last_sent = std::max(last_sent, r->sent_s);
    last_end = std::max(last_end, ends.back());
  }
  const std::vector<StepPoint> in_flight = step_series(starts, ends);
  v.in_flight_mean = time_weighted_mean(in_flight, first_sent, last_end);
  if (v.cap > 0) v.in_flight_fraction = v.in_flight_mean / v.cap;
  if (last_sent > first_sent && rows.size() > 1) {
    v.send_rate = static_cast<double>(rows.size() - 1) / (last_sent - first_sent);
  }
  // The steady window: from the end of the ramp-up to the last send (the drain follows).
  if (last_sent > first_sent) {
    const double level = kRampLevel * time_weighted_median(in_flight, first_sent, last_sent);
    const double ramp_end = first_reach(in_flight, std::max(1.0, level), first_sent, last_sent);
    if (last_sent > ramp_end) v.steady = steady_figures(rows, in_flight, ramp_end, last_sent);
  }
  if (!load) return v;

  judge_driver(*load, rules, v);
  // A sharded cell: each shard's driver is judged by its own figures; one that fell behind
  // its part of the schedule makes the cell client-bound, named.
  for (const store::CellShardRow& shard : load->shards) {
    const CellValidity own = judge_shard(shard, rules);
    if (!own.client_bound) continue;
    v.client_bound = true;
    for (const std::string& reason : own.reasons) {
      v.reasons.push_back("shard " + std::to_string(shard.shard) + " " + reason);
    }
  }
  if (v.open_loop) {
    judge_open_loop(rows, in_flight, first_sent, last_end, rules, v);
    if (v.steady) {
      judge_service(rows, in_flight, rules, v);
      judge_queue(samples, rules, v);
      judge_in_flight_and_completions(v);
    } else {
      v.not_evaluated.push_back(
          "over capacity (in flight, completions, servers' waiting queue): no steady window "
          "(every request sent at once)");
    }
  }
  if (v.steady) note_ttft(rows, rules, v);
  if (load->stopped_over_capacity && !v.over_capacity) {
    v.over_capacity = true;
    v.reasons.push_back("over capacity: stopped early (load.stop_when_over_capacity): " +
                        load->stop_reason);
  }
  if (v.client_bound) {
    v.verdict = CellVerdict::kClientBound;
  } else if (v.short_of_concurrency) {
    v.verdict = CellVerdict::kShortOfConcurrency;
  } else if (v.over_capacity) {
    v.verdict = CellVerdict::kOverCapacity;
  }
  return v;
}

std::string verdict_line(const CellValidity& v) {
  if (!v.load_known) return "not judged (no load record)";
  std::string line;
  if (v.verdict == CellVerdict::kValid) {
    line = "valid";
    if (v.in_flight_fraction)
      line += format_figures(": %.0f%% of the cap in flight", *v.in_flight_fraction * 100);
  }
  for (const std::string& reason : v.reasons) {
    if (!line.empty()) line += "; ";
    line += reason;
  }
  const std::string failures = failures_text(v);
  if (!failures.empty()) line += "; " + failures;
  for (const std::string& note : v.notes) line += "; " + note;
  return line;
}

}  // namespace kvsweep::figures
