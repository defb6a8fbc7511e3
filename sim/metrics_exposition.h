// Prometheus text exposition of a replica's vLLM metrics and of the router's decisions.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine.h"

namespace kvsweep::sim {

// vLLM >= 0.9 names (what llm-d-inference-sim also exports), each labelled model_name, so one
// scraper works on the sim and on real vLLM.
std::string replica_metrics_text(std::string_view model, const EngineMetrics& metrics);

// kvsweep_router_decisions_total{replica,strategy} and kvsweep_router_in_flight{replica}.
// decisions maps a strategy name to one count per replica.
std::string router_metrics_text(const std::map<std::string, std::vector<std::uint64_t>>& decisions,
                                std::span<const int> in_flight);

}  // namespace kvsweep::sim
