// The history page's view: one scenario's metric over every stored run, the rolling median
// (kvsweep history), and the runs that `kvsweep compare` against the run before them calls
// regressions, marked.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "reports/compare.h"
#include "store/store.h"

namespace kvsweep::orchestrator::serve {

// What `kvsweep compare previous this` says for one pair of runs; the caller may cache it
// (finished runs do not change).
using CompareRuns =
    std::function<reports::CompareResult(std::int64_t previous, std::int64_t experiment)>;

// {scenario, metric, window, metrics (the known ones), scenarios (stored names), series:
// [{strategy, concurrency, points: [{experiment_id, started_at, value, baseline, deviation,
// regression, regressed_metrics}]}], levels: [{concurrency, svg}] (with charts)}.
// An unknown metric throws std::invalid_argument naming the known ones; an unknown scenario
// has no series.
nlohmann::ordered_json history_view(const store::Store& store, const std::string& scenario,
                                    const std::string& metric, int window,
                                    const CompareRuns& compare, bool charts);

}  // namespace kvsweep::orchestrator::serve
