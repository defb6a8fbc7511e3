// The migration to schema 7: every request row rewritten into the compact table.
#include "store/schema7_requests.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/store_impl.h"

namespace kvsweep::store {
namespace {

// Rows copied between progress lines: few lines even on a store of a year of nights.
constexpr std::int64_t kCopyBatch = 250000;

std::vector<double> itl_from_json(const SqliteDb& db, std::int64_t request_id,
                                  const std::string& text) {
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array()) {
    throw std::runtime_error(db.path() + ": request " + std::to_string(request_id) +
                             ": itl_ms is not a JSON array: " + text.substr(0, 80));
  }
  std::vector<double> itl;
  itl.reserve(parsed.size());
  // A non-number entry read as 0 at schema 6 too: kept as it read.
  for (const auto& gap : parsed) itl.push_back(gap.is_number() ? gap.get<double>() : 0.0);
  return itl;
}

// A schema-6 row as the reader of that schema read it.
RequestRow read_schema6_row(const SqliteDb& db, const SqliteStatement& s) {
  RequestRow row;
  row.id = s.column_int64(0);
  row.cell_id = s.column_int64(1);
  row.index = s.column_int64(2);
  row.worker = static_cast<int>(s.column_int64(3));
  row.conversation = static_cast<int>(s.column_int64(4));
  row.turn = static_cast<int>(s.column_int64(5));
  row.warmup = s.column_int64(6) != 0;
  row.ok = s.column_int64(7) != 0;
  row.error_kind = s.column_text(8);
  row.error = s.column_text(9);
  row.http_status = static_cast<int>(s.column_int64(10));
  row.scheduled_s = s.column_double(11);
  row.sent_s = s.column_double(12);
  row.first_token_s = s.column_double(13);
  row.last_token_s = s.column_double(14);
  row.ttft_ms = s.column_double(15);
  row.e2e_ms = s.column_double(16);
  row.tpot_ms = s.column_double(17);
  row.itl_ms = itl_from_json(db, row.id, s.column_text(18));
  row.prompt_tokens = static_cast<int>(s.column_int64(19));
  row.output_tokens = static_cast<int>(s.column_int64(20));
  row.cached_tokens = static_cast<int>(s.column_int64(21));
  row.tokens_estimated = s.column_int64(22) != 0;
  row.replica = s.column_text(23);
  row.ended_s = s.column_double(24);
  return row;
}

}  // namespace

// Column names carry units as before. NULL in ttft_ms, e2e_ms, tpot_ms and ended_s means the
// value follows from the row's times (store/request_durations.h): (first_token_s - sent_s) *
// 1000, (last_token_s - sent_s) * 1000, (e2e_ms - ttft_ms) / (output_tokens - 1) (0 with at
// most one token), last_token_s; kvsweep stores a value only when it differs in any bit.
const char* const kCreateRequestsV7 = R"sql(
CREATE TABLE requests_v7 (
  id INTEGER PRIMARY KEY,
  cell_id INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
  request_index INTEGER NOT NULL,
  worker INTEGER NOT NULL DEFAULT 0,
  conversation INTEGER NOT NULL DEFAULT 0,
  turn INTEGER NOT NULL DEFAULT 0,
  warmup INTEGER NOT NULL DEFAULT 0,
  ok INTEGER NOT NULL DEFAULT 0,
  error_kind TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  http_status INTEGER NOT NULL DEFAULT 0,
  scheduled_s REAL NOT NULL DEFAULT -1,
  sent_s REAL NOT NULL DEFAULT 0,
  first_token_s REAL NOT NULL DEFAULT -1,
  last_token_s REAL NOT NULL DEFAULT -1,
  ttft_ms REAL,
  e2e_ms REAL,
  tpot_ms REAL,
  itl_us BLOB NOT NULL DEFAULT X'',
  prompt_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  cached_tokens INTEGER NOT NULL DEFAULT -1,
  tokens_estimated INTEGER NOT NULL DEFAULT 0,
  replica TEXT NOT NULL DEFAULT '',
  ended_s REAL
);
)sql";

namespace {

void copy_rows(const SqliteDb& db, const MigrationProgress& progress) {
  SqliteStatement count = db.prepare("SELECT COUNT(*) FROM requests");
  count.step();
  const std::int64_t total = count.column_int64(0);
  if (progress && total > 0) {
    progress(db.path() + ": rewriting " + std::to_string(total) +
             " request rows compact (ITLs as a blob)");
  }
  SqliteStatement read = db.prepare(
      "SELECT id, cell_id, request_index, worker, conversation, turn, warmup, ok, error_kind, "
      "error, http_status, scheduled_s, sent_s, first_token_s, last_token_s, ttft_ms, e2e_ms, "
      "tpot_ms, itl_ms, prompt_tokens, output_tokens, cached_tokens, tokens_estimated, replica, "
      "ended_s FROM requests ORDER BY id");
  SqliteStatement write =
      db.prepare(std::string("INSERT INTO requests_v7 (") + kRequestInsertColumns +
                 ", id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  std::int64_t done = 0;
  while (read.step()) {
    const RequestRow row = read_schema6_row(db, read);
    bind_request(write, row.cell_id, row);
    write.bind_int64(25, row.id);
    write.step();
    write.reset();
    if (++done % kCopyBatch == 0 && progress) {
      progress(db.path() + ": " + std::to_string(done) + " of " + std::to_string(total) +
               " request rows");
    }
  }
}

}  // namespace

// For people and scripts reading the store with sqlite3: every request with its durations
// filled in, computed as request_durations.cc does (SQLite's REAL arithmetic is the same IEEE
// double arithmetic, so the values are the very ones kvsweep reads).
const char* const kCreateRequestsFull = R"sql(
CREATE VIEW requests_full AS SELECT
  id, cell_id, request_index, worker, conversation, turn, warmup, ok, error_kind, error,
  http_status, scheduled_s, sent_s, first_token_s, last_token_s,
  COALESCE(ttft_ms, (first_token_s - sent_s) * 1000.0) AS ttft_ms,
  COALESCE(e2e_ms, (last_token_s - sent_s) * 1000.0) AS e2e_ms,
  COALESCE(tpot_ms, CASE WHEN output_tokens > 1
    THEN (COALESCE(e2e_ms, (last_token_s - sent_s) * 1000.0) -
          COALESCE(ttft_ms, (first_token_s - sent_s) * 1000.0)) / (output_tokens - 1)
    ELSE 0.0 END) AS tpot_ms,
  itl_us, prompt_tokens, output_tokens, cached_tokens, tokens_estimated, replica,
  COALESCE(ended_s, last_token_s) AS ended_s
FROM requests;
)sql";

void rewrite_requests_compact(const SqliteDb& db, const MigrationProgress& progress) {
  db.exec(kCreateRequestsV7);
  copy_rows(db, progress);  // its statements are finalized before the old table is dropped
  db.exec(
      "DROP TABLE requests;"
      "ALTER TABLE requests_v7 RENAME TO requests;"
      "CREATE INDEX requests_cell ON requests(cell_id);");
  db.exec(kCreateRequestsFull);
}

}  // namespace kvsweep::store
