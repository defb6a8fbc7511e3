// Looking after a store as a whole: `kvsweep migrate`, `kvsweep backup`, prune's age rule.
#include "store/store_maintenance.h"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "common/error_kinds.h"
#include "store/backup_destination.h"
#include "store/schema.h"
#include "store/sqlite_handles.h"
#include "store/store.h"
#include "store/store_identity.h"

namespace kvsweep::store {
namespace {

// The version of an existing store, read without writing; refuses what is no store yet.
int existing_store_version(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    throw UsageError(path + ": no such store");
  }
  const SqliteDb db = SqliteDb::open_read_only(path);
  check_store_identity(db);
  check_not_newer(db);
  const int version = schema_version(db);
  if (version == 0) throw UsageError(path + ": not a kvsweep store yet (empty)");
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

BackupResult backup_store(const std::string& source, const std::string& dest, bool force) {
  BackupResult result;
  result.schema_version = existing_store_version(source);
  const BackupTarget target = check_backup_destination(source, dest, force);
  // Beside the file it replaces, so the rename stays within one file system.
  const std::string partial = target.path + ".partial-" + std::to_string(::getpid());
  std::error_code ignored;
  std::filesystem::remove(partial, ignored);  // a leftover of this same pid: never a user file
  try {
    create_private_file(partial, target.mode);
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
    // DEST again, as it is now: a copy never lands on what became the store meanwhile.
    if (check_backup_destination(source, dest, force).path != target.path) {
      throw UsageError("backup: " + dest + ": changed while the copy was made");
    }
    std::filesystem::rename(partial, target.path);
  } catch (...) {
    std::filesystem::remove(partial, ignored);
    for (const char* suffix : {"-wal", "-shm", "-journal"}) {
      std::filesystem::remove(partial + suffix, ignored);
    }
    throw;
  }
  result.bytes = static_cast<std::int64_t>(std::filesystem::file_size(target.path));
  return result;
}

std::vector<std::int64_t> experiments_started_before(const std::string& path, double unix_s) {
  constexpr double kUnixEpochJulianDay = 2440587.5;
  const SqliteDb db = SqliteDb::open_read_only(path);
  SqliteStatement s =
      db.prepare("SELECT id FROM experiments WHERE julianday(started_at) < ? ORDER BY id");
  s.bind_double(1, kUnixEpochJulianDay + unix_s / 86400.0);
  std::vector<std::int64_t> ids;
  while (s.step()) ids.push_back(s.column_int64(0));
  return ids;
}

}  // namespace kvsweep::store
