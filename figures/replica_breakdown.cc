// Per-replica request share and hit rates of one cell.
#include "figures/replica_breakdown.h"

#include <algorithm>
#include <map>

#include "figures/cell_metrics.h"

namespace kvsweep::figures {
namespace {

// "2" before "10": replica values are indexes on the embedded fleet; other values (upstream
// URLs behind the proxy, pod names) sort as text, after the numbers.
bool natural_less(const std::string& a, const std::string& b) {
  const bool a_number = !a.empty() && a.find_first_not_of("0123456789") == std::string::npos;
  const bool b_number = !b.empty() && b.find_first_not_of("0123456789") == std::string::npos;
  if (a_number != b_number) return a_number;
  if (a_number && a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

struct ReplicaTally {
  std::int64_t requests = 0;
  std::int64_t failed = 0;
  std::int64_t cached = 0;
  std::int64_t cached_prompt = 0;
  bool any_cached = false;
};

// The queries counter a source's hit rate was computed from: the current name when both
// counters are there in both phases, else the gpu_ name, as server_kv_hit_rate decides.
std::optional<double> query_delta(const std::vector<store::MetricSample>& samples) {
  if (server_counter_delta(samples, kPrefixCacheHits)) {
    if (auto q = server_counter_delta(samples, kPrefixCacheQueries)) return q;
  }
  if (server_counter_delta(samples, kGpuPrefixCacheHits)) {
    return server_counter_delta(samples, kGpuPrefixCacheQueries);
  }
  return std::nullopt;
}

}  // namespace

ReplicaBreakdown replica_breakdown(const std::vector<store::RequestRow>& requests,
                                   const std::vector<store::MetricSample>& samples) {
  std::map<std::string, ReplicaTally> tallies;
  std::int64_t measured = 0;
  for (const store::RequestRow& r : requests) {
    if (r.warmup) continue;
    ++measured;
    ReplicaTally& t = tallies[r.replica];
    ++t.requests;
    if (!r.ok) {
      ++t.failed;
      continue;
    }
    if (r.cached_tokens >= 0) {
      t.any_cached = true;
      t.cached += r.cached_tokens;
      t.cached_prompt += r.prompt_tokens;
    }
  }
  ReplicaBreakdown breakdown;
  for (const auto& [replica, t] : tallies) {
    ReplicaFigures f;
    f.replica = replica.empty() ? kUnknownReplica : replica;
    f.requests = t.requests;
    f.failed = t.failed;
    f.share = static_cast<double>(t.requests) / static_cast<double>(measured);
    if (t.any_cached && t.cached_prompt > 0) {
      f.cache_hit_client = static_cast<double>(t.cached) / static_cast<double>(t.cached_prompt);
    }
    breakdown.replicas.push_back(std::move(f));
  }
  // Unknown last: it is not a replica, and a reader looks for it at the end.
  std::sort(breakdown.replicas.begin(), breakdown.replicas.end(),
            [](const ReplicaFigures& a, const ReplicaFigures& b) {
              const bool a_unknown = a.replica == kUnknownReplica;
              const bool b_unknown = b.replica == kUnknownReplica;
              if (a_unknown != b_unknown) return b_unknown;
              return natural_less(a.replica, b.replica);
            });

  std::map<std::string, std::vector<store::MetricSample>> by_source;
  for (const store::MetricSample& s : samples) by_source[s.source].push_back(s);
  double total_queries = 0;
  for (const auto& [source, own] : by_source) {
    const auto queries = query_delta(own);
    if (!queries) continue;
    SourceFigures f;
    f.source = source;
    f.queries = *queries;
    f.kv_hit_server = server_kv_hit_rate(own);
    total_queries += std::max(0.0, *queries);
    breakdown.sources.push_back(std::move(f));
  }
  for (SourceFigures& f : breakdown.sources) {
    f.share = total_queries > 0 ? std::max(0.0, f.queries) / total_queries : 0;
  }
  return breakdown;
}

}  // namespace kvsweep::figures
