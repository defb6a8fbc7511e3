// Per-cell figures computed from stored rows alone, as docs/metrics.md defines them.
#include "reports/cell_metrics.h"

#include <algorithm>
#include <limits>

namespace kvsweep::reports {
namespace {

// When a request ended: its last token, or for a failure without tokens, sent + e2e.
double completion_s(const store::RequestRow& r) {
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

std::optional<double> server_kv_hit_rate(const std::vector<store::MetricSample>& samples) {
  std::map<std::string, SourceCounters> sources;
  for (const auto& s : samples) {
    if (s.name != kPrefixCacheHits && s.name != kPrefixCacheQueries &&
        s.name != kGpuPrefixCacheHits && s.name != kGpuPrefixCacheQueries) {
      continue;
    }
    PhaseSums& sums = sources[s.source][s.name];
    if (s.phase == "before") sums.before = sums.before.value_or(0) + s.value;
    if (s.phase == "after") sums.after = sums.after.value_or(0) + s.value;
  }
  double hits = 0;
  double queries = 0;
  bool any = false;
  for (auto& [source, counters] : sources) {
    for (const auto& [hits_name, queries_name] :
         {std::pair{kPrefixCacheHits, kPrefixCacheQueries},
          std::pair{kGpuPrefixCacheHits, kGpuPrefixCacheQueries}}) {
      const PhaseSums& h = counters[hits_name];
      const PhaseSums& q = counters[queries_name];
      if (!h.complete() || !q.complete()) continue;
      hits += h.delta();
      queries += q.delta();
      any = true;
      break;
    }
  }
  if (!any || queries <= 0) return std::nullopt;
  return hits / queries;
}

CellMetrics compute_cell_metrics(const std::vector<store::RequestRow>& requests,
                                 const std::vector<store::MetricSample>& samples) {
  CellMetrics m;
  std::vector<double> ttft;
  std::vector<double> tpot;
  std::vector<double> itl;
  std::vector<double> e2e;
  double first_sent_s = std::numeric_limits<double>::infinity();
  double last_done_s = -std::numeric_limits<double>::infinity();
  std::int64_t cached = 0;
  std::int64_t cached_prompt = 0;
  bool any_cached = false;

  for (const auto& r : requests) {
    if (r.warmup) continue;
    first_sent_s = std::min(first_sent_s, r.sent_s);
    last_done_s = std::max(last_done_s, completion_s(r));
    if (!r.ok) {
      ++m.failed;
      ++m.failed_by_kind[r.error_kind];
      continue;
    }
    ++m.ok;
    // A successful reply with no generated content (the model stopped at once) has no first
    // token: it counts as ok and for throughput, but has no TTFT, E2E or TPOT to contribute.
    if (r.first_token_s >= 0) {
      ttft.push_back(r.ttft_ms);
      e2e.push_back(r.e2e_ms);
      if (r.output_tokens > 1) tpot.push_back((r.e2e_ms - r.ttft_ms) / (r.output_tokens - 1));
      itl.insert(itl.end(), r.itl_ms.begin(), r.itl_ms.end());
    }
    m.prompt_tokens += r.prompt_tokens;
    m.output_tokens += r.output_tokens;
    if (r.cached_tokens >= 0) {
      any_cached = true;
      cached += r.cached_tokens;
      cached_prompt += r.prompt_tokens;
    }
  }

  m.ttft_ms = summarize(std::move(ttft));
  m.tpot_ms = summarize(std::move(tpot));
  m.itl_ms = summarize(std::move(itl));
  m.e2e_ms = summarize(std::move(e2e));
  if (last_done_s > first_sent_s) {
    m.window_s = last_done_s - first_sent_s;
    m.request_throughput = static_cast<double>(m.ok) / m.window_s;
    m.output_throughput = static_cast<double>(m.output_tokens) / m.window_s;
    m.total_token_throughput = static_cast<double>(m.prompt_tokens + m.output_tokens) / m.window_s;
  }
  if (any_cached && cached_prompt > 0) {
    m.cache_hit_client = static_cast<double>(cached) / static_cast<double>(cached_prompt);
  }
  m.kv_hit_rate_server = server_kv_hit_rate(samples);
  return m;
}

}  // namespace kvsweep::reports
