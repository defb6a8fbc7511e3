// The history page's view: one scenario's metric over every stored run, the rolling median
// (kvsweep history), and the runs that `kvsweep compare` against the run before them calls
// regressions, marked.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "figures/compare.h"
#include "store/store_readers.h"

namespace kvsweep::serve {

// What `kvsweep compare previous this` says for one pair of runs; the caller may cache it
// (finished runs do not change).
using CompareRuns =
    std::function<figures::CompareResult(std::int64_t previous, std::int64_t experiment)>;

// How many of the newest runs without a stored comparison (figures/run_comparison.h: a run
// stored by an older kvsweep, or by a command that does not compare) the page compares itself.
// A compare bootstraps every cell of both runs (about 0.9 CPU s for two raw nights of seed
// 002's matrix), so comparing a year of such runs would take minutes. kAllRuns compares every
// one.
constexpr std::size_t kDefaultComparedRuns = 10;
constexpr std::size_t kAllRuns = static_cast<std::size_t>(-1);

// {scenario, metric, window, compared_runs, metrics (the known ones), scenarios (stored
// names), series: [{strategy, concurrency, points: [{experiment_id, started_at, value,
// baseline, deviation, compared, regression, regressed_metrics}]}], levels: [{concurrency,
// svg}] (with charts)}. A run is compared with the run before it from its stored comparison,
// or here when it is one of the newest `compared_runs` runs; other points have compared false
// and regression null.
// An unknown metric throws std::invalid_argument naming the known ones; an unknown scenario
// has no series.
nlohmann::ordered_json history_view(const store::StoreReader& store, const std::string& scenario,
                                    const std::string& metric, int window,
                                    const CompareRuns& compare, bool charts,
                                    std::size_t compared_runs = kDefaultComparedRuns);

}  // namespace kvsweep::serve
