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
  // Keep the raw rows of runs started after this instant (ISO 8601 UTC, as started_at).
  std::optional<std::string> keep_since;
  // Prune exactly these experiments (ids), whatever the rules above say.
  std::vector<std::int64_t> experiments;
};

// The default when no option is given: 30 runs per scenario, about a month of nightly sweeps
// with their raw rows for `report --exact` and compare's full bootstrap.
constexpr int kDefaultKeepLast = 30;

// How the policy reads in the store's prune marks and on the console.
std::string describe(const PrunePolicy& policy);

// Experiments to prune, oldest first. With `experiments` set, those alone. Otherwise an
// experiment is pruned when every rule given says so (outside the newest keep_last of its
// scenario and, with keep_since, started before it). Never a run that has not finished
// (status "running"), nor one in `already_pruned`.
std::vector<store::ExperimentRow> experiments_to_prune(
    const std::vector<store::ExperimentRow>& experiments, const PrunePolicy& policy,
    const std::set<std::int64_t>& already_pruned);

}  // namespace kvsweep::orchestrator
