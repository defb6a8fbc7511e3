// Store: the cell_summaries table, each done cell's figures computed once (prunes.cc removes
// the raw rows they were computed from).
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

}  // namespace kvsweep::store
