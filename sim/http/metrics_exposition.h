// Prometheus text exposition: the format's pieces, and a replica's vLLM metrics.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "sim/engine/engine.h"
#include "sim/http/latency_histogram.h"

namespace kvsweep::sim {

// Label values are our own names (model ids, strategy names); escapes what the format requires.
std::string escape_label(std::string_view value);
// "# HELP name help" and "# TYPE name type" lines.
void write_family(std::ostream& os, std::string_view name, std::string_view type,
                  std::string_view help);
// A whole histogram family: cumulative buckets (le), +Inf, _sum and _count. `labels` is
// "k=\"v\",..." without braces, or empty.
void write_histogram(std::ostream& os, std::string_view name, std::string_view help,
                     const std::string& labels, const Histogram& h);

// vLLM >= 0.9 names (what llm-d-inference-sim also exports), each labelled model_name, so one
// scraper works on the sim and on real vLLM; plus kvsweep_engine_steps_total,
// kvsweep_engine_step_seconds_total and kvsweep_engine_scheduler_cpu_seconds_total.
// With `latencies`, also vllm:time_to_first_token_seconds, vllm:inter_token_latency_seconds
// (and its older name vllm:time_per_output_token_seconds) and vllm:e2e_request_latency_seconds.
std::string replica_metrics_text(std::string_view model, const EngineMetrics& metrics,
                                 const LatencyHistograms* latencies = nullptr);

}  // namespace kvsweep::sim
