// Tests for orchestrator/cli/prune_policy: which experiments `kvsweep prune` chooses.
#include "orchestrator/cli/prune_policy.h"

#include <gtest/gtest.h>

namespace kvsweep::orchestrator {
namespace {

store::ExperimentRow run(std::int64_t id, const std::string& name, const std::string& day,
                         const std::string& status = "done") {
  store::ExperimentRow e;
  e.id = id;
  e.name = name;
  e.started_at = "2026-11-" + day + "T03:00:00Z";
  e.status = status;
  return e;
}

std::vector<std::int64_t> ids(const std::vector<store::ExperimentRow>& rows) {
  std::vector<std::int64_t> out;
  for (const auto& r : rows) out.push_back(r.id);
  return out;
}

const std::vector<store::ExperimentRow> kRuns = {
    run(1, "nightly", "01"),
    run(2, "nightly", "02"),
    run(3, "probe", "02"),
    run(4, "nightly", "03"),
    run(5, "nightly", "04", "running"),
    run(6, "nightly", "05"),
    run(7, "probe", "06", "failed"),
};

TEST(PrunePolicy, KeepsTheNewestRunsOfEachScenarioNeverARunningOne) {
  PrunePolicy policy;
  policy.keep_last = 2;
  // nightly's finished runs, newest first: 6, 4, 2, 1 (5 is running); probe's: 7, 3.
  EXPECT_EQ(ids(experiments_to_prune(kRuns, policy, {})), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(ids(experiments_to_prune(kRuns, policy, {1})), (std::vector<std::int64_t>{2}));
  policy.keep_last = 0;
  EXPECT_EQ(ids(experiments_to_prune(kRuns, policy, {})),
            (std::vector<std::int64_t>{1, 2, 3, 4, 6, 7}));
  EXPECT_EQ(describe(PrunePolicy{2, std::nullopt, {}}), "keep the last 2 runs of each scenario");
}

TEST(PrunePolicy, AgeAndCountMustBothHold) {
  PrunePolicy policy;
  policy.keep_since = "2026-11-02T12:00:00Z";
  EXPECT_EQ(ids(experiments_to_prune(kRuns, policy, {})), (std::vector<std::int64_t>{1, 2, 3}));
  policy.keep_last = 3;  // nightly keeps 6, 4, 2; probe keeps both
  EXPECT_EQ(ids(experiments_to_prune(kRuns, policy, {})), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(describe(policy),
            "keep the last 3 runs of each scenario and runs started since 2026-11-02T12:00:00Z");
}

TEST(PrunePolicy, NamedExperimentsAloneAndNeverARunningOne) {
  PrunePolicy policy;
  policy.experiments = {4, 5, 99};
  EXPECT_EQ(ids(experiments_to_prune(kRuns, policy, {})), (std::vector<std::int64_t>{4}));
  EXPECT_EQ(describe(policy), "named on the command line");
}

}  // namespace
}  // namespace kvsweep::orchestrator
