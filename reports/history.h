// The trend of one metric over every stored run of a scenario name, against a rolling
// baseline (the median of the previous runs), per strategy and concurrency.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "store/store_readers.h"

namespace kvsweep::reports {

// Metric names as in the dashboard JSON: ttft_mean_ms, ttft_p50_ms, ttft_p95_ms, ttft_p99_ms,
// tpot_mean_ms, itl_mean_ms, e2e_mean_ms, e2e_p95_ms, request_throughput, output_throughput,
// total_token_throughput, kv_hit_rate, cache_hit_client; and capacity, a searching
// scenario's capacity per arm (the series' strategy is the arm's search key).
std::vector<std::string> history_metrics();

struct HistoryPoint {
  std::int64_t experiment_id = 0;
  std::string started_at;
  std::string figures = "measured";  // figures/report_model.h figures_kind(): "predicted", ...
  std::optional<double> value;       // nullopt when the cell was not measured in that run
  std::optional<double> baseline;    // median of up to `window` previous values
  std::optional<double> deviation;   // value / baseline - 1
};

struct HistorySeries {
  std::string strategy;
  int concurrency = 0;
  std::vector<HistoryPoint> points;  // oldest first
};

// A point's baseline is the median of the previous points of its own kind of figures: a
// prediction is never the yardstick of a measurement, nor the other way round. Throws
// std::invalid_argument for an unknown metric (naming the known ones).
std::vector<HistorySeries> metric_history(const store::StoreReader& store,
                                          const std::string& scenario_name,
                                          const std::string& metric, int window = 5);

std::string history_table(const std::vector<HistorySeries>& series, const std::string& metric);
nlohmann::ordered_json history_json(const std::vector<HistorySeries>& series,
                                    const std::string& scenario_name, const std::string& metric,
                                    int window);

}  // namespace kvsweep::reports
