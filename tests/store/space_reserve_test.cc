// Tests for store/space_reserve.cc and store/end_of_run_bytes.cc: the room a run keeps beside
// the store holds real blocks in a file without a name, and it is as large as the transaction
// that ends a run turns out to be, measured in a real WAL.
#include "store/space_reserve.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/store.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::store {
namespace {

using kvsweep::testing::TempDir;

std::set<std::string> names_in(const TempDir& dir) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

TEST(SpaceReserve, HoldsRealBlocksInAFileWithoutAName) {
  TempDir dir;
  const std::set<std::string> before = names_in(dir);
  constexpr std::int64_t kBytes = 1 << 20;
  SpaceReserve reserve = SpaceReserve::beside(dir.file("s.db"), kBytes);
  EXPECT_EQ(reserve.bytes(), kBytes);
  EXPECT_GE(reserve.allocated_bytes(), kBytes);  // blocks, not a sparse file
  EXPECT_EQ(names_in(dir), before);              // nothing another program could see or keep

  SpaceReserve moved = std::move(reserve);
  EXPECT_EQ(moved.allocated_bytes(), reserve.allocated_bytes() + kBytes);
  moved.release();
  EXPECT_EQ(moved.bytes(), 0);
  EXPECT_EQ(moved.allocated_bytes(), 0);
  moved.release();  // a second time does nothing
  EXPECT_EQ(names_in(dir), before);
}

TEST(SpaceReserve, RoomTheDiskDoesNotHaveIsAnErrorNamingTheDirectory) {
  TempDir dir;
  try {
    SpaceReserve::beside(dir.file("s.db"), std::int64_t{1} << 60);  // an exbibyte
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(dir.path().string() + ": cannot keep ", 0), 0u) << message;
  }
  EXPECT_TRUE(names_in(dir).empty());
}

TEST(SpaceReserve, ADirectoryThatIsNotThereIsAnErrorNamingIt) {
  TempDir dir;
  const std::string missing = dir.file("no/such/dir");
  try {
    SpaceReserve::beside(missing + "/s.db", 4096);
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(missing + ": cannot keep 4 KiB free", 0), 0u) << e.what();
  }
}

// One experiment to end: its texts, `cells` cells claimed by the run ending it, `others` (at
// least 2) more experiments filling the table's pages around its row, and cells of two of
// them, before and after its own, claimed by another run, so the run's claims share their
// first and last pages.
struct EndOfRun {
  std::string scenario_text;
  std::string setup_json;
  int cells = 0;
  int others = 0;
};

// Ends the run as runner.cc does (its claims released, a status as long as the runner ever
// stores, in one transaction) in a WAL emptied first; returns {bytes the WAL grew by, bytes
// the store said it would need at most}.
std::pair<std::int64_t, std::int64_t> end_a_run(const EndOfRun& shape) {
  TempDir dir;
  const std::string path = dir.file("s.db");
  const std::string host(64, 'h');  // the longest host name
  std::int64_t experiment_id = 0;
  std::int64_t row_bytes = 0;
  {
    Store store = Store::open(path);
    for (int i = 0; i < shape.others; ++i) {
      ExperimentRow other;
      other.name = "other";
      other.scenario_text = std::string(3000, 'o');
      other.status = "done";
      store.add_experiment(other);
    }
    ExperimentRow experiment;
    experiment.name = "ending";
    experiment.scenario_path = "scenarios/ending.yaml";
    experiment.scenario_text = shape.scenario_text;
    experiment.setup = kvsweep::store::decode_setup(shape.setup_json);
    experiment.scenario_hash = std::string(64, 'a');
    experiment.started_at = "2026-11-23T16:00:00Z";
    experiment.kvsweep_version = "0.1.0";
    experiment.host = host;
    experiment.status = "running";
    const auto add_cells = [&](std::int64_t id, int n) {
      std::vector<std::int64_t> ids;
      for (int k = 0; k < n; ++k) {
        CellRow cell;
        cell.experiment_id = id;
        cell.ordinal = k;
        cell.key = "cell-" + std::to_string(k);
        cell.status = "pending";
        ids.push_back(store.add_cell(cell));
      }
      return ids;
    };
    const ClaimOwner other_run{"fedcba9876543210", host, 4194303, "pid:[4026531836]"};
    store.claim_cells(add_cells(1, shape.cells / 2 + 1), other_run, 1.7e9);
    store.in_transaction([&] {  // as runner.cc opens an experiment
      experiment_id = store.add_experiment(experiment);
      store.claim_cells(add_cells(experiment_id, shape.cells),
                        ClaimOwner{"0123456789abcdef", host, 4194304, "pid:[4026531836]"}, 1.7e9);
    });
    store.claim_cells(add_cells(2, shape.cells / 2 + 1), other_run, 1.7e9);
    // What runner.cc passes: the row's texts, its short columns and the longest status.
    row_bytes = static_cast<std::int64_t>(experiment.name.size() + experiment.scenario_path.size() +
                                          shape.scenario_text.size() +
                                          encode_setup(experiment.setup).size()) +
                512 + 1024;
  }  // the last connection closes: the WAL is copied into the file and removed
  Store store = Store::open(path);
  const std::string wal = path + "-wal";
  const auto wal_size = [&] {
    std::error_code missing;
    const auto size = std::filesystem::file_size(wal, missing);
    return missing ? std::int64_t{0} : static_cast<std::int64_t>(size);
  };
  EXPECT_EQ(wal_size(), 0);
  const std::int64_t estimate = store.bytes_to_end_a_run(row_bytes, shape.cells);
  store.in_transaction([&] {
    store.release_claims("0123456789abcdef");
    store.finish_experiment(experiment_id, "failed: " + std::string(1016, 'r'),
                            "2026-11-23T17:00:00Z");
  });
  return {wal_size(), estimate};
}

TEST(StoreEndOfRun, TheRoomKeptCoversTheEndOfASmallSweep) {
  const auto [written, estimate] = end_a_run({std::string(600, 's'), std::string(600, 'j'), 4, 2});
  EXPECT_GT(written, 0);
  EXPECT_LE(written, estimate);
  std::printf("small sweep: the end wrote %lld WAL bytes, %lld kept\n",
              static_cast<long long>(written), static_cast<long long>(estimate));
}

TEST(StoreEndOfRun, TheRoomKeptCoversTheEndOfALargeScenarioWithManyCells) {
  // Within the scenario limits: a 1 MiB scenario text, a sweep of 10,000 cells.
  const auto [written, estimate] =
      end_a_run({std::string(1 << 20, 's'), std::string(200000, 'j'), 10000, 40});
  EXPECT_GT(written, 1 << 20);  // the row was rewritten whole
  EXPECT_LE(written, estimate);
  EXPECT_LE(estimate, 8 << 20);  // docs/reliability.md: a few MiB at the scenario limits
  std::printf("large sweep: the end wrote %lld WAL bytes, %lld kept\n",
              static_cast<long long>(written), static_cast<long long>(estimate));
}

}  // namespace
}  // namespace kvsweep::store
