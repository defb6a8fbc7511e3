// Tests for store/cell_claims.cc and schema 5: claims on cells, heartbeats, and writes that
// refuse to land in a cell another run took over.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/schema.h"
#include "store/sqlite_handles.h"
#include "store/store.h"
#include "store/store_identity.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::store {
namespace {

using kvsweep::testing::TempDir;

ClaimOwner owner(const std::string& run_id, std::int64_t pid = 4242) {
  return ClaimOwner{run_id, "bench-host", pid, "pid:[4026531836]"};
}

// An experiment with `n` pending cells; returns their ids.
std::vector<std::int64_t> add_cells(Store& store, int n) {
  ExperimentRow experiment;
  experiment.name = "claims";
  experiment.status = "running";
  const std::int64_t experiment_id = store.add_experiment(experiment);
  std::vector<std::int64_t> ids;
  for (int i = 0; i < n; ++i) {
    CellRow cell;
    cell.experiment_id = experiment_id;
    cell.ordinal = i;
    cell.key = "k" + std::to_string(i);
    cell.status = "pending";
    ids.push_back(store.add_cell(cell));
  }
  return ids;
}

RequestRow request(std::int64_t index) {
  RequestRow row;
  row.index = index;
  row.ok = true;
  return row;
}

TEST(CellClaims, ClaimBeatAndRelease) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  const auto ids = add_cells(store, 3);
  store.claim_cells({ids[0], ids[2]}, owner("run-a"), 1000.5);
  const auto claims = store.claims(1);
  ASSERT_EQ(claims.size(), 2u);
  EXPECT_EQ(claims[0].cell_id, ids[0]);
  EXPECT_EQ(claims[1].cell_id, ids[2]);
  EXPECT_EQ(claims[0].owner.run_id, "run-a");
  EXPECT_EQ(claims[0].owner.host, "bench-host");
  EXPECT_EQ(claims[0].owner.pid, 4242);
  EXPECT_EQ(claims[0].owner.pid_namespace, "pid:[4026531836]");
  EXPECT_EQ(claims[0].claimed_at, "1970-01-01T00:16:40Z");
  EXPECT_EQ(claims[0].heartbeat_s, 1000.5);

  EXPECT_EQ(store.beat("run-a", 1010.25), 2);
  EXPECT_EQ(store.beat("run-b", 1010.25), 0);
  for (const auto& claim : store.claims(1)) EXPECT_EQ(claim.heartbeat_s, 1010.25);

  // A takeover replaces the claim of a cell, not the other cells'.
  store.claim_cells({ids[2]}, owner("run-b", 77), 1020);
  EXPECT_EQ(store.beat("run-a", 1030), 1);
  store.release_claims("run-a");
  const auto left = store.claims(1);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].owner.run_id, "run-b");
  EXPECT_EQ(left[0].owner.pid, 77);
}

TEST(CellClaims, RecordingACellTakenOverStoresNothing) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  const auto ids = add_cells(store, 1);
  store.claim_cells(ids, owner("run-a"), 1000);
  store.claim_cells(ids, owner("run-b", 99), 1100);  // run-a's heartbeat lapsed

  CellRow cell = store.cells(1).at(0);
  cell.status = "done";
  try {
    store.record_cell(cell, {request(0), request(1)}, {}, {}, "run-a");
    FAIL() << "expected ClaimLost";
  } catch (const ClaimLost& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("was taken over by pid 99 on bench-host (run run-b"), std::string::npos)
        << message;
  }
  EXPECT_EQ(store.request_count(ids[0]), 0);
  EXPECT_EQ(store.cells(1).at(0).status, "pending");
  EXPECT_THROW(store.update_cell(cell, "run-a"), ClaimLost);
  EXPECT_EQ(store.cells(1).at(0).status, "pending");

  // The owner's own write lands, and drops the claim of the finished cell.
  store.record_cell(cell, {request(0), request(1)}, {}, {}, "run-b");
  EXPECT_EQ(store.request_count(ids[0]), 2);
  EXPECT_EQ(store.cells(1).at(0).status, "done");
  EXPECT_TRUE(store.claims(1).empty());
}

