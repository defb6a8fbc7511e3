// Store: the cell_summaries table (each done cell's figures computed once) and retention (the
// experiment_prunes table): raw rows removed, summaries kept.
#include <stdexcept>
#include <string>

#include "store/store_impl.h"

namespace kvsweep::store {
namespace {

CellSummaryRow read_summary(const SqliteStatement& s) {
  CellSummaryRow row;
  row.cell_id = s.column_int64(0);
  row.format = static_cast<int>(s.column_int64(1));
  row.figures = s.column_text(2);
  row.distributions = s.column_blob(3);
  row.sample = s.column_blob(4);
  return row;
}

}  // namespace

void Store::set_cell_summary(const CellSummaryRow& row) {
  SqliteStatement s = impl_->db.prepare(
      "INSERT OR REPLACE INTO cell_summaries (cell_id, format, figures, distributions, sample) "
      "VALUES (?,?,?,?,?)");
  s.bind_int64(1, row.cell_id);
  s.bind_int64(2, row.format);
  s.bind_text(3, row.figures);
  s.bind_blob(4, row.distributions);
  s.bind_blob(5, row.sample);
  s.step();
}

std::optional<CellSummaryRow> Store::cell_summary(std::int64_t cell_id) const {
  SqliteStatement s = impl_->db.prepare(
      "SELECT cell_id, format, figures, distributions, sample FROM cell_summaries "
      "WHERE cell_id = ?");
  s.bind_int64(1, cell_id);
  if (!s.step()) return std::nullopt;
  return read_summary(s);
}

std::vector<CellSummaryRow> Store::cell_summaries(std::int64_t experiment_id,
                                                  bool with_sample) const {
  // The sample is the last column: left out, SQLite never reads its overflow pages.
  SqliteStatement s =
      impl_->db.prepare(std::string("SELECT m.cell_id, m.format, m.figures, m.distributions, ") +
                        (with_sample ? "m.sample" : "x''") +
                        " FROM cell_summaries m JOIN cells c ON c.id = m.cell_id "
                        "WHERE c.experiment_id = ? ORDER BY c.ordinal, c.id");
  s.bind_int64(1, experiment_id);
  std::vector<CellSummaryRow> rows;
  while (s.step()) rows.push_back(read_summary(s));
  return rows;
}

std::vector<CellRow> Store::cells_to_summarize(int format) const {
  SqliteStatement s =
      impl_->db.prepare(std::string("SELECT ") + kCellColumns +
                        " FROM cells WHERE status = 'done'"
                        " AND experiment_id NOT IN (SELECT experiment_id FROM experiment_prunes)"
                        " AND id NOT IN (SELECT cell_id FROM cell_summaries WHERE format >= ?)"
                        " ORDER BY experiment_id, ordinal, id");
  s.bind_int64(1, format);
  std::vector<CellRow> rows;
  while (s.step()) rows.push_back(read_cell(s));
  return rows;
}

void Store::prune_raw_rows(const PruneMark& mark) {
  const SqliteDb& db = impl_->db;
  Transaction transaction(db);
  {
    SqliteStatement unsummarized = db.prepare(
        "SELECT COUNT(*) FROM cells WHERE experiment_id = ? AND status = 'done' "
        "AND id NOT IN (SELECT cell_id FROM cell_summaries)");
    unsummarized.bind_int64(1, mark.experiment_id);
    unsummarized.step();
    if (const std::int64_t n = unsummarized.column_int64(0); n > 0) {
      throw std::runtime_error(path() + ": experiment " + std::to_string(mark.experiment_id) +
                               " has " + std::to_string(n) +
                               " done cells without a summary; pruning would lose their figures "
                               "(any command that writes the store summarizes them first)");
    }
  }
  for (const char* sql :
       {"DELETE FROM requests WHERE cell_id IN (SELECT id FROM cells WHERE experiment_id = ?)",
        "DELETE FROM metric_samples WHERE cell_id IN "
        "(SELECT id FROM cells WHERE experiment_id = ?)",
        "DELETE FROM cell_progress WHERE cell_id IN "
        "(SELECT id FROM cells WHERE experiment_id = ?)"}) {
    SqliteStatement s = db.prepare(sql);
    s.bind_int64(1, mark.experiment_id);
    s.step();
  }
  SqliteStatement s = db.prepare(
      "INSERT OR REPLACE INTO experiment_prunes (experiment_id, pruned_at, policy) "
      "VALUES (?,?,?)");
  s.bind_int64(1, mark.experiment_id);
  s.bind_text(2, mark.pruned_at);
  s.bind_text(3, mark.policy);
  s.step();
  transaction.commit();
}

std::optional<PruneMark> Store::prune_mark(std::int64_t experiment_id) const {
  SqliteStatement s = impl_->db.prepare(
      "SELECT experiment_id, pruned_at, policy FROM experiment_prunes WHERE experiment_id = ?");
  s.bind_int64(1, experiment_id);
  if (!s.step()) return std::nullopt;
  PruneMark mark;
  mark.experiment_id = s.column_int64(0);
  mark.pruned_at = s.column_text(1);
  mark.policy = s.column_text(2);
  return mark;
}

void Store::vacuum() {
  const SqliteDb& db = impl_->db;
  // Finalized at once: VACUUM refuses to run beside an open statement.
  const bool incremental = [&db] {
    SqliteStatement mode = db.prepare("PRAGMA auto_vacuum");
    mode.step();
    return mode.column_int64(0) == 2;
  }();
  // Incremental: the free pages go back at once. Otherwise one full rewrite, which also
  // switches the file to incremental so the next prune's space returns cheaply.
  if (incremental) {
    db.exec("PRAGMA incremental_vacuum");
  } else {
    db.exec("PRAGMA auto_vacuum = INCREMENTAL");
    db.exec("VACUUM");
  }
  // Under WAL the smaller file exists once the log is copied back; TRUNCATE also empties the
  // log, so the space is the file system's again now, not at the next checkpoint.
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

}  // namespace kvsweep::store
