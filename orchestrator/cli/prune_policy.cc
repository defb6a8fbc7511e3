// Which experiments `kvsweep prune` removes the raw rows of.
#include "orchestrator/cli/prune_policy.h"

#include <algorithm>
#include <map>

namespace kvsweep::orchestrator {

std::string describe(const PrunePolicy& policy) {
  if (!policy.experiments.empty()) return "named on the command line";
  std::string text;
  if (policy.keep_last) {
    text = "keep the last " + std::to_string(*policy.keep_last) + " runs of each scenario";
  }
  if (policy.keep_since) {
    text +=
        (text.empty() ? "keep" : " and") + std::string(" runs started since ") + *policy.keep_since;
  }
  return text;
}

std::vector<store::ExperimentRow> experiments_to_prune(
    const std::vector<store::ExperimentRow>& experiments, const PrunePolicy& policy,
    const std::set<std::int64_t>& already_pruned) {
  const auto prunable = [&](const store::ExperimentRow& e) {
    return e.status != "running" && already_pruned.count(e.id) == 0;
  };
  std::vector<store::ExperimentRow> chosen;
  if (!policy.experiments.empty()) {
    for (const auto& e : experiments) {
      const bool named = std::find(policy.experiments.begin(), policy.experiments.end(), e.id) !=
                         policy.experiments.end();
      if (named && prunable(e)) chosen.push_back(e);
    }
    return chosen;
  }
  // Newest first within each scenario: a run's rank among its scenario's finished runs.
  std::map<std::string, std::vector<const store::ExperimentRow*>> by_scenario;
  for (const auto& e : experiments) {
    if (e.status != "running") by_scenario[e.name].push_back(&e);
  }
  std::map<std::int64_t, std::size_t> rank;
  for (auto& [name, runs] : by_scenario) {
    std::stable_sort(runs.begin(), runs.end(), [](const auto* a, const auto* b) {
      return a->started_at != b->started_at ? a->started_at > b->started_at : a->id > b->id;
    });
    for (std::size_t i = 0; i < runs.size(); ++i) rank[runs[i]->id] = i;
  }
  for (const auto& e : experiments) {
    if (!prunable(e)) continue;
    bool prune = policy.keep_last || policy.keep_since;
    if (policy.keep_last) {
      prune = prune && rank[e.id] >= static_cast<std::size_t>(std::max(0, *policy.keep_last));
    }
    if (policy.keep_since) prune = prune && e.started_at < *policy.keep_since;
    if (prune) chosen.push_back(e);
  }
  return chosen;
}

}  // namespace kvsweep::orchestrator
