// A scrape of the virtual fleet: every replica's /metrics as the sweep's scraper would store it.
#pragma once

#include <string>
#include <vector>

#include "predict/virtual_fleet.h"
#include "store/rows.h"

namespace kvsweep::predict {

// The source a predicted replica's samples carry where a scrape stores the /metrics URL:
// "predict://replica-<i>/metrics" (no server answers it; reports group samples by it).
std::string replica_source(int replica);
// Where the picker's series are stored while the strategy is epp, as the router's /metrics
// is scraped in a rehearsal: "predict://router/metrics".
std::string router_source();

// What scraping every replica of `fleet` now would store (orchestrator/sweep/metrics_scraper.h):
// the vllm:* series the real-time replica's /metrics exposes (sim/http/metrics_exposition.cc),
// in its order, each with its labels as JSON, histogram buckets left out (the scraper drops
// them; _sum and _count stay), and every value as the text exposition prints it (counters
// exact, other numbers to 6 significant digits) then parses it back. Replicas in index order;
// then, while the strategy is epp, the EPP's prefix-indexer series the router publishes
// (sim/router/epp_metrics.h) but its scheduling latency, which virtual time does not have.
std::vector<store::MetricSample> fleet_samples(const VirtualFleet& fleet, const std::string& phase,
                                               double t_s);

// One replica's part of that, from its counters, appended to `out`.
void append_replica_samples(const ReplicaCounters& counters, const std::string& model,
                            const std::string& source, const std::string& phase, double t_s,
                            std::vector<store::MetricSample>& out);

}  // namespace kvsweep::predict
