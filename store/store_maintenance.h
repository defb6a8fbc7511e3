// `kvsweep migrate`: a store brought to this kvsweep's schema on request (backup.h copies one,
// prunes.h chooses what retention removes).
#pragma once

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
// rows can return space without a full rewrite afterwards. Throws UsageError when there is no
// file or it is not a kvsweep store yet.
MigrationResult migrate_store(const std::string& path, bool vacuum,
                              const MigrationProgress& progress);

// The schema version of the existing store at `path`, read without writing. Throws UsageError
// when there is no file or it is not a kvsweep store yet, and when a newer kvsweep wrote it.
int existing_store_version(const std::string& path);

}  // namespace kvsweep::store
