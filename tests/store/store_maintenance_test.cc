// Tests for store/store_maintenance: `kvsweep backup` beside a writer, `kvsweep migrate`.
#include "store/store_maintenance.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "store/backup.h"
#include "store/prunes.h"
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

// A store with `n` experiments named "e0", "e1", ..., closed.
void make_store(const std::string& path, int n) {
  Store store = Store::open(path);
  for (int i = 0; i < n; ++i) {
    ExperimentRow experiment;
    experiment.name = "e" + std::to_string(i);
    store.add_experiment(experiment);
  }
}

std::string message_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

bool leftover_partial(const TempDir& dir) {
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path().string().find(".partial-") != std::string::npos) return true;
  }
  return false;
}

// Issue 40: `kvsweep backup s.db` with --db s.db renamed a copy over the store a sweep was
// writing into; every later transaction of the sweep went to the replaced file.
TEST(StoreBackup, RefusesTheStoreItselfByAnyName) {
  TempDir dir;
  const std::string path = dir.file("s.db");
  make_store(path, 2);
  std::filesystem::create_directory(dir.file("sub"));
  std::filesystem::create_symlink(path, dir.file("link.db"));
  std::filesystem::create_hard_link(path, dir.file("hard.db"));
  const Store writer = Store::open(path);  // holds the -wal and -shm open, as a sweep does
  ASSERT_TRUE(std::filesystem::exists(path + "-wal"));
  ASSERT_TRUE(std::filesystem::exists(path + "-shm"));
  for (const std::string& dest : {path, dir.file("sub/../s.db"), dir.path().string() + "//./s.db",
                                  dir.file("link.db"), dir.file("hard.db")}) {
    EXPECT_EQ(message_of([&] { backup_store(path, dest); }),
              "backup: " + dest + ": is the store being backed up (" + path +
                  "); replacing it would lose what a running sweep writes. Give a new file "
                  "name; nothing was written");
  }
  for (const std::string suffix : {"wal", "shm", "journal"}) {
    EXPECT_EQ(message_of([&] { backup_store(path, path + "-" + suffix); }),
              "backup: " + path + "-" + suffix + ": is the " + suffix +
                  " file of the store being backed up (" + path + "); nothing was written");
  }
  EXPECT_FALSE(std::filesystem::exists(path + "-journal"));  // refused by name, not created
  EXPECT_EQ(writer.experiments().size(), 2u);
  EXPECT_FALSE(leftover_partial(dir));
}

TEST(StoreBackup, RefusesWhatIsNotARegularFileOrANewPath) {
  TempDir dir;
  const std::string path = dir.file("s.db");
  make_store(path, 1);
  std::filesystem::create_directory(dir.file("folder"));
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  std::filesystem::create_symlink(dir.file("nothing"), dir.file("dangling"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/dev/null", "is a character device; backup writes a regular file or a new path"},
      {dir.file("folder"), "is a directory; backup writes a regular file or a new path"},
      {dir.file("fifo"), "is a FIFO; backup writes a regular file or a new path"},
      {dir.file("dangling"), "is a symbolic link to nothing"},
      {dir.file("no/such/b.db"), "no such directory " + dir.file("no/such")},
  };
  // Not a structured binding: clang 14 (the sanitized build) cannot capture one in a lambda.
  for (const auto& entry : cases) {
    const std::string& dest = entry.first;
    EXPECT_EQ(message_of([&] { backup_store(path, dest); }),
              "backup: " + dest + ": " + entry.second + "; nothing was written");
  }
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
  EXPECT_TRUE(std::filesystem::is_fifo(dir.file("fifo")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("nothing")));
  EXPECT_FALSE(leftover_partial(dir));
}

TEST(StoreBackup, AFileThatIsNoKvsweepStoreIsReplacedOnlyWithForce) {
  TempDir dir;
  const std::string path = dir.file("s.db");
  make_store(path, 1);
  const std::string notes = dir.file("notes.txt");
  { std::ofstream(notes) << "my notes\n"; }
  {
    SqliteDb other = SqliteDb::open(dir.file("other.db"));
    other.exec("CREATE TABLE t (x); PRAGMA application_id = 42;");
  }
  for (const std::string& dest : {notes, dir.file("other.db")}) {
    const auto before = std::filesystem::file_size(dest);
    EXPECT_EQ(message_of([&] { backup_store(path, dest); }),
              "backup: " + dest +
                  ": exists and is not a kvsweep store; backup replaces it only with --force; "
                  "nothing was written");
    EXPECT_EQ(std::filesystem::file_size(dest), before);
  }
  EXPECT_EQ(backup_store(path, notes, /*force=*/true).experiments, 1);
  EXPECT_EQ(Store::open_read_only(notes).experiments().size(), 1u);
  // A kvsweep store (an earlier backup) is replaced without --force.
  make_store(path, 1);
  EXPECT_EQ(backup_store(path, notes).experiments, 2);
  EXPECT_FALSE(leftover_partial(dir));
}

TEST(StoreBackup, TheCopyHasTheSourcesModeAndALinkKeepsPointingAtIt) {
  TempDir dir;
  const std::string path = dir.file("s.db");
  make_store(path, 1);
  namespace fs = std::filesystem;
  const auto mode = [](const std::string& p) {
    return fs::status(p).permissions() & fs::perms::mask;
  };
  for (const fs::perms source_mode :
       {fs::perms::owner_read | fs::perms::owner_write,
        fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read}) {
    fs::permissions(path, source_mode);
    const std::string fresh = dir.file("fresh-" + std::to_string(static_cast<int>(source_mode)));
    backup_store(path, fresh);
    EXPECT_EQ(mode(fresh), source_mode);
  }
  // A world-readable old backup replaced by a copy of a 0600 store is 0600.
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  const std::string old = dir.file("old.db");
  backup_store(path, old);
  fs::permissions(old, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  fs::create_directory(dir.file("links"));
  fs::create_symlink(old, dir.file("links/latest.db"));
  backup_store(path, dir.file("links/latest.db"));
  EXPECT_TRUE(fs::is_symlink(dir.file("links/latest.db")));
  EXPECT_EQ(mode(old), fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(Store::open_read_only(dir.file("links/latest.db")).experiments().size(), 1u);
  EXPECT_FALSE(leftover_partial(dir));
}

// julianday, not text: "2026-11-05 03:00:00" (a space, no Z) is an instant too, a far cutoff is
// before every run, and a started_at that is no time is before nothing.
TEST(StoreRetention, StartedBeforeComparesInstantsNotText) {
  TempDir dir;
  const std::string path = dir.file("s.db");
  {
    Store store = Store::open(path);
    for (const std::string started : {"2026-11-01T03:00:00Z", "2026-11-05 03:00:00", "soon", ""}) {
      ExperimentRow experiment;
      experiment.name = "nightly";
      experiment.started_at = started;
      store.add_experiment(experiment);
    }
  }
  const double nov3 = 1793674800;  // 2026-11-03T03:00:00Z
  EXPECT_EQ(experiments_started_before(path, nov3), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(experiments_started_before(path, nov3 + 3 * 86400), (std::vector<std::int64_t>{1, 2}));
  // Year 931, the cutoff --older-than 400000d gave: as text "931-..." sorted after "2026-...";
  // as an instant it is before every run.
  EXPECT_EQ(experiments_started_before(path, -32.9e9), (std::vector<std::int64_t>{}));
  const double nov1_0130 = 1793496600;  // 2026-11-01T01:30:00Z, before the first run
  EXPECT_EQ(experiments_started_before(path, nov1_0130), (std::vector<std::int64_t>{}));
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
