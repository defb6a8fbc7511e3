// Per-cell figures (latency, throughput, cache hit rates) computed from stored rows alone,
// exactly as docs/metrics.md defines them.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/stats.h"
#include "common/validity_rules.h"
#include "figures/validity.h"
#include "store/rows.h"

namespace kvsweep::figures {

// vLLM's counters, copied exactly; the gpu_ names are what vLLM exported before the rename.
constexpr const char* kPrefixCacheHits = "vllm:prefix_cache_hits_total";
constexpr const char* kPrefixCacheQueries = "vllm:prefix_cache_queries_total";
constexpr const char* kGpuPrefixCacheHits = "vllm:gpu_prefix_cache_hits_total";
constexpr const char* kGpuPrefixCacheQueries = "vllm:gpu_prefix_cache_queries_total";
constexpr const char* kKvCacheUsage = "vllm:kv_cache_usage_perc";
constexpr const char* kGpuCacheUsage = "vllm:gpu_cache_usage_perc";
constexpr const char* kPreemptions = "vllm:num_preemptions_total";
constexpr const char* kSpecDecodeAccepted = "vllm:spec_decode_num_accepted_tokens_total";
constexpr const char* kSpecDecodeDraft = "vllm:spec_decode_num_draft_tokens_total";

// llm-d's endpoint picker (Gateway API Inference Extension v1.0.0, pkg/epp/metrics/metrics.go),
// histograms as their _sum and _count; later llm-d releases name the same llm_d_epp_*.
constexpr const char* kEppHitRatioSum = "inference_extension_prefix_indexer_hit_ratio_sum";
constexpr const char* kEppHitRatioCount = "inference_extension_prefix_indexer_hit_ratio_count";
constexpr const char* kLlmdEppHitRatioSum = "llm_d_epp_prefix_indexer_hit_ratio_sum";
constexpr const char* kLlmdEppHitRatioCount = "llm_d_epp_prefix_indexer_hit_ratio_count";
constexpr const char* kEppSchedulingSum = "inference_extension_scheduler_e2e_duration_seconds_sum";
constexpr const char* kEppSchedulingCount =
    "inference_extension_scheduler_e2e_duration_seconds_count";
constexpr const char* kLlmdEppSchedulingSum = "llm_d_epp_scheduler_e2e_duration_seconds_sum";
constexpr const char* kLlmdEppSchedulingCount = "llm_d_epp_scheduler_e2e_duration_seconds_count";

// Service-level objectives for goodput (vLLM's --goodput ttft:MS tpot:MS e2el:MS): a request
// is good when it succeeded and meets every objective given.
struct Slo {
  std::optional<double> ttft_ms;
  std::optional<double> tpot_ms;
  std::optional<double> e2e_ms;
  bool empty() const { return !ttft_ms && !tpot_ms && !e2e_ms; }
};

// The measured samples themselves, each sorted ascending, for any percentile a caller asks
// for (common/stats.h percentile()).
struct SortedSamples {
  std::vector<double> ttft_ms;
  std::vector<double> tpot_ms;
  std::vector<double> itl_ms;
  std::vector<double> e2e_ms;
  std::vector<double> schedule_lag_ms;
};

// Why requests of one kind failed: the first such measured request, in send order.
struct FirstFailure {
  int http_status = 0;  // 0 when no status line arrived
  std::string error;    // "HTTP 404: The model `x` does not exist."
};

// A failure as a person reads it: the reason, and the HTTP status when the reason does not
// start with it ("total timeout after 5 s: ... (HTTP 200)", "HTTP 404: The model ...").
std::string failure_text(int http_status, const std::string& error);

// Everything is over measured requests: warm-up requests are ignored entirely.
struct CellMetrics {
  std::int64_t ok = 0;
  std::int64_t failed = 0;
  std::map<std::string, std::int64_t> failed_by_kind;         // error_kind ("" kept as "") -> count
  std::map<std::string, FirstFailure> first_failure_by_kind;  // same keys as failed_by_kind

  // Latency over ok requests, in ms. tpot: requests with output_tokens > 1, computed as
  // (e2e - ttft) / (output_tokens - 1); itl: every gap of every ok request, pooled.
  SampleSummary ttft_ms;
  SampleSummary tpot_ms;
  SampleSummary itl_ms;
  SampleSummary e2e_ms;
  // Open-loop runs only (requests with a schedule): the driver's lateness, sent - scheduled,
  // over every measured request; and latency measured from the schedule (e2e + lag) over ok
  // ones, so a slow client cannot hide queueing (coordinated omission, vllm#54101).
  SampleSummary schedule_lag_ms;
  SampleSummary e2e_from_schedule_ms;
  SortedSamples samples;

