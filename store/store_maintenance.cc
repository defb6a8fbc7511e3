// `kvsweep migrate`: a store brought to this kvsweep's schema on request.
#include "store/store_maintenance.h"

#include <filesystem>
#include <stdexcept>

#include "common/error_kinds.h"
#include "store/schema.h"
#include "store/sqlite_handles.h"
#include "store/store.h"
#include "store/store_identity.h"

namespace kvsweep::store {
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

}  // namespace kvsweep::store
