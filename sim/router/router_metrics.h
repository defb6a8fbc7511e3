// Prometheus text exposition of the router: decisions, in-flight, decision time, health.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "sim/http/latency_histogram.h"
#include "sim/router/replica_health.h"

namespace kvsweep::sim {

// Router-side figures beyond decisions and in-flight.
struct RouterStats {
  // kvsweep_router_predicted_overlap_blocks: per decision for which the router hashed the
  // request (route_decider.h: needs_tokens()), the blocks its KV index said the chosen replica
  // holds.
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
