// Looking after a store as a whole: migrating it on request, copying it while it is in use, and
// choosing what retention removes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
// no write lock. DEST is checked first (check_backup_destination: never the store itself or
// its -wal or -shm, only a regular file or a new path, a file that is not a kvsweep store
// only with `force`). The copy is written beside the file it replaces under a temporary name,
// with the source's permission bits, checked with PRAGMA quick_check and renamed over it, so
// DEST is always either the previous file or a whole copy. The source must be a kvsweep store
// of this kvsweep's schema or older (copied as it is, not migrated). Throws
// std::invalid_argument for a missing or foreign source or a refused DEST, and
// std::runtime_error when the copy cannot be written or fails its check.
BackupResult backup_store(const std::string& source, const std::string& dest, bool force = false);

// `kvsweep prune --older-than`: ids of the experiments of the store at `path` whose started_at
// is an instant before `unix_s`, compared as numbers in SQL (julianday), never as text: as
// text, a cutoff in year 931 ("931-...") sorted after every run of 2026. A started_at SQLite
// cannot read as a time is before nothing. Oldest first; reads only, on a connection of its own.
std::vector<std::int64_t> experiments_started_before(const std::string& path, double unix_s);

}  // namespace kvsweep::store
