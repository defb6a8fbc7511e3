// `kvsweep backup`: copying a store while it is in use.
#pragma once

#include <cstdint>
#include <string>

namespace kvsweep::store {

struct BackupResult {
  int schema_version = 0;
  std::int64_t experiments = 0;
  std::int64_t bytes = 0;  // of the copy
};

// `kvsweep backup DEST`: a consistent copy of the store at `source` made with SQLite's online
// backup (SqliteDb::backup_into), safe beside a running sweep and a running `serve`: it takes
// no write lock. DEST is checked first (check_backup_destination: never the store itself or
// its -wal or -shm, only a regular file or a new path, a file that is not a kvsweep store
// only with `force`). The copy is written beside the file it replaces under a temporary name,
// with the source's permission bits, checked with PRAGMA quick_check and renamed over it, so
// DEST is always either the previous file or a whole copy. The source must be a kvsweep store
// of this kvsweep's schema or older (copied as it is, not migrated). Throws
// UsageError for a missing or foreign source or a refused DEST, and
// std::runtime_error when the copy cannot be written or fails its check.
BackupResult backup_store(const std::string& source, const std::string& dest, bool force = false);

}  // namespace kvsweep::store
