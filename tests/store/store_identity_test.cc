// Tests for store/store_identity.cc and read-only opening: another program's SQLite file (or no
// SQLite file at all) is refused before a byte of it changes; a store opens read-only.
#include "store/store_identity.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "store/schema.h"
#include "store/sqlite_handles.h"
#include "store/store.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::store {
namespace {

using kvsweep::testing::TempDir;

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// A SQLite file another program wrote, in the default rollback-journal mode.
void write_foreign(const std::string& path, const std::string& sql) {
  SqliteDb db = SqliteDb::open(path);
  db.exec(sql);
}

std::string open_error(const std::string& path, Store::Access access) {
  try {
    Store::open(path, access);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(opened)";
}

TEST(StoreIdentity, ForeignDatabaseWithACellsTableIsRefusedUntouched) {
  TempDir dir;
  const std::string path = dir.file("other.db");
  write_foreign(path,
                "CREATE TABLE cells (id INTEGER PRIMARY KEY, formula TEXT);"
                "CREATE TABLE sheets (name TEXT);"
                "INSERT INTO cells (formula) VALUES ('=A1+1');");
  const std::string before = bytes_of(path);
  for (const auto access : {Store::Access::kReadWrite, Store::Access::kReadOnly}) {
    EXPECT_EQ(open_error(path, access),
              path +
                  ": not a kvsweep store: a SQLite database of another program (tables: cells, "
                  "sheets). kvsweep wrote nothing to it; give --db a kvsweep store or a new file "
                  "name.");
  }
  EXPECT_EQ(bytes_of(path), before);  // not switched to WAL, no table added
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-journal"));
}

TEST(StoreIdentity, ForeignApplicationIdIsNamed) {
  TempDir dir;
  const std::string path = dir.file("map.gpkg");
  write_foreign(path, "PRAGMA application_id = 1196444487; CREATE TABLE experiments (x);");
  const std::string before = bytes_of(path);
  EXPECT_EQ(open_error(path, Store::Access::kReadWrite),
            path +
                ": not a kvsweep store: a SQLite database of another program (application_id "
                "0x47504b47 ('GPKG')). kvsweep wrote nothing to it; give --db a kvsweep store or a "
                "new file name.");
  EXPECT_EQ(bytes_of(path), before);
}

TEST(StoreIdentity, NotSqliteAtAllIsSaidSo) {
  TempDir dir;
  const std::string path = dir.file("notes.db");
  std::ofstream(path) << std::string(200, 'x');
  const std::string before = bytes_of(path);
  EXPECT_EQ(open_error(path, Store::Access::kReadWrite),
            path +
                ": not a kvsweep store: not a SQLite database. kvsweep wrote nothing to it; give "
                "--db a kvsweep store or a new file name.");
  EXPECT_EQ(bytes_of(path), before);
}

TEST(StoreIdentity, NewStoresAreStampedAndOldOnesAccepted) {
  TempDir dir;
  { Store::open(dir.file("new.db")); }
  const SqliteDb fresh = SqliteDb::open(dir.file("new.db"));
  SqliteStatement id = fresh.prepare("PRAGMA application_id");
  id.step();
  EXPECT_EQ(id.column_int64(0), kApplicationId);
  EXPECT_NO_THROW(check_store_identity(fresh));

  // An unstamped store of each older schema version is still a kvsweep store.
  for (int version = 1; version <= 4; ++version) {
    const std::string path = dir.file("v" + std::to_string(version) + ".db");
    {
      SqliteDb db = SqliteDb::open(path);
      migrate_to(db, version);
      EXPECT_NO_THROW(check_store_identity(db)) << version;
    }
    EXPECT_NO_THROW(Store::open(path)) << version;
  }
}

TEST(StoreIdentity, ReadOnlyNeverWritesAndMigratesAnOlderStoreOnce) {
  TempDir dir;
  const std::string path = dir.file("s.db");
  {
    Store store = Store::open(path);
    ExperimentRow row;
    row.name = "kept";
    store.add_experiment(row);
  }
  {
    Store store = Store::open(path, Store::Access::kReadOnly);
    ASSERT_EQ(store.experiments().size(), 1u);
    EXPECT_EQ(store.experiments()[0].name, "kept");
    EXPECT_THROW(store.add_experiment(ExperimentRow{}), std::runtime_error);
  }
  EXPECT_EQ(Store::open(path).experiments().size(), 1u);

  const std::string old_path = dir.file("v2.db");
  {
    SqliteDb db = SqliteDb::open(old_path);
    migrate_to(db, 2);
  }
  EXPECT_TRUE(Store::open(old_path, Store::Access::kReadOnly).experiments().empty());
  EXPECT_EQ(schema_version(SqliteDb::open(old_path)), kSchemaVersion);
}

TEST(StoreIdentity, ReadOnlyRefusesAnEmptyFile) {
  TempDir dir;
  const std::string path = dir.file("empty.db");
  std::ofstream{path};
  EXPECT_EQ(open_error(path, Store::Access::kReadOnly),
            path + ": an empty file, no kvsweep store yet (run a scenario into it first)");
  EXPECT_EQ(std::filesystem::file_size(path), 0u);
}

TEST(StoreIdentity, FailedMigrationQuotesOneLineNotTheSchema) {
  // A kvsweep v1 store whose cell_commands table something else created: migration 2 fails.
  TempDir dir;
  const std::string path = dir.file("s.db");
  {
    SqliteDb db = SqliteDb::open(path);
    migrate_to(db, 1);
    db.exec("CREATE TABLE cell_commands (x)");
  }
  const std::string message = open_error(path, Store::Access::kReadWrite);
  EXPECT_NE(message.find("executing \"CREATE TABLE cell_commands ( ...\": table cell_commands "
                         "already exists"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("argv_json"), std::string::npos) << message;
}

}  // namespace
}  // namespace kvsweep::store
