// The cells table: one row per planned cell, its status and times; a cell's one-transaction
// record and its reset for a resumed sweep.
#include <stdexcept>
#include <string>
#include <vector>

#include "store/sqlite_handles.h"
#include "store/store.h"
#include "store/store_impl.h"

namespace kvsweep::store {

CellRow read_cell(const SqliteStatement& s) {
  CellRow row;
  row.id = s.column_int64(0);
  row.experiment_id = s.column_int64(1);
  row.ordinal = static_cast<int>(s.column_int64(2));
  row.key = s.column_text(3);
  row.arm = s.column_text(4);
  row.concurrency = static_cast<int>(s.column_int64(5));
  row.repeat = static_cast<int>(s.column_int64(6));
  row.factors = decode_factors(s.column_text(7));
  row.status = s.column_text(8);
  row.started_at = s.column_text(9);
  row.finished_at = s.column_text(10);
  row.error = s.column_text(11);
  row.epoch_wall_s = s.column_double(12);
  return row;
}

std::int64_t Store::add_cell(const CellRow& row) {
  SqliteStatement s = impl_->db.prepare(
      "INSERT INTO cells (experiment_id, ordinal, key, arm, concurrency, repeat, "
      "factors_json, status, started_at, finished_at, error, epoch_wall_s) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  s.bind_int64(1, row.experiment_id);
  s.bind_int64(2, row.ordinal);
  s.bind_text(3, row.key);
  s.bind_text(4, row.arm);
  s.bind_int64(5, row.concurrency);
  s.bind_int64(6, row.repeat);
  s.bind_text(7, encode_factors(row.factors));
  s.bind_text(8, row.status);
  s.bind_text(9, row.started_at);
  s.bind_text(10, row.finished_at);
  s.bind_text(11, row.error);
  s.bind_double(12, row.epoch_wall_s);
  s.step();
  return impl_->db.last_insert_rowid();
}

void Store::update_cell(const CellRow& row, const std::string& claimed_by) {
  Transaction transaction(impl_->db);
  if (!claimed_by.empty()) require_claim(impl_->db, row.id, claimed_by);
  SqliteStatement s = impl_->db.prepare(
      "UPDATE cells SET status = ?, started_at = ?, finished_at = ?, error = ?, epoch_wall_s = ? "
      "WHERE id = ?");
  s.bind_text(1, row.status);
  s.bind_text(2, row.started_at);
  s.bind_text(3, row.finished_at);
  s.bind_text(4, row.error);
  s.bind_double(5, row.epoch_wall_s);
  s.bind_int64(6, row.id);
  s.step();
  if (impl_->db.changes() == 0) {
    throw std::runtime_error(path() + ": update_cell: no cell with id " + std::to_string(row.id));
  }
  transaction.commit();
}

void Store::record_cell(const CellRow& row, const std::vector<RequestRow>& requests,
                        const std::vector<MetricSample>& samples,
                        const std::vector<CommandRow>& commands, const std::string& claimed_by) {
  Transaction transaction(impl_->db);
  if (!claimed_by.empty()) require_claim(impl_->db, row.id, claimed_by);
  insert_requests(impl_->db, row.id, requests);
  insert_samples(impl_->db, row.id, samples);
  insert_commands(impl_->db, row.id, commands);
  update_cell(row);
  if (!claimed_by.empty()) drop_claim(impl_->db, row.id);
  transaction.commit();
}

void Store::reset_cell(std::int64_t cell_id) {
  const SqliteDb& db = impl_->db;
  Transaction transaction(db);
  for (const char* sql :
       {"DELETE FROM requests WHERE cell_id = ?", "DELETE FROM metric_samples WHERE cell_id = ?",
        "DELETE FROM cell_commands WHERE cell_id = ?",
        "DELETE FROM cell_progress WHERE cell_id = ?", "DELETE FROM cell_loads WHERE cell_id = ?",
        "DELETE FROM cell_shards WHERE cell_id = ?", "DELETE FROM cell_summaries WHERE cell_id = ?",
        "UPDATE cells SET status = 'pending', started_at = '', finished_at = '', "
        "error = '', epoch_wall_s = 0 WHERE id = ?"}) {
    SqliteStatement s = db.prepare(sql);
    s.bind_int64(1, cell_id);
    s.step();
  }
  // The UPDATE ran last: no row changed means no such cell, and the deletes roll back.
  if (db.changes() == 0) {
    throw std::runtime_error(path() + ": reset_cell: no cell with id " + std::to_string(cell_id));
  }
  transaction.commit();
}

std::vector<CellRow> Store::cells(std::int64_t experiment_id) const {
  SqliteStatement s = impl_->db.prepare(std::string("SELECT ") + kCellColumns +
                                        " FROM cells WHERE experiment_id = ? ORDER BY ordinal, id");
  s.bind_int64(1, experiment_id);
  std::vector<CellRow> rows;
  while (s.step()) rows.push_back(read_cell(s));
  return rows;
}

}  // namespace kvsweep::store
