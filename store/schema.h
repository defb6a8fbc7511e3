// The store's schema and its migrations, versioned by PRAGMA user_version.
#pragma once

#include "store/migration_progress.h"
#include "store/sqlite_handles.h"

namespace kvsweep::store {

// The schema version this kvsweep writes. Bump it and append a migration in schema.cc when a
// table changes; never edit a migration that has shipped.
constexpr int kSchemaVersion = 14;

int schema_version(const SqliteDb& db);

// Brings a fresh or older file up to kSchemaVersion, in one transaction (telling `progress` its
// steps when the file was older; schema 7 re-encodes every request's ITLs), and stamps it with
// kApplicationId (store_identity.h). Throws when the file was written by a newer kvsweep: an
// older binary must not guess at columns it does not know.
void migrate(const SqliteDb& db, const MigrationProgress& progress = {});

// Throws the "written by a newer kvsweep" error when `db`'s version is above kSchemaVersion.
void check_not_newer(const SqliteDb& db);

// Brings a fresh or older file up to `version` (<= kSchemaVersion) only: tests build a file
// as an older kvsweep wrote it, then check that migrate() carries its rows forward.
void migrate_to(const SqliteDb& db, int version, const MigrationProgress& progress = {});

}  // namespace kvsweep::store
