// Which experiments `kvsweep prune` removes the raw rows of: a pure choice over the store's
// experiment rows, so the policy is tested without a store.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "store/rows.h"

namespace kvsweep::orchestrator {

struct PrunePolicy {
  // Keep the raw rows of the newest `keep_last` finished runs of each scenario (by name).
  std::optional<int> keep_last;
  // Keep the raw rows of runs started since this instant (unix seconds): --older-than. Which
  // runs started before it, the store finds comparing times as numbers
  // (store::experiments_started_before), never started_at's text.
  std::optional<double> keep_since_unix_s;
  // Prune exactly these experiments (ids), whatever the rules above say.
  std::vector<std::int64_t> experiments;
};

// The default when no option is given: 30 runs per scenario, about a month of nightly sweeps
// with their raw rows for `report --exact` and compare's full bootstrap.
constexpr int kDefaultKeepLast = 30;

// How the policy reads in the store's prune marks and on the console.
std::string describe(const PrunePolicy& policy);

// The longest --older-than taken: 100 years. Anything longer is a typo (400000d for 40000d) and
// would prune every run.
constexpr double kMaxOlderThanS = 100 * 365.25 * 86400;

// Seconds for --older-than: a number (digits, maybe a decimal point) and a unit, one of s, m, h
// or d ("90d", "12h", "1.5h"), more than 0 and at most kMaxOlderThanS. Throws
// std::invalid_argument saying what is wrong otherwise: no unit ("90", which once meant 90
// seconds), an unknown unit, a sign, an exponent, "nan", "inf", or too long.
double parse_older_than_s(const std::string& text);

// Why a run named with --experiment was not pruned, as one line for the console: pruned before
// (`pruned_at`, from its mark), or still marked running, when it started, when its cells'
// newest heartbeat was (`last_heartbeat_s`, unix seconds; nullopt when no cell is claimed), and
// the command that finishes it when that run is dead. "" when it is neither.
std::string why_not_pruned(const store::ExperimentRow& experiment,
                           const std::optional<std::string>& pruned_at,
                           std::optional<double> last_heartbeat_s, double now_s,
                           const std::string& db_path);

// Experiments to prune, oldest first. With `experiments` set, those alone. Otherwise an
// experiment is pruned when every rule given says so (outside the newest keep_last of its
// scenario and, with keep_since_unix_s, in `started_before`: the ids the store found started
// before it). Never a run that has not finished (status "running"), nor one in
// `already_pruned`.
std::vector<store::ExperimentRow> experiments_to_prune(
    const std::vector<store::ExperimentRow>& experiments, const PrunePolicy& policy,
    const std::set<std::int64_t>& already_pruned,
    const std::set<std::int64_t>& started_before = {});

}  // namespace kvsweep::orchestrator
