// Per-cell figures computed from stored rows alone, as docs/metrics.md defines them.
#include "figures/cell_metrics.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "figures/peak_figures.h"

namespace kvsweep::figures {
namespace {

// When a request ended: its stored end; rows from before schema 3 have none, and fall back
// on their last token, or for a failure without tokens, sent + e2e.
double end_s(const store::RequestRow& r) {
  if (r.ended_s >= 0) return std::max(r.ended_s, r.last_token_s);
  return r.last_token_s >= 0 ? r.last_token_s : r.sent_s + r.e2e_ms / 1000.0;
}

// Per source and name: the sum over label sets, one per phase.
struct PhaseSums {
  std::optional<double> before;
  std::optional<double> after;
  bool complete() const { return before && after; }
  double delta() const { return *after - *before; }
};

using SourceCounters = std::map<std::string, PhaseSums>;  // metric name -> sums

}  // namespace

std::string failure_text(int http_status, const std::string& error) {
  std::string text = error.empty() ? "(no reason stored)" : error;
  if (http_status != 0 && error.rfind("HTTP ", 0) != 0) {
    text += " (HTTP " + std::to_string(http_status) + ")";
  }
  return text;
}

std::optional<double> counter_ratio_delta(
    const std::vector<store::MetricSample>& samples,
    std::initializer_list<std::pair<const char*, const char*>> names) {
  const auto wanted = [&names](const std::string& name) {
    for (const auto& [numerator, denominator] : names) {
      if (name == numerator || name == denominator) return true;
    }
    return false;
  };
  std::map<std::string, SourceCounters> sources;
  for (const auto& s : samples) {
    if (!wanted(s.name)) continue;
    PhaseSums& sums = sources[s.source][s.name];
    if (s.phase == "before") sums.before = sums.before.value_or(0) + s.value;
    if (s.phase == "after") sums.after = sums.after.value_or(0) + s.value;
  }
  double numerators = 0;
  double denominators = 0;
  bool any = false;
  for (auto& [source, counters] : sources) {
    for (const auto& [numerator, denominator] : names) {
      const PhaseSums& n = counters[numerator];
      const PhaseSums& d = counters[denominator];
      if (!n.complete() || !d.complete()) continue;
      numerators += n.delta();
      denominators += d.delta();
      any = true;
      break;
    }
  }
  if (!any || denominators <= 0) return std::nullopt;
  return numerators / denominators;
}

std::optional<double> server_kv_hit_rate(const std::vector<store::MetricSample>& samples) {
  return counter_ratio_delta(samples, {{kPrefixCacheHits, kPrefixCacheQueries},
                                       {kGpuPrefixCacheHits, kGpuPrefixCacheQueries}});
}

std::optional<double> server_counter_delta(const std::vector<store::MetricSample>& samples,
                                           const std::string& name) {
  std::map<std::string, PhaseSums> sources;
  for (const auto& s : samples) {
    if (s.name != name) continue;
    PhaseSums& sums = sources[s.source];
    if (s.phase == "before") sums.before = sums.before.value_or(0) + s.value;
    if (s.phase == "after") sums.after = sums.after.value_or(0) + s.value;
  }
  std::optional<double> total;
  for (const auto& [source, sums] : sources) {
    if (sums.complete()) total = total.value_or(0) + sums.delta();
  }
  return total;
}

std::optional<double> server_kv_usage_max(const std::vector<store::MetricSample>& samples) {
  std::optional<double> peak;
  for (const auto& s : samples) {
    if (s.name != kKvCacheUsage && s.name != kGpuCacheUsage) continue;
    if (s.phase != "during") continue;
    peak = std::max(peak.value_or(s.value), s.value);
  }
  return peak;
}

namespace {

// TPOT as metrics.md defines it, from the row's own timings.

bool meets(const store::RequestRow& r, const Slo& slo) {
  if (!r.ok || r.first_token_s < 0) return false;
  if (slo.ttft_ms && r.ttft_ms > *slo.ttft_ms) return false;
  if (slo.e2e_ms && r.e2e_ms > *slo.e2e_ms) return false;
  if (slo.tpot_ms) {
    const auto tpot = request_tpot_ms(r);
    if (tpot && *tpot > *slo.tpot_ms) return false;
  }
  return true;
}

SampleSummary sort_and_summarize(std::vector<double>& samples) {
  std::sort(samples.begin(), samples.end());
  return summarize_sorted(samples);
}

}  // namespace

namespace {

// What one pass over the measured rows adds up, before the rates are taken.
struct Tally {
  std::vector<double> e2e_from_schedule;
  std::int64_t good = 0;
  double first_sent_s = std::numeric_limits<double>::infinity();
  double last_done_s = -std::numeric_limits<double>::infinity();
  std::int64_t prompt_tokens = 0;
  std::int64_t cached = 0;
  std::int64_t cached_prompt = 0;
  bool any_cached = false;
};

// The per-request figures of one successful row: samples, tokens, cache hits.
void add_ok(const store::RequestRow& r, const Slo& slo, CellMetrics& m, Tally& t) {
  ++m.ok;
  // A successful reply with no generated content (the model stopped at once) has no first
  // token: it counts as ok and for throughput, but has no TTFT, E2E or TPOT to contribute.
  if (r.first_token_s >= 0) {
    m.samples.ttft_ms.push_back(r.ttft_ms);
    m.samples.e2e_ms.push_back(r.e2e_ms);
    if (const auto tpot = request_tpot_ms(r)) m.samples.tpot_ms.push_back(*tpot);
    m.samples.itl_ms.insert(m.samples.itl_ms.end(), r.itl_ms.begin(), r.itl_ms.end());
    if (r.scheduled_s >= 0) {
      t.e2e_from_schedule.push_back(r.e2e_ms + (r.sent_s - r.scheduled_s) * 1000.0);
    }
  }
  if (!slo.empty() && meets(r, slo)) ++t.good;
  if (r.prompt_tokens >= 0) {
    t.prompt_tokens += r.prompt_tokens;
  } else {
    ++m.prompt_tokens_unknown;
  }
  m.output_tokens += r.output_tokens;
  if (r.tokens_estimated) ++m.output_tokens_estimated;
  if (r.cached_tokens >= 0 && r.prompt_tokens >= 0) {
    t.any_cached = true;
    t.cached += r.cached_tokens;
    t.cached_prompt += r.prompt_tokens;
  }
}

void add_measured(const store::RequestRow& r, const Slo& slo, CellMetrics& m, Tally& t) {
  t.first_sent_s = std::min(t.first_sent_s, r.sent_s);
  t.last_done_s = std::max(t.last_done_s, end_s(r));
  if (r.scheduled_s >= 0) m.samples.schedule_lag_ms.push_back((r.sent_s - r.scheduled_s) * 1000.0);
  if (r.ok) {
    add_ok(r, slo, m, t);
    return;
  }
  ++m.failed;
  if (++m.failed_by_kind[r.error_kind] == 1) {
    m.first_failure_by_kind[r.error_kind] = {r.http_status, r.error};
  }
}

// Token counts, the window and every rate over it; goodput with an SLO.
void set_rates(const Tally& t, const Slo& slo, CellMetrics& m) {
  if (m.prompt_tokens_unknown == 0) {
    m.prompt_tokens = t.prompt_tokens;
  } else {
    m.prompt_tokens.reset();
    m.total_token_throughput.reset();
  }
  if (t.last_done_s > t.first_sent_s) {
    m.window_s = t.last_done_s - t.first_sent_s;
    m.request_throughput = static_cast<double>(m.ok) / m.window_s;
    m.output_throughput = static_cast<double>(m.output_tokens) / m.window_s;
    if (m.prompt_tokens) {
      m.total_token_throughput =
          static_cast<double>(*m.prompt_tokens + m.output_tokens) / m.window_s;
    }
  }
  if (t.any_cached && t.cached_prompt > 0) {
    m.cache_hit_client = static_cast<double>(t.cached) / static_cast<double>(t.cached_prompt);
  }
  if (!slo.empty()) {
    m.good_requests = t.good;
    m.goodput = m.window_s > 0 ? static_cast<double>(t.good) / m.window_s : 0.0;
  }
}

// What the servers' own /metrics say about the measured phase.
void set_server_figures(const std::vector<store::MetricSample>& samples, CellMetrics& m) {
  m.kv_hit_rate_server = server_kv_hit_rate(samples);
  m.kv_usage_max = server_kv_usage_max(samples);
  if (const auto p = server_counter_delta(samples, kPreemptions)) {
    m.preemptions = static_cast<std::int64_t>(*p + 0.5);
  }
  const auto accepted = server_counter_delta(samples, kSpecDecodeAccepted);
  const auto draft = server_counter_delta(samples, kSpecDecodeDraft);
  if (accepted && draft && *draft > 0) m.spec_decode_acceptance = *accepted / *draft;
  m.epp_prefix_hit_ratio = counter_ratio_delta(
      samples,
      {{kEppHitRatioSum, kEppHitRatioCount}, {kLlmdEppHitRatioSum, kLlmdEppHitRatioCount}});
  if (const auto seconds =
          counter_ratio_delta(samples, {{kEppSchedulingSum, kEppSchedulingCount},
                                        {kLlmdEppSchedulingSum, kLlmdEppSchedulingCount}})) {
    m.epp_scheduling_ms = *seconds * 1000.0;
  }
}

// Measured requests by the prompt they sent: (conversation, turn) of the dataset.
void set_prompt_repeats(const std::vector<store::RequestRow>& requests, CellMetrics& m) {
  std::map<std::pair<int, int>, std::int64_t> sends;
  for (const auto& r : requests) {
    if (r.warmup) continue;
    const std::int64_t n = ++sends[{r.conversation, r.turn}];
    if (n > 1) ++m.repeated_requests;
    m.prompt_sends_max = std::max(m.prompt_sends_max, n);
  }
}

}  // namespace

std::optional<double> request_tpot_ms(const store::RequestRow& r) {
  if (r.output_tokens <= 1 || r.first_token_s < 0) return std::nullopt;
  return (r.e2e_ms - r.ttft_ms) / (r.output_tokens - 1);
}

CellMetrics compute_cell_metrics(const std::vector<store::RequestRow>& requests,
                                 const std::vector<store::MetricSample>& samples, const Slo& slo,
                                 const std::optional<store::CellLoadRow>& load,
                                 const ValidityRules& rules) {
  CellMetrics m;
  Tally tally;
  for (const auto& r : requests) {
    if (!r.warmup) add_measured(r, slo, m, tally);
  }
  m.ttft_ms = sort_and_summarize(m.samples.ttft_ms);
  m.tpot_ms = sort_and_summarize(m.samples.tpot_ms);
  m.itl_ms = sort_and_summarize(m.samples.itl_ms);
  m.e2e_ms = sort_and_summarize(m.samples.e2e_ms);
  m.schedule_lag_ms = sort_and_summarize(m.samples.schedule_lag_ms);
  m.e2e_from_schedule_ms = summarize(std::move(tally.e2e_from_schedule));
  set_rates(tally, slo, m);
  set_server_figures(samples, m);
  const PeakFigures peak = peak_figures(requests);
  m.max_output_tokens_per_s = peak.max_output_tokens_per_s;
  m.max_concurrent_requests = peak.max_concurrent_requests;
  set_prompt_repeats(requests, m);
  LittleInputs little;
  little.request_throughput = m.request_throughput;
  little.ttft_mean_ms = m.ttft_ms.mean;
  little.tpot_mean_ms = m.tpot_ms.mean;
  little.mean_output_tokens =
      m.ok > 0 ? static_cast<double>(m.output_tokens) / static_cast<double>(m.ok) : 0;
  m.validity = judge_cell(requests, samples, load, little, rules);
  if (load) m.shards = load->shards;
  return m;
}

}  // namespace kvsweep::figures
