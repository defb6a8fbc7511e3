// Prometheus text exposition of a replica's vLLM metrics and of the router's decisions.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine.h"
#include "sim/latency_histogram.h"
#include "sim/replica_health.h"

namespace kvsweep::sim {

// vLLM >= 0.9 names (what llm-d-inference-sim also exports), each labelled model_name, so one
// scraper works on the sim and on real vLLM; plus kvsweep_engine_steps_total,
// kvsweep_engine_step_seconds_total and kvsweep_engine_scheduler_cpu_seconds_total.
// With `latencies`, also vllm:time_to_first_token_seconds, vllm:inter_token_latency_seconds
// (and its older name vllm:time_per_output_token_seconds) and vllm:e2e_request_latency_seconds.
std::string replica_metrics_text(std::string_view model, const EngineMetrics& metrics,
                                 const LatencyHistograms* latencies = nullptr);

// Router-side figures beyond decisions and in-flight.
struct RouterStats {
  // kvsweep_router_predicted_overlap_blocks: per decision of a prefix-aware strategy, the
  // blocks the router expected the chosen replica to hold (kv-aware: from its KV index).
  const Histogram* predicted_overlap_blocks = nullptr;
  std::uint64_t unavailable_total = 0;  // requests answered 502 because the replica was down
  // kvsweep_router_decision_seconds: host time of each routing decision (router.h).
  const Histogram* decision_seconds = nullptr;
  // kvsweep_router_healthy_replicas, kvsweep_router_replica_healthy{replica} and
  // kvsweep_router_ejections_total{replica}: the router's health checks.
  const ReplicaHealth* health = nullptr;
};
std::string router_metrics_text(const std::map<std::string, std::vector<std::uint64_t>>& decisions,
                                std::span<const int> in_flight, const RouterStats& stats);

// kvsweep_router_decisions_total{replica,strategy} and kvsweep_router_in_flight{replica}.
// decisions maps a strategy name to one count per replica.
std::string router_metrics_text(const std::map<std::string, std::vector<std::uint64_t>>& decisions,
                                std::span<const int> in_flight);

}  // namespace kvsweep::sim
