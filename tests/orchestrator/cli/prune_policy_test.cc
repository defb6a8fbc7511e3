// Tests for orchestrator/cli/prune_policy: which experiments `kvsweep prune` chooses.
#include "orchestrator/cli/prune_policy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

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
  policy.keep_since_unix_s = 1793620800;  // 2026-11-02T12:00:00Z
  // What the store found started before it (store::experiments_started_before), 5 included:
  // a running run is never pruned all the same.
  const std::set<std::int64_t> before = {1, 2, 3, 5};
  EXPECT_EQ(ids(experiments_to_prune(kRuns, policy, {}, before)),
            (std::vector<std::int64_t>{1, 2, 3}));
  policy.keep_last = 3;  // nightly keeps 6, 4, 2; probe keeps both
  EXPECT_EQ(ids(experiments_to_prune(kRuns, policy, {}, before)), (std::vector<std::int64_t>{1}));
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

namespace kvsweep::orchestrator {
namespace {

std::string refusal_of(const std::string& text) {
  try {
    parse_older_than_s(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(taken)";
}

std::string refusal(const std::string& text, const std::string& why) {
  return "prune: --older-than: '" + text + "' " + why +
         "; write a number and a unit, one of s, m, h or d (90d, 12h, 30m), at most 100 years "
         "(36525d)";
}

TEST(PruneOlderThan, TakesANumberAndAUnit) {
  EXPECT_EQ(parse_older_than_s("90d"), 90 * 86400.0);
  EXPECT_EQ(parse_older_than_s("12h"), 12 * 3600.0);
  EXPECT_EQ(parse_older_than_s("1.5h"), 5400.0);
  EXPECT_EQ(parse_older_than_s("30m"), 1800.0);
  EXPECT_EQ(parse_older_than_s("45s"), 45.0);
  EXPECT_EQ(parse_older_than_s("36525d"), kMaxOlderThanS);
}

// Issue 40: "90" meant 90 seconds and pruned almost every run.
TEST(PruneOlderThan, ANumberWithoutAUnitIsRefusedNamingTheUnits) {
  EXPECT_EQ(refusal_of("90"), refusal("90", "has no unit"));
  EXPECT_EQ(refusal_of("90w"), refusal("90w", "has an unknown unit 'w'"));
  EXPECT_EQ(refusal_of("90 d"), refusal("90 d", "has an unknown unit ' d'"));
  EXPECT_EQ(refusal_of("90ms"), refusal("90ms", "has an unknown unit 'ms'"));
}

// Issue 40: 400000d put the cutoff in year 931 and pruned every run; 1e306d reached an
// undefined cast. Nothing past 100 years, and no sign, exponent, nan or inf, is taken.
TEST(PruneOlderThan, BeyondAHundredYearsOrNotANumberIsRefused) {
  EXPECT_EQ(refusal_of("400000d"), refusal("400000d", "is longer than 100 years"));
  EXPECT_EQ(refusal_of("36526d"), refusal("36526d", "is longer than 100 years"));
  const std::string digits(400, '9');  // strtod gives infinity
  EXPECT_EQ(refusal_of(digits + "d"), refusal(digits + "d", "is longer than 100 years"));
  EXPECT_EQ(refusal_of("0d"), refusal("0d", "is not more than 0"));
  EXPECT_EQ(refusal_of("0.0s"), refusal("0.0s", "is not more than 0"));
  for (const std::string text : {"1e306d", "1E3d", "nand", "nan", "infd", "-5d", "+5d", "0x10d", "",
                                 "d", ".5d", "5.d", "1.2.3d"}) {
    const std::string got = refusal_of(text);
    EXPECT_NE(got, "(taken)") << text;
    EXPECT_NE(got.find("write a number and a unit, one of s, m, h or d"), std::string::npos)
        << text << ": " << got;
  }
  EXPECT_EQ(refusal_of("1e306d"), refusal("1e306d", "has an unknown unit 'e306d'"));
  EXPECT_EQ(refusal_of("nand"), refusal("nand", "is not a duration"));
}

TEST(PruneNamed, SaysWhyARunningOrPrunedRunWasLeftAlone) {
  store::ExperimentRow e = run(5, "nightly", "04", "running");
  e.scenario_path = "scenarios/nightly.yaml";
  const double now_s = 1793772000;  // 2026-11-04T06:00:00Z
  EXPECT_EQ(why_not_pruned(e, std::nullopt, now_s - 3 * 3600, now_s, "s.db"),
            "experiment 5 nightly: not pruned: it is marked running since 2026-11-04T03:00:00Z, "
            "its cells' last heartbeat 3.0 h ago (2026-11-04T03:00:00Z); prune never removes "
            "the rows of a running experiment. If that run is dead (its process gone), finish "
            "it with `kvsweep --db s.db run --resume scenarios/nightly.yaml` (a cell whose "
            "heartbeat is older than --claim-timeout is taken over), then prune it");
  EXPECT_NE(why_not_pruned(e, std::nullopt, std::nullopt, now_s, "s.db")
                .find("since 2026-11-04T03:00:00Z, no cell of it claimed by a live run; "),
            std::string::npos);
  for (const double bad : {1e300, -1.0, std::nan("")}) {
    EXPECT_NE(why_not_pruned(e, std::nullopt, bad, now_s, "s.db")
                  .find("since 2026-11-04T03:00:00Z, its cells' last heartbeat unreadable; "),
              std::string::npos);
  }
  EXPECT_EQ(why_not_pruned(run(4, "nightly", "03"), std::string("2026-11-04T05:00:00Z"),
                           std::nullopt, now_s, "s.db"),
            "experiment 4 nightly: pruned before, at 2026-11-04T05:00:00Z; its summaries remain");
  EXPECT_EQ(why_not_pruned(run(4, "nightly", "03"), std::nullopt, std::nullopt, now_s, "s.db"), "");
}

}  // namespace
}  // namespace kvsweep::orchestrator
