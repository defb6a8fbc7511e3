// Looking after a store as a whole: migrating it on request and copying it while it is in use.
#pragma once

#include <cstdint>
#include <string>

#include "store/migration_progress.h"

namespace kvsweep::store {

struct MigrationResult {
  int from_version = 0;
  int to_version = 0;
  bool vacuumed = false;
};

// `kvsweep migrate`: brings an existing store to this kvsweep's schema (a no-op when it is
// there already), telling `progress` each step. With `vacuum`, then rewrites the file whole
// (VACUUM: needs free disk about the store's size, and waits for other writers), which hands
// free pages back to the file system and switches the store to incremental auto-vacuum, so deleted
// rows can return space without a full rewrite afterwards. Throws std::invalid_argument when there
// is no file or it is not a kvsweep store yet.
MigrationResult migrate_store(const std::string& path, bool vacuum,
                              const MigrationProgress& progress);

struct BackupResult {
  int schema_version = 0;
  std::int64_t experiments = 0;
  std::int64_t bytes = 0;  // of the copy
};

// `kvsweep backup DEST`: a consistent copy of the store at `source` made with SQLite's online
// backup (SqliteDb::backup_into), safe beside a running sweep and a running `serve`: it takes
// no write lock. The copy is written next to `dest` under a temporary name, checked with
// PRAGMA quick_check and renamed over `dest`, so `dest` is always either the previous file or
// a whole copy. The source must be a kvsweep store of this kvsweep's schema or older (copied
// as it is, not migrated). Throws std::invalid_argument for a missing or foreign source and
// std::runtime_error when the copy cannot be written or fails its check.
BackupResult backup_store(const std::string& source, const std::string& dest);

}  // namespace kvsweep::store
