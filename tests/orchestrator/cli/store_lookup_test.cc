// Tests for orchestrator/cli/store_lookup: resolve_experiment and resolve_cell read a
// store::RunReader alone, so an in-memory one stands in for the SQLite store.
#include "orchestrator/cli/store_lookup.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error_kinds.h"
#include "store/store_readers.h"

namespace kvsweep::orchestrator {
namespace {

// Experiments and cells held in vectors; the claims, prune marks and end-of-run bytes that
// the lookups never read answer empty.
class FakeRuns final : public store::RunReader {
 public:
  const std::string& path() const override { return path_; }
  std::vector<store::ExperimentRow> experiments() const override { return experiments_; }
  std::optional<store::ExperimentRow> experiment(std::int64_t id) const override {
    for (const auto& e : experiments_) {
      if (e.id == id) return e;
    }
    return std::nullopt;
  }
  std::optional<store::ExperimentRow> latest_experiment() const override {
    if (experiments_.empty()) return std::nullopt;
    return experiments_.back();
  }
  std::optional<store::ExperimentRow> experiment_by_name(const std::string& name) const override {
    for (auto it = experiments_.rbegin(); it != experiments_.rend(); ++it) {
      if (it->name == name) return *it;
    }
    return std::nullopt;
  }
  std::optional<store::ExperimentRow> latest_unfinished(const std::string&) const override {
    return std::nullopt;
  }
  std::vector<store::CellRow> cells(std::int64_t experiment_id) const override {
    std::vector<store::CellRow> out;
    for (const auto& c : cells_) {
      if (c.experiment_id == experiment_id) out.push_back(c);
    }
    return out;
  }
  std::vector<store::CellClaim> claims(std::int64_t) const override { return {}; }
  std::optional<store::PruneMark> prune_mark(std::int64_t) const override { return std::nullopt; }
  std::int64_t bytes_to_end_a_run(std::int64_t, std::int64_t) const override { return 0; }

  void add_run(std::int64_t id, const std::string& name, int cells) {
    store::ExperimentRow e;
    e.id = id;
    e.name = name;
    experiments_.push_back(e);
    for (int k = 0; k < cells; ++k) {
      store::CellRow c;
      c.id = id * 100 + k;
      c.experiment_id = id;
      c.ordinal = k;
      cells_.push_back(c);
    }
  }

 private:
  std::string path_ = "in-memory.db";
  std::vector<store::ExperimentRow> experiments_;  // oldest first
  std::vector<store::CellRow> cells_;
};

FakeRuns three_nights() {
  FakeRuns runs;
  runs.add_run(1, "nightly", 2);
  runs.add_run(2, "probe", 1);
  runs.add_run(3, "nightly", 3);
  return runs;
}

TEST(StoreLookup, ResolvesAnExperimentFromARunReaderWithoutSqlite) {
  const FakeRuns runs = three_nights();
  EXPECT_EQ(resolve_experiment(runs, "").id, 3);  // the latest
  EXPECT_EQ(resolve_experiment(runs, "2").id, 2);
  EXPECT_EQ(resolve_experiment(runs, "nightly").id, 3);  // the latest of that name
  EXPECT_EQ(resolve_experiment(runs, "nightly~1").id, 1);
  EXPECT_EQ(resolve_experiment(runs, "probe").name, "probe");
}

TEST(StoreLookup, NamesTheReadersPathAndTheNearestNameWhenNothingMatches) {
  const FakeRuns runs = three_nights();
  try {
    resolve_experiment(runs, "nightyl");
    FAIL() << "resolved a name that no experiment has";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("in-memory.db"), std::string::npos) << message;
    EXPECT_NE(message.find("did you mean 'nightly'"), std::string::npos) << message;
  }
  EXPECT_THROW(resolve_experiment(runs, "nightly~2"), UsageError);  // only one run before
  EXPECT_THROW(resolve_experiment(FakeRuns{}, ""), UsageError);     // no experiment yet
}

TEST(StoreLookup, ResolvesACellByItsPositionFromARunReader) {
  const FakeRuns runs = three_nights();
  const store::CellRow cell = resolve_cell(runs, "nightly:3");
  EXPECT_EQ(cell.experiment_id, 3);
  EXPECT_EQ(cell.ordinal, 2);
  EXPECT_EQ(resolve_cell(runs, "1:2").id, 101);
  EXPECT_THROW(resolve_cell(runs, "1:3"), UsageError);  // experiment 1 has two cells
  EXPECT_THROW(resolve_cell(runs, "1"), UsageError);    // no :CELL
}

}  // namespace
}  // namespace kvsweep::orchestrator
