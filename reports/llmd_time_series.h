// The servers' scrapes of a cell as llm-d Benchmark Report v0.2.1 observability time series.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/rows.h"

namespace kvsweep::reports {

// results.observability of a v0.2.1 report: one component entry per scraped /metrics source
// (`component_label`, replica_id = the source URL), whose time_series holds what vLLM's
// /metrics said at each scrape (before, during, after the measured phase): the queue
// (num_requests_waiting, num_requests_running), the prefix cache (prefix_cache_queries and
// prefix_cache_hits, cumulative tokens; prefix_cache_hit_rate, percent of the tokens looked up
// between one scrape and the next), kv_cache_usage (percent) and num_preemptions (cumulative).
// A metric's label sets are summed per source; a series no scrape had is left out. Timestamps
// are the cell's epoch (`epoch_wall_s`) plus each sample's t_s, in UTC to the millisecond.
// An empty object when no sample fills any series (the report then leaves it out).
nlohmann::ordered_json observability_time_series(const std::vector<store::MetricSample>& samples,
                                                 double epoch_wall_s,
                                                 const std::string& component_label);

}  // namespace kvsweep::reports
