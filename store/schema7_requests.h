// The migration to schema 7: the requests table rewritten compact (ITLs as a blob, durations
// that follow from the times left NULL), row by row in C++ because SQL cannot encode the blob.
#pragma once

#include "store/migration_progress.h"
#include "store/sqlite_handles.h"

namespace kvsweep::store {

// The new table, created before the rows are copied into it.
extern const char* const kCreateRequestsV7;

// Copies every row of a schema-6 `requests` into `requests_v7` (ids kept), then puts the new
// table in the old one's place with its index, and creates the view `requests_full` (the
// table with every duration filled in, for sqlite3 users). Inside the caller's transaction; tells
// `progress` (when set) the row count and every kCopyBatch rows.
void rewrite_requests_compact(const SqliteDb& db, const MigrationProgress& progress);

}  // namespace kvsweep::store
