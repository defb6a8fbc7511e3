// Tests for the store's progress snapshots (schema 4) and its read-only connection, the two
// things `kvsweep serve` needs to follow a sweep written by another process.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "store/schema.h"
#include "store/sqlite_handles.h"
#include "store/store.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::store {
namespace {

using kvsweep::testing::TempDir;

// An experiment with one running cell; returns the cell id.
std::int64_t running_cell(Store& store) {
  ExperimentRow e;
  e.name = "live";
  e.status = "running";
  const std::int64_t experiment_id = store.add_experiment(e);
  CellRow c;
  c.experiment_id = experiment_id;
  c.key = "k0";
  c.arm = "random";
  c.concurrency = 4;
  c.status = "running";
  return store.add_cell(c);
}

ProgressSnapshot snapshot(std::int64_t cell_id, std::int64_t done) {
  ProgressSnapshot p;
  p.cell_id = cell_id;
  p.phase = "measured";
  p.wall_s = 1.7e9 + static_cast<double>(done);
  p.elapsed_s = static_cast<double>(done) / 10;
  p.done = done;
  p.total = 100;
  p.failed = 1;
  p.requests_per_s = 10;
  p.ttft_p50_ms = 12.5;
  p.ttft_p95_ms = 40.25;
  p.metrics_urls = {"http://127.0.0.1:9001/metrics", "http://127.0.0.1:9002/metrics"};
  return p;
}

TEST(StoreProgress, SnapshotsRoundTripInOrder) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  const std::int64_t cell = running_cell(store);
  store.add_progress(snapshot(cell, 10));
  store.add_progress(snapshot(cell, 25));
  const auto rows = store.progress(cell);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].done, 10);
  EXPECT_EQ(rows[1].done, 25);
  EXPECT_EQ(rows[1].phase, "measured");
  EXPECT_EQ(rows[1].wall_s, 1.7e9 + 25);
  EXPECT_EQ(rows[1].elapsed_s, 2.5);
  EXPECT_EQ(rows[1].total, 100);
  EXPECT_EQ(rows[1].failed, 1);
  EXPECT_EQ(rows[1].requests_per_s, 10);
  EXPECT_EQ(rows[1].ttft_p50_ms, 12.5);
  EXPECT_EQ(rows[1].ttft_p95_ms, 40.25);
  EXPECT_EQ(rows[1].metrics_urls, snapshot(cell, 0).metrics_urls);
  EXPECT_TRUE(store.progress(cell + 1).empty());
}

TEST(StoreProgress, ResetCellForgetsItsProgress) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  const std::int64_t cell = running_cell(store);
  store.add_progress(snapshot(cell, 10));
  store.reset_cell(cell);
  EXPECT_TRUE(store.progress(cell).empty());
}

// A file exactly as schema 3 (the one before progress snapshots) wrote it, with a finished
// cell: the migration adds the table and keeps every row.
TEST(StoreProgress, FileOfThePreviousSchemaMigratesKeepingItsRows) {
  TempDir dir;
  const std::string path = dir.file("old.db");
  {
    SqliteDb db = SqliteDb::open(path);
    migrate_to(db, 3);  // the schema before cell_progress (4)
    db.exec(
        "INSERT INTO experiments (id, name, status) VALUES (1, 'old', 'done');"
        "INSERT INTO cells (id, experiment_id, ordinal, key, status) VALUES (1, 1, 0, 'k', 'done');"
        "INSERT INTO requests (cell_id, request_index, ok, ttft_ms) VALUES (1, 0, 1, 7.5);");
    EXPECT_THROW(db.prepare("SELECT * FROM cell_progress"), std::runtime_error);
  }
  // A reader of this version refuses the old file and says how to migrate it.
  try {
    Store::open_read_only(path);
    FAIL() << "expected a refusal";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("migrate"), std::string::npos) << e.what();
  }
  Store store = Store::open(path);
  EXPECT_EQ(schema_version(SqliteDb::open(path)), kSchemaVersion);
  EXPECT_EQ(store.requests(1).size(), 1u);
  EXPECT_EQ(store.requests(1)[0].ttft_ms, 7.5);
  EXPECT_TRUE(store.progress(1).empty());
  store.add_progress(snapshot(1, 3));
  EXPECT_EQ(store.progress(1).size(), 1u);
}

TEST(StoreReadOnly, ReadsButNeverWrites) {
  TempDir dir;
  const std::string path = dir.file("s.db");
  std::int64_t cell = 0;
  {
    Store writer = Store::open(path);
    cell = running_cell(writer);
  }
  Store reader = Store::open_read_only(path);
  EXPECT_EQ(reader.experiments().size(), 1u);
  EXPECT_THROW(reader.add_progress(snapshot(cell, 1)), std::runtime_error);
}

TEST(StoreReadOnly, NeverCreatesAFile) {
  TempDir dir;
  EXPECT_THROW(Store::open_read_only(dir.file("none.db")), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(dir.file("none.db")));
}

// A sweep in another connection holding its write transaction open (a cell being recorded)
// does not hold a reader up: WAL lets it read the last committed state at once.
TEST(StoreReadOnly, ReadsWhileAWriterHoldsItsTransaction) {
  TempDir dir;
  const std::string path = dir.file("s.db");
  Store writer = Store::open(path);
  const std::int64_t cell = running_cell(writer);
  writer.add_progress(snapshot(cell, 5));
  SqliteDb second_writer = SqliteDb::open(path);
  Transaction open_transaction(second_writer);
  second_writer.exec("INSERT INTO experiments (name) VALUES ('uncommitted')");

  // The writer never commits here: a reader that waited on its lock would fail with "database
  // is locked" after the busy timeout instead of answering.
  Store reader = Store::open_read_only(path, /*busy_timeout_ms=*/200);
  EXPECT_EQ(reader.experiments().size(), 1u);  // the uncommitted one is not seen
  EXPECT_EQ(reader.progress(cell).size(), 1u);
}

}  // namespace
}  // namespace kvsweep::store
