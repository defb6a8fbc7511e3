// The JSON views of stored experiments that serve's pages and API share: the experiment list,
// one experiment, one cell's drill-down. Each is what its /api route answers.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "figures/report_model.h"
#include "store/store_readers.h"

namespace kvsweep::serve {

// A request for something the store does not hold (an unknown experiment or cell): the page
// answers 404 with this message.
// The store's file name without its directories: what a remote client is told (docs/serve.md).
std::string store_file_name(const store::RunReader& store);

struct NotFound {
  std::string message;
};

// The headline of an experiment for the list (the verdict at its highest concurrency level),
// given the experiment; cached by the caller, since it reads every request of the experiment.
using HeadlineOf = std::function<std::string(const store::ExperimentRow&)>;

// Computes the headline from the store (no cache).
std::string experiment_headline(const store::StoreReader& store, const store::ExperimentRow& e);

// {"store", "experiments": [{id, name, scenario_path, target, status, cells_done,
// cells_failed, cells_total, started_at, finished_at, duration_s, headline, url}]}, newest
// first. duration_s runs to now for a running experiment; null when a time is missing.
nlohmann::ordered_json experiments_view(const store::RunReader& store, const HeadlineOf& headline,
                                        double now_wall_s);

// One experiment: its row, setup lines, verdicts, and its cells [{k, label, strategy,
// concurrency, repeat, status, error, started_at, finished_at, requests, warmup_requests,
// ttft_p50_ms, ttft_p95_ms, requests_per_s, kv_hit_server_pct, cache_hit_client_pct, url}].
// Throws NotFound.
nlohmann::ordered_json experiment_view(const store::StoreReader& store, std::int64_t experiment_id);
// The same from a report model already built (the experiment page renders the report too).
nlohmann::ordered_json experiment_view(const store::RowReader& store,
                                       const figures::ReportModel& model);

// One cell (k counted from 1, as `kvsweep runs` numbers cells): its figures, the TTFT samples
// for a CDF (ttft_cdf: up to 200 quantiles), requests and hit rate per replica and per
// /metrics source, the commands run for it with their output, and its progress snapshots.
// Throws NotFound.
nlohmann::ordered_json cell_view(const store::StoreReader& store, std::int64_t experiment_id,
                                 int k);

// "2026-11-22T04:30:00Z" as unix seconds; nullopt for anything else ("" included).
std::optional<double> parse_utc_iso8601(const std::string& text);

}  // namespace kvsweep::serve
