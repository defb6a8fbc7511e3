// The requests table: one row per request a cell sent, in and out.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error_kinds.h"
#include "store/itl_blob.h"
#include "store/request_durations.h"
#include "store/sqlite_handles.h"
#include "store/store.h"
#include "store/store_impl.h"

namespace kvsweep::store {
namespace {

constexpr const char* kRequestColumns =
    "id, cell_id, request_index, worker, conversation, turn, warmup, ok, error_kind, error, "
    "http_status, scheduled_s, sent_s, first_token_s, last_token_s, ttft_ms, e2e_ms, tpot_ms, "
    "itl_us, prompt_tokens, output_tokens, cached_tokens, tokens_estimated, replica, ended_s, "
    "prompt_hash";

// SQLite integers are signed: the fingerprint is stored as the same 64 bits.
std::int64_t as_stored(std::uint64_t hash) { return static_cast<std::int64_t>(hash); }
std::uint64_t as_read(std::int64_t stored) { return static_cast<std::uint64_t>(stored); }

std::vector<double> read_itl(const std::string& path, std::int64_t request_id,
                             const std::string& blob) {
  try {
    return decode_itl(blob);
  } catch (const CorruptData& e) {
    throw CorruptData(path + ": request " + std::to_string(request_id) + ": itl_us: " + e.what());
  }
}

RequestRow read_request(const std::string& path, const SqliteStatement& s) {
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
  row.itl_ms = read_itl(path, row.id, s.column_blob(18));
  row.prompt_tokens = static_cast<int>(s.column_int64(19));
  row.output_tokens = static_cast<int>(s.column_int64(20));
  row.cached_tokens = static_cast<int>(s.column_int64(21));
  row.tokens_estimated = s.column_int64(22) != 0;
  row.replica = s.column_text(23);
  row.ended_s = s.column_double(24);
  row.prompt_hash = as_read(s.column_int64(25));
  restore_durations(row, {s.column_is_null(15), s.column_is_null(16), s.column_is_null(17),
                          s.column_is_null(24)});
  return row;
}

void bind_optional_number(SqliteStatement& s, int index, const std::optional<double>& value) {
  if (value) {
    s.bind_double(index, *value);
  } else {
    s.bind_null(index);
  }
}

}  // namespace

void bind_request(SqliteStatement& s, std::int64_t cell_id, const RequestRow& row) {
  s.bind_int64(1, cell_id);
  s.bind_int64(2, row.index);
  s.bind_int64(3, row.worker);
  s.bind_int64(4, row.conversation);
  s.bind_int64(5, row.turn);
  s.bind_int64(6, row.warmup ? 1 : 0);
  s.bind_int64(7, row.ok ? 1 : 0);
  s.bind_text(8, row.error_kind);
  s.bind_text(9, row.error);
  s.bind_int64(10, row.http_status);
  s.bind_double(11, row.scheduled_s);
  s.bind_double(12, row.sent_s);
  s.bind_double(13, row.first_token_s);
  s.bind_double(14, row.last_token_s);
  // NULL where the value follows from the times (request_durations.h): 9 bytes less each.
  bind_optional_number(s, 15, stored_ttft_ms(row));
  bind_optional_number(s, 16, stored_e2e_ms(row));
  bind_optional_number(s, 17, stored_tpot_ms(row));
  s.bind_blob(18, encode_itl(row.itl_ms));  // the same doubles back, bit for bit
  s.bind_int64(19, row.prompt_tokens);
  s.bind_int64(20, row.output_tokens);
  s.bind_int64(21, row.cached_tokens);
  s.bind_int64(22, row.tokens_estimated ? 1 : 0);
  s.bind_text(23, row.replica);
  bind_optional_number(s, 24, stored_ended_s(row));
}

void insert_requests(const SqliteDb& db, std::int64_t cell_id,
                     const std::vector<RequestRow>& rows) {
  // One statement for the whole batch: preparing per row would dominate the insert cost.
  // prompt_hash (schema 13) is bound after the 24 columns schema 7's rewrite also writes.
  SqliteStatement s = db.prepare(std::string("INSERT INTO requests (") + kRequestInsertColumns +
                                 ", prompt_hash) VALUES "
                                 "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const RequestRow& row : rows) {
    bind_request(s, cell_id, row);
    s.bind_int64(25, as_stored(row.prompt_hash));
    s.step();
    s.reset();
  }
}

void Store::add_requests(std::int64_t cell_id, const std::vector<RequestRow>& rows) {
  Transaction transaction(impl_->db);
  insert_requests(impl_->db, cell_id, rows);
  transaction.commit();
}

std::vector<RequestRow> Store::requests(std::int64_t cell_id) const {
  SqliteStatement s = impl_->db.prepare(std::string("SELECT ") + kRequestColumns +
                                        " FROM requests WHERE cell_id = ? "
                                        "ORDER BY request_index, id");
  s.bind_int64(1, cell_id);
  std::vector<RequestRow> rows;
  while (s.step()) rows.push_back(read_request(path(), s));
  return rows;
}

std::vector<RequestRow> Store::request_latencies(std::int64_t cell_id) const {
  SqliteStatement s = impl_->db.prepare(
      "SELECT request_index, warmup, ok, scheduled_s, sent_s, first_token_s, last_token_s, "
      "ttft_ms, e2e_ms, output_tokens FROM requests WHERE cell_id = ? "
      "ORDER BY request_index, id");
  s.bind_int64(1, cell_id);
  std::vector<RequestRow> rows;
  while (s.step()) {
    RequestRow row;
    row.cell_id = cell_id;
    row.index = s.column_int64(0);
    row.warmup = s.column_int64(1) != 0;
    row.ok = s.column_int64(2) != 0;
    row.scheduled_s = s.column_double(3);
    row.sent_s = s.column_double(4);
    row.first_token_s = s.column_double(5);
    row.last_token_s = s.column_double(6);
    row.ttft_ms = s.column_double(7);
    row.e2e_ms = s.column_double(8);
    row.output_tokens = static_cast<int>(s.column_int64(9));
    restore_durations(row, {s.column_is_null(7), s.column_is_null(8), false, false});
    rows.push_back(std::move(row));
  }
  return rows;
}

std::int64_t Store::request_count(std::int64_t cell_id) const {
  SqliteStatement s = impl_->db.prepare("SELECT COUNT(*) FROM requests WHERE cell_id = ?");
  s.bind_int64(1, cell_id);
  s.step();
  return s.column_int64(0);
}

RequestCounts Store::request_counts(std::int64_t cell_id) const {
  SqliteStatement s = impl_->db.prepare(
      "SELECT COALESCE(SUM(warmup = 0), 0), COALESCE(SUM(warmup != 0), 0) FROM requests "
      "WHERE cell_id = ?");
  s.bind_int64(1, cell_id);
  s.step();
  return {s.column_int64(0), s.column_int64(1)};
}

}  // namespace kvsweep::store
