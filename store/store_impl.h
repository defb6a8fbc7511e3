// What a Store holds, shared by the files that implement it (store.cc, cell_claims.cc).
#pragma once

#include <cstdint>
#include <string>

#include "store/sqlite_handles.h"
#include "store/store.h"

namespace kvsweep::store {

struct Store::Impl {
  SqliteDb db;
};

// Throws ClaimLost unless `run_id` holds the claim of `cell_id`. Call inside the transaction
// of the write it guards.
void require_claim(const SqliteDb& db, std::int64_t cell_id, const std::string& run_id);

// Drops the claim of a finished cell.
void drop_claim(const SqliteDb& db, std::int64_t cell_id);

}  // namespace kvsweep::store