  // First send to the last end among measured requests, ok or failed: a failure that got no
  // token still held the run until its error, timeout or cancellation. 0 with none.
  double window_s = 0;
  // Over the window, ok requests only; 0 when the window is empty.
  double request_throughput = 0;  // req/s
  double output_throughput = 0;   // output tok/s (estimated when output_tokens_estimated)
  // (prompt + output) tok/s; nullopt when a prompt count is unknown ("unknown" in reports).
  std::optional<double> total_token_throughput = 0.0;
  // Σ over ok requests; nullopt when any of them came without usage.prompt_tokens (the server
  // sent no usage): an unknown count is never shown as 0.
  std::optional<std::int64_t> prompt_tokens = 0;
  std::int64_t prompt_tokens_unknown = 0;    // ok requests without a prompt count
  std::int64_t output_tokens = 0;            // Σ over ok requests
  std::int64_t output_tokens_estimated = 0;  // ok requests whose count is content events
  // vLLM's peaks over ok requests (figures/peak_figures.h): the busiest 1 s of output tokens,
  // and the most requests in flight at once.
  double max_output_tokens_per_s = 0;
  int max_concurrent_requests = 0;

  // Fractions in [0, 1]; nullopt when nothing was measured ("n/a" in reports).
  std::optional<double> kv_hit_rate_server;
  std::optional<double> cache_hit_client;

  // From the servers' /metrics (server_figures below); nullopt when no replica exposed them.
  std::optional<double> kv_usage_max;            // fraction of the KV cache, worst replica
  std::optional<std::int64_t> preemptions;       // over the measured phase, every replica
  std::optional<double> spec_decode_acceptance;  // accepted / draft tokens, in [0, 1]

  // From llm-d's endpoint picker's /metrics over the measured phase (docs/metrics.md); nullopt
  // when no source exposed them (every target but llmd, and the sim's router unless its
  // strategy is epp). What the picker believed each replica held, beside kv_hit_rate_server:
  // what the servers found.
  std::optional<double> epp_prefix_hit_ratio;  // mean per lookup of matched / request prefix
  std::optional<double> epp_scheduling_ms;     // mean scheduling decision time, ms

  // With an SLO: ok requests meeting it, and their rate over the window.
  std::optional<std::int64_t> good_requests;
  std::optional<double> goodput;  // req/s

  // A dataset smaller than the cell repeats itself: its requests cycle through the prompts, and
  // the prefix cache finds what an earlier request of the phase left, whatever the strategy.
  // The most times one prompt (a conversation's turn) was sent in the measured phase (1: none
  // twice; 0: nothing measured), and the measured requests that re-sent one.
  std::int64_t prompt_sends_max = 0;
  std::int64_t repeated_requests = 0;

  // Achieved load and the cell's verdict (figures/validity.h).
  CellValidity validity;
  // A sharded cell's shards (its load record's), each judged by figures::judge_shard.
  std::vector<store::CellShardRow> shards;
};

// `load` is the cell's load record (Store::cell_load); without one the verdict says the cell
// was not judged.
// One request's TPOT as every figure counts it: (E2E - TTFT) / (output tokens - 1); none for a
// reply of one token or without a first token.
std::optional<double> request_tpot_ms(const store::RequestRow& r);

CellMetrics compute_cell_metrics(const std::vector<store::RequestRow>& requests,
                                 const std::vector<store::MetricSample>& samples,
                                 const Slo& slo = {},
                                 const std::optional<store::CellLoadRow>& load = std::nullopt,
                                 const ValidityRules& rules = {});

// Σ over sources Δhits / Σ over sources Δqueries between the "before" and "after" samples,
// each source's counters summed over their label sets. A source uses the current names when
// it has them in both phases, else the gpu_ names, else it is left out. A ratio of sums, so a
// busy replica weighs more than an idle one. nullopt when no source has usable samples or no
// query was counted.
std::optional<double> server_kv_hit_rate(const std::vector<store::MetricSample>& samples);

// The same rule for any two counters: Σ over sources Δnumerator / Σ over sources Δdenominator,
// a source using the first pair of `names` it has in both phases. A histogram's _sum and _count
// give the mean of what it observed over the phase (the EPP's figures).
std::optional<double> counter_ratio_delta(
    const std::vector<store::MetricSample>& samples,
    std::initializer_list<std::pair<const char*, const char*>> names);

// Σ over sources of (after - before) of one counter, each source's label sets summed; sources
// missing either phase are left out. nullopt when no source has both.
std::optional<double> server_counter_delta(const std::vector<store::MetricSample>& samples,
                                           const std::string& name);

// The highest KV-cache usage any replica reported while the measured phase ran ("during"
// samples: vllm:kv_cache_usage_perc, or vllm:gpu_cache_usage_perc before vLLM 0.9). nullopt
// when no scrape ran during the phase: the "after" scrape sees an idle server (vLLM counts
// cached but unused blocks as free), so it would report a misleading 0.
std::optional<double> server_kv_usage_max(const std::vector<store::MetricSample>& samples);

}  // namespace kvsweep::figures
