// The live page's view: live TTFT p50/p95 and KV hit rate from the servers' /metrics against a
// stored baseline's p50/p95 at the matching concurrency (seed 003's dashboard).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "serve/live_monitor.h"
#include "store/store_readers.h"

namespace kvsweep::serve {

// The stored reference line: one arm of one experiment at one concurrency level.
struct Baseline {
  std::int64_t experiment_id = 0;
  std::string experiment_name;
  std::string arm;  // the report's row label ("random", "random #2")
  int concurrency = 0;
  std::optional<double> ttft_p50_ms;
  std::optional<double> ttft_p95_ms;
  std::optional<double> kv_hit;  // the servers' rate, else the client's
};

// The arm's figures at `concurrency`; with concurrency 0, the experiment's first level. Throws
// NotFound (store_views.h) for an unknown experiment, arm or level, naming what there is.
Baseline find_baseline(const store::StoreReader& store, std::int64_t experiment_id,
                       const std::string& arm, int concurrency);

// The choices of the live page's form: experiments, the chosen one's arms and levels.
nlohmann::ordered_json baseline_choices(const store::StoreReader& store,
                                        std::optional<std::int64_t> experiment_id,
                                        const std::string& arm, int concurrency);

// {window_s, interval_s, sources: [{url, stale, error, last_ok_s_ago, ttft_metric}],
// fresh_sources, points: [{t_s, ttft_p50_ms, ttft_p95_ms, kv_hit_pct, requests}], latest
// (the last point or null), baseline: {experiment_id, experiment_name, arm, concurrency,
// ttft_p50_ms, ttft_p95_ms, kv_hit_pct} or null; with charts, svg_ttft and svg_hit}.
nlohmann::ordered_json live_view(const LiveSnapshot& snapshot, const LiveSettings& settings,
                                 const std::optional<Baseline>& baseline, double now_wall_s,
                                 bool charts);

}  // namespace kvsweep::serve
