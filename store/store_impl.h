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

// The columns read_cell reads, in its order.
constexpr const char* kCellColumns =
    "id, experiment_id, ordinal, key, arm, concurrency, repeat, factors_json, status, "
    "started_at, finished_at, error, epoch_wall_s";
CellRow read_cell(const SqliteStatement& statement);

// Throws ClaimLost unless `run_id` holds the claim of `cell_id`. Call inside the transaction
// of the write it guards.
void require_claim(const SqliteDb& db, std::int64_t cell_id, const std::string& run_id);

// Drops the claim of a finished cell.
void drop_claim(const SqliteDb& db, std::int64_t cell_id);

// The columns a request row is written with, in the order bind_request binds them (1 to 24).
constexpr const char* kRequestInsertColumns =
    "cell_id, request_index, worker, conversation, turn, warmup, ok, error_kind, error, "
    "http_status, scheduled_s, sent_s, first_token_s, last_token_s, ttft_ms, e2e_ms, tpot_ms, "
    "itl_us, prompt_tokens, output_tokens, cached_tokens, tokens_estimated, replica, ended_s";
void bind_request(SqliteStatement& statement, std::int64_t cell_id, const RequestRow& row);

// Inserts inside the caller's transaction; one prepared statement per batch.
void insert_requests(const SqliteDb& db, std::int64_t cell_id, const std::vector<RequestRow>& rows);
void insert_samples(const SqliteDb& db, std::int64_t cell_id,
                    const std::vector<MetricSample>& samples);
void insert_commands(const SqliteDb& db, std::int64_t cell_id,
                     const std::vector<CommandRow>& commands);

}  // namespace kvsweep::store