// A run that lost its cell keeps reporting progress until it records the cell; none of it may
// land among the new owner's snapshots (kvsweep serve would show two runs in one cell).
TEST(CellClaims, ProgressOfACellTakenOverIsNotStored) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  const auto ids = add_cells(store, 1);
  ProgressSnapshot snapshot;
  snapshot.cell_id = ids[0];
  snapshot.phase = "measured";
  snapshot.done = 1;
  store.claim_cells(ids, owner("run-a"), 1000);
  EXPECT_TRUE(store.add_progress(snapshot, "run-a"));
  store.claim_cells(ids, owner("run-b", 99), 1100);  // run-a's heartbeat lapsed
  snapshot.done = 2;
  EXPECT_FALSE(store.add_progress(snapshot, "run-a"));
  snapshot.done = 3;
  EXPECT_TRUE(store.add_progress(snapshot, "run-b"));
  snapshot.done = 4;
  EXPECT_TRUE(store.add_progress(snapshot));  // unchecked without a run id, as kvsweep load
  std::vector<std::int64_t> done;
  for (const auto& p : store.progress(ids[0])) done.push_back(p.done);
  EXPECT_EQ(done, (std::vector<std::int64_t>{1, 3, 4}));
}

TEST(CellClaims, WritesWithoutAClaimAreUnchecked) {
  // `kvsweep load` stores its one cell without claims.
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  const auto ids = add_cells(store, 1);
  CellRow cell = store.cells(1).at(0);
  cell.status = "done";
  store.record_cell(cell, {request(0)}, {}, {});
  EXPECT_EQ(store.request_count(ids[0]), 1);
}

TEST(CellClaims, ATransactionRollsBackEveryCallInIt) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  const auto ids = add_cells(store, 2);
  EXPECT_THROW(store.in_transaction([&] {
    store.claim_cells(ids, owner("run-a"), 1000);
    store.reset_cell(ids[0]);  // a nested transaction joins the outer one
    throw std::runtime_error("refused");
  }),
               std::runtime_error);
  EXPECT_TRUE(store.claims(1).empty());
  store.in_transaction([&] { store.claim_cells(ids, owner("run-a"), 1000); });
  EXPECT_EQ(store.claims(1).size(), 2u);
}

// Schema 5 on a file exactly as kvsweep wrote it at schema 4 (progress snapshots, no claims
// table, no application_id): the rows stay, the table comes, the file is stamped.
TEST(CellClaims, Version4FileMigratesToClaims) {
  TempDir dir;
  const std::string path = dir.file("v4.db");
  {
    SqliteDb db = SqliteDb::open(path);
    migrate_to(db, 4);
    db.exec(
        "INSERT INTO experiments (id, name, status) VALUES (1, 'old', 'running');"
        "INSERT INTO cells (id, experiment_id, ordinal, key, status) VALUES"
        "  (1, 1, 0, 'a', 'done'), (2, 1, 1, 'b', 'running');"
        "INSERT INTO requests (cell_id, request_index, ok, ended_s) VALUES (1, 0, 1, 0.5);");
    EXPECT_EQ(schema_version(db), 4);
    EXPECT_THROW(db.prepare("SELECT * FROM cell_claims"), std::runtime_error);
    SqliteStatement id = db.prepare("PRAGMA application_id");
    id.step();
    EXPECT_EQ(id.column_int64(0), 0);
  }
  Store store = Store::open(path);
  EXPECT_EQ(store.cells(1).size(), 2u);
  EXPECT_EQ(store.requests(1).at(0).ended_s, 0.5);
  EXPECT_TRUE(store.claims(1).empty());
  store.claim_cells({2}, owner("run-a"), 5);
  EXPECT_EQ(store.claims(1).at(0).cell_id, 2);
  const SqliteDb db = SqliteDb::open(path);
  EXPECT_EQ(schema_version(db), kSchemaVersion);
  SqliteStatement id = db.prepare("PRAGMA application_id");
  id.step();
  EXPECT_EQ(id.column_int64(0), kApplicationId);
}

}  // namespace
}  // namespace kvsweep::store
