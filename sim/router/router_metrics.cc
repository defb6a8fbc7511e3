// Prometheus text exposition of the router: decisions, in-flight, decision time, health.
#include "sim/router/router_metrics.h"

#include <sstream>

#include "sim/http/metrics_exposition.h"

namespace kvsweep::sim {

std::string router_metrics_text(const std::map<std::string, std::vector<std::uint64_t>>& decisions,
                                std::span<const int> in_flight) {
  return router_metrics_text(decisions, in_flight, RouterStats{});
}

std::string router_metrics_text(const std::map<std::string, std::vector<std::uint64_t>>& decisions,
                                std::span<const int> in_flight, const RouterStats& stats) {
  std::ostringstream os;
  write_family(os, "kvsweep_router_decisions_total", "counter",
               "Requests routed to each replica, by the strategy that chose it.");
  for (const auto& [strategy, counts] : decisions) {
    for (std::size_t r = 0; r < counts.size(); ++r) {
      os << "kvsweep_router_decisions_total{replica=\"" << r << "\",strategy=\""
         << escape_label(strategy) << "\"} " << counts[r] << '\n';
    }
  }
  write_family(os, "kvsweep_router_in_flight", "gauge",
               "Requests routed to each replica whose response has not ended.");
  for (std::size_t r = 0; r < in_flight.size(); ++r) {
    os << "kvsweep_router_in_flight{replica=\"" << r << "\"} " << in_flight[r] << '\n';
  }
  if (stats.decision_seconds) {
    write_histogram(os, "kvsweep_router_decision_seconds",
                    "Router time per routed request: parse, tokenize, hash blocks, look up the KV "
                    "index and pick a replica.",
                    "", *stats.decision_seconds);
  }
  if (stats.predicted_overlap_blocks) {
    write_histogram(os, "kvsweep_router_predicted_overlap_blocks",
                    "Cached blocks the router expected the chosen replica to hold, per decision.",
                    "", *stats.predicted_overlap_blocks);
  }
  write_family(os, "kvsweep_router_unavailable_total", "counter",
               "Requests answered 502 because the chosen replica was down.");
  os << "kvsweep_router_unavailable_total " << stats.unavailable_total << '\n';
  if (stats.health) {
    const std::size_t replicas = in_flight.size();
    write_family(os, "kvsweep_router_healthy_replicas", "gauge",
                 "Replicas the router routes to: not taken out by its health checks.");
    os << "kvsweep_router_healthy_replicas " << stats.health->healthy_count() << '\n';
    write_family(os, "kvsweep_router_replica_healthy", "gauge",
                 "1 while the replica is routed to, 0 while its health checks keep it out.");
    for (std::size_t r = 0; r < replicas; ++r) {
      os << "kvsweep_router_replica_healthy{replica=\"" << r << "\"} "
         << (stats.health->healthy(static_cast<int>(r)) ? 1 : 0) << '\n';
    }
    write_family(os, "kvsweep_router_ejections_total", "counter",
                 "Times the replica was taken out of routing after consecutive failed connects or "
                 "health probes.");
    for (std::size_t r = 0; r < replicas; ++r) {
      os << "kvsweep_router_ejections_total{replica=\"" << r << "\"} "
         << stats.health->ejections(static_cast<int>(r)) << '\n';
    }
  }
  return os.str();
}

}  // namespace kvsweep::sim
