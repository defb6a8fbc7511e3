// A cell's figures in the shape of vLLM's benchmark client: its result JSON keys and its
// "Serving Benchmark Result" console block, so existing tooling and habits read our runs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "figures/cell_metrics.h"

namespace kvsweep::reports {

// What the result describes besides its figures (vLLM's run metadata keys).
struct VllmRunInfo {
  std::string date;           // "20261122-043000", as vLLM writes it
  std::string endpoint_type;  // "openai-chat" | "openai"
  std::string label;
  std::string model_id;
  std::int64_t num_prompts = 0;
  double request_rate = 0;  // 0 = closed loop or unpaced: written as the string "inf", as vLLM does
  double burstiness = 1.0;
  int max_concurrency = 0;  // 0 = none: written as null
  // kvsweep's: "measured", "simulated" or "predicted" (figures/report_model.h figures_kind).
  std::string figures = "measured";
};

// Which latency metrics get percentiles, and which percentiles (vLLM's --percentile-metrics,
// default ttft,tpot,itl; --metric-percentiles, default 99).
struct PercentileSelection {
  std::vector<std::string> metrics{"ttft", "tpot", "itl"};  // of: ttft, tpot, itl, e2el
  std::vector<double> percentiles{99};
};

// Keys: date, endpoint_type, backend, label, model_id, num_prompts, request_rate, burstiness,
// max_concurrency, duration, completed, failed, total_input_tokens, total_output_tokens,
// request_throughput, request_goodput (null without an SLO), output_throughput,
// total_token_throughput, max_output_tokens_per_s, max_concurrent_requests,
// mean/median/std_{metric}_ms for every metric, p{P}_{metric}_ms for the selected ones,
// spec_decode_acceptance_rate (percent, only with speculative decoding); then kvsweep's own:
// input_tokens_known, output_tokens_estimated, schedule lag, kv_cache_hit_rate,
// cache_hit_client, server figures, failed_by_kind and first_failure_by_kind.
// total_input_tokens and total_token_throughput are null when the server sent no prompt
// counts (unknown is never 0).
nlohmann::ordered_json vllm_result_json(const figures::CellMetrics& metrics,
                                        const VllmRunInfo& info,
                                        const PercentileSelection& selection = {});

// The console block vLLM prints, byte for byte ("{:<40} {:<10}" rows, vLLM's labels and
// order), for the selected metrics and percentiles; `run` adds vLLM's "Maximum request
// concurrency" and "Request rate configured" rows when it has a cap or a rate. kvsweep's own
// sections (schedule lag, prefix cache, failures) follow vLLM's in the same format; a note on
// estimated token counts follows the closing line.
std::string serving_result_text(const figures::CellMetrics& metrics,
                                const PercentileSelection& selection = {},
                                const VllmRunInfo* run = nullptr);

// "p99" for 99, "p99.9" for 99.9: the key fragment vLLM uses.
std::string percentile_key(double p);

}  // namespace kvsweep::reports
