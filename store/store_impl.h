// What a Store holds, and the helpers its files share (one file per table family: experiments.cc,
// cells.cc, requests.cc, cell_records.cc, cell_claims.cc; store_open.cc opens it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// Inserts inside the caller's transaction; one prepared statement per batch.
void insert_requests(const SqliteDb& db, std::int64_t cell_id, const std::vector<RequestRow>& rows);
void insert_samples(const SqliteDb& db, std::int64_t cell_id,
                    const std::vector<MetricSample>& samples);
void insert_commands(const SqliteDb& db, std::int64_t cell_id,
                     const std::vector<CommandRow>& commands);

}  // namespace kvsweep::store
