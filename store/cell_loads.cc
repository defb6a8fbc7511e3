// Store: the cell_loads table, what load each cell asked for and how the driver kept up, and
// cell_shards, each shard's of a sharded cell.
#include <cmath>
#include <limits>

#include "store/store_impl.h"

namespace kvsweep::store {
namespace {

// SQLite keeps an infinite REAL, but a NULL-free column reads back more plainly with a mark:
// -1 stands for "every request due at once" (an infinite rate); no real rate is negative.
double rate_to_column(double rate) { return std::isinf(rate) ? -1 : rate; }
double rate_from_column(double value) {
  return value < 0 ? std::numeric_limits<double>::infinity() : value;
}

// The shards of a sharded cell replace whatever the cell had.
void write_shards(const SqliteDb& db, const CellLoadRow& row) {
  SqliteStatement clear = db.prepare("DELETE FROM cell_shards WHERE cell_id = ?");
  clear.bind_int64(1, row.cell_id);
  clear.step();
  for (const CellShardRow& shard : row.shards) {
    SqliteStatement s = db.prepare(
        "INSERT INTO cell_shards (cell_id, shard, requests, measured, failed, start_skew_ms, "
        "clock_offset_ms, request_rate, max_concurrency, users, driver_threads, driver_cores, "
        "driver_wall_s, driver_cpu_s, send_delay_count, send_delay_p50_ms, send_delay_p99_ms, "
        "send_delay_max_ms, ready_span_s, sent_span_s) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    s.bind_int64(1, row.cell_id);
    s.bind_int64(2, shard.shard);
    s.bind_int64(3, shard.requests);
    s.bind_int64(4, shard.measured);
    s.bind_int64(5, shard.failed);
    s.bind_double(6, shard.start_skew_ms);
    s.bind_double(7, shard.clock_offset_ms);
    s.bind_double(8, rate_to_column(shard.request_rate));
    s.bind_int64(9, shard.max_concurrency);
    s.bind_int64(10, shard.users);
    s.bind_int64(11, shard.driver_threads);
    s.bind_int64(12, shard.driver_cores);
    s.bind_double(13, shard.driver_wall_s);
    s.bind_double(14, shard.driver_cpu_s);
    s.bind_int64(15, shard.send_delay_count);
    s.bind_double(16, shard.send_delay_p50_ms);
    s.bind_double(17, shard.send_delay_p99_ms);
    s.bind_double(18, shard.send_delay_max_ms);
    s.bind_double(19, shard.ready_span_s);
    s.bind_double(20, shard.sent_span_s);
    s.step();
  }
}

std::vector<CellShardRow> read_shards(const SqliteDb& db, std::int64_t cell_id) {
  SqliteStatement s = db.prepare(
      "SELECT shard, requests, measured, failed, start_skew_ms, clock_offset_ms, request_rate, "
      "max_concurrency, users, driver_threads, driver_cores, driver_wall_s, driver_cpu_s, "
      "send_delay_count, send_delay_p50_ms, send_delay_p99_ms, send_delay_max_ms, ready_span_s, "
      "sent_span_s FROM cell_shards WHERE cell_id = ? ORDER BY shard");
  s.bind_int64(1, cell_id);
  std::vector<CellShardRow> shards;
  while (s.step()) {
    CellShardRow shard;
    shard.shard = static_cast<int>(s.column_int64(0));
    shard.requests = s.column_int64(1);
    shard.measured = s.column_int64(2);
    shard.failed = s.column_int64(3);
    shard.start_skew_ms = s.column_double(4);
    shard.clock_offset_ms = s.column_double(5);
    shard.request_rate = rate_from_column(s.column_double(6));
    shard.max_concurrency = static_cast<int>(s.column_int64(7));
    shard.users = static_cast<int>(s.column_int64(8));
    shard.driver_threads = static_cast<int>(s.column_int64(9));
    shard.driver_cores = static_cast<int>(s.column_int64(10));
    shard.driver_wall_s = s.column_double(11);
    shard.driver_cpu_s = s.column_double(12);
    shard.send_delay_count = s.column_int64(13);
    shard.send_delay_p50_ms = s.column_double(14);
    shard.send_delay_p99_ms = s.column_double(15);
    shard.send_delay_max_ms = s.column_double(16);
    shard.ready_span_s = s.column_double(17);
    shard.sent_span_s = s.column_double(18);
    shards.push_back(shard);
  }
  return shards;
}

}  // namespace

void Store::set_cell_load(const CellLoadRow& row, const std::string& claimed_by) {
  const SqliteDb& db = impl_->db;
  Transaction transaction(db);
  if (!claimed_by.empty()) require_claim(db, row.cell_id, claimed_by);
  SqliteStatement s = db.prepare(
      "INSERT OR REPLACE INTO cell_loads (cell_id, open_loop, request_rate, max_concurrency, "
      "users, driver_measured, driver_threads, driver_cores, driver_wall_s, driver_cpu_s, "
      "send_delay_count, send_delay_p50_ms, send_delay_p99_ms, send_delay_max_ms, ready_span_s, "
      "sent_span_s, stopped_over_capacity, stop_reason) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  s.bind_int64(1, row.cell_id);
  s.bind_int64(2, row.open_loop ? 1 : 0);
  s.bind_double(3, rate_to_column(row.request_rate));
  s.bind_int64(4, row.max_concurrency);
  s.bind_int64(5, row.users);
  s.bind_int64(6, row.driver_measured ? 1 : 0);
  s.bind_int64(7, row.driver_threads);
  s.bind_int64(8, row.driver_cores);
  s.bind_double(9, row.driver_wall_s);
  s.bind_double(10, row.driver_cpu_s);
  s.bind_int64(11, row.send_delay_count);
  s.bind_double(12, row.send_delay_p50_ms);
  s.bind_double(13, row.send_delay_p99_ms);
  s.bind_double(14, row.send_delay_max_ms);
  s.bind_double(15, row.ready_span_s);
  s.bind_double(16, row.sent_span_s);
  s.bind_int64(17, row.stopped_over_capacity ? 1 : 0);
  s.bind_text(18, row.stop_reason);
  s.step();
  write_shards(db, row);
  transaction.commit();
}

std::optional<CellLoadRow> Store::cell_load(std::int64_t cell_id) const {
  SqliteStatement s = impl_->db.prepare(
      "SELECT open_loop, request_rate, max_concurrency, users, driver_measured, driver_threads, "
      "driver_cores, driver_wall_s, driver_cpu_s, send_delay_count, send_delay_p50_ms, "
      "send_delay_p99_ms, send_delay_max_ms, ready_span_s, sent_span_s, stopped_over_capacity, "
      "stop_reason FROM cell_loads WHERE cell_id = ?");
  s.bind_int64(1, cell_id);
  if (!s.step()) return std::nullopt;
  CellLoadRow row;
  row.cell_id = cell_id;
  row.open_loop = s.column_int64(0) != 0;
  row.request_rate = rate_from_column(s.column_double(1));
  row.max_concurrency = static_cast<int>(s.column_int64(2));
  row.users = static_cast<int>(s.column_int64(3));
  row.driver_measured = s.column_int64(4) != 0;
  row.driver_threads = static_cast<int>(s.column_int64(5));
  row.driver_cores = static_cast<int>(s.column_int64(6));
  row.driver_wall_s = s.column_double(7);
  row.driver_cpu_s = s.column_double(8);
  row.send_delay_count = s.column_int64(9);
  row.send_delay_p50_ms = s.column_double(10);
  row.send_delay_p99_ms = s.column_double(11);
  row.send_delay_max_ms = s.column_double(12);
  row.ready_span_s = s.column_double(13);
  row.sent_span_s = s.column_double(14);
  row.stopped_over_capacity = s.column_int64(15) != 0;
  row.stop_reason = s.column_text(16);
  row.shards = read_shards(impl_->db, cell_id);
  return row;
}

}  // namespace kvsweep::store
