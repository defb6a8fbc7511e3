// Each finished run compared with the run of its scenario before it, as `kvsweep compare`
// does, stored when the run ends: serve's history page marks regressions from these rows
// instead of bootstrapping every cell of two runs per point (about 0.9 CPU s a pair of raw
// nights of seed 002's matrix), and the verdicts outlive `prune`.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "figures/compare.h"
#include "store/store.h"

namespace kvsweep::figures {

// One compared level's metrics that compare called regressions (none listed: no regression).
struct LevelRegressions {
  std::string strategy;
  int concurrency = 0;
  std::vector<std::string> metrics;
  bool operator==(const LevelRegressions&) const = default;
};

// What decides a verdict, as stored beside it: a row computed with other options is not the
// verdict `compare` with these gives, so readers use it only when equal.
std::string compare_options_key(const CompareOptions& options);

// The regressions of a compare result, only the levels with one.
std::vector<LevelRegressions> regressions_of(const CompareResult& result);
std::string regressions_to_json(const std::vector<LevelRegressions>& levels);
// Throws std::invalid_argument naming what is malformed.
std::vector<LevelRegressions> regressions_from_json(const std::string& text);

// The run of the same scenario before `experiment_id`: the latest experiment of that name with
// a lower id that is not running (serve's history page orders runs the same way).
std::optional<std::int64_t> previous_run(const store::RunReader& store, std::int64_t experiment_id);

// Compares the experiment with its previous run and stores the result (replacing any); nothing
// when it is the first run of its scenario. Returns what it stored.
struct RecordedComparison {
  std::int64_t previous_id = 0;
  std::vector<LevelRegressions> regressions;
  std::string nothing_compared;  // CompareResult's: why no metric was compared, "" when some was
};
std::optional<RecordedComparison> record_run_comparison(store::Store& store,
                                                        std::int64_t experiment_id,
                                                        const CompareOptions& options = {});

// `kvsweep migrate`: compares every ended run that has a run before it and no stored
// comparison under today's default options (runs stored before schema 10, or compared by an
// older kvsweep's rules) and stores each, telling `progress` the count first and then at most
// every 2 seconds. Returns how many it stored.
std::int64_t compare_stored_runs(store::Store& store,
                                 const std::function<void(const std::string&)>& progress);

}  // namespace kvsweep::figures
