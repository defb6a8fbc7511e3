// Looking after a store as a whole: `kvsweep migrate` and `kvsweep backup`.
#include "store/store_maintenance.h"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "store/schema.h"
#include "store/sqlite_handles.h"
#include "store/store.h"
#include "store/store_identity.h"

namespace kvsweep::store {
namespace {

// The version of an existing store, read without writing; refuses what is no store yet.
int existing_store_version(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    throw std::invalid_argument(path + ": no such store");
  }
  const SqliteDb db = SqliteDb::open_read_only(path);
  check_store_identity(db);
  check_not_newer(db);
  const int version = schema_version(db);
  if (version == 0) throw std::invalid_argument(path + ": not a kvsweep store yet (empty)");
  return version;
}

}  // namespace

MigrationResult migrate_store(const std::string& path, bool vacuum,
                              const MigrationProgress& progress) {
  MigrationResult result;
  result.from_version = existing_store_version(path);
  { const Store store = Store::open(path, Store::Access::kReadWrite, progress); }
  result.to_version = kSchemaVersion;
  if (vacuum) {
    if (progress) progress(path + ": rewriting the file (VACUUM)");
    const SqliteDb db = SqliteDb::open(path);
    db.exec("PRAGMA auto_vacuum = INCREMENTAL");  // takes effect with the VACUUM below
    db.exec("VACUUM");
    result.vacuumed = true;
  }
  return result;
}

BackupResult backup_store(const std::string& source, const std::string& dest) {
  BackupResult result;
  result.schema_version = existing_store_version(source);
  const std::string partial = dest + ".partial-" + std::to_string(::getpid());
  std::error_code ignored;
  std::filesystem::remove(partial, ignored);  // a leftover of this same pid: never a user file
  try {
    {
      const SqliteDb from = SqliteDb::open_read_only(source);
      const SqliteDb to = SqliteDb::open(partial);
      from.backup_into(to);
      SqliteStatement check = to.prepare("PRAGMA quick_check");
      check.step();
      const std::string verdict = check.column_text(0);
      if (verdict != "ok") {
        throw std::runtime_error(partial + ": the copy of " + source +
                                 " fails SQLite's quick_check: " + verdict);
      }
      SqliteStatement count = to.prepare("SELECT COUNT(*) FROM experiments");
      count.step();
      result.experiments = count.column_int64(0);
    }
    std::filesystem::rename(partial, dest);
  } catch (...) {
    std::filesystem::remove(partial, ignored);
    throw;
  }
  result.bytes = static_cast<std::int64_t>(std::filesystem::file_size(dest));
  return result;
}

}  // namespace kvsweep::store
