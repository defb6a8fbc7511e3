// Tests for store/store_maintenance: `kvsweep backup` beside a writer, `kvsweep migrate`.
#include "store/store_maintenance.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "store/schema.h"
#include "store/sqlite_handles.h"
#include "store/store.h"
#include "store/store_identity.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::store {
namespace {

using kvsweep::testing::TempDir;

constexpr int kRequestsPerCell = 500;

std::vector<RequestRow> cell_requests() {
  std::vector<RequestRow> rows(kRequestsPerCell);
  for (int i = 0; i < kRequestsPerCell; ++i) {
    rows[i].index = i;
    rows[i].ok = true;
    rows[i].itl_ms.assign(40, 21.875);
  }
  return rows;
}

// Records finished cells, one transaction each, as a sweep does, until told to stop; at least
// `at_least` before it looks at the flag, so the backup surely runs beside writes.
void record_cells(const std::string& path, std::int64_t experiment_id, int at_least,
                  const std::atomic<bool>& stop, std::atomic<int>& recorded) {
  Store store = Store::open(path);
  const std::vector<RequestRow> requests = cell_requests();
  for (int ordinal = 0; ordinal < at_least || !stop.load(); ++ordinal) {
    CellRow cell;
    cell.experiment_id = experiment_id;
    cell.ordinal = ordinal;
    cell.key = "cell-" + std::to_string(ordinal);
    cell.status = "running";
    cell.id = store.add_cell(cell);
    cell.status = "done";
    store.record_cell(cell, requests, {}, {});
    recorded.fetch_add(1);
  }
}

// The backup is taken while a sweep writes: it opens as a store whose every finished cell has
// all of its requests (a transaction is in the copy whole or not at all).
TEST(StoreBackup, CopyTakenBesideARunningSweepIsConsistent) {
  TempDir dir;
  const std::string path = dir.file("live.db");
  std::int64_t experiment_id = 0;
  {
    Store store = Store::open(path);
    ExperimentRow experiment;
    experiment.name = "nightly";
    experiment.status = "running";
    experiment_id = store.add_experiment(experiment);
  }
  std::atomic<bool> stop{false};
  std::atomic<int> recorded{0};
  std::thread sweep(record_cells, path, experiment_id, 3, std::cref(stop), std::ref(recorded));
  while (recorded.load() < 1) std::this_thread::yield();  // the sweep is under way
  std::vector<BackupResult> results;
  for (int copy = 0; copy < 3; ++copy) {
    results.push_back(backup_store(path, dir.file("copy-" + std::to_string(copy) + ".db")));
  }
  stop.store(true);
  sweep.join();

  for (int copy = 0; copy < 3; ++copy) {
    const std::string copy_path = dir.file("copy-" + std::to_string(copy) + ".db");
    EXPECT_EQ(results[copy].schema_version, kSchemaVersion);
    EXPECT_EQ(results[copy].experiments, 1);
    EXPECT_EQ(results[copy].bytes,
              static_cast<std::int64_t>(std::filesystem::file_size(copy_path)));
    const Store copy_store = Store::open_read_only(copy_path);
    const auto cells = copy_store.cells(experiment_id);
    EXPECT_GE(cells.size(), 1u);
    // Each cell is added, then recorded in a second transaction: the copy holds a cell
    // either as added (running, no request) or as recorded (done, every request), never half.
    std::size_t done = 0;
    for (const CellRow& cell : cells) {
      done += cell.status == "done";
      EXPECT_EQ(copy_store.request_count(cell.id), cell.status == "done" ? kRequestsPerCell : 0)
          << cell.key << " " << cell.status;
    }
    EXPECT_GE(done, 1u);
    EXPECT_FALSE(std::filesystem::exists(copy_path + ".partial-" + std::to_string(::getpid())));
  }
}

TEST(StoreBackup, ReplacesTheDestinationWhole) {
  TempDir dir;
  const std::string path = dir.file("s.db");
  {
    Store store = Store::open(path);
    ExperimentRow experiment;
    experiment.name = "one";
    store.add_experiment(experiment);
  }
  const std::string dest = dir.file("backup.db");
  backup_store(path, dest);
  {
    Store store = Store::open(path);
    ExperimentRow experiment;
    experiment.name = "two";
    store.add_experiment(experiment);
  }
  EXPECT_EQ(backup_store(path, dest).experiments, 2);
  EXPECT_EQ(Store::open_read_only(dest).experiments().size(), 2u);
}

TEST(StoreBackup, RefusesWhatIsNoStore) {
  TempDir dir;
  EXPECT_THROW(backup_store(dir.file("none.db"), dir.file("b.db")), std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(dir.file("b.db")));
  {
    SqliteDb other = SqliteDb::open(dir.file("other.db"));
    other.exec("CREATE TABLE cells (x); PRAGMA application_id = 42;");
  }
  EXPECT_THROW(backup_store(dir.file("other.db"), dir.file("b.db")), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(dir.file("b.db")));
}

TEST(StoreMigrate, AnOlderStoreIsMigratedAndACurrentOneLeftAlone) {
  TempDir dir;
  const std::string path = dir.file("old.db");
  {
    SqliteDb db = SqliteDb::open(path);
    migrate_to(db, 6);
    db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));  // as kvsweep did
    db.exec(
        "INSERT INTO experiments (id, name) VALUES (1, 'old');"
        "INSERT INTO cells (id, experiment_id, ordinal, key) VALUES (1, 1, 0, 'k');"
        "INSERT INTO requests (cell_id, request_index, itl_ms) VALUES (1, 0, '[1.5,2.25]');");
  }
  std::vector<std::string> lines;
  const auto tell = [&lines](const std::string& line) { lines.push_back(line); };
  MigrationResult result = migrate_store(path, /*vacuum=*/true, tell);
  EXPECT_EQ(result.from_version, 6);
  EXPECT_EQ(result.to_version, kSchemaVersion);
  EXPECT_TRUE(result.vacuumed);
  EXPECT_FALSE(lines.empty());
  {
    SqliteStatement mode = SqliteDb::open(path).prepare("PRAGMA auto_vacuum");
    mode.step();
    EXPECT_EQ(mode.column_int64(0), 2);  // incremental, after the VACUUM
  }
  EXPECT_EQ(Store::open_read_only(path).requests(1).at(0).itl_ms, (std::vector<double>{1.5, 2.25}));

  lines.clear();
  result = migrate_store(path, /*vacuum=*/false, tell);
  EXPECT_EQ(result.from_version, kSchemaVersion);
  EXPECT_TRUE(lines.empty());  // nothing to do, nothing said
  EXPECT_THROW(migrate_store(dir.file("none.db"), false, tell), std::invalid_argument);
}

}  // namespace
}  // namespace kvsweep::store
