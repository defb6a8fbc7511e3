// `kvsweep backup`: a consistent copy of a store, beside whatever is using it.
#include "store/backup.h"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "common/error_kinds.h"
#include "store/backup_destination.h"
#include "store/sqlite_handles.h"
#include "store/store_maintenance.h"

namespace kvsweep::store {

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

}  // namespace kvsweep::store
