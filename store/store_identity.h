// Telling a kvsweep store from any other file before anything is written to it.
#pragma once

#include <cstdint>
#include <stdexcept>

#include "store/sqlite_handles.h"

namespace kvsweep::store {

// PRAGMA application_id of every store ("kvsw"): set when a store is created or migrated, so
// `file kvsweep.db` and kvsweep itself can tell it from another program's database.
constexpr std::int32_t kApplicationId = 0x6b767377;

// A file given as the store that is not one: bad input (`kvsweep` exits 2), nothing written.
class NotAStore : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads only. Returns when `db` is an empty file (a new store) or a kvsweep store: stamped
// with kApplicationId, or written by a kvsweep from before the stamp (schema version 1 to 3
// and kvsweep's tables). Throws NotAStore "<path>: not a kvsweep store: <what it is>" otherwise
// (another program's SQLite database, with its application_id or its tables; not a SQLite file at
// all), so that nothing (not even the switch to WAL) touches it.
void check_store_identity(const SqliteDb& db);

}  // namespace kvsweep::store
