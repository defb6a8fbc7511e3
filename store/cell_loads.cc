// Store: the cell_loads table, what load each cell asked for and how the driver kept up.
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
  return row;
}

}  // namespace kvsweep::store
